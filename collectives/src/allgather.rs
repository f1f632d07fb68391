//! allgather: every rank pushes its `[1, R]` stage into row `me` of every rank's `[NR, R]`
//! target, itself included (reference §3.8 and §3.12).

use crate::lanes::{Lanes, TILE, ranks, rows_view};
use sim_core::{CopyOpts, Ops, SimResult, Tensor};

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

/// The InCore composite.
pub(crate) async fn incore(ops: &mut Ops, a: &Args) -> SimResult<()> {
    push(ops, a, None).await
}
