//! Element-wise tile math beyond [`ReduceOp`](super::ReduceOp)'s combinations: functions of one
//! tile (`exp`, `log`, `sqrt`, ...), the binary operations `sub`, `div` and `rem` and the
//! scalar forms, comparisons into 0/1 tiles, selects, fills and row / column broadcasts.
//!
//! Each works on the valid part of its operands; elements outside it are zero in the result.
//! Floats are computed in f64 and rounded once to the tile's type (so `+ - * /` and `sqrt` are
//! correctly rounded in f32, f16 and bf16 alike; `exp`, `log` and `rsqrt` are within an ulp of
//! the exact value, where the vector unit's own approximations may differ by a few ulps);
//! integers wrap like their type.

use super::Tile;
use crate::base::dtype::DType;
use crate::base::error::SimError;
use crate::base::payload::Payload;
use std::fmt;

/// A function of one tile, element by element.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `e^x` (TEXP); float tiles only.
    Exp,
    /// Natural logarithm (TLOG); float tiles only. `log(0) = -inf`, `log(x < 0) = NaN`.
    Log,
    /// Square root (TSQRT); float tiles only.
    Sqrt,
    /// `1 / sqrt(x)` (TRSQRT); float tiles only.
    Rsqrt,
    /// `1 / x` (TRECIP); float tiles only.
    Recip,
    /// `|x|` (TABS); integers wrap (`abs(i8::MIN) = i8::MIN`).
    Abs,
    /// `-x` (TNEG); integers wrap.
    Neg,
    /// `max(x, 0)` (TRELU); NaN becomes 0.
    Relu,
}

impl UnaryOp {
    /// Every function, in the order of the enum.
    pub const ALL: [UnaryOp; 8] = [
        UnaryOp::Exp,
        UnaryOp::Log,
        UnaryOp::Sqrt,
        UnaryOp::Rsqrt,
        UnaryOp::Recip,
        UnaryOp::Abs,
        UnaryOp::Neg,
        UnaryOp::Relu,
    ];

    /// The operation's name in the kernel API (`exp`, `log`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            UnaryOp::Exp => "exp",
            UnaryOp::Log => "log",
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Rsqrt => "rsqrt",
            UnaryOp::Recip => "recip",
            UnaryOp::Abs => "abs",
            UnaryOp::Neg => "neg",
            UnaryOp::Relu => "relu",
        }
    }

    /// Whether the function is defined on float tiles only.
    pub const fn float_only(self) -> bool {
        matches!(self, UnaryOp::Exp | UnaryOp::Log | UnaryOp::Sqrt | UnaryOp::Rsqrt | UnaryOp::Recip)
    }
}

impl fmt::Display for UnaryOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An element-wise operation of two operands (two tiles, or a tile and a scalar).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `a + b`.
    Add,
    /// `a - b` (TSUB, TSUBS).
    Sub,
    /// `a * b`.
    Mul,
    /// `a / b` (TDIV on float tiles; TDIVS also on integer tiles, truncating toward zero).
    Div,
    /// `max(a, b)` (TMAX, TMAXS).
    Max,
    /// `min(a, b)` (TMIN, TMINS).
    Min,
    /// `a mod b` with the sign of `b` (TREM, TREMS): `a - floor(a / b) * b`, Python's and
    /// numpy's `%`; on float and integer tiles (an integer divisor of 0 is refused).
    Rem,
}

impl BinaryOp {
    /// The operation's name in the kernel API for two tiles (`add`, `sub`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
            BinaryOp::Max => "max",
            BinaryOp::Min => "min",
            BinaryOp::Rem => "rem",
        }
    }

    /// The [`ReduceOp`](super::ReduceOp) a tile's `combine` computes it as (`add`, `mul`,
    /// `max`, `min`), or none.
    pub const fn as_reduce(self) -> Option<super::ReduceOp> {
        match self {
            BinaryOp::Add => Some(super::ReduceOp::Sum),
            BinaryOp::Mul => Some(super::ReduceOp::Prod),
            BinaryOp::Max => Some(super::ReduceOp::Max),
            BinaryOp::Min => Some(super::ReduceOp::Min),
            _ => None,
        }
    }

    /// Whether the vector unit computes it with its divider (`div`, ...), so it costs a
    /// division (`VecOp::Div` / `Divs`).
    pub const fn divides(self) -> bool {
        matches!(self, BinaryOp::Div | BinaryOp::Rem)
    }

    /// The name of its scalar form (`adds`, `subs`, ...).
    pub const fn scalar_name(self) -> &'static str {
        match self {
            BinaryOp::Add => "adds",
            BinaryOp::Sub => "subs",
            BinaryOp::Mul => "muls",
            BinaryOp::Div => "divs",
            BinaryOp::Max => "maxs",
            BinaryOp::Min => "mins",
            BinaryOp::Rem => "rems",
        }
    }
}

impl fmt::Display for BinaryOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A comparison (TCMP / TCMPS), PyPTO's `cmp_type` codes in enum order (EQ = 0 ... GE = 5).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `a == b`.
    Eq,
    /// `a != b`.
    Ne,
    /// `a < b`.
    Lt,
    /// `a <= b`.
    Le,
    /// `a > b`.
    Gt,
    /// `a >= b`.
    Ge,
}

impl CmpOp {
    /// Every comparison, in PyPTO's `cmp_type` order.
    pub const ALL: [CmpOp; 6] = [CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge];

    /// The lower-case name (`eq`, `ne`, `lt`, `le`, `gt`, `ge`).
    pub const fn name(self) -> &'static str {
        match self {
            CmpOp::Eq => "eq",
            CmpOp::Ne => "ne",
            CmpOp::Lt => "lt",
            CmpOp::Le => "le",
            CmpOp::Gt => "gt",
            CmpOp::Ge => "ge",
        }
    }

    /// Whether `a op b` holds (IEEE: every comparison with NaN is false but `ne`).
    pub fn holds(self, a: f64, b: f64) -> bool {
        match self {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }
    }
}

impl fmt::Display for CmpOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for CmpOp {
    type Err = String;
    /// The lower-case names, and PyPTO's `cmp_type` codes `0` .. `5`.
    fn from_str(s: &str) -> Result<Self, String> {
        let lower = s.trim().to_ascii_lowercase();
        if let Some(op) = CmpOp::ALL.into_iter().find(|op| op.name() == lower) {
            return Ok(op);
        }
        match lower.parse::<usize>().ok().and_then(|i| CmpOp::ALL.get(i)) {
            Some(&op) => Ok(op),
            None => Err(format!("unknown comparison `{s}`: expected eq, ne, lt, le, gt or ge (or PyPTO's codes 0-5)")),
        }
    }
}

/// `v` wrapped into integer type `dtype` (as the hardware's integer lanes wrap).
fn wrap(dtype: DType, v: i64) -> f64 {
    match dtype {
        DType::I32 => v as i32 as f64,
        DType::I16 => v as i16 as f64,
        DType::I8 => v as i8 as f64,
        _ => v as f64,
    }
}

/// `s` as a value of `dtype` (rounded to nearest even for floats, truncated and saturated
/// for integers): what the vector unit's scalar register holds.
fn scalar_of(dtype: DType, s: f64) -> f64 {
    let mut b = vec![0u8; dtype.size()];
    dtype.write_f64(&mut b, 0, s);
    dtype.read_f64(&b, 0)
}

fn unary_f(op: UnaryOp, x: f64) -> f64 {
    match op {
        UnaryOp::Exp => x.exp(),
        UnaryOp::Log => x.ln(),
        UnaryOp::Sqrt => x.sqrt(),
        UnaryOp::Rsqrt => 1.0 / x.sqrt(),
        UnaryOp::Recip => 1.0 / x,
        UnaryOp::Abs => x.abs(),
        UnaryOp::Neg => -x,
        UnaryOp::Relu => {
            if x > 0.0 {
                x
            } else {
                0.0
            }
        }
    }
}

fn unary_i(op: UnaryOp, x: i64) -> i64 {
    match op {
        UnaryOp::Abs => x.wrapping_abs(),
        UnaryOp::Neg => x.wrapping_neg(),
        UnaryOp::Relu => x.max(0),
        // Float-only functions never reach here (refused before).
        _ => x,
    }
}

fn binary_f(op: BinaryOp, a: f64, b: f64) -> f64 {
    match op {
        BinaryOp::Add => a + b,
        BinaryOp::Sub => a - b,
        BinaryOp::Mul => a * b,
        BinaryOp::Div => a / b,
        BinaryOp::Max => a.max(b),
        BinaryOp::Min => a.min(b),
        BinaryOp::Rem => floored(a % b, b, 0.0),
    }
}

/// `r`, the remainder of a division truncated toward zero by `b`, moved to `b`'s sign (the
/// floored remainder) unless it is `zero`.
fn floored<T: Copy + PartialOrd + std::ops::Add<Output = T>>(r: T, b: T, zero: T) -> T {
    if r != zero && (r < zero) != (b < zero) { r + b } else { r }
}

/// Integer `op`; division truncates toward zero (the divisor is never zero here).
fn binary_i(op: BinaryOp, a: i64, b: i64) -> i64 {
    match op {
        BinaryOp::Add => a.wrapping_add(b),
        BinaryOp::Sub => a.wrapping_sub(b),
        BinaryOp::Mul => a.wrapping_mul(b),
        BinaryOp::Div => a.wrapping_div(b),
        BinaryOp::Max => a.max(b),
        BinaryOp::Min => a.min(b),
        BinaryOp::Rem => floored(a.wrapping_rem(b), b, 0),
    }
}

/// The float dtypes' names, for messages.
const FLOATS: &str = "f32, f16, bf16";

impl Tile {
    /// A tile of this one's kind (bytes or none), dtype `dtype` and shapes, whose valid
    /// elements are `f(index)`; the rest is zero.
    fn map_valid(&self, dtype: DType, mut f: impl FnMut(usize) -> f64) -> Tile {
        let mut out = self.like(dtype, self.rows, self.cols).with_valid(self.valid_rows, self.valid_cols);
        if let Some(dst) = out.data.bytes_mut() {
            for r in 0..self.valid_rows {
                for c in 0..self.valid_cols {
                    let i = r * self.cols + c;
                    dtype.write_f64(dst, i, f(i));
                }
            }
        }
        out
    }

    /// The physical (row-major) indices of the valid elements.
    fn valid_indices(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.valid_rows).flat_map(move |r| (0..self.valid_cols).map(move |c| r * self.cols + c))
    }

    /// Element `i` (physical, row-major) as f64; zero in a timing-only tile.
    fn at(&self, i: usize) -> f64 {
        self.data.bytes().map_or(0.0, |b| self.dtype.read_f64(b, i))
    }

    /// Whether both tiles keep bytes.
    fn both_kept(&self, other: &Tile) -> bool {
        matches!((&self.data, &other.data), (Payload::Bytes(_), Payload::Bytes(_)))
    }

    /// The same tile without bytes (a result in a timing-only run).
    fn without_bytes(&self, dtype: DType) -> Tile {
        Tile::absent(dtype, self.rows, self.cols).with_valid(self.valid_rows, self.valid_cols)
    }

    /// Refuses two tiles that differ in dtype, shape or valid shape.
    fn same_as(&self, what: &str, other: &Tile) -> Result<(), SimError> {
        if self.dtype != other.dtype || self.shape() != other.shape() || self.valid_shape() != other.valid_shape() {
            return Err(SimError::invalid(format!(
                "{what}: operands differ ({self:?} vs {other:?}); both tiles need the same dtype, shape and valid shape"
            )));
        }
        Ok(())
    }

    /// `op` of every valid element (TEXP, TLOG, TSQRT, TRSQRT, TRECIP, TABS, TNEG, TRELU).
    /// The float-only functions refuse integer tiles.
    pub fn unary(&self, op: UnaryOp) -> Result<Tile, SimError> {
        if op.float_only() && !self.dtype.is_float() {
            return Err(SimError::invalid(format!(
                "{op} works on float tiles ({FLOATS}), not {}; cast the tile to f32 first",
                self.dtype
            )));
        }
        let dt = self.dtype;
        Ok(if dt.is_float() {
            self.map_valid(dt, |i| unary_f(op, self.at(i)))
        } else {
            self.map_valid(dt, |i| wrap(dt, unary_i(op, self.at(i) as i64)))
        })
    }

    /// `op(self, other)` element-wise over the valid part. Both tiles must have the same
    /// dtype, shape and valid shape; `Div` takes float tiles only (TDIV).
    pub fn binary(&self, op: BinaryOp, other: &Tile) -> Result<Tile, SimError> {
        self.same_as(op.name(), other)?;
        let dt = self.dtype;
        if op == BinaryOp::Div && !dt.is_float() {
            return Err(SimError::invalid(format!(
                "div works on float tiles ({FLOATS}), not {dt}; cast both tiles to f32 first (or divide by a scalar with divs)"
            )));
        }
        if !self.both_kept(other) {
            return Ok(self.without_bytes(dt));
        }
        if op.divides() && !dt.is_float() && other.valid_indices().any(|i| other.at(i) == 0.0) {
            return Err(SimError::invalid(format!(
                "{op} of a {dt} tile by a tile holding 0; integer division by zero has no value"
            )));
        }
        Ok(if dt.is_float() {
            self.map_valid(dt, |i| binary_f(op, self.at(i), other.at(i)))
        } else {
            self.map_valid(dt, |i| wrap(dt, binary_i(op, self.at(i) as i64, other.at(i) as i64)))
        })
    }

    /// `op(self, s)` element-wise over the valid part, with `s` first converted to the tile's
    /// dtype (TADDS, TSUBS, TMULS, TDIVS, TMAXS, TMINS). An integer tile refuses division by
    /// a scalar that converts to zero.
    pub fn binary_scalar(&self, op: BinaryOp, s: f64) -> Result<Tile, SimError> {
        let dt = self.dtype;
        let s = scalar_of(dt, s);
        if dt.is_float() {
            return Ok(self.map_valid(dt, |i| binary_f(op, self.at(i), s)));
        }
        if op.divides() && s == 0.0 {
            return Err(SimError::invalid(format!(
                "{} of a {dt} tile by a scalar that is 0 as {dt}; integer division by zero has no value",
                op.scalar_name()
            )));
        }
        Ok(self.map_valid(dt, |i| wrap(dt, binary_i(op, self.at(i) as i64, s as i64))))
    }

    /// `1` where `self op other` holds and `0` elsewhere, as a tile of `self`'s dtype and
    /// shapes (TCMP): PyPTO's 0/1 result, which [`Tile::select`] takes as its mask.
    pub fn compare(&self, op: CmpOp, other: &Tile) -> Result<Tile, SimError> {
        self.same_as("cmp", other)?;
        if !self.both_kept(other) {
            return Ok(self.without_bytes(self.dtype));
        }
        Ok(self.map_valid(self.dtype, |i| f64::from(u8::from(op.holds(self.at(i), other.at(i))))))
    }

    /// `1` where `self op s` holds and `0` elsewhere (TCMPS), `s` converted to the tile's
    /// dtype first.
    pub fn compare_scalar(&self, op: CmpOp, s: f64) -> Tile {
        let s = scalar_of(self.dtype, s);
        self.map_valid(self.dtype, |i| f64::from(u8::from(op.holds(self.at(i), s))))
    }

    /// `a` where `mask` is not zero and `b` elsewhere (TSEL). `a` and `b` need the same dtype,
    /// shape and valid shape; `mask` (any dtype, e.g. a [`Tile::compare`] result) the same
    /// shape and valid shape.
    pub fn select(mask: &Tile, a: &Tile, b: &Tile) -> Result<Tile, SimError> {
        a.same_as("select", b)?;
        mask.mask_for(a)?;
        if !(a.both_kept(b) && a.both_kept(mask)) {
            return Ok(a.without_bytes(a.dtype));
        }
        Ok(a.map_valid(a.dtype, |i| if mask.at(i) != 0.0 { a.at(i) } else { b.at(i) }))
    }

    /// `a` where `mask` is not zero and `s` elsewhere (TSELS), `s` converted to `a`'s dtype.
    pub fn select_scalar(mask: &Tile, a: &Tile, s: f64) -> Result<Tile, SimError> {
        mask.mask_for(a)?;
        if !a.both_kept(mask) {
            return Ok(a.without_bytes(a.dtype));
        }
        let s = scalar_of(a.dtype, s);
        Ok(a.map_valid(a.dtype, |i| if mask.at(i) != 0.0 { a.at(i) } else { s }))
    }

    /// Refuses a mask whose shape or valid shape differs from `a`'s.
    fn mask_for(&self, a: &Tile) -> Result<(), SimError> {
        if self.shape() != a.shape() || self.valid_shape() != a.valid_shape() {
            return Err(SimError::invalid(format!(
                "select: the mask {self:?} and the operand {a:?} need the same shape and valid shape"
            )));
        }
        Ok(())
    }

    /// A `rows x cols` tile of `dtype` with every element `value` (converted to the dtype;
    /// TEXPANDS, PyPTO's `full`).
    pub fn full(dtype: DType, rows: usize, cols: usize, value: f64) -> Tile {
        let mut t = Tile::zeros(dtype, rows, cols);
        let v = scalar_of(dtype, value);
        if let Some(b) = t.data.bytes_mut() {
            for i in 0..rows * cols {
                dtype.write_f64(b, i, v);
            }
        }
        t
    }

    /// A tile of this one's dtype and shapes whose every valid element is `value` (TEXPANDS
    /// on a destination tile, PyPTO's `expands`).
    pub fn expands(&self, value: f64) -> Tile {
        let v = scalar_of(self.dtype, value);
        self.map_valid(self.dtype, |_| v)
    }

    /// A tile of this one's dtype and shapes whose row `r` is `col[r, 0]` throughout its
    /// valid part (TROWEXPAND). `col` needs this tile's dtype and valid rows.
    pub fn row_expand(&self, col: &Tile) -> Result<Tile, SimError> {
        if col.dtype != self.dtype || col.valid_rows != self.valid_rows {
            return Err(SimError::invalid(format!(
                "row_expand: the column {col:?} needs the target's dtype and its {} valid rows (target {self:?})",
                self.valid_rows
            )));
        }
        if !self.both_kept(col) {
            return Ok(self.without_bytes(self.dtype));
        }
        let cols = self.cols;
        Ok(self.map_valid(self.dtype, |i| col.at((i / cols) * col.cols)))
    }

    /// A tile of this one's dtype and shapes whose column `c` is `row[0, c]` throughout its
    /// valid part (TCOLEXPAND). `row` needs this tile's dtype and valid columns.
    pub fn col_expand(&self, row: &Tile) -> Result<Tile, SimError> {
        if row.dtype != self.dtype || row.valid_cols != self.valid_cols {
            return Err(SimError::invalid(format!(
                "col_expand: the row {row:?} needs the target's dtype and its {} valid columns (target {self:?})",
                self.valid_cols
            )));
        }
        if !self.both_kept(row) {
            return Ok(self.without_bytes(self.dtype));
        }
        let cols = self.cols;
        Ok(self.map_valid(self.dtype, |i| row.at(i % cols)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

    fn f32s(t: &Tile) -> Vec<f32> {
        t.to_vec::<f32>().unwrap()
    }

    #[test]
    fn unary_functions_round_once_to_the_tile_type() {
        let t = Tile::from_slice(1, 4, &[0.0f32, 1.0, 2.0, 0.25]).unwrap();
        let want = |f: fn(f64) -> f64| [0.0f64, 1.0, 2.0, 0.25].map(|x| f(x) as f32).to_vec();
        assert_eq!(f32s(&t.unary(UnaryOp::Exp).unwrap()), want(f64::exp));
        assert_eq!(f32s(&t.unary(UnaryOp::Log).unwrap()), want(f64::ln));
        assert_eq!(f32s(&t.unary(UnaryOp::Sqrt).unwrap()), want(f64::sqrt));
        assert_eq!(f32s(&t.unary(UnaryOp::Rsqrt).unwrap()), want(|x| 1.0 / x.sqrt()));
        assert_eq!(f32s(&t.unary(UnaryOp::Recip).unwrap()), want(|x| 1.0 / x));
        // log(0) = -inf, 1/0 = inf, log(-1) = NaN.
        let r = t.unary(UnaryOp::Log).unwrap();
        assert!(r.get_f64(0, 0).is_infinite() && r.get_f64(0, 0) < 0.0);
        assert!(Tile::from_slice(1, 1, &[-1.0f32]).unwrap().unary(UnaryOp::Log).unwrap().get_f64(0, 0).is_nan());
        // f16: e^1 = 2.71828... rounds once to 2.71875 (nearest f16).
        let h = Tile::from_slice(1, 1, &[f16::from_f32(1.0)]).unwrap();
        assert_eq!(h.unary(UnaryOp::Exp).unwrap().to_vec::<f16>().unwrap(), vec![f16::from_f64(1f64.exp())]);
        // bf16: sqrt(2) = 1.41421... -> 1.4140625.
        let b = Tile::from_slice(1, 1, &[bf16::from_f32(2.0)]).unwrap();
        assert_eq!(b.unary(UnaryOp::Sqrt).unwrap().get_f64(0, 0), 1.4140625);
    }

    #[test]
    fn abs_neg_relu_take_every_dtype_and_integers_wrap() {
        let i = Tile::from_slice(1, 3, &[i8::MIN, -5, 7]).unwrap();
        assert_eq!(i.unary(UnaryOp::Abs).unwrap().to_vec::<i8>().unwrap(), vec![i8::MIN, 5, 7]);
        assert_eq!(i.unary(UnaryOp::Neg).unwrap().to_vec::<i8>().unwrap(), vec![i8::MIN, 5, -7]);
        assert_eq!(i.unary(UnaryOp::Relu).unwrap().to_vec::<i8>().unwrap(), vec![0, 0, 7]);
        let f = Tile::from_slice(1, 3, &[-1.5f32, f32::NAN, 2.0]).unwrap();
        assert_eq!(f32s(&f.unary(UnaryOp::Relu).unwrap()), vec![0.0, 0.0, 2.0]);
        let e = Tile::zeros(DType::I32, 1, 1).unary(UnaryOp::Exp).unwrap_err().to_string();
        assert!(e.contains("exp works on float tiles") && e.contains("i32"), "{e}");
    }

    #[test]
    fn padding_stays_zero_and_timing_only_tiles_stay_without_bytes() {
        let t = Tile::from_slice(2, 2, &[1.0f32, 2.0, 3.0, 4.0]).unwrap().narrow(1, 2).unwrap();
        let e = t.unary(UnaryOp::Exp).unwrap();
        assert_eq!(e.valid_shape(), (1, 2));
        assert_eq!(f32s(&e), vec![1f32.exp(), 2f32.exp(), 0.0, 0.0]);
        let s = t.binary_scalar(BinaryOp::Sub, 1.0).unwrap();
        assert_eq!(f32s(&s), vec![0.0, 1.0, 0.0, 0.0]);
        let absent = Tile::from_valid_bytes(DType::F32, 2, 4, (2, 3), Payload::Absent(24));
        for r in [
            absent.unary(UnaryOp::Sqrt).unwrap(),
            absent.binary(BinaryOp::Div, &absent).unwrap(),
            absent.binary_scalar(BinaryOp::Max, 1.0).unwrap(),
            absent.compare(CmpOp::Lt, &absent).unwrap(),
            Tile::select(&absent, &absent, &absent).unwrap(),
            absent.row_expand(&absent.reduce_axis(super::super::ReduceOp::Sum, super::super::Axis::Rows)).unwrap(),
        ] {
            assert_eq!((r.shape(), r.valid_bytes()), ((2, 4), Payload::Absent(24)));
        }
    }

    #[test]
    fn sub_and_div_of_two_tiles() {
        let a = Tile::from_slice(1, 3, &[1.0f32, 7.0, -2.0]).unwrap();
        let b = Tile::from_slice(1, 3, &[3.0f32, 2.0, 0.0]).unwrap();
        assert_eq!(f32s(&a.binary(BinaryOp::Sub, &b).unwrap()), vec![-2.0, 5.0, -2.0]);
        let d = f32s(&a.binary(BinaryOp::Div, &b).unwrap());
        assert_eq!((d[0], d[1], d[2]), (1.0 / 3.0, 3.5, f32::NEG_INFINITY));
        // bf16 division rounds once: 1/3 -> 0.333984375.
        let x = Tile::from_slice(1, 1, &[bf16::from_f32(1.0)]).unwrap();
        let y = Tile::from_slice(1, 1, &[bf16::from_f32(3.0)]).unwrap();
        assert_eq!(x.binary(BinaryOp::Div, &y).unwrap().get_f64(0, 0), 0.333984375);
        let i = Tile::from_slice(1, 2, &[i16::MIN, 5]).unwrap();
        let one = Tile::from_slice(1, 2, &[1i16, 9]).unwrap();
        assert_eq!(i.binary(BinaryOp::Sub, &one).unwrap().to_vec::<i16>().unwrap(), vec![i16::MAX, -4]);
        let e = i.binary(BinaryOp::Div, &one).unwrap_err().to_string();
        assert!(e.contains("div works on float tiles") && e.contains("divs"), "{e}");
        let e = a.binary(BinaryOp::Sub, &Tile::zeros(DType::F32, 1, 4)).unwrap_err().to_string();
        assert!(e.contains("sub: operands differ"), "{e}");
    }

    #[test]
    fn rem_takes_the_divisors_sign_on_floats_and_integers() {
        let a = Tile::from_slice(1, 6, &[7.5f32, -7.5, 7.5, -7.5, 6.0, 1.0]).unwrap();
        let b = Tile::from_slice(1, 6, &[2.0f32, 2.0, -2.0, -2.0, 3.0, 0.0]).unwrap();
        let r = f32s(&a.binary(BinaryOp::Rem, &b).unwrap());
        assert_eq!(r[..5], [1.5, 0.5, -0.5, -1.5, 0.0]);
        assert!(r[5].is_nan(), "a float remainder by 0 is NaN, as numpy's");
        assert_eq!(f32s(&a.binary_scalar(BinaryOp::Rem, -2.0).unwrap())[..4], [-0.5, -1.5, -0.5, -1.5]);
        let i = Tile::from_slice(1, 4, &[7i32, -7, 7, i32::MIN]).unwrap();
        let j = Tile::from_slice(1, 4, &[3i32, 3, -3, -1]).unwrap();
        assert_eq!(i.binary(BinaryOp::Rem, &j).unwrap().to_vec::<i32>().unwrap(), vec![1, 2, -2, 0]);
        assert_eq!(i.binary_scalar(BinaryOp::Rem, 4.0).unwrap().to_vec::<i32>().unwrap(), vec![3, 1, 3, 0]);
        let zero = Tile::from_slice(1, 4, &[3i32, 0, 1, 1]).unwrap();
        let e = i.binary(BinaryOp::Rem, &zero).unwrap_err().to_string();
        assert!(e.contains("rem of a i32 tile by a tile holding 0"), "{e}");
        let e = i.binary_scalar(BinaryOp::Rem, 0.5).unwrap_err().to_string();
        assert!(e.contains("rems") && e.contains("0 as i32"), "{e}");
        // A zero outside the valid part is not a divisor.
        let padded = Tile::from_slice(1, 2, &[5i32, 0]).unwrap().narrow(1, 1).unwrap();
        let five = Tile::from_slice(1, 2, &[12i32, 9]).unwrap().narrow(1, 1).unwrap();
        assert_eq!(five.binary(BinaryOp::Rem, &padded).unwrap().to_vec::<i32>().unwrap(), vec![2, 0]);
        assert!(BinaryOp::Rem.divides() && BinaryOp::Rem.as_reduce().is_none());
    }

    #[test]
    fn scalar_forms_convert_the_scalar_to_the_tile_type() {
        let a = Tile::from_slice(1, 3, &[1.0f32, 7.0, -2.0]).unwrap();
        assert_eq!(f32s(&a.binary_scalar(BinaryOp::Div, 4.0).unwrap()), vec![0.25, 1.75, -0.5]);
        assert_eq!(f32s(&a.binary_scalar(BinaryOp::Max, 0.5).unwrap()), vec![1.0, 7.0, 0.5]);
        assert_eq!(f32s(&a.binary_scalar(BinaryOp::Min, 0.5).unwrap()), vec![0.5, 0.5, -2.0]);
        // Integers: the scalar truncates (2.9 -> 2), division truncates toward zero.
        let i = Tile::from_slice(1, 3, &[7i32, -7, i32::MIN]).unwrap();
        assert_eq!(i.binary_scalar(BinaryOp::Div, 2.9).unwrap().to_vec::<i32>().unwrap(), vec![3, -3, -(1 << 30)]);
        assert_eq!(i.binary_scalar(BinaryOp::Div, -1.0).unwrap().to_vec::<i32>().unwrap(), vec![-7, 7, i32::MIN]);
        assert_eq!(i.binary_scalar(BinaryOp::Sub, 1.0).unwrap().to_vec::<i32>().unwrap(), vec![6, -8, i32::MAX]);
        let e = i.binary_scalar(BinaryOp::Div, 0.5).unwrap_err().to_string();
        assert!(e.contains("divs") && e.contains("0 as i32"), "{e}");
    }

    #[test]
    fn comparisons_give_zero_one_tiles_that_select_takes() {
        let a = Tile::from_slice(1, 4, &[1.0f32, 2.0, 3.0, f32::NAN]).unwrap();
        let b = Tile::from_slice(1, 4, &[2.0f32, 2.0, 2.0, 2.0]).unwrap();
        let want =
            |op: CmpOp| -> Vec<f32> { [1.0, 2.0, 3.0, f64::NAN].map(|x| u8::from(op.holds(x, 2.0)) as f32).to_vec() };
        for op in CmpOp::ALL {
            assert_eq!(f32s(&a.compare(op, &b).unwrap()), want(op), "{op}");
            assert_eq!(f32s(&a.compare_scalar(op, 2.0)), want(op), "{op}s");
        }
        assert_eq!(f32s(&a.compare(CmpOp::Ne, &b).unwrap()), vec![1.0, 0.0, 1.0, 1.0]);
        let mask = a.compare_scalar(CmpOp::Ge, 2.0);
        let sel = Tile::select(&mask, &a, &b.binary_scalar(BinaryOp::Sub, 10.0).unwrap()).unwrap();
        assert_eq!(f32s(&sel), vec![-8.0, 2.0, 3.0, -8.0]);
        let sels = Tile::select_scalar(&mask, &a, -1.0).unwrap();
        assert_eq!(f32s(&sels), vec![-1.0, 2.0, 3.0, -1.0]);
        // A mask of another dtype works; one of another shape is refused.
        let m8 = Tile::from_slice(1, 4, &[0i8, 1, 0, 5]).unwrap();
        assert_eq!(f32s(&Tile::select(&m8, &a, &b).unwrap())[..3], [2.0, 2.0, 2.0]);
        let e = Tile::select(&Tile::zeros(DType::I8, 1, 5), &a, &b).unwrap_err().to_string();
        assert!(e.contains("select") && e.contains("mask"), "{e}");
        assert!(CmpOp::ALL.iter().enumerate().all(|(i, op)| i.to_string().parse::<CmpOp>() == Ok(*op)));
        assert_eq!("GE".parse::<CmpOp>(), Ok(CmpOp::Ge));
        assert!("<".parse::<CmpOp>().unwrap_err().contains("eq, ne, lt, le, gt or ge"));
    }

    #[test]
    fn fills_and_broadcasts() {
        let f = Tile::full(DType::BF16, 2, 3, 1.0 / 3.0);
        assert_eq!(f.valid_shape(), (2, 3));
        assert!((0..6).all(|i| f.at(i) == 0.333984375));
        assert_eq!(Tile::full(DType::I8, 1, 2, 300.0).to_vec::<i8>().unwrap(), vec![127, 127]);
        let target = Tile::zeros(DType::F32, 2, 3).narrow(2, 2).unwrap();
        assert_eq!(f32s(&target.expands(2.5)), vec![2.5, 2.5, 0.0, 2.5, 2.5, 0.0]);
        let col = Tile::from_slice(2, 1, &[7.0f32, -1.0]).unwrap();
        assert_eq!(f32s(&target.row_expand(&col).unwrap()), vec![7.0, 7.0, 0.0, -1.0, -1.0, 0.0]);
        let row = Tile::from_slice(1, 3, &[4.0f32, 5.0, 6.0]).unwrap().narrow(1, 2).unwrap();
        assert_eq!(f32s(&target.col_expand(&row).unwrap()), vec![4.0, 5.0, 0.0, 4.0, 5.0, 0.0]);
        let e = target.row_expand(&Tile::zeros(DType::F32, 3, 1)).unwrap_err().to_string();
        assert!(e.contains("row_expand") && e.contains("2 valid rows"), "{e}");
        let e = target.col_expand(&Tile::zeros(DType::F16, 1, 2)).unwrap_err().to_string();
        assert!(e.contains("col_expand") && e.contains("dtype"), "{e}");
    }
}
