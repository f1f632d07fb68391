//! A hand-rolled barrier: every rank notifies every peer once and waits for all of them. Each
//! rank's signal row then reads `[1, .., 0 (itself), .., 1]`.

use super::common::{Outcome, barrier, compare, domain};
use sim_core::{DType, Dispatch, SimResult, World};

pub(crate) fn run(world: &mut World, ranks: usize) -> SimResult<Outcome> {
    let dom = domain(world, ranks)?;
    let sig = world.alloc_window(&dom, "signal", DType::I32, &[ranks, 1])?;
    let s = sig.clone();
    world.dispatch_all(&dom, Dispatch::kernel("barrier", 1, move |core| barrier(core, &s, 1)))?;
    let report = world.run()?;
    let got: Vec<Vec<f32>> = (0..ranks)
        .map(|r| world.read::<i32>(&sig, r).map(|v| v.iter().map(|&x| x as f32).collect()))
        .collect::<SimResult<_>>()?;
    let want: Vec<Vec<f32>> =
        (0..ranks).map(|r| (0..ranks).map(|c| if c == r { 0.0 } else { 1.0 }).collect()).collect();
    Ok(compare(report, "signal row after the barrier", &got, &want))
}
