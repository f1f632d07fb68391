//! Signal cells in plain GM (issue 28): pto-isa's kernels TTEST / TWAIT ready-queue counters
//! that live in GM from `aclrtMalloc`, not in a window. A rank's INT32 GM tensor works as a
//! signal for its own cores: `wait`, `test_signal` and a `notify` naming the rank itself, at
//! the cost of a window cell on the same chip.

use crate::common::{all, simple};
use parking_lot::Mutex;
use ranksim::prelude::*;
use std::sync::Arc;

/// Block 1 of rank 0 computes 100 cycles (100 ns) and sets cell 0 of `cell` (a GM or window
/// INT32 tensor) to 1; block 0 tests it at once, then waits for it. Returns block 0's test
/// result and the time its wait returned (ps).
fn handoff(gm: bool) -> (bool, u64) {
    let mut w = simple(2);
    let dom = all(&mut w);
    let cell = if gm {
        w.alloc_tensor("queue_count", DType::I32, &[1, 8]).unwrap()
    } else {
        w.alloc_window(&dom, "queue_count", DType::I32, &[1, 8]).unwrap()
    };
    let log = Arc::new(Mutex::new((true, 0)));
    let l = log.clone();
    let k = Dispatch::kernel("handoff", 2, move |core| {
        if core.block_idx() == 1 {
            core.compute(100);
            let me = core.rank();
            return core.notify(&cell, me, &[0, 0], 1, NotifyOp::Set);
        }
        let ready = core.test_signal(&cell, &[0, 0], 1, WaitCmp::Ge)?;
        core.wait(&cell, &[0, 0], 1, WaitCmp::Ge)?;
        *l.lock() = (ready, core.now().as_ps());
        Ok(())
    });
    w.dispatch(0, k.in_domain(&dom)).unwrap();
    w.run().unwrap();
    *log.lock()
}

#[test]
fn a_gm_cell_hands_off_between_blocks_as_a_window_cell_does() {
    let (ready, woken) = handoff(true);
    assert!(!ready, "the count is 0 before block 1 sets it");
    // The notify issues after 100 ns of compute, costs notify_issue_ns (10 ns) and lands
    // through the core's MTE3 (4 bytes at 100 GB/s = 40 ps) into the chip's unlimited HBM.
    assert_eq!(woken, 100_000 + 10_000 + 40);
    assert_eq!(handoff(false), (false, woken), "a window cell on the same chip costs the same");
}

#[test]
fn a_gm_cell_cannot_be_notified_by_another_rank() {
    let mut w = simple(2);
    let dom = all(&mut w);
    let gm = w.alloc_tensor("queue_count", DType::I32, &[1, 8]).unwrap();
    let k = Dispatch::kernel("remote", 1, move |core| core.notify(&gm, 1, &[0, 0], 1, NotifyOp::Set));
    w.dispatch(0, k.in_domain(&dom)).unwrap();
    let e = w.run().unwrap_err().to_string();
    for part in ["notify", "`queue_count` is a GM tensor", "only this rank (0)", "not rank 1", "alloc_window"] {
        assert!(e.contains(part), "{e:?} lacks {part:?}");
    }
}

#[test]
fn a_gm_cell_must_be_int32() {
    let mut w = simple(1);
    let dom = all(&mut w);
    let gm = w.alloc_tensor("flags", DType::I16, &[1, 8]).unwrap();
    let k = Dispatch::kernel("ttest", 1, move |core| core.test_signal(&gm, &[0, 0], 1, WaitCmp::Ge).map(|_| ()));
    w.dispatch(0, k.in_domain(&dom)).unwrap();
    let e = w.run().unwrap_err().to_string();
    assert!(e.contains("test_signal") && e.contains("signal `flags` is i16") && e.contains("INT32"), "{e}");
}
