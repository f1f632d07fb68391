//! `y[r] = x[r] + r`: every rank adds its own rank to its input.

use super::common::{Outcome, arange_input, compare, domain};
use sim_core::{DType, Dispatch, SimResult, World};

const SIZE: usize = 128;

pub(crate) fn run(world: &mut World, ranks: usize) -> SimResult<Outcome> {
    let dom = domain(world, ranks)?;
    let x = world.alloc_tensor("x", DType::F32, &[1, SIZE])?;
    let y = world.alloc_tensor("y", DType::F32, &[1, SIZE])?;
    for r in 0..ranks {
        world.write(&x, r, &arange_input(r, SIZE))?;
    }
    let (xk, yk) = (x.clone(), y.clone());
    world.dispatch_all(
        &dom,
        Dispatch::kernel("hello_rank", 1, move |core| {
            let t = core.load(&xk, &[0, 0], &[1, SIZE])?;
            let out = core.adds(&t, core.rank() as f64)?;
            core.store(&out, &yk, &[0, 0])
        }),
    )?;
    let report = world.run()?;
    let got: Vec<Vec<f32>> = (0..ranks).map(|r| world.read(&y, r)).collect::<SimResult<_>>()?;
    let want: Vec<Vec<f32>> =
        (0..ranks).map(|r| arange_input(r, SIZE).iter().map(|v| v + r as f32).collect()).collect();
    Ok(compare(report, "y[r] = x[r] + r", &got, &want))
}
