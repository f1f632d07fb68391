//! Run options: timing-only mode gives the same times without payload, seeded jitter is
//! reproducible and off by default, and a traced run records its timeline.

use crate::coll_common::setup;
use collectives::{AllReduce, Kind, Mode, Path};
use ranksim::collectives;
use ranksim::prelude::*;
use ranksim::sim_core::trace::FlowKind;
use ranksim::sim_core::{Jitter, RunOptions, RunReport};

/// A mesh allreduce of `size` f32 on 4 ranks with 2 blocks, three back-to-back calls.
fn allreduce_run(size: usize, timing_only: bool, opts: RunOptions) -> (RunReport, Vec<f32>) {
    let (mut w, dom) = if timing_only {
        let mut w = ranksim::Config::default_preset().world().unwrap();
        w.set_timing_only().unwrap();
        let d = w.create_domain("comm_d0", &[0, 1, 2, 3], DomainOptions::default()).unwrap();
        (w, d)
    } else {
        setup(4)
    };
    *w.options_mut() = opts;
    let data = w.alloc_window(&dom, "data", DType::F32, &[size]).unwrap();
    let spec = AllReduce { op: ReduceOp::Sum, mode: Mode::Mesh, path: Path::Host, core_num: 2 };
    let sig = w
        .alloc_window(
            &dom,
            "sig",
            DType::I32,
            &collectives::signal_shape(Kind::AllReduce, Mode::Mesh, Path::Host, 4, 2),
        )
        .unwrap();
    for r in 0..4 {
        w.write(&data, r, &vec![r as f32 + 0.5; size]).unwrap();
    }
    for _ in 0..3 {
        collectives::allreduce(&mut w, &data, &sig, spec).unwrap();
    }
    let report = w.run().unwrap();
    let out = w.read::<f32>(&data, 1).unwrap();
    (report, out)
}

#[test]
fn timing_only_mode_gives_the_same_times_without_payload() {
    let (with, data) = allreduce_run(5000, false, RunOptions::default());
    let (without, zeros) = allreduce_run(5000, true, RunOptions::default());
    assert_eq!(with.dispatches, without.dispatches);
    assert_eq!(with.traffic, without.traffic);
    assert_eq!(with.stats, without.stats);
    assert_eq!(data[0], 128.0, "8 after the first sum, then 32, then 128");
    assert!(zeros.iter().all(|&x| x == 0.0), "timing-only reads give zeros");
}

#[test]
fn a_timing_only_input_is_staged_without_values() {
    // A task reading a GM tensor needs its producer: a host write, or in a timing-only world
    // (which keeps no values) `mark_staged`. Without either the dispatch is refused.
    let reader = |staged: bool| {
        let mut w = ranksim::Config::default_preset().world().unwrap();
        w.set_timing_only().unwrap();
        let dom = w.create_domain("comm_d0", &[0], DomainOptions::default()).unwrap();
        let x = w.alloc_tensor("x", DType::F32, &[1, 64]).unwrap();
        if staged {
            w.mark_staged(&x, 0).unwrap();
        }
        let xk = x.clone();
        let task = Task::new("read", 1, move |core| core.load(&xk, &[0, 0], &[1, 64]).map(|_| ())).input(&x);
        let mut d = Dispatch::new("d");
        d.add(task);
        w.dispatch_all(&dom, d).map(|_| w.run().unwrap().device_time())
    };
    assert!(reader(false).unwrap_err().to_string().contains("the host never staged it"));
    assert!(reader(true).unwrap() > SimDuration::ZERO);
    let (mut w, _) = setup(1);
    let x = w.alloc_tensor("x", DType::F32, &[4]).unwrap();
    assert!(w.mark_staged(&x, 0).unwrap_err().to_string().contains("keeps values"));
}

#[test]
fn timing_only_mode_must_be_chosen_before_allocating() {
    let (mut w, _) = setup(2);
    assert!(w.set_timing_only().unwrap_err().to_string().contains("before any domain or buffer"));
}

#[test]
fn jitter_is_seeded_reproducible_and_off_by_default() {
    let jit = |seed| RunOptions {
        jitter: Some(Jitter { seed, op: SimDuration::from_ns(50), dispatch: SimDuration::from_ns(2000) }),
        ..RunOptions::default()
    };
    let (plain, _) = allreduce_run(3000, false, RunOptions::default());
    let (zero, _) = allreduce_run(
        3000,
        false,
        RunOptions {
            jitter: Some(Jitter { seed: 1, op: SimDuration::ZERO, dispatch: SimDuration::ZERO }),
            ..RunOptions::default()
        },
    );
    assert_eq!(plain.dispatches, zero.dispatches, "zero jitter changes nothing");
    let (a, da) = allreduce_run(3000, false, jit(7));
    let (b, db) = allreduce_run(3000, false, jit(7));
    let (c, _) = allreduce_run(3000, false, jit(8));
    assert_eq!(a.dispatches, b.dispatches, "same seed, same run");
    assert_eq!(da, db);
    assert_ne!(a.dispatches, c.dispatches, "another seed, another run");
    assert_ne!(a.dispatches, plain.dispatches);
    // The three calls now take different times on rank 0: the rounds differ.
    let walls: Vec<_> = a.of_chip(0).map(|d| d.device_wall()).collect();
    assert!(walls.windows(2).any(|w| w[0] != w[1]), "{walls:?}");
    // Jitter never reorders a link: the data is still right.
    assert_eq!(da[0], 128.0);
}

/// Each chip draws its jitter from a stream of its own: rank 0's jittered local work takes the
/// same time whether rank 1 does little or much meanwhile (with one stream for the run,
/// rank 1's draws would shift rank 0's).
#[test]
fn a_chips_jitter_does_not_depend_on_other_chips_draws() {
    let rank0_end = |rank1_loads: usize| {
        let (mut w, dom) = setup(2);
        w.options_mut().jitter =
            Some(Jitter { seed: 3, op: SimDuration::from_ns(50), dispatch: SimDuration::from_ns(500) });
        let buf = w.alloc_window(&dom, "buf", DType::F32, &[1024]).unwrap();
        let d = Dispatch::kernel("local", 1, move |core| {
            let n = if core.rank() == 0 { 6 } else { rank1_loads };
            for i in 0..n {
                let t = core.load(&buf, &[(i % 4) * 256], &[256])?;
                core.store(&t, &buf, &[(i % 4) * 256])?;
            }
            Ok(())
        });
        w.dispatch_all(&dom, d.in_domain(&dom)).unwrap();
        let report = w.run().unwrap();
        report.of_chip(0).map(|d| d.device_wall()).collect::<Vec<_>>()
    };
    let few = rank0_end(1);
    assert_eq!(few, rank0_end(40));
    assert_ne!(
        few,
        {
            let (mut w, dom) = setup(2);
            let buf = w.alloc_window(&dom, "buf", DType::F32, &[1024]).unwrap();
            let d = Dispatch::kernel("local", 1, move |core| {
                for i in 0..6 {
                    let t = core.load(&buf, &[(i % 4) * 256], &[256])?;
                    core.store(&t, &buf, &[(i % 4) * 256])?;
                }
                Ok(())
            });
            w.dispatch(0, d.in_domain(&dom)).unwrap();
            w.run().unwrap().of_chip(0).map(|d| d.device_wall()).collect::<Vec<_>>()
        },
        "the jitter shows"
    );
}

#[test]
fn a_traced_run_records_operations_flows_and_links() {
    let (report, _) = allreduce_run(600, false, RunOptions { trace: true, ..RunOptions::default() });
    let trace = report.trace.expect("a traced run has a trace");
    let names: std::collections::BTreeSet<&str> = trace.ops.iter().map(|o| o.name).collect();
    for n in ["load", "remote_load", "store", "notify", "wait", "vector"] {
        assert!(names.contains(n), "{n} missing from {names:?}");
    }
    assert!(trace.flows.iter().any(|f| f.kind == FlowKind::NotifyToWait));
    assert!(!trace.links.is_empty());
    assert_eq!(trace.dispatches.len(), 12, "3 calls x 4 ranks");
    // Every flow links two recorded operations, notify first.
    let by_id: std::collections::BTreeMap<u64, _> = trace.ops.iter().map(|o| (o.id, o)).collect();
    for f in trace.flows.iter().filter(|f| f.kind == FlowKind::NotifyToWait) {
        assert_eq!(by_id[&f.from].name, "notify");
        assert_eq!(by_id[&f.to].name, "wait");
        assert!(by_id[&f.from].start <= by_id[&f.to].end);
    }
    // Untraced runs carry none and give the same times.
    let (plain, _) = allreduce_run(600, false, RunOptions::default());
    assert!(plain.trace.is_none());
    assert_eq!(plain.dispatches, report.dispatches);
}

#[test]
fn a_traced_put_flows_into_its_notify() {
    let (mut w, dom) = setup(2);
    w.options_mut().trace = true;
    let x = w.alloc_window(&dom, "x", DType::F32, &[1, 64]).unwrap();
    let s = w.alloc_window(&dom, "s", DType::I32, &[2, 1]).unwrap();
    let (xk, sk) = (x.clone(), s.clone());
    w.dispatch_all(
        &dom,
        Dispatch::kernel("push", 1, move |c| {
            let (me, peer) = (c.rank(), 1 - c.rank());
            c.put(&xk, peer, &xk, &CopyOpts::new())?;
            c.notify(&sk, peer, &[me, 0], 1, NotifyOp::AtomicAdd)?;
            c.wait(&sk, &[peer, 0], 1, WaitCmp::Ge)
        }),
    )
    .unwrap();
    let trace = w.run().unwrap().trace.unwrap();
    let by_id: std::collections::BTreeMap<u64, _> = trace.ops.iter().map(|o| (o.id, o)).collect();
    let writes: Vec<_> = trace.flows.iter().filter(|f| f.kind == FlowKind::WriteThenNotify).collect();
    assert_eq!(writes.len(), 2);
    for f in writes {
        assert_eq!((by_id[&f.from].name, by_id[&f.to].name), ("put", "notify"));
    }
    let json = ranksim::formats::to_chrome_json(&trace, 2);
    assert!(json.contains(r#""name":"put","cat":"op""#));
    assert!(json.contains(r#""name":"write->notify""#));
}
