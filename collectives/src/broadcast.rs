//! broadcast from a root rank (reference §3.7 and §3.12).

use crate::aiv::{aiv_batch_bytes, pipelined};
use crate::algorithm::{Algorithm, CallArgs, copy_engine_check, kernel};
use crate::lanes::{Lanes, TILE, aiv_flag, aiv_wait_flag, peer_order, ranks, take_back};
use crate::sdma::{put_run, wait_all};
use sim_core::{CopyOpts, Ops, SdmaOpts, SimResult, Tensor, Tile};

const WHAT: &str = "broadcast";

/// The operands of one broadcast call.
#[derive(Clone, Debug)]
pub(crate) struct Args {
    pub(crate) data: Tensor,
    pub(crate) sig: Tensor,
    pub(crate) root: usize,
}

impl Args {
    /// This collective's operands out of a host call's.
    pub(crate) fn of(c: &CallArgs) -> Args {
        Args { data: c.dst.clone(), sig: c.sig.clone(), root: c.root }
    }
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

/// Bytes up to which HCCL's AIV broadcast runs its one-shot kernel, and the most one step of
/// its relay moves: `UB_MAX_DATA_SIZE`, 190 KiB, a constant of the vendor library's AIV
/// kernels (docs/references/hardware.md §4.2).
pub(crate) const AIV_ONE_SHOT_BYTES: usize = 190 * 1024;

/// Elements of one relay step of the AIV broadcast: 190 KiB, or the UB if it is smaller, in
/// whole 32-byte blocks.
fn aiv_chunk_elems(ub_bytes: usize, esize: usize) -> usize {
    ((AIV_ONE_SHOT_BYTES.min(ub_bytes) & !31).max(32) / esize).max(1)
}

/// The lane (block) count of the AIV broadcast's relay, and the signal's columns: `NR - 1`.
pub(crate) fn aiv_lanes(n: usize) -> usize {
    n.saturating_sub(1).max(1)
}

/// The AIV broadcast's signal on the table's terms (the modes table's `Signal::Own`):
/// `[NR, NR - 1]` (`[2, 1]` on two ranks).
pub(crate) fn aiv_signal(of: &crate::spec::SignalOf) -> Vec<usize> {
    vec![of.nranks, aiv_lanes(of.nranks)]
}

/// Copies `[lo, hi)` of `src` (on `from`, this rank when `None`) into the same place of
/// `dst` here, through half-UB tiles, the next load in flight while the current one is
/// stored (the AIV kernels' GM-to-GM copy).
async fn copy_through_ub(
    ops: &mut Ops,
    src: &Tensor,
    from: Option<usize>,
    dst: &Tensor,
    (lo, hi): (usize, usize),
) -> SimResult<()> {
    let tile = (aiv_batch_bytes(ops.chip().ub_bytes()) / src.dtype().size()).max(1);
    let items: Vec<(usize, usize)> = (lo..hi).step_by(tile).map(|s| (s, tile.min(hi - s))).collect();
    let load = |ops: &mut Ops, &(s, w): &(usize, usize)| match from {
        Some(p) => ops.remote_load_async(src, p, &[0, s], &[1, w]),
        None => ops.load_async(src, &[0, s], &[1, w]),
    };
    let store = |ops: &mut Ops, &(s, _): &(usize, usize), t: &Tile| ops.store(t, dst, &[0, s]);
    pipelined(ops, &items, load, store).await
}

/// HCCL-class: the vendor library's AIV broadcast on a full mesh (what HCCL runs on a 910B
/// server with `HCCL_OP_EXPANSION_MODE=AIV`; docs/references/hardware.md §4.2). Every block
/// first pays the chip's `hccl_aiv_launch`; each flag write and read a `dcci`.
///
/// Up to [`AIV_ONE_SHOT_BYTES`], one shot on block 0: the root copies its data through UB
/// (HCCL's copy into its communication buffer, timed as a copy in place here) and flags every
/// peer; each peer pulls the whole buffer from the root through UB and flags the root back,
/// which waits for all of them.
///
/// Above, a relay on `NR - 1` blocks: the data goes in steps of 190 KiB (or the UB), step `c`
/// on block `c mod (NR - 1)`; block `b` belongs to the non-root rank `o(b)` (the `b`-th rank
/// but the root). For each of its steps the root's block `b` copies the step through UB and
/// counts it up on `o(b)`; `o(b)`'s block `b` waits for the count, pulls the step from the
/// root into UB, stores it (into its communication buffer), counts it up on every other
/// non-root rank and stores it again (into its output); the other non-root ranks' block `b`
/// wait for `o(b)`'s count and pull the step from `o(b)`. At the end each of them tells `o(b)`
/// it is done and waits for `o(b)`'s answer, and `o(b)` tells the root. On two ranks the one
/// non-root rank pulls from the root and stores once. So the root's links carry the data
/// once and every other link a slice, in steps that pipeline across the blocks.
///
/// Signal `[NR, NR - 1]` (`[2, 1]` on two ranks): cell `[src, b]` counts what `src` raised on
/// block `b`; each rank takes back what it received.
pub(crate) async fn aiv_mesh(ops: &mut Ops, a: &Args) -> SimResult<()> {
    const W: &str = "broadcast aiv-mesh";
    let (me, n) = ranks(ops, &a.data, W)?;
    let (b, root) = (ops.block_idx(), a.root);
    let numel = a.data.numel();
    let flat = a.data.view(a.data.dtype(), &[1, numel]).map_err(|e| ops.error(W, e.to_string()))?;
    let one_shot = numel * a.data.dtype().size() <= AIV_ONE_SHOT_BYTES;
    let lanes = aiv_lanes(n);
    if root >= n || (one_shot && b > 0) || b >= lanes {
        return Ok(());
    }
    ops.hccl_aiv_launch()?;
    ops.overlap_pipes();
    let sig = &a.sig;
    if one_shot {
        if me == root {
            copy_through_ub(ops, &flat, None, &flat, (0, numel)).await?;
            aiv_flag(ops, sig, (0..n).filter(|&p| p != root), me, 0).await?;
            for p in (0..n).filter(|&p| p != root) {
                aiv_wait_flag(ops, sig, p, 0, 1).await?;
            }
            for p in (0..n).filter(|&p| p != root) {
                take_back(ops, sig, me, p, 0, 1)?;
            }
        } else {
            aiv_wait_flag(ops, sig, root, 0, 1).await?;
            copy_through_ub(ops, &flat, Some(root), &flat, (0, numel)).await?;
            aiv_flag(ops, sig, [root], me, 0).await?;
            take_back(ops, sig, me, root, 0, 1)?;
        }
        return Ok(());
    }
    let owner = if b < root { b } else { b + 1 };
    let chunk = aiv_chunk_elems(ops.chip().ub_bytes(), a.data.dtype().size());
    let steps: Vec<(usize, usize)> =
        (b * chunk..numel).step_by(lanes * chunk).map(|s| (s, (s + chunk).min(numel))).collect();
    let m = steps.len() as i32;
    let others = |me: usize| (0..n).filter(move |&p| p != root && p != me);
    if me == root {
        for &step in &steps {
            copy_through_ub(ops, &flat, None, &flat, step).await?;
            aiv_flag(ops, sig, [owner], me, b).await?;
        }
        aiv_wait_flag(ops, sig, owner, b, 1).await?;
        take_back(ops, sig, me, owner, b, 1)?;
    } else if me == owner {
        for (k, &(lo, hi)) in steps.iter().enumerate() {
            aiv_wait_flag(ops, sig, root, b, k as i32 + 1).await?;
            let load = ops.remote_load_async(&flat, root, &[0, lo], &[1, hi - lo])?;
            let t = ops.wait_load(load).await?;
            ops.store(&t, &flat, &[0, lo])?;
            if n > 2 {
                // HCCL stores the step into its communication buffer, raises its count, then
                // stores it into its output; here both are this window, so the second store
                // comes first (the same bytes: no reader sees it change).
                ops.store(&t, &flat, &[0, lo])?;
                aiv_flag(ops, sig, others(me), me, b).await?;
            }
        }
        for p in others(me) {
            aiv_wait_flag(ops, sig, p, b, 1).await?;
        }
        aiv_flag(ops, sig, others(me).chain([root]), me, b).await?;
        take_back(ops, sig, me, root, b, m)?;
        for p in others(me) {
            take_back(ops, sig, me, p, b, 1)?;
        }
    } else {
        for (k, &step) in steps.iter().enumerate() {
            aiv_wait_flag(ops, sig, owner, b, k as i32 + 1).await?;
            copy_through_ub(ops, &flat, Some(owner), &flat, step).await?;
        }
        aiv_flag(ops, sig, [owner], me, b).await?;
        aiv_wait_flag(ops, sig, owner, b, m + 1).await?;
        take_back(ops, sig, me, owner, b, m + 1)?;
    }
    Ok(())
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

/// PyPTO's builtin broadcast: its HOST kernel (signal `[NR]` or `[NR, 1]`), or its InCore
/// lowering; one block, whatever `core_num` says.
pub(crate) const MESH: Algorithm = Algorithm::new(|_, o| o.rank_signal(), kernel!(host), kernel!(incore));

/// The copy-engine broadcast, on either path: the chip's SDMA engines, the table's signal.
pub(crate) const SDMA_MESH: Algorithm = Algorithm::both(copy_engine_check, kernel!(sdma_mesh));

/// The AIV broadcast, on either path: a block per rank (its relay runs on `NR - 1` of them),
/// the table's signal.
pub(crate) const AIV_MESH: Algorithm = Algorithm::both(
    |world, o| {
        o.aiv_cores(world)?;
        let (core_num, n) = (o.spec.core_num, o.n);
        if core_num < n {
            return crate::validate::fail(
                o.what,
                format!("core_num {core_num} must be at least {n}: the AIV broadcast runs a block per rank"),
            );
        }
        o.table_signal()
    },
    kernel!(aiv_mesh),
);
