//! `y[r] = x[r] + r`: every rank adds its own rank to its input.

use super::common::{Outcome, rank_local_map};
use sim_core::{SimResult, World};

const SIZE: usize = 128;

pub(crate) fn run(world: &mut World, ranks: usize) -> SimResult<Outcome> {
    rank_local_map(
        world,
        ranks,
        SIZE,
        ("hello_rank", "y[r] = x[r] + r"),
        |core, t| core.adds(t, core.rank() as f64),
        |v, r| v + r as f32,
    )
}
