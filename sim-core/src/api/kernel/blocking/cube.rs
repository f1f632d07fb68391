//! The AIC (cube) core's operations on [`Core`]: each blocks until the scheduler has applied
//! it; see `ops/cube.rs` for what they do and cost.

use super::{Core, wait_ready};
use crate::api::kernel::cube_tile::CubeTile;
use crate::base::error::SimResult;
use crate::base::tensor::Tensor;
use std::panic::Location;

impl Core {
    /// Loads a region of a local GM tensor or this rank's window into L1; see [`Ops::load_l1`](crate::Ops::load_l1).
    #[track_caller]
    pub fn load_l1(&mut self, src: &Tensor, offsets: &[usize], shape: &[usize]) -> SimResult<CubeTile> {
        self.ops().caller = Some(Location::caller());
        wait_ready(self.ops().load_l1(src, offsets, shape))
    }

    /// Stores an L0C accumulator to GM through the fixpipe; see [`Ops::store_acc`](crate::Ops::store_acc).
    #[track_caller]
    pub fn store_acc(&mut self, acc: &CubeTile, dst: &Tensor, offsets: &[usize]) -> SimResult<()> {
        self.ops().store_acc(acc, dst, offsets)
    }
}
