//! Mesh allreduce: every rank pulls every peer's copy of each chunk and reduces it in place.

use super::Args;
use crate::algorithm::{Algorithm, FP, kernel};
use crate::lanes::{CellMap, INCORE_CHUNK_BYTES, Lanes, TILE, first_cols, padded, peers, ranks};
use sim_core::{DType, Ops, SimResult};

const WHAT: &str = "allreduce";

/// The HOST builtin, one block (reference §3.4): 256-element chunks dealt block-cyclically over
/// `min(core_num, stride)` blocks, 32-byte-rounded reads, a read-done barrier on the block's
/// lane `peer * stride + block` before each store, and the `-(chunks + 1)` epilogue.
pub(crate) async fn host_block(ops: &mut Ops, a: &Args) -> SimResult<()> {
    let (me, n) = ranks(ops, &a.data, WHAT)?;
    let b = ops.block_idx();
    let Some((lanes, active)) = Lanes::for_block(&a.sig, b, ops.block_num()) else {
        return Ok(());
    };
    lanes.barrier(ops, me, n, 1).await?;
    let (numel, es) = (a.data.numel(), a.data.dtype().size());
    let flat = padded(ops, &a.data, WHAT)?;
    let mut expected = 2;
    let mut base = b * TILE;
    while base < numel {
        let chunk = TILE.min(numel - base);
        let transfer = (chunk * es).div_ceil(32) * 32 / es;
        let mut acc = ops.load(&flat, &[0, base], &[1, transfer]).await?;
        for peer in peers(me, n) {
            let recv = ops.remote_load(&flat, peer, &[0, base], &[1, transfer]).await?;
            acc = ops.reduce(a.op, &acc, &recv)?;
        }
        lanes.barrier(ops, me, n, expected).await?;
        expected += 1;
        let out = first_cols(ops, &acc, chunk, WHAT)?;
        ops.store(&out, &flat, &[0, base])?;
        base += active * TILE;
    }
    lanes.epilogue(ops, me, n, expected - 1)
}

/// The InCore composite (reference §3.12): chunks of at most 16 KiB, a ready barrier, a barrier
/// of generation `1 + k` before chunk k's store, FP16 reads rounded up to 32 bytes, and the
/// `-(1 + chunks)` epilogue on a `[NR, 1]` signal.
pub(crate) async fn incore(ops: &mut Ops, a: &Args) -> SimResult<()> {
    let (me, n) = ranks(ops, &a.data, WHAT)?;
    let lanes = Lanes::new(&a.sig, CellMap::Lane(0));
    let (numel, es) = (a.data.numel(), a.data.dtype().size());
    let budget = INCORE_CHUNK_BYTES / es;
    let per_32b = 32 / es;
    let chunk = if numel <= budget { numel.div_ceil(per_32b) * per_32b } else { budget };
    let count = numel.div_ceil(chunk);
    let flat = padded(ops, &a.data, WHAT)?;
    lanes.barrier(ops, me, n, 1).await?;
    for k in 0..count {
        let base = k * chunk;
        let w = chunk.min(numel - base);
        let span = if a.data.dtype() == DType::F16 { w.div_ceil(per_32b) * per_32b } else { w };
        let mut acc = ops.load(&flat, &[0, base], &[1, span]).await?;
        for peer in peers(me, n) {
            let recv = ops.remote_load(&flat, peer, &[0, base], &[1, span]).await?;
            acc = ops.reduce(a.op, &acc, &recv)?;
        }
        lanes.barrier(ops, me, n, 2 + k as i32).await?;
        let out = first_cols(ops, &acc, w, WHAT)?;
        ops.store(&out, &flat, &[0, base])?;
    }
    lanes.epilogue(ops, me, n, 1 + count as i32)
}

/// PyPTO's mesh allreduce: any reduction of f32 / f16, PyPTO's mesh signals.
pub(crate) const ALGORITHM: Algorithm = Algorithm::new(
    |_, o| {
        o.op_and_dtype(&sim_core::ReduceOp::ALL, &FP)?;
        o.mesh_signal()
    },
    kernel!(host_block),
    kernel!(incore),
);
