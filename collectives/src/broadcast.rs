//! broadcast from a root rank (reference §3.7 and §3.12).

use crate::lanes::{Lanes, TILE, peer_order, ranks};
use crate::sdma::{put_run, wait_all};
use sim_core::{CopyOpts, Ops, SdmaOpts, SimResult, Tensor};

const WHAT: &str = "broadcast";

/// The operands of one broadcast call.
#[derive(Clone, Debug)]
pub(crate) struct Args {
    pub(crate) data: Tensor,
    pub(crate) sig: Tensor,
    pub(crate) root: usize,
}

/// The HOST builtin: per 256-element tile, the root copies its own tile (for visibility), all
/// ranks run a credit barrier of generation `tile + 1`, and non-roots pull the tile from the
/// root. No barrier follows the last tile's reads. Epilogue `-tiles`. Returns at once when the
/// root is out of range, as the kernel does.
pub(crate) async fn host(ops: &mut Ops, a: &Args) -> SimResult<()> {
    let (me, n) = ranks(ops, &a.data, WHAT)?;
    if a.root >= n {
        return Ok(());
    }
    let numel = a.data.numel();
    let flat = a.data.view(a.data.dtype(), &[1, numel]).map_err(|e| ops.error(WHAT, e.to_string()))?;
    let lanes = Lanes::per_rank(&a.sig);
    let mut expected = 1;
    for base in (0..numel).step_by(TILE) {
        let w = TILE.min(numel - base);
        if me == a.root {
            let own = ops.load(&flat, &[0, base], &[1, w]).await?;
            ops.store(&own, &flat, &[0, base])?;
        }
        lanes.barrier(ops, me, n, expected).await?;
        expected += 1;
        if me != a.root {
            let t = ops.remote_load(&flat, a.root, &[0, base], &[1, w]).await?;
            ops.store(&t, &flat, &[0, base])?;
        }
    }
    lanes.epilogue(ops, me, n, expected - 1)
}

/// HCCL-class: the vendor library's copy-engine broadcast on a full mesh, a scatter then an
/// allgather so every link carries one slice instead of the root's links carrying the whole
/// buffer. Slice `j` of the data (one per rank) is rank `j`'s to forward. Scatter: the root
/// puts each block's part of slice `j` into rank `j` (every `j` at once, one channel per block).
/// After the lane's credit barrier every rank holds its slice; allgather: every rank but the
/// root puts its part of its slice into every rank but the root and itself, and the root puts
/// its own slice to every peer. A second barrier says everything has landed.
pub(crate) async fn sdma_mesh(ops: &mut Ops, a: &Args) -> SimResult<()> {
    let (me, n) = ranks(ops, &a.data, WHAT)?;
    let b = ops.block_idx();
    let Some((lanes, active)) = Lanes::for_block(&a.sig, b, ops.block_num()) else {
        return Ok(());
    };
    let numel = a.data.numel();
    let flat = a.data.view(a.data.dtype(), &[1, numel]).map_err(|e| ops.error(WHAT, e.to_string()))?;
    // Block b's part of slice j.
    let part = |j: usize| {
        let (lo, hi) = (j * numel / n, (j + 1) * numel / n);
        (lo + b * (hi - lo) / active, lo + (b + 1) * (hi - lo) / active)
    };
    let mut posted = Vec::new();
    if me == a.root {
        for j in peer_order(me, n, b) {
            posted.push(put_run(ops, &flat, j, part(j), SdmaOpts::new())?);
        }
    }
    wait_all(ops, std::mem::take(&mut posted).into_iter().flatten()).await?;
    lanes.barrier(ops, me, n, 1).await?;
    for k in peer_order(me, n, b).into_iter().filter(|&k| k != a.root || me == a.root) {
        posted.push(put_run(ops, &flat, k, part(me), SdmaOpts::new())?);
    }
    wait_all(ops, posted.into_iter().flatten()).await?;
    lanes.barrier(ops, me, n, 2).await?;
    lanes.epilogue(ops, me, n, 2)
}

/// The InCore composite: a barrier first, then every non-root `get`s the root's data;
/// epilogue `-1` after the get.
pub(crate) async fn incore(ops: &mut Ops, a: &Args) -> SimResult<()> {
    let (me, n) = ranks(ops, &a.data, WHAT)?;
    let lanes = Lanes::per_rank(&a.sig);
    lanes.barrier(ops, me, n, 1).await?;
    if me != a.root {
        ops.get(&a.data, a.root, &a.data, &CopyOpts::new()).await?;
    }
    lanes.epilogue(ops, me, n, 1)
}
