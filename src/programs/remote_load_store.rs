//! Ring shuffles with one-sided tile transfers: `remote_load` pulls from the next rank,
//! `remote_store` pushes to it.

use super::common::{Outcome, arange_input, barrier, compare, domain};
use sim_core::{AtomicType, DType, Dispatch, NotifyOp, SimResult, WaitCmp, World};

const SIZE: usize = 256;

/// Stage into the window, barrier, then `y[r] = remote_load(x, (r+1) % N)`.
pub(crate) fn run_load(world: &mut World, ranks: usize) -> SimResult<Outcome> {
    let dom = domain(world, ranks)?;
    let x = world.alloc_tensor("x", DType::F32, &[1, SIZE])?;
    let win = world.alloc_window(&dom, "stage", DType::F32, &[1, SIZE])?;
    let sig = world.alloc_window(&dom, "signal", DType::I32, &[ranks, 1])?;
    let y = world.alloc_tensor("y", DType::F32, &[1, SIZE])?;
    for r in 0..ranks {
        world.write(&x, r, &arange_input(r, SIZE))?;
    }
    let (xk, wk, sk, yk) = (x.clone(), win.clone(), sig.clone(), y.clone());
    world.dispatch_all(
        &dom,
        Dispatch::kernel("remote_load_ring", 1, move |core| {
            let t = core.load(&xk, &[0, 0], &[1, SIZE])?;
            core.store(&t, &wk, &[0, 0])?;
            barrier(core, &sk, 1)?;
            let next = (core.rank() + 1) % core.nranks();
            let got = core.remote_load(&wk, next, &[0, 0], &[1, SIZE])?;
            core.store(&got, &yk, &[0, 0])
        }),
    )?;
    let report = world.run()?;
    let got: Vec<Vec<f32>> = (0..ranks).map(|r| world.read(&y, r)).collect::<SimResult<_>>()?;
    let want: Vec<Vec<f32>> = (0..ranks).map(|r| arange_input((r + 1) % ranks, SIZE)).collect();
    Ok(compare(report, "y[r] = x[(r+1)%N] by remote_load", &got, &want))
}

/// `remote_store(x, (r+1) % N)`, notify the receiver, wait for our own data: `y[r] = x[(r-1)%N]`.
pub(crate) fn run_store(world: &mut World, ranks: usize) -> SimResult<Outcome> {
    let dom = domain(world, ranks)?;
    let x = world.alloc_tensor("x", DType::F32, &[1, SIZE])?;
    let win = world.alloc_window(&dom, "inbox", DType::F32, &[1, SIZE])?;
    let sig = world.alloc_window(&dom, "signal", DType::I32, &[ranks, 1])?;
    for r in 0..ranks {
        world.write(&x, r, &arange_input(r, SIZE))?;
    }
    let (xk, wk, sk) = (x.clone(), win.clone(), sig.clone());
    world.dispatch_all(
        &dom,
        Dispatch::kernel("remote_store_ring", 1, move |core| {
            let (me, n) = (core.rank(), core.nranks());
            let t = core.load(&xk, &[0, 0], &[1, SIZE])?;
            core.remote_store(&t, &wk, (me + 1) % n, &[0, 0], AtomicType::None)?;
            core.notify(&sk, (me + 1) % n, &[me, 0], 1, NotifyOp::AtomicAdd)?;
            core.wait(&sk, &[(me + n - 1) % n, 0], 1, WaitCmp::Ge)
        }),
    )?;
    let report = world.run()?;
    let got: Vec<Vec<f32>> = (0..ranks).map(|r| world.read(&win, r)).collect::<SimResult<_>>()?;
    let want: Vec<Vec<f32>> = (0..ranks).map(|r| arange_input((r + ranks - 1) % ranks, SIZE)).collect();
    Ok(compare(report, "inbox[r] = x[(r-1)%N] by remote_store", &got, &want))
}
