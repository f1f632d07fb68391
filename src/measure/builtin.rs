//! The built-in collectives as [`Collective`]s: [`Builtin`] measures a [`collectives::Call`]
//! through the same path a user's collective takes.
//!
//! Inputs are small integers, so every reduction is exact in every dtype and `#wrong` counts
//! real errors, never rounding. With several calls the data would be reduced again and again,
//! so [`super::point`] checks results on a one-call run and times a timing-only run of all
//! calls (times do not depend on payload).

use super::collective::{Collective, Wrong};
use crate::formats;
use collectives::{Call, CallBuffers, Kind, Mode};
use sim_core::{DType, Domain, ReduceOp, SimResult, World};

/// The input of rank `r`, element `i`: small integers that keep every op exact.
fn value(op: ReduceOp, r: usize, i: usize) -> f64 {
    match op {
        ReduceOp::Prod => {
            if (r + i).is_multiple_of(3) {
                -1.0
            } else {
                1.0
            }
        }
        _ => ((r * 3 + i) % 9) as f64 - 4.0,
    }
}

/// A built-in series' name: `allreduce ring`, `reduce_scatter sdma-mesh`, or the collective
/// alone for the builtin of a collective whose only other algorithm came later (so earlier
/// labels stay as they were).
pub fn series_name(kind: Kind, mode: Mode) -> String {
    if matches!(kind, Kind::AllReduce | Kind::AllGather) || mode != Mode::Mesh {
        format!("{kind} {mode}")
    } else {
        kind.to_string()
    }
}

/// The built-in collective a [`Call`] describes, as a [`Collective`]: measured through the same
/// path a user's collective takes (`crate::measure`). Its name is [`series_name`], its sizes and
/// busbw factor nccl-tests' conventions for the call's kind.
pub struct Builtin<'a>(pub &'a Call);
impl Collective for Builtin<'_> {
    type Buffers = CallBuffers;

    fn name(&self) -> String {
        series_name(self.0.kind, self.0.mode)
    }
    fn dtype(&self) -> DType {
        self.0.dtype
    }
    fn bus_factor(&self, ranks: usize) -> f64 {
        formats::bus_factor(self.0.kind, ranks)
    }
    fn count(&self, size_bytes: u64, ranks: usize) -> usize {
        formats::count_for(self.0.kind, size_bytes, self.0.dtype.size() as u64, ranks) as usize
    }
    fn bytes(&self, count: usize, ranks: usize) -> u64 {
        formats::bytes_for(self.0.kind, count as u64, self.0.dtype.size() as u64, ranks)
    }
    fn redop(&self) -> String {
        if self.0.reduces() { self.0.op.name().to_string() } else { "none".into() }
    }
    fn root(&self) -> i64 {
        if self.0.kind == Kind::Broadcast { i64::try_from(self.0.root).unwrap_or(i64::MAX) } else { -1 }
    }
    fn runs_without_data(&self) -> bool {
        self.0.kind == Kind::Barrier
    }
    fn traffic(&self, count: usize, _ranks: usize, server_ranks: usize) -> collectives::Traffic {
        self.0.traffic(count, server_ranks)
    }
    fn payload_bytes(&self, count: usize, _ranks: usize) -> Option<u64> {
        let (n, es) = (self.0.ranks as u64, self.0.dtype.size() as u64);
        Some(self.0.data_elems(count as u64).saturating_mul(es).saturating_mul(n))
    }
    fn setup(&self, w: &mut World, dom: &Domain, count: usize) -> SimResult<CallBuffers> {
        self.0.alloc(w, dom, count)
    }
    fn stage(&self, w: &mut World, b: &CallBuffers, _count: usize) -> SimResult<()> {
        fill(w, b, self.0)
    }
    fn call(&self, w: &mut World, b: &CallBuffers) -> SimResult<()> {
        self.0.queue(w, b)
    }
    fn wrong(&self, w: &World, b: &CallBuffers, count: usize) -> SimResult<Wrong> {
        wrong(w, b, self.0, count)
    }
}

/// Stages every rank's input.
fn fill(w: &mut World, b: &CallBuffers, call: &Call) -> SimResult<()> {
    for r in 0..call.ranks {
        if let Some(t) = &b.input {
            w.write_bytes(t, r, &periodic_bytes(call.dtype, t.numel(), |i| value(call.op, r, i)))?;
        }
        if let Some((send, _)) = &b.counts {
            w.write(send, r, &vec![1i32; call.ranks])?;
        }
    }
    Ok(())
}

/// Elements that differ from the golden, over every rank.
fn wrong(w: &World, b: &CallBuffers, call: &Call, count: usize) -> SimResult<Wrong> {
    let n = call.ranks;
    let v = |r: usize, i: usize| value(call.op, r, i);
    let fold = |i: usize| (1..n).fold(v(0, i), |a, r| combine(call.op, a, v(r, i)));
    let mut wrong = Wrong::new();
    for me in 0..n {
        // Where rank `me`'s result sits (buffer, first element) and its golden: `segs`
        // segments of `count` elements, element `i` of segment `s` being `g(s, i)`.
        let (buf, first, segs, g): (_, usize, usize, Golden) = match call.kind {
            Kind::AllReduce => (&b.input, 0, 1, Box::new(|_, i| fold(i))),
            Kind::Broadcast => (&b.input, 0, 1, Box::new(|_, i| v(call.root, i))),
            Kind::ReduceScatter => (&b.input, me * count, 1, Box::new(move |_, i| fold(me * count + i))),
            Kind::AllGather => (&b.target, 0, n, Box::new(v)),
            Kind::AllToAll | Kind::AllToAllV => (&b.target, 0, n, Box::new(move |s, i| v(s, me * count + i))),
            Kind::Barrier => continue,
        };
        let got = match buf {
            Some(t) => w.read_bytes(t, me)?,
            None => Vec::new(),
        };
        wrong_elements(&mut wrong, me, call.dtype, &got, first, segs, count, g);
    }
    Ok(wrong)
}

/// Element `i` of segment `s` of a rank's expected result.
type Golden<'a> = Box<dyn Fn(usize, usize) -> f64 + 'a>;

/// Period of every input and golden sequence along a segment: `value` repeats every 9 elements.
const PERIOD: usize = 9;

/// `len` elements `f(0..len)` of `dt` as little-endian bytes, for an `f` that repeats every
/// [`PERIOD`] elements: one period is encoded (as `World::write_f64` does) and repeated.
fn periodic_bytes(dt: DType, len: usize, f: impl Fn(usize) -> f64) -> Vec<u8> {
    let es = dt.size();
    let mut period = vec![0u8; PERIOD.min(len) * es];
    for i in 0..PERIOD.min(len) {
        dt.write_f64(&mut period, i, f(i));
    }
    let mut out = period.repeat(len.div_ceil(PERIOD.max(1)));
    out.truncate(len * es);
    out
}

/// Compares the elements of `got` (rank `rank`'s whole buffer, as bytes) from element `first`
/// on with the golden `g(s, i)` of `segs` segments of `count` elements, into `wrong` (missing
/// ones count as wrong). Compared as numbers, as `read_f64` decodes them; equal bytes of an
/// exactly encoded golden are equal numbers, so only differing bytes are decoded.
#[allow(clippy::too_many_arguments)]
fn wrong_elements(
    wrong: &mut Wrong,
    rank: usize,
    dt: DType,
    got: &[u8],
    first: usize,
    segs: usize,
    count: usize,
    g: impl Fn(usize, usize) -> f64,
) {
    let es = dt.size();
    // Compared a block of whole periods at a time; a block that differs, element by element.
    let block = (4096 / (PERIOD * es)).max(1) * PERIOD;
    for s in 0..segs {
        let want: Vec<f64> = (0..PERIOD.min(count)).map(|i| g(s, i)).collect();
        let pattern = periodic_bytes(dt, block.min(count), |i| want[i % PERIOD]);
        let exact = (0..want.len()).all(|i| dt.read_f64(&pattern, i) == want[i]);
        let start = (first + s * count) * es;
        let seg = got.get(start..got.len().min(start + count * es)).unwrap_or_default();
        for (b, bytes) in seg.chunks(block * es).enumerate() {
            if exact && bytes == &pattern[..bytes.len()] {
                continue;
            }
            for (k, chunk) in bytes.chunks_exact(es).enumerate() {
                let i = b * block + k;
                wrong.compare(rank, first + s * count + i, dt.read_f64(chunk, 0), want[i % PERIOD]);
            }
        }
        wrong.add_count((count - seg.len() / es) as u64);
    }
}

fn combine(op: ReduceOp, a: f64, b: f64) -> f64 {
    match op {
        ReduceOp::Sum => a + b,
        ReduceOp::Max => a.max(b),
        ReduceOp::Min => a.min(b),
        ReduceOp::Prod => a * b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(dt: DType, vals: &[f64]) -> Vec<u8> {
        let mut b = vec![0u8; vals.len() * dt.size()];
        for (i, &v) in vals.iter().enumerate() {
            dt.write_f64(&mut b, i, v);
        }
        b
    }

    #[test]
    fn periodic_bytes_are_the_element_by_element_encoding() {
        for dt in DType::ALL {
            for len in [0, 1, 8, 9, 10, 100] {
                let f = |i: usize| ((i * 7 + 3) % 9) as f64 - 4.0;
                let want = bytes(dt, &(0..len).map(f).collect::<Vec<_>>());
                assert_eq!(periodic_bytes(dt, len, f), want, "{dt} {len}");
            }
        }
    }

    #[test]
    fn wrong_elements_counts_what_read_f64_would() {
        let count = |dt: DType, got: &[u8], first: usize, segs: usize, n: usize, g: &dyn Fn(usize, usize) -> f64| {
            let mut w = Wrong::new();
            wrong_elements(&mut w, 0, dt, got, first, segs, n, g);
            w
        };
        let g = |s: usize, i: usize| ((s + i) % 9) as f64 - 4.0;
        let good: Vec<f64> = (0..2).flat_map(|s| (0..20).map(move |i| g(s, i))).collect();
        let dt = DType::F32;
        assert_eq!(count(dt, &bytes(dt, &good), 0, 2, 20, &g).count(), 0);
        // Two wrong values, one of them in the second segment: both named, in order.
        let mut bad = good.clone();
        (bad[3], bad[25]) = (100.0, -100.0);
        let w = count(dt, &bytes(dt, &bad), 0, 2, 20, &g);
        assert_eq!(w.count(), 2);
        let named: Vec<(u64, f64, f64)> = w.first().iter().map(|m| (m.index, m.got, m.expected)).collect();
        assert_eq!(named, [(3, 100.0, g(0, 3)), (25, -100.0, g(1, 5))]);
        // -0.0 where 0.0 is due: different bytes, the same number.
        let mut z = good.clone();
        let k = (0..40).find(|&k| good[k] == 0.0).unwrap();
        z[k] = -0.0;
        assert_eq!(count(dt, &bytes(dt, &z), 0, 2, 20, &g).count(), 0);
        // A short buffer: the missing elements are wrong; an offset region is read from `first`.
        assert_eq!(count(dt, &bytes(dt, &good[..30]), 0, 2, 20, &g).count(), 10);
        assert_eq!(count(dt, &bytes(dt, &good), 20, 1, 20, &|_, i| g(1, i)).count(), 0);
        // A golden i8 cannot hold (200): every element is wrong, whatever the bytes; only the
        // first few are kept.
        let dt = DType::I8;
        let sat = bytes(dt, &[200.0; 9]);
        let w = count(dt, &sat, 0, 1, 9, &|_, _| 200.0);
        assert_eq!((w.count(), w.first().len()), (9, crate::formats::Mismatch::KEPT));
    }
}
