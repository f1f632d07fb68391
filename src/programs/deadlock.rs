//! A broken protocol: every rank waits for its left neighbour's notify before sending its own,
//! so nobody ever sends. The run ends with a deadlock report instead of hanging.

use super::common::{Outcome, domain};
use sim_core::{DType, Dispatch, NotifyOp, SimResult, WaitCmp, World};

pub(crate) fn run(world: &mut World, ranks: usize) -> SimResult<Outcome> {
    let dom = domain(world, ranks)?;
    let sig = world.alloc_window(&dom, "signal", DType::I32, &[ranks, 1])?;
    let s = sig.clone();
    world.dispatch_all(
        &dom,
        Dispatch::kernel("wait_then_notify", 1, move |core| {
            let (me, n) = (core.rank(), core.nranks());
            core.wait(&s, &[(me + n - 1) % n, 0], 1, WaitCmp::Ge)?;
            core.notify(&s, (me + 1) % n, &[me, 0], 1, NotifyOp::AtomicAdd)
        }),
    )?;
    let report = world.run()?;
    Ok(Outcome { ok: false, detail: "the broken protocol unexpectedly completed".into(), report })
}
