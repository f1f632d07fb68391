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

    /// Moves an L1 tile into L0A; see [`Ops::to_l0a`](crate::Ops::to_l0a).
    pub fn to_l0a(&mut self, l1: &CubeTile) -> SimResult<CubeTile> {
        self.ops().to_l0a(l1)
    }

    /// Moves an L1 tile into L0B; see [`Ops::to_l0b`](crate::Ops::to_l0b).
    pub fn to_l0b(&mut self, l1: &CubeTile) -> SimResult<CubeTile> {
        self.ops().to_l0b(l1)
    }

    /// `a @ b` into L0C (TMATMUL); see [`Ops::matmul`](crate::Ops::matmul).
    pub fn matmul(&mut self, a: &CubeTile, b: &CubeTile) -> SimResult<CubeTile> {
        self.ops().matmul(a, b)
    }

    /// `acc + a @ b` (TMATMUL_ACC); see [`Ops::matmul_acc`](crate::Ops::matmul_acc).
    pub fn matmul_acc(&mut self, acc: &CubeTile, a: &CubeTile, b: &CubeTile) -> SimResult<CubeTile> {
        self.ops().matmul_acc(acc, a, b)
    }

    /// Stores an L0C accumulator to GM through the fixpipe; see [`Ops::store_acc`](crate::Ops::store_acc).
    #[track_caller]
    pub fn store_acc(&mut self, acc: &CubeTile, dst: &Tensor, offsets: &[usize]) -> SimResult<()> {
        self.ops().store_acc(acc, dst, offsets)
    }
}
