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

/// The peers of `me` in the order block `block` visits them: every other rank once, starting
/// `block` places after the next rank, so a rank's blocks spread over all its links.
pub(crate) fn peer_order(me: usize, n: usize, block: usize) -> Vec<usize> {
    let others = n.saturating_sub(1).max(1);
    (0..n.saturating_sub(1)).map(|k| (me + 1 + (block + k) % others) % n).collect()
}

/// The operands of one allreduce call.
#[derive(Clone, Debug)]
pub(crate) struct Args {
    pub(crate) data: Tensor,
    pub(crate) sig: Tensor,
    pub(crate) op: ReduceOp,
}
