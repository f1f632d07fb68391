//! The vendor library's SDMA allreduce on a full mesh (HCCL's mesh executor for 910B above its
//! one-shot threshold: reduce-scatter then allgather, every step a copy-engine transfer; the
//! reduce-scatter uses SDMA's inline reduce, docs/references/hardware.md §2.4 and §4.1,
//! `Mesh.md`). No UB and almost no AIV work: the cores only post descriptors and wait.
//!
//! Rank `me` owns slice `me`. Reduce-scatter: every rank adds its copy of slice `j` into rank
//! `j`'s slice `j` with an inline-reduce put; rank `j`'s own contribution is already there.
//! Allgather: every rank puts its reduced slice into every peer's copy of it. Each block moves
//! its part of every slice on its own SDMA channel, visiting the peers in a block-dependent
//! order so all links carry traffic at once.
//!
//! Barriers on the block's lane: ready (`>= 1`), the adds into every slice landed (`>= 2`,
//! each rank waits for its transfers before crediting), allgather landed (`>= 3`); epilogue `-3`.

use super::{Args, Block, slice};
use crate::algorithm::{Algorithm, kernel};
use crate::lanes::peer_order;
use crate::sdma::{put_run, wait_all};
use sim_core::{AtomicType, DType, Ops, ReduceOp, SdmaOpts, SimResult};

const WHAT: &str = "allreduce sdma-mesh";

/// Block `block`'s part of `[lo, hi)` when it is cut into `blocks` parts.
fn part(lo: usize, hi: usize, block: usize, blocks: usize) -> (usize, usize) {
    let n = hi - lo;
    (lo + block * n / blocks, lo + (block + 1) * n / blocks)
}

/// One block of the SDMA allreduce (HOST path: `[NR, stride]` lanes).
pub(crate) async fn block(ops: &mut Ops, a: &Args) -> SimResult<()> {
    let Some(Block { me, n, b, active, lanes, flat }) = Block::of(ops, a, WHAT)? else {
        return Ok(());
    };
    let numel = a.data.numel();
    lanes.barrier(ops, me, n, 1).await?;
    let peers = peer_order(me, n, b);
    let adds = SdmaOpts::new().atomic(AtomicType::Add);
    let mut posted = Vec::with_capacity(peers.len());
    for &j in &peers {
        let (lo, hi) = slice(j, numel, n);
        posted.push(put_run(ops, &flat, j, part(lo, hi, b, active), adds.clone())?);
    }
    wait_all(ops, posted.into_iter().flatten()).await?;
    lanes.barrier(ops, me, n, 2).await?;
    let (lo, hi) = slice(me, numel, n);
    let mine = part(lo, hi, b, active);
    let mut posted = Vec::with_capacity(peers.len());
    for &j in &peers {
        posted.push(put_run(ops, &flat, j, mine, SdmaOpts::new())?);
    }
    wait_all(ops, posted.into_iter().flatten()).await?;
    lanes.barrier(ops, me, n, 3).await?;
    lanes.epilogue(ops, me, n, 3)
}

/// The SDMA allreduce: a sum of a type the chip adds atomically (the copy engines' inline
/// reduce), on a chip with copy engines, PyPTO's mesh signals.
pub(crate) const ALGORITHM: Algorithm = Algorithm::both(
    |world, o| {
        let addable: Vec<DType> = DType::ALL.into_iter().filter(|&d| world.chip().atomic_add_supported(d)).collect();
        o.op_and_dtype(&[ReduceOp::Sum], &addable)?;
        crate::validate::has_sdma(world, o.what)?;
        o.mesh_signal()
    },
    kernel!(block),
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_cover_a_slice_once() {
        for (lo, hi, blocks) in [(0, 10, 3), (5, 6, 4), (100, 1000, 48), (7, 7, 2)] {
            let mut covered = vec![0; hi];
            for b in 0..blocks {
                let (l, h) = part(lo, hi, b, blocks);
                covered[l..h].iter_mut().for_each(|c| *c += 1);
            }
            assert!(covered[lo..hi].iter().all(|&c| c == 1), "{lo}..{hi} over {blocks}");
        }
    }
}
