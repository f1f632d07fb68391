//! allreduce: PyPTO's mesh (one-shot pull) and ring, the two-shot algorithm, and the vendor
//! library's AIV mesh allreduce.

pub(crate) mod aiv_mesh;
pub(crate) mod mesh;
pub(crate) mod ring;
pub(crate) mod sdma_mesh;
pub(crate) mod two_shot;

use sim_core::{ReduceOp, Tensor};

/// Slice `i` of `numel` elements over `n` ranks: `[floor(i*numel/n), floor((i+1)*numel/n))`.
pub(crate) fn slice(i: usize, numel: usize, n: usize) -> (usize, usize) {
    (i * numel / n, (i + 1) * numel / n)
}

/// The operands of one allreduce call.
#[derive(Clone, Debug)]
pub(crate) struct Args {
    pub(crate) data: Tensor,
    pub(crate) sig: Tensor,
    pub(crate) op: ReduceOp,
}
