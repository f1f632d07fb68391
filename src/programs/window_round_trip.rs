//! The programming-model and window-buffer tutorials: `y[r] = x[r] * (r + 1)` computed on the
//! vector unit, and a round trip of `x` through this rank's window (`y = x`).

use super::common::{Outcome, arange_input, compare, domain, rank_local_map};
use sim_core::{DType, Dispatch, SimResult, World};

const SIZE: usize = 64;

/// `y[r] = x[r] * (r + 1)`.
pub(crate) fn run_scale(world: &mut World, ranks: usize) -> SimResult<Outcome> {
    rank_local_map(
        world,
        ranks,
        SIZE,
        ("programming_model", "y[r] = x[r] * (r + 1)"),
        |core, t| core.muls(t, (core.rank() + 1) as f64),
        |v, r| v * (r + 1) as f32,
    )
}

/// `x` -> window -> `y`.
pub(crate) fn run_round_trip(world: &mut World, ranks: usize) -> SimResult<Outcome> {
    let dom = domain(world, ranks)?;
    let x = world.alloc_tensor("x", DType::F32, &[1, SIZE])?;
    let win = world.alloc_window(&dom, "win", DType::F32, &[1, SIZE])?;
    let y = world.alloc_tensor("y", DType::F32, &[1, SIZE])?;
    for r in 0..ranks {
        world.write(&x, r, &arange_input(r, SIZE))?;
    }
    let (xk, wk, yk) = (x.clone(), win.clone(), y.clone());
    world.dispatch_all(
        &dom,
        Dispatch::kernel("window_buffer", 1, move |core| {
            let t = core.load(&xk, &[0, 0], &[1, SIZE])?;
            core.store(&t, &wk, &[0, 0])?;
            let back = core.load(&wk, &[0, 0], &[1, SIZE])?;
            core.store(&back, &yk, &[0, 0])
        }),
    )?;
    let report = world.run()?;
    let got: Vec<Vec<f32>> = (0..ranks).map(|r| world.read(&y, r)).collect::<SimResult<_>>()?;
    let want: Vec<Vec<f32>> = (0..ranks).map(|r| arange_input(r, SIZE)).collect();
    Ok(compare(report, "y = x through the window", &got, &want))
}
