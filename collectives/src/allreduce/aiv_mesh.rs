//! The vendor library's AIV allreduce on a full mesh (HCCL's `AllReduceMeshAivExecutor`, the
//! single-server AIV mode above its one-shot threshold, [`aiv_one_shot`]'s 64 KiB): a direct
//! reduce-scatter then a direct allgather, like [`two_shot`](super::two_shot), but written as HCCL's AIV kernels are —
//! large UB tiles (HCCL moves up to 190 KiB per transfer, double-buffered at 95 KiB;
//! docs/references/hardware.md §4.2, `aiv_defines.h`), spread over many AIV cores, with
//! overlapping pipes so the next tile is in flight while the current one is reduced or stored.
//!
//! Each rank owns slice `me` of the data. Tiles of a slice are dealt block-cyclically to the
//! blocks, and each block visits the peers starting at a block-dependent offset, so the blocks
//! of a rank keep every link of the mesh busy at once instead of queueing on one peer.
//!
//! Barriers on the block's lane: ready (`>= 1`), reduce-scatter stored (`>= 2`), allgather
//! reads done (`>= 3`); epilogue `-3`. Like every HCCL-class AIV kernel, each block first pays
//! the chip's `hccl_aiv_launch` (HCCL's AIV launch and flag-area set-up, fitted to its AIV
//! allgather, docs/references/measurements.md T7), and each barrier drains the pipes and pays
//! a `dcci` before its flags and one after its waits (HCCL keeps its flags coherent by hand):
//! the fixed costs that dominate a small allreduce.

use super::algorithm::{Algorithm, kernel};
use super::{Args, Block, aiv_one_shot, slice};
use crate::lanes::{aiv_barrier, peer_order};
use sim_core::{Ops, ReduceOp, SimResult, Tensor, Tile, TileLoad};

const WHAT: &str = "allreduce aiv-mesh";

/// UB tiles a block keeps: the accumulator and two loads in flight.
const UB_TILES: usize = 3;

/// Elements per tile: a third of UB, in whole 32-byte blocks.
pub(crate) fn tile_elems(ub_bytes: usize, esize: usize) -> usize {
    ((ub_bytes / UB_TILES) & !31).max(32) / esize
}

/// This block's tiles of `[lo, hi)`: `(start, len)`.
pub(crate) fn tiles(
    lo: usize,
    hi: usize,
    block: usize,
    blocks: usize,
    tile: usize,
) -> impl Iterator<Item = (usize, usize)> {
    (lo + block * tile..hi).step_by(blocks * tile).map(move |s| (s, tile.min(hi - s)))
}

/// One block of the AIV allreduce (HOST path: `[NR, stride]` lanes).
pub(crate) async fn block(ops: &mut Ops, a: &Args) -> SimResult<()> {
    let (me, n) = crate::lanes::ranks(ops, &a.data, WHAT)?;
    if aiv_one_shot::applies(ops, a, n, ops.block_num()) {
        let flat = a.data.view(a.data.dtype(), &[1, a.data.numel()]).map_err(|e| ops.error(WHAT, e.to_string()))?;
        return aiv_one_shot::block(ops, a, me, n, &flat).await;
    }
    let Some(Block { me, n, b, active, lanes, flat }) = Block::of(ops, a, WHAT)? else {
        return Ok(());
    };
    ops.hccl_aiv_launch()?;
    ops.overlap_pipes();
    let numel = a.data.numel();
    let tile = tile_elems(ops.chip().ub_bytes(), a.data.dtype().size());
    aiv_barrier(ops, &lanes, me, n, 1).await?;
    let (lo, hi) = slice(me, numel, n);
    for (base, w) in tiles(lo, hi, b, active, tile) {
        reduce_tile(ops, a.op, &flat, 0, &peer_order(me, n, b), (base, w)).await?;
    }
    aiv_barrier(ops, &lanes, me, n, 2).await?;
    let mut pulls = Vec::new();
    for owner in peer_order(me, n, b) {
        let (lo, hi) = slice(owner, numel, n);
        pulls.extend(tiles(lo, hi, b, active, tile).map(|(base, w)| (owner, base, w)));
    }
    gather(ops, &flat, &pulls).await?;
    aiv_barrier(ops, &lanes, me, n, 3).await?;
    lanes.epilogue(ops, me, n, 3)
}

/// Reduces tile `(base, w)` of row `row` of `t` on every peer into the local one and stores
/// the sum there, the next peer's tile in flight while the current one is added (the AIV
/// reduce-scatter step, shared with reduce_scatter's aiv-mesh).
pub(crate) async fn reduce_tile(
    ops: &mut Ops,
    op: ReduceOp,
    t: &Tensor,
    row: usize,
    peers: &[usize],
    (base, w): (usize, usize),
) -> SimResult<()> {
    let at = [row, base];
    let own = ops.load_async(t, &at, &[1, w])?;
    let mut next = match peers.first() {
        Some(&p) => Some(ops.remote_load_async(t, p, &at, &[1, w])?),
        None => None,
    };
    let mut acc = ops.wait_load(own).await?;
    for i in 0..peers.len() {
        let Some(cur) = next.take() else { break };
        if let Some(&p) = peers.get(i + 1) {
            next = Some(ops.remote_load_async(t, p, &at, &[1, w])?);
        }
        let tile = ops.wait_load(cur).await?;
        acc = ops.reduce(op, &acc, &tile)?;
    }
    ops.store(&acc, t, &at)
}

/// Copies each `(owner, base, w)` tile of the owners' windows into the local one, the next
/// tile in flight while the current one is stored.
async fn gather(ops: &mut Ops, flat: &Tensor, pulls: &[(usize, usize, usize)]) -> SimResult<()> {
    let pull = |ops: &mut Ops, &(owner, base, w): &(usize, usize, usize)| {
        ops.remote_load_async(flat, owner, &[0, base], &[1, w])
    };
    let store = |ops: &mut Ops, &(_, base, _): &(usize, usize, usize), t: &Tile| ops.store(t, flat, &[0, base]);
    pipelined(ops, pulls, pull, store).await
}

/// For each item: a load `pull` starts, and the previous item's tile is `store`d while it is in
/// flight (one load ahead), in order. The pull / store pipeline of the AIV kernels.
pub(crate) async fn pipelined<T>(
    ops: &mut Ops,
    items: &[T],
    pull: impl Fn(&mut Ops, &T) -> SimResult<TileLoad>,
    store: impl Fn(&mut Ops, &T, &Tile) -> SimResult<()>,
) -> SimResult<()> {
    let mut next = match items.first() {
        Some(p) => Some(pull(ops, p)?),
        None => None,
    };
    for (i, item) in items.iter().enumerate() {
        let Some(cur) = next.take() else { break };
        if let Some(p) = items.get(i + 1) {
            next = Some(pull(ops, p)?);
        }
        let t = ops.wait_load(cur).await?;
        store(ops, item, &t)?;
    }
    Ok(())
}

/// The AIV full-mesh allreduce: any reduction and element type, PyPTO's mesh signals.
pub(crate) const ALGORITHM: Algorithm = Algorithm {
    check: |_, o| {
        o.op_and_dtype(&ReduceOp::ALL, &sim_core::DType::ALL)?;
        o.mesh_signal()
    },
    host: kernel!(block),
    incore: kernel!(block),
    needs_server: false,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_and_tiles_cover_everything_once() {
        for (numel, n, tile) in [(1, 4, 8), (17, 4, 8), (100_000, 8, 15_680), (4097, 3, 1000)] {
            let mut covered = vec![0; numel];
            for i in 0..n {
                let (lo, hi) = slice(i, numel, n);
                for blk in 0..5 {
                    for (s, w) in tiles(lo, hi, blk, 5, tile) {
                        covered[s..s + w].iter_mut().for_each(|c| *c += 1);
                    }
                }
            }
            assert!(covered.iter().all(|&c| c == 1), "numel {numel} n {n}");
        }
    }

    #[test]
    fn blocks_start_on_different_peers_and_visit_each_once() {
        assert_eq!(peer_order(0, 4, 0), vec![1, 2, 3]);
        assert_eq!(peer_order(0, 4, 1), vec![2, 3, 1]);
        assert_eq!(peer_order(2, 4, 2), vec![1, 3, 0]);
        for b in 0..10 {
            let mut p = peer_order(5, 8, b);
            p.sort();
            assert_eq!(p, vec![0, 1, 2, 3, 4, 6, 7]);
        }
        assert!(peer_order(0, 1, 3).is_empty());
    }

    #[test]
    fn three_tiles_fit_in_ub() {
        // a2a3: 188416 bytes of UB -> 62784-byte tiles (15696 f32).
        assert_eq!(tile_elems(188_416, 4), 15_696);
        assert!(3 * tile_elems(188_416, 2) * 2 <= 188_416);
        assert_eq!(tile_elems(65_536, 4), 5_456);
    }
}
