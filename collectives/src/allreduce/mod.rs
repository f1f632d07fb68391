//! allreduce: PyPTO's mesh (one-shot pull) and ring, the two-shot algorithm, and the vendor
//! library's AIV mesh, SDMA mesh, recursive halving-doubling and server-hierarchical
//! allreduces.

pub(crate) mod aiv_mesh;
pub(crate) mod aiv_one_shot;
pub(crate) mod hier;
pub(crate) mod mesh;
pub(crate) mod rhd;
pub(crate) mod ring;
pub(crate) mod sdma_mesh;
pub(crate) mod two_shot;

use crate::algorithm::CallArgs;
use crate::lanes::{Lanes, ranks};
use sim_core::{Ops, ReduceOp, SimResult, Tensor};

/// Slice `i` of `numel` elements over `n` ranks: `[floor(i*numel/n), floor((i+1)*numel/n))`.
pub(crate) fn slice(i: usize, numel: usize, n: usize) -> (usize, usize) {
    (i * numel / n, (i + 1) * numel / n)
}

/// What one block of a direct (reduce-scatter + allgather) allreduce works with.
pub(crate) struct Block {
    pub(crate) me: usize,
    pub(crate) n: usize,
    /// This block's index and how many blocks have a lane.
    pub(crate) b: usize,
    pub(crate) active: usize,
    pub(crate) lanes: Lanes,
    /// The data viewed as `[1, numel]`.
    pub(crate) flat: Tensor,
}

impl Block {
    /// This block's ranks, lane and flat data view; `None` for a block beyond the signal's
    /// lanes, which does nothing (as the builtins' extra blocks return at once).
    pub(crate) fn of(ops: &mut Ops, a: &Args, what: &'static str) -> SimResult<Option<Block>> {
        let (me, n) = ranks(ops, &a.data, what)?;
        let b = ops.block_idx();
        let Some((lanes, active)) = Lanes::for_block(&a.sig, b, ops.block_num()) else {
            return Ok(None);
        };
        let numel = a.data.numel();
        let flat = a.data.view(a.data.dtype(), &[1, numel]).map_err(|e| ops.error(what, e.to_string()))?;
        Ok(Some(Block { me, n, b, active, lanes, flat }))
    }
}

/// The operands of one allreduce call.
#[derive(Clone, Debug)]
pub(crate) struct Args {
    pub(crate) data: Tensor,
    pub(crate) sig: Tensor,
    pub(crate) op: ReduceOp,
    /// Ranks per server (`hier` only; the others ignore it).
    pub(crate) server: usize,
}

impl Args {
    /// An allreduce's operands out of a host call's.
    pub(crate) fn of(c: &CallArgs) -> Args {
        Args { data: c.dst.clone(), sig: c.sig.clone(), op: c.op, server: c.server }
    }
}
