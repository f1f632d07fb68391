//! allgather: every rank pushes its `[1, R]` stage into row `me` of every rank's `[NR, R]`
//! target, itself included (reference §3.8 and §3.12).

use crate::aiv::{aiv_batch_bytes, pipelined};
use crate::algorithm::{Algorithm, CallArgs, aiv_check, copy_engine_check, kernel};
use crate::lanes::{Lanes, TILE, peer_order, ranks, rows_view};
use sim_core::{AtomicType, CopyOpts, NotifyOp, Ops, SdmaOpts, SimResult, Tensor, Tile, WaitCmp};

const WHAT: &str = "allgather";

/// The operands of one allgather call.
#[derive(Clone, Debug)]
pub(crate) struct Args {
    pub(crate) stage: Tensor,
    pub(crate) target: Tensor,
    pub(crate) sig: Tensor,
}

impl Args {
    /// This collective's operands out of a host call's.
    pub(crate) fn of(c: &CallArgs) -> Args {
        Args { stage: c.src.clone(), target: c.dst.clone(), sig: c.sig.clone() }
    }
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

/// The ring allgather's signal rows: the rows the left neighbour has put here, and the right
/// neighbour's "done".
const RING_ARRIVED: usize = 0;
const RING_DONE: usize = 1;

/// The ring allgather's signal on the table's terms (the modes table's `Signal::Own`):
/// `[2, blocks]`, a column per block, row 0 counting the left neighbour's rows landed here,
/// row 1 the right neighbour's "done".
pub(crate) fn ring_signal(of: &crate::spec::SignalOf) -> Vec<usize> {
    vec![2, of.blocks]
}

/// HCCL-class: the vendor library's ring allgather (its `AllGatherRing` template, which it
/// runs where the ranks form a ring rather than a full mesh), with copy-engine puts. Block `b`
/// of `active = min(blocks, signal columns)` moves columns `[b R / active, (b + 1) R / active)`
/// of every row on its own channel: it copies the stage into row `me` here and puts it into
/// row `me` of the right neighbour's target; then, for steps `s = 1 .. NR - 1`, it tells the
/// right neighbour the row it put has landed, waits for the left neighbour's `s`-th row (row
/// `me - s`) to land here, and forwards it to the right neighbour, but the last. One link
/// busy per rank, `NR - 1` steps each a signal round. When every row is here it tells the
/// left neighbour it is done reading (so the left's next call may write here) and waits for
/// the right's, then takes its cells back.
pub(crate) async fn ring(ops: &mut Ops, a: &Args) -> SimResult<()> {
    let (me, n) = ranks(ops, &a.target, WHAT)?;
    let b = ops.block_idx();
    let columns = a.sig.shape().get(1).copied().unwrap_or(1);
    let active = ops.block_num().min(columns).max(1);
    if b >= active {
        return Ok(());
    }
    let target = rows_view(ops, &a.target, n, WHAT)?;
    let r = target.shape()[1];
    let stage = a.stage.view(a.stage.dtype(), &[1, r]).map_err(|e| ops.error(WHAT, e.to_string()))?;
    let (lo, hi) = (b * r / active, (b + 1) * r / active);
    let (left, right) = ((me + n - 1) % n, (me + 1) % n);
    if lo < hi {
        let own = SdmaOpts::new().region(&[me, lo], &[0, lo], &[1, hi - lo]);
        let mut posted = vec![ops.put_async(&target, me, &stage, &own)?];
        if n > 1 {
            posted.push(ops.put_async(&target, right, &stage, &own)?);
        }
        crate::sdma::wait_all(ops, posted).await?;
    }
    for s in 1..n {
        ops.notify(&a.sig, right, &[RING_ARRIVED, b], 1, NotifyOp::AtomicAdd)?;
        ops.wait(&a.sig, &[RING_ARRIVED, b], s as i32, WaitCmp::Ge).await?;
        let row = (me + n - s) % n;
        if s + 1 < n && lo < hi {
            let opts = SdmaOpts::new().region(&[row, lo], &[row, lo], &[1, hi - lo]);
            let h = ops.put_async(&target, right, &target, &opts)?;
            ops.wait_async(h).await?;
        }
    }
    if n > 1 {
        ops.notify(&a.sig, left, &[RING_DONE, b], 1, NotifyOp::AtomicAdd)?;
        ops.wait(&a.sig, &[RING_DONE, b], 1, WaitCmp::Ge).await?;
        for (cell, v) in [(RING_ARRIVED, n - 1), (RING_DONE, 1)] {
            ops.notify(&a.sig, me, &[cell, b], -(v as i32), NotifyOp::AtomicAdd)?;
            ops.expect_clear(&a.sig, &[cell, b], &[1, 1])?;
        }
    }
    Ok(())
}

/// HCCL-class: the vendor library's one-shot AIV allgather on a full mesh (HCCL's AIV
/// expansion mode, docs/references/hardware.md §4.2). Block `b` of `active = min(blocks, NR)`
/// serves the destinations `me + k` with `k = b mod active`: it streams the stage through UB
/// in half-UB tiles (the next load in flight while the current tile is stored) straight into
/// row `me` of the destination's target (a local copy for `k = 0`), then raises the
/// destination's ready flag for this rank; it then waits for the flags of the sources
/// `me - k`. Each block first pays the chip's `hccl_aiv_launch` and each flag write and read
/// a `dcci` (HCCL's flags are kept coherent by hand). One shot: no steps, every link busy at once, one flag handshake per pair.
///
/// Signal `[NR, 1]`: cell `p` counts peer `p`'s row as landed; the epilogue takes it back.
pub(crate) async fn aiv_mesh(ops: &mut Ops, a: &Args) -> SimResult<()> {
    const W: &str = "allgather aiv-mesh";
    let (me, n) = ranks(ops, &a.target, W)?;
    let (b, active) = (ops.block_idx(), ops.block_num().min(n).max(1));
    if b >= active {
        return Ok(());
    }
    ops.hccl_aiv_launch()?;
    ops.overlap_pipes();
    let target = rows_view(ops, &a.target, n, W)?;
    let r = target.shape()[1];
    let stage = a.stage.view(a.stage.dtype(), &[1, r]).map_err(|e| ops.error(W, e.to_string()))?;
    let tile = (aiv_batch_bytes(ops.chip().ub_bytes()) / a.target.dtype().size()).max(1);
    let items: Vec<(usize, usize)> = (0..r).step_by(tile).map(|s| (s, tile.min(r - s))).collect();
    let ks: Vec<usize> = (b..n).step_by(active).collect();
    for &k in &ks {
        let dest = (me + k) % n;
        let load = |ops: &mut Ops, &(s, w): &(usize, usize)| ops.load_async(&stage, &[0, s], &[1, w]);
        let store = |ops: &mut Ops, &(s, _): &(usize, usize), t: &Tile| {
            if dest == me {
                ops.store(t, &target, &[me, s])
            } else {
                ops.remote_store(t, &target, dest, &[me, s], AtomicType::None)
            }
        };
        pipelined(ops, &items, load, store).await?;
        if dest != me {
            // HCCL's flag write cleans its cache line first; the wait below invalidates its own.
            ops.dcci()?;
            ops.notify(&a.sig, dest, &[me, 0], 1, NotifyOp::AtomicAdd)?;
        }
    }
    for &k in ks.iter().filter(|&&k| k != 0) {
        let src = (me + n - k) % n;
        ops.wait(&a.sig, &[src, 0], 1, WaitCmp::Ge).await?;
        ops.dcci()?;
        ops.notify(&a.sig, me, &[src, 0], -1, NotifyOp::AtomicAdd)?;
        ops.expect_clear(&a.sig, &[src, 0], &[1, 1])?;
    }
    Ok(())
}

/// The InCore composite.
pub(crate) async fn incore(ops: &mut Ops, a: &Args) -> SimResult<()> {
    push(ops, a, None).await
}

/// PyPTO's builtin allgather: its HOST kernel, or its InCore lowering.
pub(crate) const MESH: Algorithm = Algorithm::new(|_, o| o.builtin_one_block(), kernel!(host), kernel!(incore));

/// The copy-engine allgather, on either path: the chip's SDMA engines, the table's signal.
pub(crate) const SDMA_MESH: Algorithm = Algorithm::both(copy_engine_check, kernel!(sdma_mesh));

/// The copy-engine ring allgather, on either path: the chip's SDMA engines, the table's signal.
pub(crate) const RING: Algorithm = Algorithm::both(copy_engine_check, kernel!(ring));

/// The one-shot AIV allgather, on either path: the table's signal.
pub(crate) const AIV_MESH: Algorithm = Algorithm::both(aiv_check, kernel!(aiv_mesh));
