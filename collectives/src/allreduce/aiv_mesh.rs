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

use super::{Args, Block, aiv_one_shot, slice};
use crate::aiv::{pipelined, reduce_tile, tile_elems, tiles};
use crate::algorithm::{Algorithm, kernel};
use crate::lanes::{aiv_barrier, peer_order};
use sim_core::{Ops, ReduceOp, SimResult, Tensor, Tile};

const WHAT: &str = "allreduce aiv-mesh";

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

/// Copies each `(owner, base, w)` tile of the owners' windows into the local one, the next
/// tile in flight while the current one is stored.
async fn gather(ops: &mut Ops, flat: &Tensor, pulls: &[(usize, usize, usize)]) -> SimResult<()> {
    let pull = |ops: &mut Ops, &(owner, base, w): &(usize, usize, usize)| {
        ops.remote_load_async(flat, owner, &[0, base], &[1, w])
    };
    let store = |ops: &mut Ops, &(_, base, _): &(usize, usize, usize), t: &Tile| ops.store(t, flat, &[0, base]);
    pipelined(ops, pulls, pull, store).await
}

/// The AIV full-mesh allreduce: any reduction and element type, PyPTO's mesh signals.
pub(crate) const ALGORITHM: Algorithm = Algorithm::both(
    |_, o| {
        o.op_and_dtype(&ReduceOp::ALL, &sim_core::DType::ALL)?;
        o.mesh_signal()
    },
    kernel!(block),
);

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
}
