//! Tiles: typed 2-D values held in a core's unified buffer (UB), and their element-wise math.
//!
//! A tile has a physical shape (`rows x cols`) and a valid shape (the part that was loaded or
//! will be stored), as PyPTO tiles do with `valid_shape`. Elements outside the valid part are
//! zero. Arithmetic follows the element type: f16/bf16 are computed in f32 and rounded back
//! after every operation; integers wrap.

use crate::base::convert::{RoundMode, cast_supported, convert};
use crate::base::dtype::{DType, Element, from_bytes, to_bytes};
use crate::base::elems;
pub use crate::base::elems::ReduceOp;
use crate::base::error::SimError;
use crate::base::payload::Payload;
use crate::base::time::SimTime;
use std::fmt;

pub(crate) mod math;

/// A typed 2-D value in UB.
#[derive(Clone)]
pub struct Tile {
    dtype: DType,
    rows: usize,
    cols: usize,
    valid_rows: usize,
    valid_cols: usize,
    /// Row-major over the physical shape; absent in a timing-only run (all zeros).
    data: Payload,
    /// When the pipe that produced it has finished writing it into UB (a consumer on another
    /// pipe starts no earlier). Not part of the value: equal tiles may be ready at different times.
    pub(crate) ready: SimTime,
}

impl PartialEq for Tile {
    fn eq(&self, o: &Tile) -> bool {
        (self.dtype, self.rows, self.cols, self.valid_rows, self.valid_cols)
            == (o.dtype, o.rows, o.cols, o.valid_rows, o.valid_cols)
            && self.data == o.data
    }
}

impl fmt::Debug for Tile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tile<{}>[{}x{}", self.dtype, self.rows, self.cols)?;
        if (self.valid_rows, self.valid_cols) != (self.rows, self.cols) {
            write!(f, " valid {}x{}", self.valid_rows, self.valid_cols)?;
        }
        write!(f, "]")
    }
}

impl Tile {
    /// A zero-filled tile.
    pub fn zeros(dtype: DType, rows: usize, cols: usize) -> Tile {
        Tile {
            dtype,
            rows,
            cols,
            valid_rows: rows,
            valid_cols: cols,
            data: Payload::of(vec![0; rows * cols * dtype.size()]),
            ready: SimTime::ZERO,
        }
    }

    /// A tile from typed row-major data; `data.len()` must equal `rows * cols`.
    pub fn from_slice<T: Element>(rows: usize, cols: usize, data: &[T]) -> Result<Tile, SimError> {
        if data.len() != rows * cols {
            return Err(SimError::invalid(format!(
                "Tile::from_slice: {} elements given for a {rows}x{cols} tile (needs {})",
                data.len(),
                rows * cols
            )));
        }
        Ok(Tile::from_bytes(T::DTYPE, rows, cols, Payload::of(to_bytes(data))))
    }

    /// A tile from raw little-endian bytes (`bytes.len() == rows * cols * dtype.size()`).
    pub(crate) fn from_bytes(dtype: DType, rows: usize, cols: usize, data: Payload) -> Tile {
        debug_assert_eq!(data.len(), rows * cols * dtype.size());
        Tile { dtype, rows, cols, valid_rows: rows, valid_cols: cols, data, ready: SimTime::ZERO }
    }

    /// A tile whose physical shape is `rows x cols` but only `valid` was filled from `data`
    /// (row-major over the valid part); the rest is zero.
    pub(crate) fn from_valid_bytes(
        dtype: DType,
        rows: usize,
        cols: usize,
        valid: (usize, usize),
        data: Payload,
    ) -> Tile {
        if valid == (rows, cols) {
            return Tile::from_bytes(dtype, rows, cols, data);
        }
        let (vr, vc) = valid;
        let Payload::Bytes(data) = data else {
            return Tile::absent(dtype, rows, cols).with_valid(vr, vc);
        };
        let mut t = Tile::zeros(dtype, rows, cols);
        let es = dtype.size();
        if let Some(out) = t.data.bytes_mut() {
            for r in 0..vr {
                let dst = r * cols * es;
                out[dst..dst + vc * es].copy_from_slice(&data[r * vc * es..(r + 1) * vc * es]);
            }
        }
        t.with_valid(vr, vc)
    }

    /// A timing-only tile: its shape, no bytes.
    fn absent(dtype: DType, rows: usize, cols: usize) -> Tile {
        let data = Payload::Absent(rows * cols * dtype.size());
        Tile { dtype, rows, cols, valid_rows: rows, valid_cols: cols, data, ready: SimTime::ZERO }
    }

    /// A tile of this one's kind (bytes or none) with a new dtype and shape, zero-filled.
    fn like(&self, dtype: DType, rows: usize, cols: usize) -> Tile {
        match self.data {
            Payload::Bytes(_) => Tile::zeros(dtype, rows, cols),
            Payload::Absent(_) => Tile::absent(dtype, rows, cols),
        }
    }

    /// The same tile with a smaller valid part (what a store writes back): `rows x cols` must
    /// fit inside the current valid shape.
    pub fn narrow(&self, rows: usize, cols: usize) -> Result<Tile, SimError> {
        if rows == 0 || cols == 0 || rows > self.valid_rows || cols > self.valid_cols {
            return Err(SimError::invalid(format!(
                "Tile::narrow to {rows}x{cols}: the valid part must stay non-empty and within {}x{}",
                self.valid_rows, self.valid_cols
            )));
        }
        let mut t = self.clone();
        t.valid_rows = rows;
        t.valid_cols = cols;
        Ok(t)
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Physical shape `(rows, cols)`.
    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// Valid shape `(rows, cols)`: the part a store writes back.
    pub fn valid_shape(&self) -> (usize, usize) {
        (self.valid_rows, self.valid_cols)
    }

    /// Physical size in bytes (what the tile occupies in UB).
    pub fn bytes(&self) -> usize {
        self.rows * self.cols * self.dtype.size()
    }

    /// Number of physical elements.
    pub fn len(&self) -> usize {
        self.rows * self.cols
    }

    /// Whether the tile has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The physical contents as typed values (row-major). Fails on a dtype mismatch.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>, SimError> {
        if T::DTYPE != self.dtype {
            return Err(SimError::invalid(format!(
                "Tile::to_vec::<{}> on a {} tile: read it with the tile's own dtype",
                T::DTYPE,
                self.dtype
            )));
        }
        Ok(match &self.data {
            Payload::Bytes(b) => from_bytes(b),
            Payload::Absent(n) => from_bytes(&vec![0u8; *n]),
        })
    }

    /// Element `(r, c)` as f64 (zero in a timing-only run).
    pub fn get_f64(&self, r: usize, c: usize) -> f64 {
        self.data.bytes().map_or(0.0, |b| self.dtype.read_f64(b, r * self.cols + c))
    }

    /// The valid part, row-major, as raw bytes (what a store writes).
    pub(crate) fn valid_bytes(&self) -> Payload {
        let es = self.dtype.size();
        let Payload::Bytes(data) = &self.data else {
            return Payload::Absent(self.valid_rows * self.valid_cols * es);
        };
        if (self.valid_rows, self.valid_cols) == (self.rows, self.cols) {
            return self.data.clone();
        }
        let mut out = Vec::with_capacity(self.valid_rows * self.valid_cols * es);
        for r in 0..self.valid_rows {
            let s = r * self.cols * es;
            out.extend_from_slice(&data[s..s + self.valid_cols * es]);
        }
        Payload::of(out)
    }

    /// The bytes of this tile and of `out` when both are kept (payload runs).
    fn both<'a>(&'a self, out: &'a mut Tile) -> Option<(&'a [u8], &'a mut Vec<u8>)> {
        match (&self.data, out.data.bytes_mut()) {
            (Payload::Bytes(a), Some(b)) => Some((a, b)),
            _ => None,
        }
    }

    /// Element-wise `op(self, other)`. Both tiles must have the same dtype and shapes; the
    /// result keeps `self`'s valid shape.
    pub fn combine(&self, op: ReduceOp, other: &Tile) -> Result<Tile, SimError> {
        if self.dtype != other.dtype || self.shape() != other.shape() || self.valid_shape() != other.valid_shape() {
            return Err(SimError::invalid(format!(
                "tile {op}: operands differ ({self:?} vs {other:?}); both tiles need the same dtype, shape and valid shape"
            )));
        }
        let mut out = self.clone();
        match (out.data.bytes_mut(), &other.data) {
            (Some(a), Payload::Bytes(b)) => elems::combine(self.dtype, op, a, b),
            _ => out.data = Payload::Absent(self.bytes()),
        }
        Ok(out)
    }

    /// Element-wise `op(self, scalar)`, with the scalar converted to the tile's dtype first.
    pub fn combine_scalar(&self, op: ReduceOp, scalar: f64) -> Tile {
        let mut out = self.clone();
        if let Some(acc) = out.data.bytes_mut() {
            let mut s = vec![0u8; self.dtype.size()];
            self.dtype.write_f64(&mut s, 0, scalar);
            let rhs = s.repeat(acc.len() / s.len());
            elems::combine(self.dtype, op, acc, &rhs);
        }
        out
    }
}

/// Which way a tile reduction runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Axis {
    /// Along each row: one value per row (`row_sum`, `row_max`, ...), an `[rows, 1]` tile.
    Rows,
    /// Down each column: one value per column (`col_sum`, ...), a `[1, cols]` tile.
    Cols,
}

impl Tile {
    /// Every valid element converted to `to` with `mode` (TCVT); the shape is kept. Only the
    /// pairs the vector unit converts directly are allowed ([`cast_supported`]).
    pub fn cast(&self, to: DType, mode: RoundMode) -> Result<Tile, SimError> {
        if !cast_supported(self.dtype, to) {
            let direct: Vec<&str> = DType::ALL
                .iter()
                .filter(|&&d| d != self.dtype && cast_supported(self.dtype, d))
                .map(|d| d.name())
                .collect();
            return Err(SimError::invalid(format!(
                "cast {} -> {to} is not a conversion the vector unit does (TCVT on A2/A3 converts {} to {}); cast through \
                 an intermediate type",
                self.dtype,
                self.dtype,
                direct.join(", ")
            )));
        }
        if matches!(mode, RoundMode::Odd) && !to.is_float() {
            return Err(SimError::invalid(format!(
                "cast {} -> {to}: round-to-odd is for float targets only",
                self.dtype
            )));
        }
        let mut out = self.like(to, self.rows, self.cols).with_valid(self.valid_rows, self.valid_cols);
        let (dtype, cols, (vr, vc)) = (self.dtype, self.cols, self.valid_shape());
        if let Some((src, dst)) = self.both(&mut out) {
            let (fs, ts) = (dtype.size(), to.size());
            for r in 0..vr {
                let (s, d) = (&src[r * cols * fs..][..vc * fs], &mut dst[r * cols * ts..][..vc * ts]);
                if !elems::cast(dtype, to, mode, s, d) {
                    for c in 0..vc {
                        to.write_f64(d, c, convert(dtype.read_f64(s, c), to, mode));
                    }
                }
            }
        }
        Ok(out)
    }

    /// `op` over each row (or column) of the valid part: an `[rows, 1]` (or `[1, cols]`)
    /// tile of the same dtype. Floats are accumulated exactly and rounded once; integers wrap.
    pub fn reduce_axis(&self, op: ReduceOp, axis: Axis) -> Tile {
        let (vr, vc) = (self.valid_rows, self.valid_cols);
        let (out_r, out_c, groups, len) = match axis {
            Axis::Rows => (self.rows, 1, vr, vc),
            Axis::Cols => (1, self.cols, vc, vr),
        };
        let mut out = self.like(self.dtype, out_r, out_c);
        (out.valid_rows, out.valid_cols) = match axis {
            Axis::Rows => (vr, 1),
            Axis::Cols => (1, vc),
        };
        let (dtype, cols) = (self.dtype, self.cols);
        let Some((src, dst)) = self.both(&mut out) else { return out };
        for g in 0..groups {
            let at = |k: usize| match axis {
                Axis::Rows => g * cols + k,
                Axis::Cols => k * cols + g,
            };
            let acc =
                (1..len).fold(dtype.read_f64(src, at(0)), |acc, k| fold(dtype, op, acc, dtype.read_f64(src, at(k))));
            dtype.write_f64(dst, g, acc);
        }
        out
    }

    /// The same elements as a `rows x cols` tile (row-major order kept). The tile must be
    /// wholly valid and keep its element count.
    pub fn reshape(&self, rows: usize, cols: usize) -> Result<Tile, SimError> {
        if (self.valid_rows, self.valid_cols) != (self.rows, self.cols) || rows * cols != self.rows * self.cols {
            return Err(SimError::invalid(format!(
                "reshape {self:?} to {rows}x{cols}: the tile must be wholly valid and keep its {} elements",
                self.rows * self.cols
            )));
        }
        let mut t = self.clone();
        (t.rows, t.cols, t.valid_rows, t.valid_cols) = (rows, cols, rows, cols);
        Ok(t)
    }
}

impl Tile {
    /// The same tile with valid shape `rows x cols` (within the physical shape).
    pub(crate) fn with_valid(mut self, rows: usize, cols: usize) -> Tile {
        debug_assert!(rows <= self.rows && cols <= self.cols);
        (self.valid_rows, self.valid_cols) = (rows, cols);
        self
    }

    /// `self + a @ b` for an f32 (or i32) accumulator `self` (`a.rows x b.cols`) and inputs
    /// `a` (M x K) and `b` (K x N) of one dtype, over the physical shapes (padding is zero):
    /// each product is exact in f64 and rounded to f32 (exact for f16 / bf16), then added to
    /// the f32 sum in ascending k; integers multiply and add in i32, wrapping.
    pub(crate) fn matmul_acc(mut self, a: &Tile, b: &Tile) -> Tile {
        let (m, k, n) = (a.rows, a.cols, b.cols);
        debug_assert_eq!((b.rows, self.rows, self.cols), (k, m, n));
        let (dt, acc) = (a.dtype, self.dtype);
        let (Payload::Bytes(a), Payload::Bytes(b), Some(out)) = (&a.data, &b.data, self.data.bytes_mut()) else {
            self.data = Payload::Absent(self.rows * self.cols * acc.size());
            return self;
        };
        for i in 0..m {
            for j in 0..n {
                let at = i * n + j;
                let v = if acc == DType::I32 {
                    let mut s = acc.read_f64(out, at) as i32;
                    for x in 0..k {
                        let p = (dt.read_f64(a, i * k + x) as i32).wrapping_mul(dt.read_f64(b, x * n + j) as i32);
                        s = s.wrapping_add(p);
                    }
                    s as f64
                } else {
                    let mut s = acc.read_f64(out, at) as f32;
                    for x in 0..k {
                        s += (dt.read_f64(a, i * k + x) * dt.read_f64(b, x * n + j)) as f32;
                    }
                    s as f64
                };
                acc.write_f64(out, at, v);
            }
        }
        self
    }

    /// Every element (valid or not) converted to `to` with `mode`, shapes kept; for the
    /// fixpipe's f32 -> f16 / bf16 store, which is not limited to the vector unit's pairs.
    pub(crate) fn convert_all(&self, to: DType, mode: RoundMode) -> Tile {
        let mut out = self.like(to, self.rows, self.cols).with_valid(self.valid_rows, self.valid_cols);
        let (dtype, n) = (self.dtype, self.len());
        if let Some((src, dst)) = self.both(&mut out)
            && !elems::cast(dtype, to, mode, src, dst)
        {
            for i in 0..n {
                to.write_f64(dst, i, convert(dtype.read_f64(src, i), to, mode));
            }
        }
        out
    }
}

/// One step of a reduction in f64, wrapping like the integer type for integers.
fn fold(dtype: DType, op: ReduceOp, acc: f64, x: f64) -> f64 {
    let v = match op {
        ReduceOp::Sum => acc + x,
        ReduceOp::Max => acc.max(x),
        ReduceOp::Min => acc.min(x),
        ReduceOp::Prod => acc * x,
    };
    match dtype {
        DType::I32 => (v as i64 as i32) as f64,
        DType::I16 => (v as i64 as i16) as f64,
        DType::I8 => (v as i64 as i8) as f64,
        _ => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

    #[test]
    fn add_max_min_mul_in_f32() {
        let a = Tile::from_slice(1, 3, &[1.0f32, 5.0, -2.0]).unwrap();
        let b = Tile::from_slice(1, 3, &[2.0f32, 4.0, -3.0]).unwrap();
        assert_eq!(a.combine(ReduceOp::Sum, &b).unwrap().to_vec::<f32>().unwrap(), vec![3.0, 9.0, -5.0]);
        assert_eq!(a.combine(ReduceOp::Max, &b).unwrap().to_vec::<f32>().unwrap(), vec![2.0, 5.0, -2.0]);
        assert_eq!(a.combine(ReduceOp::Min, &b).unwrap().to_vec::<f32>().unwrap(), vec![1.0, 4.0, -3.0]);
        assert_eq!(a.combine(ReduceOp::Prod, &b).unwrap().to_vec::<f32>().unwrap(), vec![2.0, 20.0, 6.0]);
    }

    #[test]
    fn f16_rounds_after_every_op() {
        // 2048 + 1 is not representable in f16: the sum stays 2048 (round to nearest even).
        let a = Tile::from_slice(1, 1, &[f16::from_f32(2048.0)]).unwrap();
        let b = Tile::from_slice(1, 1, &[f16::from_f32(1.0)]).unwrap();
        assert_eq!(a.combine(ReduceOp::Sum, &b).unwrap().to_vec::<f16>().unwrap()[0].to_f32(), 2048.0);
    }

    #[test]
    fn bf16_and_ints() {
        let a = Tile::from_slice(1, 2, &[bf16::from_f32(1.5), bf16::from_f32(-4.0)]).unwrap();
        let r = a.combine(ReduceOp::Prod, &a).unwrap().to_vec::<bf16>().unwrap();
        assert_eq!((r[0].to_f32(), r[1].to_f32()), (2.25, 16.0));
        let i = Tile::from_slice(1, 2, &[i8::MAX, -5]).unwrap();
        let one = Tile::from_slice(1, 2, &[1i8, 1]).unwrap();
        assert_eq!(i.combine(ReduceOp::Sum, &one).unwrap().to_vec::<i8>().unwrap(), vec![i8::MIN, -4]);
        let j = Tile::from_slice(1, 2, &[7i16, -9]).unwrap();
        assert_eq!(
            j.combine(ReduceOp::Min, &j.combine_scalar(ReduceOp::Sum, 1.0)).unwrap().to_vec::<i16>().unwrap(),
            vec![7, -9]
        );
        let k = Tile::from_slice(1, 1, &[i32::MAX]).unwrap();
        assert_eq!(k.combine_scalar(ReduceOp::Sum, 1.0).to_vec::<i32>().unwrap(), vec![i32::MIN]);
    }

    #[test]
    fn casts_round_by_mode_and_refuse_unsupported_pairs() {
        let t = Tile::from_slice(2, 2, &[2.5f32, -2.5, 1e10, 0.75]).unwrap().narrow(2, 1).unwrap();
        let i = t.cast(DType::I32, RoundMode::Rint).unwrap();
        assert_eq!(i.valid_shape(), (2, 1));
        assert_eq!(i.to_vec::<i32>().unwrap(), vec![2, 0, i32::MAX, 0]);
        let i = t.cast(DType::I32, RoundMode::Round).unwrap();
        assert_eq!(i.to_vec::<i32>().unwrap(), vec![3, 0, i32::MAX, 0]);
        let e = Tile::zeros(DType::F16, 1, 1).cast(DType::BF16, RoundMode::Rint).unwrap_err().to_string();
        assert!(e.contains("f16 -> bf16") && e.contains("f32, i32, i16, i8"), "{e}");
        let e = Tile::zeros(DType::F32, 1, 1).cast(DType::I32, RoundMode::Odd).unwrap_err().to_string();
        assert!(e.contains("float targets"), "{e}");
    }

    #[test]
    fn row_and_column_reductions_over_the_valid_part() {
        let t = Tile::from_slice(2, 3, &[1i16, 2, 3, 4, 5, 6]).unwrap();
        assert_eq!(t.reduce_axis(ReduceOp::Sum, Axis::Rows).to_vec::<i16>().unwrap(), vec![6, 15]);
        assert_eq!(t.reduce_axis(ReduceOp::Max, Axis::Cols).to_vec::<i16>().unwrap(), vec![4, 5, 6]);
        let n = t.narrow(2, 2).unwrap();
        let r = n.reduce_axis(ReduceOp::Prod, Axis::Rows);
        assert_eq!((r.shape(), r.to_vec::<i16>().unwrap()), ((2, 1), vec![2, 20]));
        let c = n.narrow(1, 2).unwrap().reduce_axis(ReduceOp::Min, Axis::Cols);
        assert_eq!((c.shape(), c.valid_shape()), ((1, 3), (1, 2)));
        assert_eq!(c.to_vec::<i16>().unwrap(), vec![1, 2, 0]);
        // i8 sums wrap like the type.
        let w = Tile::from_slice(1, 2, &[100i8, 100]).unwrap();
        assert_eq!(w.reduce_axis(ReduceOp::Sum, Axis::Rows).to_vec::<i8>().unwrap(), vec![-56]);
        // bf16: accumulated exactly, rounded once (256 + 1 + 1 = 258 is representable).
        let b = Tile::from_slice(1, 3, &[bf16::from_f32(256.0), bf16::from_f32(1.0), bf16::from_f32(1.0)]).unwrap();
        assert_eq!(b.reduce_axis(ReduceOp::Sum, Axis::Rows).get_f64(0, 0), 258.0);
    }

    #[test]
    fn matmul_accumulates_exact_products_in_f32() {
        // [[1, 2], [3, 4]] @ [[5, 6], [7, 8]] = [[19, 22], [43, 50]], plus 1 from the accumulator.
        let a = Tile::from_slice(2, 2, &[1.0, 2.0, 3.0, 4.0].map(f16::from_f32)).unwrap();
        let b = Tile::from_slice(2, 2, &[5.0, 6.0, 7.0, 8.0].map(f16::from_f32)).unwrap();
        let acc = Tile::from_slice(2, 2, &[1.0f32; 4]).unwrap();
        assert_eq!(acc.matmul_acc(&a, &b).to_vec::<f32>().unwrap(), vec![20.0, 23.0, 44.0, 51.0]);
        // f16 2048 * 2048 = 2^22 is exact in f32 (it would overflow nothing but f16 itself).
        let big = Tile::from_slice(1, 1, &[f16::from_f32(2048.0)]).unwrap();
        let r = Tile::zeros(DType::F32, 1, 1).matmul_acc(&big, &big);
        assert_eq!(r.to_vec::<f32>().unwrap(), vec![4_194_304.0]);
        // i8 into i32, wrapping like the type.
        let i = Tile::from_slice(1, 2, &[100i8, -128]).unwrap();
        let j = Tile::from_slice(2, 1, &[100i8, 2]).unwrap();
        assert_eq!(Tile::zeros(DType::I32, 1, 1).matmul_acc(&i, &j).to_vec::<i32>().unwrap(), vec![10_000 - 256]);
        // The fixpipe's conversion rounds to nearest even: 2049 -> 2048 in f16.
        let c = Tile::from_slice(1, 2, &[2049.0f32, 0.5]).unwrap().convert_all(DType::F16, RoundMode::Rint);
        assert_eq!(c.to_vec::<f16>().unwrap(), vec![f16::from_f32(2048.0), f16::from_f32(0.5)]);
    }

    #[test]
    fn reshape_keeps_the_elements_in_order() {
        let t = Tile::from_slice(2, 3, &[1i32, 2, 3, 4, 5, 6]).unwrap();
        let r = t.reshape(3, 2).unwrap();
        assert_eq!((r.shape(), r.get_f64(2, 1)), ((3, 2), 6.0));
        assert!(t.reshape(4, 2).unwrap_err().to_string().contains("keep its 6 elements"));
        assert!(t.narrow(1, 3).unwrap().reshape(3, 2).is_err());
    }

    #[test]
    fn mismatched_operands_are_rejected() {
        let a = Tile::zeros(DType::F32, 1, 4);
        let b = Tile::zeros(DType::F16, 1, 4);
        let err = a.combine(ReduceOp::Sum, &b).unwrap_err().to_string();
        assert!(err.contains("f32") && err.contains("f16"), "{err}");
    }

    #[test]
    fn valid_part_is_what_is_stored() {
        let t = Tile::from_valid_bytes(DType::I32, 2, 3, (1, 2), Payload::of(to_bytes(&[7i32, 8])));
        assert_eq!(t.to_vec::<i32>().unwrap(), vec![7, 8, 0, 0, 0, 0]);
        assert_eq!(from_bytes::<i32>(&t.valid_bytes().into_bytes()), vec![7, 8]);
    }

    /// A whole tile's store shares the tile's bytes (no copy); an op on the tile afterwards
    /// leaves the stored bytes as they were.
    #[test]
    fn a_whole_tile_is_stored_without_a_copy() {
        let t = Tile::from_slice(2, 2, &[1i32, 2, 3, 4]).unwrap();
        let stored = t.valid_bytes();
        assert_eq!(stored.bytes().map(<[u8]>::as_ptr), t.data.bytes().map(<[u8]>::as_ptr));
        let sum = t.combine_scalar(ReduceOp::Sum, 10.0);
        assert_eq!(sum.to_vec::<i32>().unwrap(), vec![11, 12, 13, 14]);
        assert_eq!(from_bytes::<i32>(&stored.into_bytes()), vec![1, 2, 3, 4]);
    }

    /// A timing-only tile keeps its shape, size and valid part through every op, reads as
    /// zeros, and never grows bytes.
    #[test]
    fn timing_only_tiles_carry_shapes_not_bytes() {
        let t = Tile::from_valid_bytes(DType::F32, 4, 8, (3, 8), Payload::Absent(3 * 8 * 4));
        assert_eq!((t.shape(), t.valid_shape(), t.bytes()), ((4, 8), (3, 8), 128));
        assert_eq!(t.valid_bytes(), Payload::Absent(96));
        let sum = t.combine(ReduceOp::Sum, &t).unwrap();
        assert_eq!((sum.bytes(), sum.valid_bytes()), (128, Payload::Absent(96)));
        assert_eq!(t.combine_scalar(ReduceOp::Prod, 2.0).valid_bytes(), Payload::Absent(96));
        let h = t.cast(DType::F16, RoundMode::Rint).unwrap();
        assert_eq!((h.bytes(), h.valid_bytes()), (64, Payload::Absent(48)));
        let r = t.reduce_axis(ReduceOp::Max, Axis::Rows);
        assert_eq!((r.shape(), r.valid_shape(), r.valid_bytes()), ((4, 1), (3, 1), Payload::Absent(12)));
        assert_eq!(t.get_f64(1, 1), 0.0);
        assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0; 32]);
        // Mixed with a payload tile, the result has no bytes either.
        let z = Tile::zeros(DType::F32, 4, 8).with_valid(3, 8);
        assert_eq!(z.combine(ReduceOp::Sum, &t).unwrap().valid_bytes(), Payload::Absent(96));
    }
}
