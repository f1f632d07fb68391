//! Ring allreduce: a reduce-scatter then an allgather around the ring, each rank pulling only
//! from its left neighbour. Each chunk is reduced once, so every rank ends bit-identical.

use super::Args;
use crate::algorithm::{Algorithm, FP, Operands, kernel};
use crate::lanes::{CellMap, INCORE_CHUNK_BYTES, Lanes, TILE, ranks};
use sim_core::{DType, Ops, ReduceOp, SimResult, Tensor};

const WHAT: &str = "allreduce ring";

/// `(start, len)` tiles of `[0, len)` of at most `cols` elements.
fn tiles(len: usize, cols: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..len).step_by(cols.max(1)).map(move |s| (s, cols.min(len - s)))
}

/// The chunk index rank `me` reduces at reduce-scatter step `step` (1-based).
fn rs_index(me: usize, step: usize, n: usize) -> usize {
    (me + 2 * n - step - 1) % n
}

/// The chunk index rank `me` copies at allgather step `step` (1-based).
fn ag_index(me: usize, step: usize, n: usize) -> usize {
    (me + n - step) % n
}

fn flat(ops: &mut Ops, t: &Tensor) -> SimResult<Tensor> {
    t.view(t.dtype(), &[1, t.numel()]).map_err(|e| ops.error(WHAT, e.to_string()))
}

/// The signal on the table's terms (the modes table's `Signal::Own`): HOST `[2(NR-1)+1, NR]`
/// (a row per step and the closing barrier's), InCore `[2(NR-1), NR]`.
pub(crate) fn signal(of: &crate::spec::SignalOf) -> Vec<usize> {
    let (n, rounds) = (of.nranks, 2 * of.nranks.saturating_sub(1));
    match of.path {
        crate::spec::Path::Host => vec![rounds + 1, n],
        crate::spec::Path::InCore => vec![rounds.max(1), n],
    }
}

/// The HOST builtin (reference §3.5): `numel / NR` chunks in 256-element tiles, one
/// `RoundBarrier` per row of the `[2(NR-1)+1, NR]` signal (NR-1 reduce-scatter rounds, NR-1
/// allgather rounds, one final), then `-1` on every used cell. Returns at once (as the kernel
/// does) when `NR <= 1` or `numel % NR != 0`.
pub(crate) async fn host(ops: &mut Ops, a: &Args) -> SimResult<()> {
    let (me, n) = ranks(ops, &a.data, WHAT)?;
    let numel = a.data.numel();
    if n <= 1 || !numel.is_multiple_of(n) {
        return Ok(());
    }
    let ce = numel / n;
    let cols = ce.min(TILE);
    let data = flat(ops, &a.data)?;
    let left = (me + n - 1) % n;
    let lanes = Lanes::new(&a.sig, CellMap::Row(0));
    for step in 1..n {
        lanes.row(step - 1).barrier(ops, me, n, 1).await?;
        let idx = rs_index(me, step, n);
        for (off, w) in tiles(ce, cols) {
            let at = [0, idx * ce + off];
            let recv = ops.remote_load(&data, left, &at, &[1, w]).await?;
            let own = ops.load(&data, &at, &[1, w]).await?;
            let sum = ops.reduce(a.op, &own, &recv)?;
            ops.store(&sum, &data, &at)?;
        }
    }
    for step in 1..n {
        lanes.row(n - 2 + step).barrier(ops, me, n, 1).await?;
        let idx = ag_index(me, step, n);
        for (off, w) in tiles(ce, cols) {
            let at = [0, idx * ce + off];
            let recv = ops.remote_load(&data, left, &at, &[1, w]).await?;
            ops.store(&recv, &data, &at)?;
        }
    }
    lanes.row(2 * (n - 1)).barrier(ops, me, n, 1).await?;
    for row in 0..=2 * (n - 1) {
        lanes.row(row).epilogue(ops, me, n, 1)?;
    }
    Ok(())
}

/// Segment bounds of the InCore ring: `floor(i * numel / NR)`, with FP16 interior bounds
/// rounded up to 16 elements and capped at `numel`.
fn bound(i: usize, numel: usize, n: usize, dtype: DType) -> usize {
    let b = i * numel / n;
    if dtype == DType::F16 && i > 0 && i < n { (b.div_ceil(16) * 16).min(numel) } else { b }
}

/// The InCore composite (reference §3.12): balanced segments cut into subchunks of at most
/// 16 KiB; every rank walks the same number of subchunks (inactive ones still barrier), with a
/// ready barrier (`>= 2k+1`) and a read-complete barrier (`>= 2k+2`) per subchunk k on each
/// round's row of the `[2(NR-1), NR]` signal; epilogue `-2 * subchunks` on every row.
pub(crate) async fn incore(ops: &mut Ops, a: &Args) -> SimResult<()> {
    let (me, n) = ranks(ops, &a.data, WHAT)?;
    if n <= 1 {
        return Ok(());
    }
    let (numel, dtype) = (a.data.numel(), a.data.dtype());
    let seg = |i: usize| (bound(i, numel, n, dtype), bound(i + 1, numel, n, dtype));
    let per_chunk = INCORE_CHUNK_BYTES / dtype.size();
    let longest = (0..n).map(|i| seg(i).1 - seg(i).0).max().unwrap_or(0);
    let subs = longest.div_ceil(per_chunk).max(1);
    let data = flat(ops, &a.data)?;
    let left = (me + n - 1) % n;
    let lanes = Lanes::new(&a.sig, CellMap::Row(0));
    for round in 0..2 * (n - 1) {
        let rs = round < n - 1;
        let step = if rs { round + 1 } else { round - (n - 1) + 1 };
        let idx = if rs { rs_index(me, step, n) } else { ag_index(me, step, n) };
        let (lo, hi) = seg(idx);
        let row = lanes.row(round);
        for k in 0..subs {
            let start = lo + k * per_chunk;
            let w = hi.saturating_sub(start).min(per_chunk);
            row.barrier(ops, me, n, 2 * k as i32 + 1).await?;
            let result = if w > 0 {
                let recv = ops.remote_load(&data, left, &[0, start], &[1, w]).await?;
                Some(if rs {
                    let own = ops.load(&data, &[0, start], &[1, w]).await?;
                    ops.reduce(a.op, &own, &recv)?
                } else {
                    recv
                })
            } else {
                None
            };
            row.barrier(ops, me, n, 2 * k as i32 + 2).await?;
            if let Some(t) = result {
                ops.store(&t, &data, &[0, start])?;
            }
        }
    }
    for round in 0..2 * (n - 1) {
        lanes.row(round).epilogue(ops, me, n, 2 * subs as i32)?;
    }
    Ok(())
}

/// PyPTO's ring allreduce: on the HOST path a sum of f32 on one block, InCore any reduction of
/// f32 / f16; the table's signal (none needed on one rank).
pub(crate) const ALGORITHM: Algorithm = Algorithm::new(check, kernel!(host), kernel!(incore));

/// The ring's operand checks, then a warning when the HOST kernel will return at once (a
/// numel that is not a multiple of the ranks, on ranks it runs on).
fn check(world: &mut sim_core::World, o: &Operands<'_>) -> SimResult<()> {
    check_operands(o)?;
    let (n, numel) = (o.n, o.data.numel());
    let runs = n > 1 && n <= crate::validate::MAX_BUILTIN_RANKS;
    if o.spec.path == crate::spec::Path::Host && runs && !numel.is_multiple_of(n) {
        world.warn(format!(
            "{}: the HOST ring kernel returns at once when numel ({numel}) is not a multiple of the rank count ({n}); this call moves no data",
            o.what
        ));
    }
    Ok(())
}

fn check_operands(o: &Operands<'_>) -> SimResult<()> {
    let host = o.spec.path == crate::spec::Path::Host;
    o.op_and_dtype(if host { &[ReduceOp::Sum] } else { &ReduceOp::ALL }, if host { &[DType::F32] } else { &FP })?;
    if host && o.spec.core_num != 1 {
        let got = o.spec.core_num;
        return crate::validate::fail(
            o.what,
            format!("the HOST ring runs on one block; core_num must be 1, got {got}"),
        );
    }
    if o.n > 1 { o.table_signal() } else { Ok(()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rank_owns_its_own_chunk_after_reduce_scatter() {
        // After NR-1 steps, rank me has reduced chunk me last.
        for n in 2..9 {
            for me in 0..n {
                assert_eq!(rs_index(me, n - 1, n), me);
                // Allgather step 1 copies the chunk the left neighbour owns.
                assert_eq!(ag_index(me, 1, n), (me + n - 1) % n);
            }
        }
    }

    #[test]
    fn fp16_interior_bounds_round_to_16() {
        let b: Vec<usize> = (0..=4).map(|i| bound(i, 8193, 4, DType::F16)).collect();
        assert_eq!(b, vec![0, 2048, 4096, 6144, 8193]);
        let b: Vec<usize> = (0..=4).map(|i| bound(i, 17, 4, DType::F16)).collect();
        assert_eq!(b, vec![0, 16, 16, 16, 17]);
        let b: Vec<usize> = (0..=4).map(|i| bound(i, 17, 4, DType::F32)).collect();
        assert_eq!(b, vec![0, 4, 8, 12, 17]);
    }
}
