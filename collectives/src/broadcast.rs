//! broadcast from a root rank (reference §3.7 and §3.12).

use crate::lanes::{Lanes, TILE, ranks};
use sim_core::{CopyOpts, Ops, SimResult, Tensor};

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
