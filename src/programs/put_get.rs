//! Ring shuffles with chunked `put` (push to the next rank) and `get` (pull from it).

use super::common::{Outcome, arange_input, barrier, compare, domain};
use sim_core::{CopyOpts, DType, Dispatch, NotifyOp, SimResult, WaitCmp, World};

const ROWS: usize = 8;
const COLS: usize = 128;

fn inputs(world: &mut World, ranks: usize, x: &sim_core::Tensor) -> SimResult<()> {
    for r in 0..ranks {
        world.write(x, r, &arange_input(r, ROWS * COLS))?;
    }
    Ok(())
}

/// `put(y, (r+1) % N, x)` in `[4, 64]` ping-pong chunks, then notify/wait: `y[r] = x[(r-1)%N]`.
pub(crate) fn run_put(world: &mut World, ranks: usize) -> SimResult<Outcome> {
    let dom = domain(world, ranks)?;
    let x = world.alloc_tensor("x", DType::F32, &[ROWS, COLS])?;
    let y = world.alloc_window(&dom, "y", DType::F32, &[ROWS, COLS])?;
    let sig = world.alloc_window(&dom, "signal", DType::I32, &[ranks, 1])?;
    inputs(world, ranks, &x)?;
    let (xk, yk, sk) = (x.clone(), y.clone(), sig.clone());
    world.dispatch_all(
        &dom,
        Dispatch::kernel("put_ring", 1, move |core| {
            let (me, n) = (core.rank(), core.nranks());
            core.put(&yk, (me + 1) % n, &xk, &CopyOpts::new().chunks(4, 64).pipeline(true))?;
            core.notify(&sk, (me + 1) % n, &[me, 0], 1, NotifyOp::AtomicAdd)?;
            core.wait(&sk, &[(me + n - 1) % n, 0], 1, WaitCmp::Ge)
        }),
    )?;
    let report = world.run()?;
    let got: Vec<Vec<f32>> = (0..ranks).map(|r| world.read(&y, r)).collect::<SimResult<_>>()?;
    let want: Vec<Vec<f32>> = (0..ranks).map(|r| arange_input((r + ranks - 1) % ranks, ROWS * COLS)).collect();
    Ok(compare(report, "y[r] = x[(r-1)%N] by put", &got, &want))
}

/// Stage into the window, barrier, `get(y, (r+1) % N, stage)`: `y[r] = x[(r+1)%N]`.
pub(crate) fn run_get(world: &mut World, ranks: usize) -> SimResult<Outcome> {
    let dom = domain(world, ranks)?;
    let x = world.alloc_tensor("x", DType::F32, &[ROWS, COLS])?;
    let stage = world.alloc_window(&dom, "stage", DType::F32, &[ROWS, COLS])?;
    let sig = world.alloc_window(&dom, "signal", DType::I32, &[ranks, 1])?;
    let y = world.alloc_tensor("y", DType::F32, &[ROWS, COLS])?;
    inputs(world, ranks, &x)?;
    let (xk, st, sk, yk) = (x.clone(), stage.clone(), sig.clone(), y.clone());
    world.dispatch_all(
        &dom,
        Dispatch::kernel("get_ring", 1, move |core| {
            core.put(&st, core.rank(), &xk, &CopyOpts::new())?;
            barrier(core, &sk, 1)?;
            let next = (core.rank() + 1) % core.nranks();
            core.get(&yk, next, &st, &CopyOpts::new().chunks(2, 64))
        }),
    )?;
    let report = world.run()?;
    let got: Vec<Vec<f32>> = (0..ranks).map(|r| world.read(&y, r)).collect::<SimResult<_>>()?;
    let want: Vec<Vec<f32>> = (0..ranks).map(|r| arange_input((r + 1) % ranks, ROWS * COLS)).collect();
    Ok(compare(report, "y[r] = x[(r+1)%N] by get", &got, &want))
}
