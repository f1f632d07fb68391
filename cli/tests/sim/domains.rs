//! Comm domains (subsets, overlap) and window lifetimes across runs (reference §1.7, §1.8).

use crate::common::{dispatch_two_group_swap, simple};
use ranksim::prelude::*;

#[test]
fn two_overlapping_domains_swap_independently() {
    // PyPTO test_two_groups_independent_swap: domains {0,1} and {1,2}; chip 1 is in both and
    // has two independent windows.
    let mut w = simple(3);
    let outs = dispatch_two_group_swap(&mut w, 16, |chip| vec![chip as f32 + 1.0; 16]);
    let report = w.run().unwrap();
    assert_eq!(report.of_chip(1).count(), 2, "chip 1 runs one dispatch per domain");
    let read = |t: &Tensor, c: usize| w.read::<f32>(t, c).unwrap()[0];
    assert_eq!([read(&outs[0], 0), read(&outs[0], 1), read(&outs[0], 2)], [2.0, 1.0, 0.0]);
    assert_eq!([read(&outs[1], 0), read(&outs[1], 1), read(&outs[1], 2)], [0.0, 3.0, 2.0]);
}

/// PyPTO's signal exchange, run three times on one world with `opts`; returns each run's cells.
fn exchange_three_times(opts: DomainOptions) -> Vec<Vec<i32>> {
    let mut w = simple(2);
    let dom = w.create_domain("comm_d0", &[0, 1], opts).unwrap();
    let sig = w.alloc_window(&dom, "signal", DType::I32, &[1, 1]).unwrap();
    let mut runs = Vec::new();
    for _ in 0..3 {
        let s = sig.clone();
        w.dispatch_all(
            &dom,
            Dispatch::kernel("exchange", 1, move |core| {
                let me = core.rank();
                core.notify(&s, 1 - me, &[0, 0], me as i32 + 1, NotifyOp::AtomicAdd)?;
                core.wait(&s, &[0, 0], 1, WaitCmp::Ge)
            }),
        )
        .unwrap();
        w.run().unwrap();
        runs.push((0..2).map(|r| w.read::<i32>(&sig, r).unwrap()[0]).collect());
    }
    runs
}

#[test]
fn window_lifetimes_across_runs() {
    let fresh = vec![vec![2, 1]; 3];
    // Non-persistent windows are fresh every run.
    assert_eq!(exchange_three_times(DomainOptions::default()), fresh);
    // Persistent with the default reset: zeroed before each reuse.
    assert_eq!(exchange_three_times(DomainOptions::persistent()), fresh);
    // Persistent without reset: the counters keep growing ([4, 2] instead of [2, 1]).
    assert_eq!(exchange_three_times(DomainOptions::persistent_no_reset()), vec![vec![2, 1], vec![4, 2], vec![6, 3]]);
}

#[test]
fn self_notify_credit_reset_without_window_reset() {
    // PyPTO test_persistent_self_notify_credit_reset_without_window_reset: the protocol clears
    // its own credits, so reuse without reset still starts from zero.
    let mut w = simple(2);
    let dom = w.create_domain("comm_d0", &[0, 1], DomainOptions::persistent_no_reset()).unwrap();
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[1, 1]).unwrap();
    for _ in 0..3 {
        let s = sig.clone();
        w.dispatch_all(
            &dom,
            Dispatch::kernel("credits", 1, move |core| {
                for _ in 0..4 {
                    core.notify(&s, 1 - core.rank(), &[0, 0], 1, NotifyOp::AtomicAdd)?;
                }
                core.wait(&s, &[0, 0], 4, WaitCmp::Ge)?;
                core.notify(&s, core.rank(), &[0, 0], -4, NotifyOp::AtomicAdd)
            }),
        )
        .unwrap();
        w.run().unwrap();
        assert_eq!((w.read::<i32>(&sig, 0).unwrap(), w.read::<i32>(&sig, 1).unwrap()), (vec![0], vec![0]));
    }
}

#[test]
fn host_writes_after_a_run_start_from_a_fresh_window() {
    let mut w = simple(2);
    let dom = w.create_domain("comm_d0", &[0, 1], DomainOptions::default()).unwrap();
    let x = w.alloc_window(&dom, "x", DType::I32, &[2]).unwrap();
    let y = w.alloc_window(&dom, "y", DType::I32, &[2]).unwrap();
    let xk = x.clone();
    w.dispatch(
        0,
        Dispatch::kernel("fill", 1, move |c| c.store(&Tile::from_slice(1, 2, &[7, 7])?, &xk, &[0])).in_domain(&dom),
    )
    .unwrap();
    w.run().unwrap();
    assert_eq!(w.read::<i32>(&x, 0).unwrap(), vec![7, 7], "results stay readable after the run");
    w.write(&y, 0, &[1, 2]).unwrap();
    assert_eq!(w.read::<i32>(&x, 0).unwrap(), vec![0, 0], "staging into a used, non-persistent domain starts it fresh");
    assert_eq!(w.read::<i32>(&y, 0).unwrap(), vec![1, 2]);
    w.run().unwrap();
    assert_eq!(w.read::<i32>(&y, 0).unwrap(), vec![1, 2], "data staged before a run survives into it");
}

#[test]
fn a_dispatch_without_a_domain_sees_world_ranks() {
    let mut w = simple(3);
    let out = w.alloc_tensor("out", DType::I32, &[1, 2]).unwrap();
    for chip in 0..3 {
        let o = out.clone();
        w.dispatch(
            chip,
            Dispatch::kernel("who", 1, move |c| {
                c.store(&Tile::from_slice(1, 2, &[c.rank() as i32, c.nranks() as i32])?, &o, &[0, 0])
            }),
        )
        .unwrap();
    }
    w.run().unwrap();
    for chip in 0..3 {
        assert_eq!(w.read::<i32>(&out, chip).unwrap(), vec![chip as i32, 3]);
    }
}

#[test]
fn a_sub_domain_uses_dense_ranks() {
    let mut w = simple(4);
    let dom = w.create_domain("odd", &[3, 1], DomainOptions::default()).unwrap();
    let out = w.alloc_window(&dom, "out", DType::I32, &[1, 3]).unwrap();
    let o = out.clone();
    w.dispatch_all(
        &dom,
        Dispatch::kernel("who", 1, move |c| {
            c.store(&Tile::from_slice(1, 3, &[c.rank() as i32, c.nranks() as i32, c.world_rank() as i32])?, &o, &[0, 0])
        }),
    )
    .unwrap();
    w.run().unwrap();
    assert_eq!(w.read::<i32>(&out, 0).unwrap(), vec![0, 2, 3]);
    assert_eq!(w.read::<i32>(&out, 1).unwrap(), vec![1, 2, 1]);
}

#[test]
fn a_domain_refuses_windows_beyond_its_window_size() {
    let mut w = simple(2);
    let dom = w.allocate_domain("comm_d0", &[0, 1], 4096, DomainOptions::default()).unwrap();
    assert_eq!(w.window_limit(&dom), Some(4096));
    w.alloc_window(&dom, "data", DType::F32, &[1, 1000]).unwrap(); // 4000 bytes
    w.alloc_window(&dom, "sig", DType::I32, &[2, 3]).unwrap(); // 24 -> 32 bytes: 4032
    let e = w.alloc_window(&dom, "more", DType::F32, &[1, 20]).unwrap_err().to_string();
    for want in [
        "domain `comm_d0`",
        "window_size of 4096 bytes",
        "window `more`",
        "80 bytes, 96 rounded",
        "4032 bytes already",
        "needs 4128",
    ] {
        assert!(e.contains(want), "{want}: {e}");
    }
    assert_eq!(w.window_size(&dom), 4032, "a refused window takes nothing");
    w.alloc_window(&dom, "tail", DType::I8, &[64]).unwrap();
    assert_eq!(w.window_size(&dom), 4096, "a window that fills the size exactly fits");
    let unlimited = w.world_domain("all").unwrap();
    assert_eq!(w.window_limit(&unlimited), None);
}

/// One exchange on `dom` (rank r sends r + 1 + `base` to its peer); returns what each rank got.
fn exchange(w: &mut World, dom: &Domain, base: i32) -> Vec<i32> {
    let sig = w.alloc_window(dom, "signal", DType::I32, &[1, 1]).unwrap();
    let s = sig.clone();
    w.dispatch_all(
        dom,
        Dispatch::kernel("exchange", 1, move |core| {
            let me = core.rank();
            core.notify(&s, 1 - me, &[0, 0], me as i32 + 1 + base, NotifyOp::AtomicAdd)?;
            core.wait(&s, &[0, 0], 1, WaitCmp::Ge)
        }),
    )
    .unwrap();
    w.run().unwrap();
    (0..2).map(|r| w.read::<i32>(&sig, r).unwrap()[0]).collect()
}

#[test]
fn a_released_domain_frees_its_name_and_windows_for_the_next_one() {
    let mut w = simple(2);
    for round in 0..3 {
        let dom = w.allocate_domain("comm_d0", &[0, 1], 32, DomainOptions::default()).unwrap();
        assert_eq!(exchange(&mut w, &dom, round * 10), vec![2 + round * 10, 1 + round * 10], "round {round}");
        w.release_domain(&dom).unwrap();
        assert!(dom.info().is_freed(), "nothing queued: freed at once");
        assert_eq!(w.window_size(&dom), 0);
    }
}

#[test]
fn using_a_released_domain_is_an_error_naming_it() {
    let mut w = simple(2);
    let dom = w.allocate_domain("comm_d0", &[0, 1], 64, DomainOptions::default()).unwrap();
    let x = w.alloc_window(&dom, "x", DType::I32, &[1, 8]).unwrap();
    w.release_domain(&dom).unwrap();
    let e = w.release_domain(&dom).unwrap_err().to_string();
    assert!(e.contains("domain `comm_d0` was already released"), "{e}");
    let errors = [
        w.alloc_window(&dom, "y", DType::I32, &[1]).unwrap_err(),
        w.write(&x, 0, &[1i32; 8]).unwrap_err(),
        w.read::<i32>(&x, 1).unwrap_err(),
        w.dispatch_all(&dom, Dispatch::kernel("k", 1, |_| Ok(()))).unwrap_err(),
    ];
    let wants = [
        "window `y` cannot be allocated",
        "host write of window `x`",
        "host read of window `x`",
        "dispatch `k` to rank 0",
    ];
    for (e, want) in errors.iter().zip(wants) {
        let e = e.to_string();
        assert!(
            e.contains(want) && e.contains("domain `comm_d0` was released") && e.contains("windows freed"),
            "{want}: {e}"
        );
    }
    // A task of another domain declaring the released window.
    let other = w.world_domain("other").unwrap();
    let xk = x.clone();
    let mut d = Dispatch::new("d").in_domain(&other);
    d.add(Task::new("t", 1, move |c| c.load(&xk, &[0, 0], &[1, 8]).map(|_| ())).input(&x));
    let e = w.dispatch(0, d).unwrap_err().to_string();
    assert!(e.contains("task `t` of dispatch `d` on rank 0 declares x<i32>[1, 8] (window@comm_d0)"), "{e}");
    assert!(e.contains("domain `comm_d0` was released"), "{e}");
    // A kernel that captured the window, run after the windows were freed.
    let xk = x.clone();
    w.dispatch_all(&other, Dispatch::kernel("late", 1, move |c| c.load(&xk, &[0, 0], &[1, 8]).map(|_| ()))).unwrap();
    let e = w.run().unwrap_err().to_string();
    for want in ["task `late`", "load", "`x` is a window of domain `comm_d0`", "released", "freed"] {
        assert!(e.contains(want), "{want}: {e}");
    }
}

#[test]
fn a_domain_released_between_dispatches_lives_until_the_run_fence() {
    // simpler's model: `release` at the end of the `with` block only stops new use; the
    // windows are freed after the run that still uses them has drained.
    let mut w = simple(2);
    let out = w.alloc_tensor("out", DType::I32, &[1, 2]).unwrap();
    let first = w.allocate_domain("comm_d0", &[0, 1], 32, DomainOptions::default()).unwrap();
    let a = w.alloc_window(&first, "a", DType::I32, &[1, 2]).unwrap();
    let ak = a.clone();
    w.dispatch_all(
        &first,
        Dispatch::kernel("fill", 1, move |c| {
            c.compute(5000);
            c.store(&Tile::from_slice(1, 2, &[c.rank() as i32 + 7; 2])?, &ak, &[0, 0])
        }),
    )
    .unwrap();
    w.release_domain(&first).unwrap();
    assert!(!first.info().is_freed(), "a queued dispatch still uses it");
    let second = w.allocate_domain("comm_d0", &[0, 1], 32, DomainOptions::default()).unwrap();
    assert_ne!(first, second);
    let b = w.alloc_window(&second, "b", DType::I32, &[1, 2]).unwrap();
    let (ak, bk, o) = (a.clone(), b.clone(), out.clone());
    // A kernel of the second domain reads the first one's window in the same run (captured
    // before the release): still there.
    w.dispatch_all(
        &second,
        Dispatch::kernel("copy", 1, move |c| {
            let t = c.load(&ak, &[0, 0], &[1, 2])?;
            c.store(&t, &bk, &[0, 0])?;
            c.store(&t, &o, &[0, 0])
        }),
    )
    .unwrap();
    w.run().unwrap();
    assert!(first.info().is_freed() && !second.info().is_freed());
    assert_eq!((w.read::<i32>(&out, 0).unwrap(), w.read::<i32>(&out, 1).unwrap()), (vec![7, 7], vec![8, 8]));
    assert_eq!(w.read::<i32>(&b, 1).unwrap(), vec![8, 8]);
    assert!(w.read::<i32>(&a, 0).is_err());
}

#[test]
fn a_failed_run_still_frees_released_domains() {
    let mut w = simple(1);
    let dom = w.allocate_domain("d", &[0], 32, DomainOptions::default()).unwrap();
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[1, 1]).unwrap();
    w.dispatch_all(&dom, Dispatch::kernel("stuck", 1, move |c| c.wait(&sig, &[0, 0], 1, WaitCmp::Ge))).unwrap();
    w.release_domain(&dom).unwrap();
    assert!(matches!(w.run(), Err(SimError::Deadlock(_))));
    assert!(dom.info().is_freed());
}

#[test]
fn the_checker_reruns_a_program_before_freeing_what_it_released() {
    let mut w = simple(2);
    let dom = w.allocate_domain("comm_d0", &[0, 1], 32, DomainOptions::default()).unwrap();
    let sig = w.alloc_window(&dom, "signal", DType::I32, &[1, 1]).unwrap();
    w.dispatch_all(
        &dom,
        Dispatch::kernel("exchange", 1, move |core| {
            let me = core.rank();
            core.notify(&sig, 1 - me, &[0, 0], 1, NotifyOp::AtomicAdd)?;
            core.wait(&sig, &[0, 0], 1, WaitCmp::Ge)
        }),
    )
    .unwrap();
    w.release_domain(&dom).unwrap();
    let report = w.check(&CheckOptions { seeds: 3, ..CheckOptions::default() }).unwrap();
    assert!(report.is_clean(), "{:#?}", report.findings);
    assert_eq!(report.runs, 4);
    assert!(dom.info().is_freed());
}
