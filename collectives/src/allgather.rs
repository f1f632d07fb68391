//! allgather: every rank pushes its `[1, R]` stage into row `me` of every rank's `[NR, R]`
//! target, itself included (reference §3.8 and §3.12).

use crate::lanes::{Lanes, TILE, peer_order, ranks, rows_view};
use sim_core::{CopyOpts, Ops, SdmaOpts, SimResult, Tensor};

const WHAT: &str = "allgather";

/// The operands of one allgather call.
#[derive(Clone, Debug)]
pub(crate) struct Args {
    pub(crate) stage: Tensor,
    pub(crate) target: Tensor,
    pub(crate) sig: Tensor,
}

/// Pushes the stage to every destination in `cols`-column chunks, then one credit barrier and
/// its epilogue. The HOST builtin uses 256-element tiles; the InCore composite one put of the
/// whole `[1, R]` row per destination.
async fn push(ops: &mut Ops, a: &Args, cols: Option<usize>) -> SimResult<()> {
    let (me, n) = ranks(ops, &a.target, WHAT)?;
    let target = rows_view(ops, &a.target, n, WHAT)?;
    let r = target.shape()[1];
    let stage = a.stage.view(a.stage.dtype(), &[1, r]).map_err(|e| ops.error(WHAT, e.to_string()))?;
    let opts = CopyOpts::new().region(&[me, 0], &[0, 0], &[1, r]).chunks(1, cols.unwrap_or(0));
    for dest in 0..n {
        ops.put(&target, dest, &stage, &opts).await?;
    }
    let lanes = Lanes::per_rank(&a.sig);
    lanes.barrier(ops, me, n, 1).await?;
    lanes.epilogue(ops, me, n, 1)
}

/// The HOST builtin.
pub(crate) async fn host(ops: &mut Ops, a: &Args) -> SimResult<()> {
    let r = a.target.numel() / a.target.shape()[0];
    push(ops, a, Some(r.min(TILE))).await
}

/// HCCL-class: the vendor library's copy-engine allgather on a full mesh. Each block puts its
/// part of the stage into row `me` of every rank's target (this rank's first) with an SDMA
/// engine on its own channel, visiting the peers in a block-dependent order so every link
/// carries traffic at once; it waits for its transfers, then runs its lane's credit barrier.
pub(crate) async fn sdma_mesh(ops: &mut Ops, a: &Args) -> SimResult<()> {
    let (me, n) = ranks(ops, &a.target, WHAT)?;
    let b = ops.block_idx();
    let Some((lanes, active)) = Lanes::for_block(&a.sig, b, ops.block_num()) else {
        return Ok(());
    };
    let target = rows_view(ops, &a.target, n, WHAT)?;
    let r = target.shape()[1];
    let stage = a.stage.view(a.stage.dtype(), &[1, r]).map_err(|e| ops.error(WHAT, e.to_string()))?;
    let (lo, hi) = (b * r / active, (b + 1) * r / active);
    if lo < hi {
        let opts = SdmaOpts::new().region(&[me, lo], &[0, lo], &[1, hi - lo]);
        let mut posted = Vec::with_capacity(n);
        for dest in std::iter::once(me).chain(peer_order(me, n, b)) {
            posted.push(ops.put_async(&target, dest, &stage, &opts)?);
        }
        crate::sdma::wait_all(ops, posted).await?;
    }
    lanes.barrier(ops, me, n, 1).await?;
    lanes.epilogue(ops, me, n, 1)
}

/// The InCore composite.
pub(crate) async fn incore(ops: &mut Ops, a: &Args) -> SimResult<()> {
    push(ops, a, None).await
}
