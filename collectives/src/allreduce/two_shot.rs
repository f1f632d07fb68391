//! Two-shot allreduce, the algorithm the vendor library runs on a full mesh above 256 KB:
//! a direct reduce-scatter (each rank pulls its `1/NR` slice from every peer and reduces it)
//! then a direct allgather (each rank pulls every other slice from its owner). Slices are dealt
//! to the `min(core_num, stride)` blocks in 256-element tiles, block-cyclically.
//!
//! Barriers on the block's lane: ready (`>= 1`), reduce-scatter done (`>= 2`), allgather reads
//! done (`>= 3`, so a next call cannot overwrite a slice a peer is still reading); epilogue `-3`.

use super::{Args, Block, slice};
use crate::algorithm::{Algorithm, kernel};
use crate::lanes::TILE;
use sim_core::{DType, Ops, ReduceOp, SimResult};

const WHAT: &str = "allreduce two-shot";

/// This block's tiles of `[lo, hi)`: `(start, len)`.
fn tiles(lo: usize, hi: usize, block: usize, blocks: usize) -> impl Iterator<Item = (usize, usize)> {
    (lo + block * TILE..hi).step_by(blocks * TILE).map(move |s| (s, TILE.min(hi - s)))
}

/// One block of a two-shot allreduce (HOST path: `[NR, stride]` lanes; InCore: one block on a
/// `[NR, 1]` signal).
pub(crate) async fn block(ops: &mut Ops, a: &Args) -> SimResult<()> {
    let Some(Block { me, n, b, active, lanes, flat }) = Block::of(ops, a, WHAT)? else {
        return Ok(());
    };
    let numel = a.data.numel();
    lanes.barrier(ops, me, n, 1).await?;
    let (lo, hi) = slice(me, numel, n);
    for (base, w) in tiles(lo, hi, b, active) {
        let mut acc = ops.load(&flat, &[0, base], &[1, w]).await?;
        for peer in (0..n).filter(|&p| p != me) {
            let recv = ops.remote_load(&flat, peer, &[0, base], &[1, w]).await?;
            acc = ops.reduce(a.op, &acc, &recv)?;
        }
        ops.store(&acc, &flat, &[0, base])?;
    }
    lanes.barrier(ops, me, n, 2).await?;
    for owner in (0..n).filter(|&p| p != me) {
        let (lo, hi) = slice(owner, numel, n);
        for (base, w) in tiles(lo, hi, b, active) {
            let t = ops.remote_load(&flat, owner, &[0, base], &[1, w]).await?;
            ops.store(&t, &flat, &[0, base])?;
        }
    }
    lanes.barrier(ops, me, n, 3).await?;
    lanes.epilogue(ops, me, n, 3)
}

/// The two-shot allreduce: any reduction and element type, PyPTO's mesh signals.
pub(crate) const ALGORITHM: Algorithm = Algorithm::both(
    |_, o| {
        o.op_and_dtype(&ReduceOp::ALL, &DType::ALL)?;
        o.mesh_signal()
    },
    kernel!(block),
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_cover_everything_once() {
        for (numel, n) in [(1, 4), (17, 4), (1000, 8), (4097, 3)] {
            let mut covered = vec![0; numel];
            for i in 0..n {
                let (lo, hi) = slice(i, numel, n);
                for blk in 0..3 {
                    for (s, w) in tiles(lo, hi, blk, 3) {
                        covered[s..s + w].iter_mut().for_each(|c| *c += 1);
                    }
                }
            }
            assert!(covered.iter().all(|&c| c == 1), "numel {numel} n {n}");
        }
    }
}
