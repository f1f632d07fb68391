//! The protocol checker: every broken protocol of the zoo is found with the right finding at
//! the right place, every correct program and collective is clean on 2, 4 and 8 ranks over 20
//! seeds, and checking never changes what a run computes or when.

use crate::common::{a2a3, all, dispatch_store_then_copy, run_on_all, simple};
use parking_lot::Mutex;
use ranksim::Config;
use ranksim::prelude::*;
use ranksim::programs::broken;
use ranksim_cli::checker::{catalogue, check};
use std::sync::Arc;

/// Checks zoo entry `name` on `ranks` ranks of a2a3 (unperturbed only).
fn zoo(name: &str, ranks: usize) -> Vec<Finding> {
    let cfg = Config::default_preset();
    let c = catalogue().into_iter().find(|c| c.name == name).unwrap();
    check(&cfg, &c, ranks, &CheckOptions::default()).unwrap().findings
}

/// The findings of `kind`.
fn of(found: &[Finding], kind: FindingKind) -> Vec<&Finding> {
    found.iter().filter(|f| f.kind == kind).collect()
}

/// The line of `broken.rs` a site points at, checked to be that file.
fn line(loc: &Option<String>) -> u32 {
    let l = loc.as_deref().unwrap_or_default();
    assert!(l.starts_with("src/programs/broken.rs:"), "{l}");
    l.split(':').nth(1).unwrap().parse().unwrap()
}

#[test]
fn a_missing_barrier_is_a_race_between_the_store_and_the_remote_load() {
    let found = zoo("broken-missing-barrier", 2);
    assert_eq!(found.len(), 2, "{found:#?}");
    for f in &found {
        assert_eq!(f.kind, FindingKind::DataRace);
        let (w, r) = (&f.sites[0], &f.sites[1]);
        assert_eq!((w.op.as_str(), r.op.as_str()), ("store", "remote_load"));
        assert_eq!((w.rank, r.rank), (f.rank, 1 - f.rank), "the reader is the other rank");
        assert_eq!((w.target.as_str(), r.target.as_str()), ("data[0..1024]", "data[0..1024]"));
        assert!(line(&w.location) < line(&r.location));
        assert_eq!(f.seed, None);
    }
}

#[test]
fn a_put_read_without_its_notify_is_a_race() {
    let found = zoo("broken-put-without-notify", 3);
    assert_eq!(found.len(), 3, "{found:#?}");
    for f in &found {
        assert_eq!(f.kind, FindingKind::DataRace);
        assert_eq!((f.sites[0].op.as_str(), f.sites[1].op.as_str()), ("put", "load"));
        assert_eq!(f.sites[1].rank, f.rank);
        assert_eq!(f.sites[0].rank, (f.rank + 2) % 3, "the writer is the previous rank");
    }
}

#[test]
fn a_notify_that_overtakes_its_payload_is_a_stale_read_and_a_fence_fixes_it() {
    let found = zoo("broken-no-fence", 2);
    assert_eq!(found.len(), 2, "{found:#?}");
    for f in &found {
        assert_eq!(f.kind, FindingKind::StaleRead);
        assert_eq!((f.sites[0].op.as_str(), f.sites[1].op.as_str()), ("remote_store", "load"));
        assert!(f.message.contains("fence()"), "{}", f.message);
    }
    for fence in [true, false] {
        let mut w = a2a3();
        w.options_mut().check = true;
        broken::no_fence_with(&mut w, 2, fence).unwrap();
        assert_eq!(w.last_findings().is_empty(), fence, "fence={fence}: {:#?}", w.last_findings());
    }
}

#[test]
fn release_ordering_keeps_every_notify_behind_its_payload() {
    // The same program as broken-no-fence, on a fabric with release ordering.
    let mut w = a2a3();
    w.options_mut().check = true;
    let dom = all(&mut w);
    let data = w.alloc_window(&dom, "data", DType::F32, &[1, 32 * 1024]).unwrap();
    let sig = w.alloc_window(&dom, "signal", DType::I32, &[8, 1]).unwrap();
    let d = data.clone();
    let r = run_on_all(&mut w, &dom, "release", 1, move |core| {
        let data = &d;
        let (me, n) = (core.rank(), core.nranks());
        let t = Tile::from_slice(1, 32 * 1024, &vec![me as f32 + 1.0; 32 * 1024])?;
        core.remote_store(&t, data, (me + 1) % n, &[0, 0], AtomicType::None)?;
        core.notify(&sig, (me + 1) % n, &[me, 0], 1, NotifyOp::AtomicAdd)?;
        core.wait(&sig, &[(me + n - 1) % n, 0], 1, WaitCmp::Ge)?;
        core.load(data, &[0, 0], &[1, 32 * 1024]).map(|_| ())
    });
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    for r in 0..8 {
        assert_eq!(w.read::<f32>(&data, r).unwrap(), vec![((r + 7) % 8) as f32 + 1.0; 32 * 1024]);
    }
}

#[test]
fn signal_misuse_is_found_on_the_cell() {
    let found = zoo("broken-concurrent-set", 3);
    let sets = of(&found, FindingKind::ConcurrentSet);
    assert_eq!(sets.len(), 1, "{found:#?}");
    assert_eq!(sets[0].rank, 0);
    assert!(sets[0].sites.iter().all(|s| s.target == "signal[0, 0]" && s.op == "notify Set"));
    let ranks: Vec<usize> = sets[0].sites.iter().map(|s| s.rank).collect();
    assert_eq!(ranks, vec![1, 2]);

    let found = zoo("broken-set-mixed-with-add", 2);
    let mixed = of(&found, FindingKind::SetMixedWithAdd);
    assert_eq!(mixed.len(), 1, "{found:#?}");
    let ops: Vec<&str> = mixed[0].sites.iter().map(|s| s.op.as_str()).collect();
    assert_eq!(ops, ["notify Set", "notify AtomicAdd"]);
    assert_eq!(mixed[0].sites[0].target, "signal[1, 0]");

    let found = zoo("broken-eq-overshoot", 2);
    let eq = of(&found, FindingKind::EqSkipped);
    assert_eq!(eq.len(), 1, "{found:#?}");
    assert!(eq[0].message.contains("went from 2 to 4, skipping the value 3"), "{}", eq[0].message);
    assert_eq!(of(&found, FindingKind::Deadlock).len(), 1);

    let found = zoo("broken-tag-zero", 2);
    let useless = of(&found, FindingKind::UselessNotify);
    assert_eq!(useless.len(), 1, "{found:#?}");
    assert_eq!((useless[0].sites[0].rank, useless[0].sites[0].op.as_str()), (1, "notify AtomicAdd"));
    assert!(of(&found, FindingKind::Deadlock)[0].message.contains("waits for `signal[1, 0]` >= 1 but it holds 0"));
}

#[test]
fn credits_left_behind_and_credits_consumed_twice_are_found() {
    let found = zoo("broken-credits-left", 2);
    assert_eq!(found.len(), 2, "{found:#?}");
    for f in &found {
        assert_eq!(f.kind, FindingKind::CreditsLeft);
        assert!(
            f.message.contains(&format!("`signal[{}, 0]` on rank {} holds 1", 1 - f.rank, f.rank)),
            "{}",
            f.message
        );
    }
    let found = zoo("broken-signal-reuse", 2);
    assert_eq!(found.len(), 2, "{found:#?}");
    for f in &found {
        assert_eq!(f.kind, FindingKind::StaleCredit);
        let tasks: Vec<&str> = f.sites.iter().map(|s| s.task.as_str()).collect();
        assert_eq!(tasks, ["barrier_1", "barrier_2"]);
    }
}

#[test]
fn a_notify_outside_a_lane_guard_is_a_duplicate_and_a_guarded_one_is_not() {
    let found = zoo("broken-duplicate-notify", 2);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found.iter().all(|f| f.kind == FindingKind::DuplicateNotify && f.message.contains("lanes 0 and 1")));
    let mut w = a2a3();
    w.options_mut().check = true;
    let dom = all(&mut w);
    let sig = w.alloc_window(&dom, "signal", DType::I32, &[8, 1]).unwrap();
    let mut d = Dispatch::new("guarded");
    d.add(
        Task::new("mixed", 2, move |core| {
            let (me, n) = (core.rank(), core.nranks());
            assert_eq!((core.sub_block_num(), core.block_num()), (2, 2));
            if core.sub_block_idx() == 0 {
                core.notify(&sig, (me + 1) % n, &[me, 0], 1, NotifyOp::AtomicAdd)?;
            }
            core.wait(&sig, &[(me + n - 1) % n, 0], 2, WaitCmp::Ge)
        })
        .lanes(2),
    );
    w.dispatch_all(&dom, d).unwrap();
    let r = w.run().unwrap();
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

#[test]
fn deadlocks_are_findings_with_every_blocked_wait() {
    let found = zoo("broken-deadlock", 4);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].kind, FindingKind::Deadlock);
    assert_eq!(found[0].sites.len(), 4);
    let found = zoo("broken-cores-exhausted", 1);
    assert_eq!(found[0].kind, FindingKind::Deadlock);
    assert!(
        found[0].message.contains("task `producer` cannot be placed: it needs 1 free AIV core(s) but only 0 of 48")
    );
}

#[test]
fn every_correct_program_and_collective_is_clean_on_2_4_8_ranks_over_20_seeds() {
    let cfg = Config::default_preset();
    let opts = CheckOptions { seeds: 20, ..CheckOptions::default() };
    for c in catalogue().iter().filter(|c| !c.is_broken()) {
        for p in [2, 4, 8] {
            let r = check(&cfg, c, p, &opts).unwrap();
            assert_eq!(r.runs, 21);
            assert!(r.is_clean(), "{} on {p} ranks: {:#?}", c.name, r.findings);
        }
    }
}

#[test]
fn every_zoo_entry_is_found_on_every_rank_count_it_takes() {
    let cfg = Config::default_preset();
    for c in catalogue().iter().filter(|c| c.is_broken()) {
        for p in [c.min_ranks, 4] {
            let r = check(&cfg, c, p, &CheckOptions::default()).unwrap();
            assert!(!r.is_clean(), "{} on {p} ranks found nothing", c.name);
        }
    }
}

#[test]
fn a_race_only_some_orderings_show_is_found_by_a_seed() {
    // broken-no-fence with a 4 KiB payload: unperturbed, the payload wins; with jitter on
    // the payload's transfer, some seeds let the notify overtake it.
    let queue = |w: &mut World| {
        w.options_mut().relaxed_ordering = true;
        let dom = all(w);
        let data = w.alloc_window(&dom, "data", DType::F32, &[1, 1024]).unwrap();
        let sig = w.alloc_window(&dom, "signal", DType::I32, &[8, 1]).unwrap();
        w.dispatch_all(
            &dom,
            Dispatch::kernel("small_no_fence", 1, move |core| {
                let (me, n) = (core.rank(), core.nranks());
                let t = Tile::from_slice(1, 1024, &vec![1.0f32; 1024])?;
                core.remote_store(&t, &data, (me + 1) % n, &[0, 0], AtomicType::None)?;
                core.notify(&sig, (me + 1) % n, &[me, 0], 1, NotifyOp::AtomicAdd)?;
                core.wait(&sig, &[(me + n - 1) % n, 0], 1, WaitCmp::Ge)?;
                core.load(&data, &[0, 0], &[1, 1024]).map(|_| ())
            }),
        )
        .unwrap();
    };
    let mut w = a2a3();
    queue(&mut w);
    let unperturbed = w.check(&CheckOptions::default()).unwrap();
    assert!(unperturbed.is_clean(), "{:#?}", unperturbed.findings);
    let mut w = a2a3();
    queue(&mut w);
    let opts = CheckOptions { seeds: 20, op_jitter: SimDuration::from_us(2), ..CheckOptions::default() };
    let r = w.check(&opts).unwrap();
    assert_eq!(r.runs, 21);
    let stale = of(&r.findings, FindingKind::StaleRead);
    assert!(!stale.is_empty(), "{:#?}", r.findings);
    assert!(stale.iter().all(|f| f.seed.is_some_and(|s| (1..=20).contains(&s))));
    // The same check again finds the same, with the same seeds.
    let mut w = a2a3();
    queue(&mut w);
    assert_eq!(w.check(&opts).unwrap(), r);
}

#[test]
fn a_race_inside_a_collective_kernel_is_seen() {
    // An InCore allreduce in one task and, with no dependency, a task reading its data.
    let mut w = a2a3();
    w.options_mut().check = true;
    let dom = all(&mut w);
    let data = w.alloc_window(&dom, "data", DType::F32, &[256]).unwrap();
    let sig = w.alloc_window(&dom, "signal", DType::I32, &[8, 1]).unwrap();
    let mut d = Dispatch::new("racy");
    let (d2, s2) = (data.clone(), sig.clone());
    d.add(Task::new("allreduce", 1, move |core| {
        core.run(async |ops| {
            ranksim::collectives::incore::allreduce(ops, &d2, &s2, ReduceOp::Sum, ranksim::collectives::Mode::Mesh)
                .await
        })
    }));
    d.add(Task::new("reader", 1, move |core| core.load(&data, &[0], &[256]).map(|_| ())));
    w.dispatch_all(&dom, d).unwrap();
    w.run().unwrap();
    let races = of(w.last_findings(), FindingKind::DataRace);
    assert!(!races.is_empty(), "{:#?}", w.last_findings());
    assert!(races.iter().all(|f| f.sites.iter().any(|s| s.task == "reader" && s.op == "load")));
}

#[test]
fn checking_changes_neither_results_nor_times() {
    let run = |check: bool| {
        let mut w = Config::default_preset().world().unwrap();
        w.options_mut().check = check;
        let p = ranksim::programs::find("remote_load").unwrap();
        let out = (p.run)(&mut w, 8).unwrap();
        (out.ok, out.report.dispatches, out.report.stats)
    };
    assert_eq!(run(true), run(false));
}

#[test]
fn findings_are_instant_events_in_the_trace() {
    let mut w = a2a3();
    w.options_mut().check = true;
    w.options_mut().trace = true;
    let dom = all(&mut w);
    let data = w.alloc_window(&dom, "data", DType::F32, &[1, 64]).unwrap();
    let r = run_on_all(&mut w, &dom, "racy", 1, move |core| {
        core.store(&Tile::from_slice(1, 64, &[1.0f32; 64])?, &data, &[0, 0])?;
        core.remote_load(&data, (core.rank() + 1) % core.nranks(), &[0, 0], &[1, 64]).map(|_| ())
    });
    let trace = r.trace.unwrap();
    assert_eq!(trace.marks.len(), r.findings.len());
    assert!(trace.marks.iter().all(|m| m.name == "data-race"));
    let json = ranksim::formats::to_chrome_json(&trace, 8);
    assert_eq!(json.matches(r#""cat":"finding","ph":"i""#).count(), 8);
}

#[test]
fn fence_returns_when_the_cores_writes_have_landed() {
    // Simple machine: the 4 KiB store leaves the core's DMA at 40 960 ps and lands after
    // 409 600 ps on the link and 1 us of latency.
    let mut w = simple(2);
    let dom = all(&mut w);
    let data = w.alloc_window(&dom, "data", DType::F32, &[1, 1024]).unwrap();
    let log: Arc<Mutex<Vec<u64>>> = Arc::default();
    let l = log.clone();
    w.dispatch(
        0,
        Dispatch::kernel("fence", 1, move |core| {
            core.remote_store(&Tile::from_slice(1, 1024, &[2.0f32; 1024])?, &data, 1, &[0, 0], AtomicType::None)?;
            l.lock().push(core.now().as_ps());
            core.fence()?;
            l.lock().push(core.now().as_ps());
            core.fence()?;
            l.lock().push(core.now().as_ps());
            Ok(())
        })
        .in_domain(&dom),
    )
    .unwrap();
    let r = w.run().unwrap();
    assert_eq!(*log.lock(), vec![40_960, 1_409_600, 1_409_600]);
    // The block, and so the dispatch, ends when its write has landed.
    assert_eq!(r.dispatches[0].end.as_ps(), 1_409_600);
}

#[test]
fn a_load_after_a_store_to_the_same_bytes_sees_the_store() {
    let mut w = simple(1);
    let dom = all(&mut w);
    let data = w.alloc_window(&dom, "data", DType::F32, &[1, 256]).unwrap();
    let log: Arc<Mutex<Vec<(u64, f32)>>> = Arc::default();
    let l = log.clone();
    w.dispatch_all(
        &dom,
        Dispatch::kernel("raw", 1, move |core| {
            core.store(&Tile::from_slice(1, 256, &[3.0f32; 256])?, &data, &[0, 0])?;
            let t = core.load(&data, &[0, 0], &[1, 256])?;
            l.lock().push((core.now().as_ps(), t.to_vec::<f32>()?[255]));
            Ok(())
        }),
    )
    .unwrap();
    w.options_mut().check = true;
    let r = w.run().unwrap();
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    // Store: 1 KiB at 100 GB/s lands at 10 240 ps; the load starts then and takes as long.
    assert_eq!(*log.lock(), vec![(20_480, 3.0)]);
}

#[test]
fn a_relaxed_fabric_in_the_config_lets_notifies_overtake() {
    let toml = crate::common::simple_toml(2).replace("port_gbps = inf", "port_gbps = inf\nordering = \"relaxed\"");
    let mut w = Config::from_toml(&toml, "relaxed").unwrap().world().unwrap();
    w.options_mut().check = true;
    let dom = all(&mut w);
    let data = w.alloc_window(&dom, "data", DType::F32, &[1, 4096]).unwrap();
    let sig = w.alloc_window(&dom, "signal", DType::I32, &[2, 1]).unwrap();
    let woke: Arc<Mutex<u64>> = Arc::default();
    let k = woke.clone();
    let r = run_on_all(&mut w, &dom, "overtake", 1, move |core| {
        if core.rank() == 0 {
            core.remote_store(&Tile::from_slice(1, 4096, &[1.0f32; 4096])?, &data, 1, &[0, 0], AtomicType::None)?;
            return core.notify(&sig, 1, &[0, 0], 1, NotifyOp::AtomicAdd);
        }
        core.wait(&sig, &[0, 0], 1, WaitCmp::Ge)?;
        *k.lock() = core.now().as_ps();
        core.load(&data, &[0, 0], &[1, 4096]).map(|_| ())
    });
    // 16 KiB go out in four 4 KiB packets of 409 600 ps on the link, one after another. The
    // notify, sent at 173 840 ps (the 163 840 ps DMA, then 10 ns), takes the link right after
    // the first packet: 400 ps for itself, then 1 us of latency. Three packets are still to go.
    assert_eq!(*woke.lock(), 409_600 + 400 + 1_000_000);
    assert_eq!(of(&r.findings, FindingKind::StaleRead).len(), 1, "{:#?}", r.findings);
}

/// Rank 1 writes rank 0's inbox and notifies; rank 0's task `defer` defers on the notify and
/// task `consume`, after it, reads the inbox (with `order`), or reads with no dependency.
fn deferred_consumer(order: bool) -> Vec<Finding> {
    let mut w = a2a3();
    w.options_mut().check = true;
    let dom = w.create_domain("pair", &[0, 1], DomainOptions::default()).unwrap();
    let inbox = w.alloc_window(&dom, "inbox", DType::F32, &[1, 64]).unwrap();
    let flag = w.alloc_window(&dom, "flag", DType::I32, &[1, 1]).unwrap();
    let (i1, f1) = (inbox.clone(), flag.clone());
    w.dispatch(
        1,
        Dispatch::kernel("produce", 1, move |core| {
            core.remote_store(&Tile::from_slice(1, 64, &[5.0f32; 64])?, &i1, 0, &[0, 0], AtomicType::None)?;
            core.notify(&f1, 0, &[0, 0], 1, NotifyOp::AtomicAdd)
        })
        .in_domain(&dom),
    )
    .unwrap();
    let mut d = Dispatch::new("consume");
    let defer = d.add(Task::new("defer", 1, move |core| {
        core.defer_wait(&[DeferCond { signal: flag.clone(), offsets: vec![0, 0], expected: 1 }])
    }));
    let consume = Task::new("consume", 1, move |core| core.load(&inbox, &[0, 0], &[1, 64]).map(|_| ()));
    d.add(if order { consume.after(&[defer]) } else { consume });
    w.dispatch(0, d.in_domain(&dom)).unwrap();
    w.run().unwrap();
    w.last_findings().to_vec()
}

#[test]
fn a_deferred_condition_orders_its_dependents_after_the_notify() {
    assert!(deferred_consumer(true).is_empty(), "{:#?}", deferred_consumer(true));
    let found = deferred_consumer(false);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!((found[0].sites[0].op.as_str(), found[0].sites[1].op.as_str()), ("load", "remote_store"));
}

#[test]
fn a_store_that_resets_a_cell_races_with_an_unordered_add() {
    let mut w = a2a3();
    w.options_mut().check = true;
    let dom = all(&mut w);
    let sig = w.alloc_window(&dom, "signal", DType::I32, &[8, 1]).unwrap();
    w.dispatch_all(
        &dom,
        Dispatch::kernel("store_reset", 1, move |core| match core.rank() {
            0 => {
                core.wait(&sig, &[1, 0], 1, WaitCmp::Ge)?;
                // The reset is ordered after the first add only.
                core.store(&Tile::from_slice(1, 1, &[0i32])?, &sig, &[1, 0])
            }
            1 => {
                core.notify(&sig, 0, &[1, 0], 1, NotifyOp::AtomicAdd)?;
                core.notify(&sig, 0, &[1, 0], 1, NotifyOp::AtomicAdd)
            }
            _ => Ok(()),
        }),
    )
    .unwrap();
    let r = w.run().unwrap();
    let mixed = of(&r.findings, FindingKind::SetMixedWithAdd);
    assert_eq!(mixed.len(), 1, "{:#?}", r.findings);
    let ops: Vec<(&str, usize)> = mixed[0].sites.iter().map(|s| (s.op.as_str(), s.rank)).collect();
    assert_eq!(ops, [("notify AtomicAdd", 1), ("store", 0)]);
    assert_eq!(of(&r.findings, FindingKind::DataRace).len(), 0);
}

#[test]
fn a_wait_sees_its_own_notify_in_flight() {
    // Rank 0 consumes a credit, then takes it back with a self-notify of -1 that release
    // ordering holds behind a 16 KiB remote store (landing near 3.7 us), and waits for >= 2.
    // Rank 1's second credit lands at about 2 us: the cell reads 2 then, but rank 0's own -1
    // makes it 1, so the wait must hold until the third credit at about 51 us.
    let mut w = simple(2);
    let dom = all(&mut w);
    let sig = w.alloc_window(&dom, "signal", DType::I32, &[2, 1]).unwrap();
    let data = w.alloc_window(&dom, "data", DType::F32, &[1, 4096]).unwrap();
    let woke: Arc<Mutex<u64>> = Arc::default();
    let k = woke.clone();
    run_on_all(&mut w, &dom, "own_notify", 1, move |core| {
        if core.rank() == 1 {
            for pause in [1_000, 49_000, 0] {
                core.notify(&sig, 0, &[1, 0], 1, NotifyOp::AtomicAdd)?;
                core.compute(pause);
            }
            return Ok(());
        }
        core.wait(&sig, &[1, 0], 1, WaitCmp::Ge)?;
        core.remote_store(&Tile::from_slice(1, 4096, &[1.0f32; 4096])?, &data, 1, &[0, 0], AtomicType::None)?;
        core.notify(&sig, 0, &[1, 0], -1, NotifyOp::AtomicAdd)?;
        core.wait(&sig, &[1, 0], 2, WaitCmp::Ge)?;
        *k.lock() = core.now().as_ps();
        Ok(())
    });
    // The third credit: issued at 20 ns + 1 us + 49 us of compute, 10 ns issue, 400 ps on the
    // link, 1 us latency.
    assert_eq!(*woke.lock(), 10_000 + 1_000_000 + 10_000 + 49_000_000 + 10_000 + 400 + 1_000_000);
}

#[test]
fn a_put_or_get_after_the_cores_own_store_is_clean_under_jitter() {
    // Program order puts the copy after the store: no stale read, whatever the timing.
    for via_get in [false, true] {
        let mut w = a2a3();
        dispatch_store_then_copy(&mut w, 4096, via_get, |r| vec![r as f32 + 1.0; 4096]);
        let opts = CheckOptions { seeds: 10, op_jitter: SimDuration::from_us(2), ..CheckOptions::default() };
        let r = w.check(&opts).unwrap();
        assert!(r.findings.is_empty(), "via_get {via_get}: {:#?}", r.findings);
    }
}

#[test]
fn the_catalogue_caps_a_collective_at_the_ranks_the_host_api_runs_it_on() {
    // The same rule as the host API's (`collectives::max_ranks`): PyPTO's HOST builtins stop
    // at kMaxSupportedRanks; rhd, the SDMA allgather and the InCore lowerings do not.
    let max = |name: &str| catalogue().into_iter().find(|c| c.name == name).map(|c| c.max_ranks);
    assert_eq!(max("allreduce-mesh-host"), Some(Some(16)));
    assert_eq!(max("barrier-host"), Some(Some(16)));
    assert_eq!(max("allreduce-rhd-host"), Some(None));
    assert_eq!(max("allgather-sdma-mesh-host"), Some(None));
    assert_eq!(max("allreduce-mesh-incore"), Some(None));
}

/// The zoo's broken polling protocols end as livelocks naming the polled cell, its value and
/// condition and the line of the loop, in well under a second each.
#[test]
fn broken_polling_protocols_are_livelocks_at_the_loops_line() {
    let cases: [(&str, &str, &str, &str); 5] = [
        (
            "broken-poll-wrong-cell",
            "signal[1, 0]` for >= 1 but it holds 0",
            "nobody ever wrote this cell",
            "spin(core, &sig, &[me, 0]",
        ),
        (
            "broken-poll-reset-too-early",
            "signal[0, 0]` for >= 1 but it holds 0",
            "wrote it back (notify Set 0)",
            "spin(core, &sig, &[0, 0], 1",
        ),
        (
            "broken-poll-credit-not-returned",
            "signal[0, 0]` for >= 1 but it holds 0",
            "never sent (or returned)",
            "spin(core, &sig, &[0, 0], 1",
        ),
        (
            "broken-poll-eq-overshoot",
            "signal[1, 0]` for == 3 but it holds 4",
            "an Eq poll misses overshoot",
            "spin(core, &sig, &[1, 0], 3",
        ),
        (
            "broken-read-scalar-wrong-rank",
            "signal[0, 0]` but it holds 0",
            "nobody ever wrote this element",
            "core.read_scalar(&sig, &[0, 0])",
        ),
    ];
    let source = include_str!("../../../src/programs/broken_polls.rs");
    for (name, polls, hint, code) in cases {
        let t0 = std::time::Instant::now();
        let found = zoo(name, 2);
        assert!(t0.elapsed() < std::time::Duration::from_secs(5), "{name}: {:?}", t0.elapsed());
        let live = of(&found, FindingKind::Livelock);
        assert_eq!(live.len(), 1, "{name}: {found:#?}");
        let f = live[0];
        assert!(f.message.contains(polls), "{name}: {}", f.message);
        assert!(f.message.contains(hint), "{name}: {}", f.message);
        let at = f.sites[0].location.as_deref().unwrap_or_default();
        assert!(at.starts_with("src/programs/broken_polls.rs:"), "{name}: {at}");
        let at: usize = at.split(':').nth(1).unwrap().parse().unwrap();
        let text = source.lines().nth(at - 1).unwrap();
        assert!(text.contains(code), "{name}: line {at} is `{text}`");
    }
}

/// No correct program or collective is taken for a livelock even by the most eager rule (one
/// poll with nothing else happening), unperturbed and under jitter.
#[test]
fn no_correct_program_or_collective_is_a_livelock_even_at_one_poll() {
    use ranksim::measure::{Budgets, Measure};
    let cfg = Config::default_preset();
    let opts = CheckOptions { seeds: 3, ..CheckOptions::default() };
    for c in catalogue().iter().filter(|c| !c.is_broken()) {
        for p in [2, 8] {
            let m = Measure { budgets: Budgets { livelock_polls: 1, ..Budgets::default() }, ..Measure::new(p) };
            let (r, _) = ranksim_cli::checker::check_traced(&cfg, c, &m, &opts).unwrap();
            assert!(r.is_clean(), "{} on {p} ranks: {:#?}", c.name, r.findings);
        }
    }
}
