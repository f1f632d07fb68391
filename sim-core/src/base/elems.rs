//! Element math over whole runs of little-endian bytes: what an `AtomicAdd` landing, a tile's
//! `combine` and `cast`, and a host write or read do to many elements at once.
//!
//! The dtype and the op are matched once per run, never per element. The elements go through
//! in chunks of [`CHUNK`]: widened into a stack buffer (f16 through `half`'s slice conversions,
//! which use the CPU's F16C instructions when it has them, as `half`'s one-element conversions
//! do), combined by a loop the compiler vectorises, and narrowed back. Every result is
//! bit-identical to the per-element reference kept in the tests: f16 / bf16 ops computed in f32
//! and rounded to nearest even once per op, f32 `max` / `min` as Rust's (a NaN operand loses),
//! integers wrapping. (Which of two NaN operands a sum or product passes on is the one thing
//! Rust leaves to the compiler, per element as per run.)

use crate::base::dtype::{DType, Element};
use crate::base::round::RoundMode;
use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};
use std::fmt;

/// An element-wise combining operation (PyPTO's `ReduceOp`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReduceOp {
    /// Addition.
    Sum,
    /// Maximum.
    Max,
    /// Minimum.
    Min,
    /// Multiplication.
    Prod,
}

impl ReduceOp {
    /// Every op, in PyPTO's enum order.
    pub const ALL: [ReduceOp; 4] = [ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod];

    /// The lower-case name used in tables and the CLI (`sum`, `max`, `min`, `prod`).
    pub const fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
            ReduceOp::Prod => "prod",
        }
    }
}

impl fmt::Display for ReduceOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ReduceOp {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "sum" | "add" => ReduceOp::Sum,
            "max" => ReduceOp::Max,
            "min" => ReduceOp::Min,
            "prod" | "mul" => ReduceOp::Prod,
            other => {
                return Err(format!("unknown reduce op `{other}`: expected sum, max, min or prod"));
            }
        })
    }
}

/// f16 elements widened at a time on the portable path (2 KiB of f32 per buffer).
const CHUNK: usize = 512;

/// `acc[i] = f(acc[i], rhs[i])` over the elements of `T`, one pass (the element loop the
/// compiler vectorises; `f` is one op, chosen before the loop).
#[inline(always)]
fn zip<T: Element>(acc: &mut [u8], rhs: &[u8], f: impl Fn(T, T) -> T) {
    let s = T::DTYPE.size();
    for (a, b) in acc.chunks_exact_mut(s).zip(rhs.chunks_exact(s)) {
        f(T::get(a), T::get(b)).write_le(a);
    }
}

/// `dst[i] = f(src[i])` from the elements of `S` to those of `D`, one pass.
#[inline(always)]
fn map<S: Element, D: Element>(src: &[u8], dst: &mut [u8], f: impl Fn(S) -> D) {
    let (s, d) = (S::DTYPE.size(), D::DTYPE.size());
    for (x, y) in src.chunks_exact(s).zip(dst.chunks_exact_mut(d)) {
        f(S::get(x)).write_le(y);
    }
}

/// Element `i` of the f16 run `src` widened into `dst[i]` (`src.len() == 2 * dst.len()`,
/// at most [`CHUNK`]), through `half`'s slice conversion.
fn f16_widen(src: &[u8], dst: &mut [f32]) {
    let mut h = [f16::ZERO; CHUNK];
    let h = &mut h[..dst.len()];
    for (d, s) in h.iter_mut().zip(src.chunks_exact(2)) {
        *d = f16::get(s);
    }
    h.convert_to_f32_slice(dst);
}

/// `src[i]` rounded to f16 (to nearest even) into element `i` of the run `dst`, through
/// `half`'s slice conversion.
fn f16_narrow(src: &[f32], dst: &mut [u8]) {
    let mut h = [f16::ZERO; CHUNK];
    let h = &mut h[..src.len()];
    h.convert_from_f32_slice(src);
    for (d, s) in dst.chunks_exact_mut(2).zip(h.iter()) {
        s.write_le(d);
    }
}

/// `acc[i] = f(acc[i], rhs[i])` over f16 elements computed in f32, a chunk at a time through
/// stack buffers: `half`'s slice conversions are much faster than its one-element ones.
fn f16_zip(acc: &mut [u8], rhs: &[u8], f: impl Fn(f32, f32) -> f32) {
    let (mut a, mut b) = ([0f32; CHUNK], [0f32; CHUNK]);
    for (ac, rc) in acc.chunks_mut(2 * CHUNK).zip(rhs.chunks(2 * CHUNK)) {
        let n = ac.len() / 2;
        let (a, b) = (&mut a[..n], &mut b[..n]);
        f16_widen(ac, a);
        f16_widen(rc, b);
        for (x, y) in a.iter_mut().zip(b.iter()) {
            *x = f(*x, *y);
        }
        f16_narrow(a, ac);
    }
}

/// `dst[i] = f(src[i])` from the elements of `S` into f32 rounded to f16, a chunk at a time.
fn to_f16<S: Element>(src: &[u8], dst: &mut [u8], f: impl Fn(S) -> f32) {
    let mut w = [0f32; CHUNK];
    let s = S::DTYPE.size();
    for (sc, dc) in src.chunks(s * CHUNK).zip(dst.chunks_mut(2 * CHUNK)) {
        let w = &mut w[..sc.len() / s];
        for (d, x) in w.iter_mut().zip(sc.chunks_exact(s)) {
            *d = f(S::get(x));
        }
        f16_narrow(w, dc);
    }
}

/// f16 elements widened to f32, a chunk at a time.
fn from_f16(src: &[u8], dst: &mut [u8]) {
    let mut w = [0f32; CHUNK];
    for (sc, dc) in src.chunks(2 * CHUNK).zip(dst.chunks_mut(4 * CHUNK)) {
        let w = &mut w[..sc.len() / 2];
        f16_widen(sc, w);
        for (d, x) in dc.chunks_exact_mut(4).zip(w.iter()) {
            x.write_le(d);
        }
    }
}

/// f16 sums and products with the x86-64 CPU's F16C and AVX instructions, eight elements a
/// step straight from the bytes (no stack buffers): each element widened exactly, added or
/// multiplied in f32, rounded to nearest even, as `half`'s conversions and the chunked path do
/// with the same instructions. Returns false, touching nothing, on a CPU without them or for
/// `max` / `min` (whose NaN rule is Rust's, not the instruction's).
#[cfg(target_arch = "x86_64")]
fn f16_x86(op: ReduceOp, acc: &mut [u8], rhs: &[u8]) -> bool {
    use std::arch::is_x86_feature_detected;
    let mul = match op {
        ReduceOp::Sum => false,
        ReduceOp::Prod => true,
        ReduceOp::Max | ReduceOp::Min => return false,
    };
    if !(is_x86_feature_detected!("avx") && is_x86_feature_detected!("f16c")) {
        return false;
    }
    // SAFETY: the CPU has AVX and F16C (just detected).
    unsafe { f16_x86_run(mul, acc, rhs) };
    true
}

/// The loop of [`f16_x86`]: the whole 16-byte steps, then the tail through a padded copy.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,f16c")]
fn f16_x86_run(mul: bool, acc: &mut [u8], rhs: &[u8]) {
    use std::arch::x86_64::{
        __m128i, _MM_FROUND_TO_NEAREST_INT, _mm_loadu_si128, _mm_storeu_si128, _mm256_add_ps, _mm256_cvtph_ps,
        _mm256_cvtps_ph, _mm256_mul_ps,
    };
    #[target_feature(enable = "avx,f16c")]
    fn step(mul: bool, a: &mut [u8], b: &[u8]) {
        debug_assert!(a.len() == 16 && b.len() == 16);
        // SAFETY: both slices hold 16 bytes; the loads and the store are unaligned ones.
        unsafe {
            let x = _mm256_cvtph_ps(_mm_loadu_si128(a.as_ptr().cast::<__m128i>()));
            let y = _mm256_cvtph_ps(_mm_loadu_si128(b.as_ptr().cast::<__m128i>()));
            let r = if mul { _mm256_mul_ps(x, y) } else { _mm256_add_ps(x, y) };
            _mm_storeu_si128(a.as_mut_ptr().cast::<__m128i>(), _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(r));
        }
    }
    let (mut a, b) = (acc.chunks_exact_mut(16), rhs.chunks_exact(16));
    let tail = b.remainder();
    for (x, y) in (&mut a).zip(b) {
        step(mul, x, y);
    }
    let rest = a.into_remainder();
    if !rest.is_empty() {
        let (mut x, mut y) = ([0u8; 16], [0u8; 16]);
        x[..rest.len()].copy_from_slice(rest);
        y[..tail.len()].copy_from_slice(tail);
        step(mul, &mut x, &y);
        rest.copy_from_slice(&x[..rest.len()]);
    }
}

/// `op` on f32 values.
fn fop(op: ReduceOp) -> fn(f32, f32) -> f32 {
    match op {
        ReduceOp::Sum => |a, b| a + b,
        ReduceOp::Max => f32::max,
        ReduceOp::Min => f32::min,
        ReduceOp::Prod => |a, b| a * b,
    }
}

/// f32 as itself, for `float!`'s f32 case.
#[inline(always)]
fn id(x: f32) -> f32 {
    x
}

macro_rules! float {
    ($op:expr, $acc:expr, $rhs:expr, $t:ty, $to:expr, $from:expr) => {
        match $op {
            ReduceOp::Sum => zip::<$t>($acc, $rhs, |a, b| $from($to(a) + $to(b))),
            ReduceOp::Max => zip::<$t>($acc, $rhs, |a, b| $from($to(a).max($to(b)))),
            ReduceOp::Min => zip::<$t>($acc, $rhs, |a, b| $from($to(a).min($to(b)))),
            ReduceOp::Prod => zip::<$t>($acc, $rhs, |a, b| $from($to(a) * $to(b))),
        }
    };
}

macro_rules! int {
    ($t:ty, $op:expr, $acc:expr, $rhs:expr) => {
        match $op {
            ReduceOp::Sum => zip::<$t>($acc, $rhs, <$t>::wrapping_add),
            ReduceOp::Max => zip::<$t>($acc, $rhs, <$t>::max),
            ReduceOp::Min => zip::<$t>($acc, $rhs, <$t>::min),
            ReduceOp::Prod => zip::<$t>($acc, $rhs, <$t>::wrapping_mul),
        }
    };
}

/// `acc[i] = op(acc[i], rhs[i])` over the little-endian elements of `dtype` in two runs of
/// equal length (a whole number of elements).
pub(crate) fn combine(dtype: DType, op: ReduceOp, acc: &mut [u8], rhs: &[u8]) {
    debug_assert_eq!(acc.len(), rhs.len());
    debug_assert!(acc.len().is_multiple_of(dtype.size()));
    match dtype {
        DType::F32 => float!(op, acc, rhs, f32, id, id),
        DType::F16 => {
            #[cfg(target_arch = "x86_64")]
            if f16_x86(op, acc, rhs) {
                return;
            }
            f16_zip(acc, rhs, fop(op))
        }
        DType::BF16 => float!(op, acc, rhs, bf16, bf16::to_f32, bf16::from_f32),
        DType::I32 => int!(i32, op, acc, rhs),
        DType::I16 => int!(i16, op, acc, rhs),
        DType::I8 => int!(i8, op, acc, rhs),
    }
}

/// Converts a run of `from` elements into a run of `to` elements with `mode`, as `cast` does
/// element by element, when the pair has a run path: the exact widenings (f16 / bf16 / i16 to
/// f32, i8 to f16: any mode) and the roundings that are one correctly rounded step in the
/// hardware's or `half`'s conversion (f32 to f16 / bf16, i32 to f32, i16 to f16: to nearest
/// even only). Returns false, touching nothing, for every other pair and mode.
pub(crate) fn cast(from: DType, to: DType, mode: RoundMode, src: &[u8], dst: &mut [u8]) -> bool {
    debug_assert_eq!(src.len() / from.size(), dst.len() / to.size());
    let rint = mode == RoundMode::Rint;
    match (from, to) {
        (DType::F16, DType::F32) => from_f16(src, dst),
        (DType::BF16, DType::F32) => map(src, dst, |x: bf16| x.to_f32()),
        (DType::I16, DType::F32) => map(src, dst, |x: i16| f32::from(x)),
        (DType::I8, DType::F16) => to_f16(src, dst, |x: i8| f32::from(x)),
        (DType::F32, DType::F16) if rint => to_f16(src, dst, |x: f32| x),
        (DType::F32, DType::BF16) if rint => map(src, dst, bf16::from_f32),
        (DType::I16, DType::F16) if rint => to_f16(src, dst, |x: i16| f32::from(x)),
        (DType::I32, DType::F32) if rint => map(src, dst, |x: i32| x as f32),
        _ => return false,
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::convert::{cast_supported, convert};
    use half::{bf16, f16};

    /// Today's per-element combine, kept as the reference the run path must equal bit for bit.
    fn reference(dtype: DType, op: ReduceOp, acc: &mut [u8], rhs: &[u8]) {
        fn fop(op: ReduceOp, a: f32, b: f32) -> f32 {
            match op {
                ReduceOp::Sum => a + b,
                ReduceOp::Max => a.max(b),
                ReduceOp::Min => a.min(b),
                ReduceOp::Prod => a * b,
            }
        }
        macro_rules! iop {
            ($op:expr, $a:expr, $b:expr) => {
                match $op {
                    ReduceOp::Sum => $a.wrapping_add($b),
                    ReduceOp::Max => $a.max($b),
                    ReduceOp::Min => $a.min($b),
                    ReduceOp::Prod => $a.wrapping_mul($b),
                }
            };
        }
        let s = dtype.size();
        for (a, b) in acc.chunks_exact_mut(s).zip(rhs.chunks_exact(s)) {
            match dtype {
                DType::F32 => {
                    let (x, y) = (f32::from_le_bytes(a.try_into().unwrap()), f32::from_le_bytes(b.try_into().unwrap()));
                    a.copy_from_slice(&fop(op, x, y).to_le_bytes());
                }
                DType::F16 => {
                    let (x, y) = (f16::from_le_bytes([a[0], a[1]]), f16::from_le_bytes([b[0], b[1]]));
                    a.copy_from_slice(&f16::from_f32(fop(op, x.to_f32(), y.to_f32())).to_le_bytes());
                }
                DType::BF16 => {
                    let (x, y) = (bf16::from_le_bytes([a[0], a[1]]), bf16::from_le_bytes([b[0], b[1]]));
                    a.copy_from_slice(&bf16::from_f32(fop(op, x.to_f32(), y.to_f32())).to_le_bytes());
                }
                DType::I32 => {
                    let (x, y) = (i32::from_le_bytes(a.try_into().unwrap()), i32::from_le_bytes(b.try_into().unwrap()));
                    a.copy_from_slice(&iop!(op, x, y).to_le_bytes());
                }
                DType::I16 => {
                    let (x, y) = (i16::from_le_bytes([a[0], a[1]]), i16::from_le_bytes([b[0], b[1]]));
                    a.copy_from_slice(&iop!(op, x, y).to_le_bytes());
                }
                DType::I8 => {
                    let (x, y) = (a[0] as i8, b[0] as i8);
                    a[0] = iop!(op, x, y) as u8;
                }
            }
        }
    }

    /// A small deterministic generator (xorshift64*).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
    }

    /// The edge cases of a float format as bit patterns: zeros, the smallest and largest
    /// subnormals, the smallest normal, one, the largest finite, infinities, quiet and
    /// signalling NaNs with payloads, each with both signs.
    fn edges(dtype: DType) -> Vec<u64> {
        let pos: Vec<u64> = match dtype {
            DType::F32 => vec![
                0,
                1,
                0x7f_ffff,
                0x80_0000,
                0x3f80_0000,
                0x7f7f_ffff,
                0x7f80_0000,
                0x7fc0_0000,
                0x7f80_0001,
                0x7fa0_1234,
            ],
            DType::F16 => vec![0, 1, 0x3ff, 0x400, 0x3c00, 0x7bff, 0x7c00, 0x7e00, 0x7c01, 0x7d23],
            DType::BF16 => vec![0, 1, 0x7f, 0x80, 0x3f80, 0x7f7f, 0x7f80, 0x7fc0, 0x7f81, 0x7fa3],
            DType::I32 => vec![0, 1, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff],
            DType::I16 => vec![0, 1, 0x7fff, 0x8000, 0xffff],
            DType::I8 => vec![0, 1, 0x7f, 0x80, 0xff],
        };
        let sign = 1u64 << (dtype.size() * 8 - 1);
        pos.iter().flat_map(|&p| [p, p | sign]).collect()
    }

    /// `n` elements of `dtype` as bytes: every edge case against every other (when `pairs`),
    /// then random bit patterns and random values near each other (sums that round).
    fn operands(dtype: DType, rng: &mut Rng, n: usize) -> (Vec<u8>, Vec<u8>) {
        let s = dtype.size();
        let e = edges(dtype);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let push = |v: &mut Vec<u8>, x: u64| v.extend_from_slice(&x.to_le_bytes()[..s]);
        for &x in &e {
            for &y in &e {
                push(&mut a, x);
                push(&mut b, y);
            }
        }
        while a.len() < n * s {
            let (x, y) = (rng.next(), rng.next());
            push(&mut a, x);
            // Half the time a value of the same sign and exponent: sums and products round.
            push(&mut b, if x & 1 == 0 { y } else { x ^ (y & 0xff) });
        }
        (a, b)
    }

    /// Asserts the run path's `fast` equals the reference's `slow` for operands `a`, `b`.
    fn same(dtype: DType, op: ReduceOp, n: usize, (a, b): (&[u8], &[u8]), fast: &[u8], slow: &[u8]) {
        let size = dtype.size();
        let nan = |v: &[u8], i: usize| dtype.is_float() && dtype.read_f64(v, i).is_nan();
        // Bit for bit, except which of two NaN operands a sum or product passes on: Rust
        // leaves that to the compiler, which may swap the operands of an add, so it is no
        // more fixed per element than per run.
        let differs = |i: &usize| {
            fast[i * size..(i + 1) * size] != slow[i * size..(i + 1) * size]
                && !(nan(a, *i) && nan(b, *i) && nan(fast, *i) && nan(slow, *i))
        };
        if let Some(i) = (0..a.len() / size).find(differs) {
            let el = |v: &[u8]| v[i * size..(i + 1) * size].to_vec();
            panic!(
                "{dtype} {op} n={n}: element {i}: {:02x?} op {:02x?} gave {:02x?}, the reference {:02x?}",
                el(a),
                el(b),
                el(fast),
                el(slow)
            );
        }
    }

    /// The portable f16 path, which a CPU with F16C and AVX skips for sums and products.
    #[test]
    fn the_portable_f16_path_equals_the_reference_too() {
        let mut rng = Rng(11);
        for op in ReduceOp::ALL {
            let (a, b) = operands(DType::F16, &mut rng, 3 * CHUNK + 5);
            let (mut fast, mut slow) = (a.clone(), a.clone());
            f16_zip(&mut fast, &b, fop(op));
            reference(DType::F16, op, &mut slow, &b);
            same(DType::F16, op, 3 * CHUNK + 5, (&a, &b), &fast, &slow);
        }
    }

    #[test]
    fn combine_equals_the_per_element_reference_for_every_dtype_and_op() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for dtype in DType::ALL {
            for op in ReduceOp::ALL {
                // Lengths around the chunk size, and one odd length.
                for n in [1, 7, CHUNK - 1, CHUNK, 3 * CHUNK + 5, 5000] {
                    let (a, b) = operands(dtype, &mut rng, n);
                    let (mut fast, mut slow) = (a.clone(), a.clone());
                    combine(dtype, op, &mut fast, &b);
                    reference(dtype, op, &mut slow, &b);
                    same(dtype, op, n, (&a, &b), &fast, &slow);
                }
            }
        }
    }

    /// The per-element cast `Tile::cast` does without a run path.
    fn cast_reference(from: DType, to: DType, mode: RoundMode, src: &[u8]) -> Vec<u8> {
        let n = src.len() / from.size();
        let mut out = vec![0u8; n * to.size()];
        for i in 0..n {
            to.write_f64(&mut out, i, convert(from.read_f64(src, i), to, mode));
        }
        out
    }

    #[test]
    fn cast_equals_the_per_element_reference_for_every_pair_it_takes() {
        let mut rng = Rng(7);
        let mut taken = 0;
        for from in DType::ALL {
            // Every bit pattern of a 16- or 8-bit source, edge cases and random ones of f32 / i32.
            let src: Vec<u8> = match from.size() {
                1 => (0..=255u8).collect(),
                2 => (0..=u16::MAX).flat_map(|x| x.to_le_bytes()).collect(),
                _ => operands(from, &mut rng, 200_000).0,
            };
            for to in DType::ALL.into_iter().filter(|&to| cast_supported(from, to)) {
                for mode in RoundMode::ALL {
                    if mode == RoundMode::Odd && !to.is_float() {
                        continue;
                    }
                    let n = src.len() / from.size();
                    let mut fast = vec![0u8; n * to.size()];
                    if !cast(from, to, mode, &src, &mut fast) {
                        continue;
                    }
                    taken += 1;
                    let slow = cast_reference(from, to, mode, &src);
                    let (fs, ts) = (from.size(), to.size());
                    if let Some(i) = (0..n).find(|&i| fast[i * ts..(i + 1) * ts] != slow[i * ts..(i + 1) * ts]) {
                        panic!(
                            "cast {from} -> {to} {mode}: {:02x?} gave {:02x?}, the reference {:02x?}",
                            &src[i * fs..(i + 1) * fs],
                            &fast[i * ts..(i + 1) * ts],
                            &slow[i * ts..(i + 1) * ts]
                        );
                    }
                }
            }
        }
        // 4 exact widenings in every mode, 4 roundings to nearest even.
        assert_eq!(taken, 4 * 6 + 4);
    }
}
