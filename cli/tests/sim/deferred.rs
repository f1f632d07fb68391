//! `defer_wait` (reference §2.6) and the finite-core deadlock it avoids (PyPTO
//! test_l3_deferred_completion.py).

use crate::common::{a2a3, all, epoch_dispatch, simple};
use ranksim::prelude::*;

#[test]
fn deferred_waiters_release_every_core_across_epochs() {
    let mut w = a2a3();
    let ranks = [0usize, 1];
    let dom = w.create_domain("comm_d0", &ranks, DomainOptions::persistent_no_reset()).unwrap();
    let flag = w.alloc_window(&dom, "flag", DType::I32, &[1, 1]).unwrap();
    let payload = w.alloc_window(&dom, "payload", DType::I32, &[1, 8]).unwrap();
    let out = w.alloc_tensor("out", DType::I32, &[48, 8]).unwrap();
    for epoch in 1..=3 {
        w.dispatch_all(&dom, epoch_dispatch(48, epoch, &flag, &payload, &out, false)).unwrap();
        let report = w.run().unwrap();
        assert_eq!(report.dispatches.len(), 2);
        for r in 0..2 {
            let peer = (r + 1) % 2;
            let want: Vec<i32> = (0..8).map(|j| if j == 0 { epoch } else { (peer * 10 + j) as i32 }).collect();
            let got = w.read::<i32>(&out, r).unwrap();
            for i in 0..48 {
                assert_eq!(got[i * 8..i * 8 + 8], want[..], "epoch {epoch} rank {r} consumer {i}");
            }
            assert_eq!(w.read::<i32>(&flag, r).unwrap(), vec![epoch], "the flag keeps its epoch (reset off)");
        }
    }
}

#[test]
fn blocking_waiters_on_every_core_deadlock_with_a_placement_report() {
    let mut w = a2a3();
    let dom = w.create_domain("comm_d0", &[0, 1], DomainOptions::default()).unwrap();
    let flag = w.alloc_window(&dom, "flag", DType::I32, &[1, 1]).unwrap();
    let payload = w.alloc_window(&dom, "payload", DType::I32, &[1, 8]).unwrap();
    let out = w.alloc_tensor("out", DType::I32, &[48, 8]).unwrap();
    w.dispatch_all(&dom, epoch_dispatch(48, 1, &flag, &payload, &out, true)).unwrap();
    let SimError::Deadlock(report) = w.run().unwrap_err() else { panic!("expected a deadlock") };
    assert_eq!(report.waits.len(), 96, "48 blocked waiters per rank");
    let publishers: Vec<_> = report.stuck.iter().filter(|s| s.task == "publisher").collect();
    assert_eq!(publishers.len(), 2);
    assert!(
        publishers[0].reason.contains("only 0 of 48 are free (48 occupied by blocked waits)"),
        "{}",
        publishers[0].reason
    );
    let text = SimError::Deadlock(report.clone()).to_string();
    assert!(text.contains("task `publisher` (1 block(s)) cannot be placed"), "{text}");
    assert!(text.contains("consumer0") && text.contains("depends on `waiter0`"), "{text}");
}

#[test]
fn an_already_ready_registration_completes_at_once() {
    // PyPTO test_deferred_completion_reuses_already_ready_registration: a primed counter and
    // one waiter; the consumer runs right after.
    let mut w = simple(1);
    let dom = all(&mut w);
    let flag = w.alloc_window(&dom, "flag", DType::I32, &[1, 1]).unwrap();
    let out = w.alloc_tensor("out", DType::I32, &[1, 1]).unwrap();
    w.write(&flag, 0, &[5]).unwrap();
    let mut d = Dispatch::new("primed");
    let f = flag.clone();
    let waiter = d.add(Task::new("waiter", 1, move |c| {
        c.defer_wait(&[DeferCond { signal: f.clone(), offsets: vec![0, 0], expected: 5 }])
    }));
    let o = out.clone();
    d.add(Task::new("consumer", 1, move |c| c.store(&Tile::from_slice(1, 1, &[42i32])?, &o, &[0, 0])).after(&[waiter]));
    w.dispatch_all(&dom, d).unwrap();
    w.run().unwrap();
    assert_eq!(w.read::<i32>(&out, 0).unwrap(), vec![42]);
}

#[test]
fn deferred_conditions_compare_unsigned() {
    // -1 reads as u32::MAX and satisfies any deferred condition.
    let mut w = simple(2);
    let dom = all(&mut w);
    let flag = w.alloc_window(&dom, "flag", DType::I32, &[1, 1]).unwrap();
    let mut d = Dispatch::new("unsigned");
    let f = flag.clone();
    d.add(Task::new("waiter", 1, move |c| {
        c.defer_wait(&[DeferCond { signal: f.clone(), offsets: vec![0, 0], expected: 1_000_000 }])
    }));
    let f = flag.clone();
    d.add(Task::new("setter", 1, move |c| c.notify(&f, c.rank(), &[0, 0], -1, NotifyOp::Set)));
    w.dispatch_all(&dom, d).unwrap();
    w.run().unwrap();
}

#[test]
fn a_never_satisfied_deferred_condition_is_reported() {
    let mut w = simple(1);
    let dom = all(&mut w);
    let flag = w.alloc_window(&dom, "flag", DType::I32, &[2, 1]).unwrap();
    let mut d = Dispatch::new("stuck");
    let f = flag.clone();
    d.add(Task::new("waiter", 1, move |c| {
        c.defer_wait(&[DeferCond { signal: f.clone(), offsets: vec![1, 0], expected: 3 }])
    }));
    w.dispatch_all(&dom, d).unwrap();
    let SimError::Deadlock(report) = w.run().unwrap_err() else { panic!("expected a deadlock") };
    assert!(report.waits.is_empty());
    assert_eq!(report.deferred.len(), 1);
    let dw = &report.deferred[0];
    assert_eq!(
        (dw.task.as_str(), dw.buffer.as_str(), dw.coords.clone(), dw.current, dw.cond),
        ("waiter", "flag", vec![1, 0], 0, ranksim::sim_core::Cond::UnsignedGe(3))
    );
    assert!(dw.cond.symbol().contains("unsigned"));
}

#[test]
fn deferred_limits_are_enforced() {
    // At most 64 conditions per task.
    let mut w = simple(1);
    let dom = all(&mut w);
    let flag = w.alloc_window(&dom, "flag", DType::I32, &[65, 1]).unwrap();
    let f = flag.clone();
    w.dispatch_all(
        &dom,
        Dispatch::kernel("many", 1, move |c| {
            let conds: Vec<DeferCond> =
                (0..65).map(|i| DeferCond { signal: f.clone(), offsets: vec![i, 0], expected: 1 }).collect();
            c.defer_wait(&conds)
        }),
    )
    .unwrap();
    let e = w.run().unwrap_err().to_string();
    assert!(e.contains("65 deferred conditions") && e.contains("at most 64 per task"), "{e}");

    // At most 64 deferred tasks pending per chip.
    let mut w = a2a3();
    let dom = w.create_domain("d", &[0], DomainOptions::default()).unwrap();
    let flag = w.alloc_window(&dom, "flag", DType::I32, &[1, 1]).unwrap();
    let mut d = Dispatch::new("overflow");
    for i in 0..65 {
        let f = flag.clone();
        d.add(Task::new(&format!("w{i}"), 1, move |c| {
            c.defer_wait(&[DeferCond { signal: f.clone(), offsets: vec![0, 0], expected: 1 }])
        }));
    }
    w.dispatch(0, d.in_domain(&dom)).unwrap();
    let e = w.run().unwrap_err().to_string();
    assert!(e.contains("already has 64 deferred tasks") && e.contains("PTO2_ERROR_ASYNC_WAIT_OVERFLOW"), "{e}");
}
