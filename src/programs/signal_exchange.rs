//! PyPTO `test_signal_exchange`: rank r AtomicAdds `r + 1` into the next rank's cell, waits for
//! its own cell to become >= 1 and reads it. Golden at P = 2: `[[2]], [[1]]`.

use super::common::{Outcome, domain};
use sim_core::{DType, Dispatch, NotifyOp, SimResult, WaitCmp, World};

pub(crate) fn run(world: &mut World, ranks: usize) -> SimResult<Outcome> {
    let dom = domain(world, ranks)?;
    let sig = world.alloc_window(&dom, "signal", DType::I32, &[1, 1])?;
    let out = world.alloc_tensor("out", DType::I32, &[1, 1])?;
    let (s, o) = (sig.clone(), out.clone());
    world.dispatch_all(
        &dom,
        Dispatch::kernel("signal_exchange", 1, move |core| {
            let (me, n) = (core.rank(), core.nranks());
            core.notify(&s, (me + 1) % n, &[0, 0], me as i32 + 1, NotifyOp::AtomicAdd)?;
            core.wait(&s, &[0, 0], 1, WaitCmp::Ge)?;
            let v = core.load(&s, &[0, 0], &[1, 1])?;
            core.store(&v, &o, &[0, 0])
        }),
    )?;
    let report = world.run()?;
    let got: Vec<i32> = (0..ranks).map(|r| world.read::<i32>(&out, r).map(|v| v[0])).collect::<SimResult<_>>()?;
    let want: Vec<i32> = (0..ranks).map(|r| ((r + ranks - 1) % ranks) as i32 + 1).collect();
    let ok = got == want;
    let detail = format!("signal cells {got:?}, golden {want:?}");
    Ok(Outcome { ok, detail, report })
}
