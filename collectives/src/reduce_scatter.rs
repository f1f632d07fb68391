//! reduce_scatter: rank r ends with row r of `[NR, R]` reduced over all ranks (reference §3.9
//! and §3.12). Peers read row r from every rank; each rank writes only its own row.

use crate::algorithm::{Algorithm, CallArgs, aiv_check, copy_engine_check, kernel};
use crate::lanes::{INCORE_CHUNK_BYTES, Lanes, TILE, aiv_barrier, peer_order, peers, ranks, rows_view};
use crate::staging;
use sim_core::{AtomicType, Ops, ReduceOp, SdmaOpts, SimResult, Tensor};

const WHAT: &str = "reduce_scatter";

/// The operands of one reduce_scatter call.
#[derive(Clone, Debug)]
pub(crate) struct Args {
    pub(crate) data: Tensor,
    pub(crate) sig: Tensor,
    pub(crate) op: ReduceOp,
}

impl Args {
    /// This collective's operands out of a host call's.
    pub(crate) fn of(c: &CallArgs) -> Args {
        Args { data: c.dst.clone(), sig: c.sig.clone(), op: c.op }
    }
}

/// Ready barrier, then for each `cols`-element tile of row `me`: own tile plus every peer's
/// (ascending, skipping self), stored back into row `me` after the read-complete barrier
/// (InCore) or right away (HOST, whose readers only read other rows); epilogue `-2`.
async fn reduce(ops: &mut Ops, a: &Args, cols: usize, store_after_barrier: bool) -> SimResult<()> {
    let (me, n) = ranks(ops, &a.data, WHAT)?;
    let data = rows_view(ops, &a.data, n, WHAT)?;
    let r = data.shape()[1];
    let lanes = Lanes::per_rank(&a.sig);
    lanes.barrier(ops, me, n, 1).await?;
    let mut out = Vec::new();
    for base in (0..r).step_by(cols) {
        let w = cols.min(r - base);
        let mut acc = ops.load(&data, &[me, base], &[1, w]).await?;
        for peer in peers(me, n) {
            let recv = ops.remote_load(&data, peer, &[me, base], &[1, w]).await?;
            acc = ops.reduce(a.op, &acc, &recv)?;
        }
        if store_after_barrier {
            out.push((base, acc));
        } else {
            ops.store(&acc, &data, &[me, base])?;
        }
    }
    lanes.barrier(ops, me, n, 2).await?;
    for (base, acc) in out {
        ops.store(&acc, &data, &[me, base])?;
    }
    lanes.epilogue(ops, me, n, 2)
}

/// The HOST builtin: 256-element tiles.
pub(crate) async fn host(ops: &mut Ops, a: &Args) -> SimResult<()> {
    reduce(ops, a, TILE, false).await
}

/// HCCL-class: the vendor library's copy-engine reduce-scatter on a full mesh (the first half
/// of its SDMA allreduce), staged through its communication buffer as its op-base
/// `ReduceScatterMeshDirect` does ([`staging`](crate::staging)), one buffer-full of this
/// rank's result at a time: each block copies its part of row `me` (this rank's own
/// contribution) into the buffer; a credit barrier (HCCL's handshake) says every buffer is
/// ready; the block adds its part of row `j` into rank `j`'s row `j` with an inline-reduce
/// SDMA put, for every peer `j` in a block-dependent order so every link carries traffic at
/// once, and waits for them; a second barrier says every add into this rank's row has landed;
/// the block copies its part of the sum back out to the user buffer.
pub(crate) async fn sdma_mesh(ops: &mut Ops, a: &Args) -> SimResult<()> {
    let (me, n) = ranks(ops, &a.data, WHAT)?;
    let b = ops.block_idx();
    let Some((lanes, active)) = Lanes::for_block(&a.sig, b, ops.block_num()) else {
        return Ok(());
    };
    let data = rows_view(ops, &a.data, n, WHAT)?;
    let r = data.shape()[1];
    let mut g = 0;
    for chunk in staging::chunks(r, a.data.dtype().size(), ops.chip().hccl_buffer_bytes()) {
        let (lo, hi) = staging::share(chunk, b, active);
        staging::copy_now(ops, &data, me, (me, 1), (lo, hi)).await?;
        g += 1;
        lanes.barrier(ops, me, n, g).await?;
        if lo < hi {
            let mut posted = Vec::with_capacity(n);
            for j in peer_order(me, n, b) {
                let opts = SdmaOpts::new().atomic(AtomicType::Add).region(&[j, lo], &[j, lo], &[1, hi - lo]);
                posted.push(ops.put_async(&data, j, &data, &opts)?);
            }
            crate::sdma::wait_all(ops, posted).await?;
        }
        g += 1;
        lanes.barrier(ops, me, n, g).await?;
        staging::copy_now(ops, &data, me, (me, 1), (lo, hi)).await?;
    }
    lanes.epilogue(ops, me, n, g)
}

/// HCCL-class: the vendor library's AIV reduce-scatter on a full mesh (the first half of its
/// AIV allreduce, `aiv-mesh`): the tiles of row `me` (a third of UB each) are dealt
/// block-cyclically to the blocks; each block loads its own tile and pulls the peers' in a
/// block-dependent order, the next pull in flight while the current one is added, and stores
/// the sum into row `me`. Ready barrier first (every rank's data is written), then a done
/// barrier and its epilogue. Each block first pays the chip's `hccl_aiv_launch`, and each
/// barrier a `dcci` before its flags and one after its waits (HCCL keeps its flags coherent
/// by hand), as the AIV allgather does.
pub(crate) async fn aiv_mesh(ops: &mut Ops, a: &Args) -> SimResult<()> {
    use crate::aiv::{reduce_tile, tile_elems, tiles};
    let (me, n) = ranks(ops, &a.data, WHAT)?;
    let b = ops.block_idx();
    let Some((lanes, active)) = Lanes::for_block(&a.sig, b, ops.block_num()) else {
        return Ok(());
    };
    ops.hccl_aiv_launch()?;
    ops.overlap_pipes();
    let data = rows_view(ops, &a.data, n, WHAT)?;
    let r = data.shape()[1];
    let tile = tile_elems(ops.chip().ub_bytes(), a.data.dtype().size());
    aiv_barrier(ops, &lanes, me, n, 1).await?;
    let order = peer_order(me, n, b);
    for tile in tiles(0, r, b, active, tile) {
        reduce_tile(ops, a.op, &data, me, &order, tile).await?;
    }
    aiv_barrier(ops, &lanes, me, n, 2).await?;
    lanes.epilogue(ops, me, n, 2)
}

/// The InCore composite: 16 KiB chunks, results stored after the post-reduce barrier.
pub(crate) async fn incore(ops: &mut Ops, a: &Args) -> SimResult<()> {
    reduce(ops, a, INCORE_CHUNK_BYTES / a.data.dtype().size(), true).await
}

/// PyPTO's builtin reduce_scatter: its HOST kernel, or its InCore lowering.
pub(crate) const MESH: Algorithm = Algorithm::new(|_, o| o.builtin_one_block(), kernel!(host), kernel!(incore));

/// The copy-engine reduce-scatter, on either path: the chip's SDMA engines, the table's signal.
pub(crate) const SDMA_MESH: Algorithm = Algorithm::both(copy_engine_check, kernel!(sdma_mesh));

/// The AIV reduce-scatter, on either path: the table's signal.
pub(crate) const AIV_MESH: Algorithm = Algorithm::both(aiv_check, kernel!(aiv_mesh));
