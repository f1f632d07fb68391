//! The vector unit's operations beyond `add` / `mul` / `max` / `min` on [`Core`], and a load of
//! a partial valid region; see `ops/math.rs` for what they do and cost.

use super::{Core, wait_ready};
use crate::base::dtype::DType;
use crate::base::error::SimResult;
use crate::base::tensor::Tensor;
use crate::base::tile::Tile;
use crate::base::tile::math::{BinaryOp, CmpOp, UnaryOp};
use std::panic::Location;

impl Core {
    /// `op` of every valid element; see [`Ops::unary`](crate::Ops::unary).
    pub fn unary(&mut self, op: UnaryOp, a: &Tile) -> SimResult<Tile> {
        self.ops.unary(op, a)
    }

    /// `e^a` element-wise (TEXP); float tiles.
    pub fn exp(&mut self, a: &Tile) -> SimResult<Tile> {
        self.ops.exp(a)
    }

    /// Natural logarithm element-wise (TLOG); float tiles.
    pub fn log(&mut self, a: &Tile) -> SimResult<Tile> {
        self.ops.log(a)
    }

    /// Square root element-wise (TSQRT); float tiles.
    pub fn sqrt(&mut self, a: &Tile) -> SimResult<Tile> {
        self.ops.sqrt(a)
    }

    /// `1 / sqrt(a)` element-wise (TRSQRT); float tiles.
    pub fn rsqrt(&mut self, a: &Tile) -> SimResult<Tile> {
        self.ops.rsqrt(a)
    }

    /// `1 / a` element-wise (TRECIP); float tiles.
    pub fn recip(&mut self, a: &Tile) -> SimResult<Tile> {
        self.ops.recip(a)
    }

    /// `|a|` element-wise (TABS).
    pub fn abs(&mut self, a: &Tile) -> SimResult<Tile> {
        self.ops.abs(a)
    }

    /// `-a` element-wise (TNEG).
    pub fn neg(&mut self, a: &Tile) -> SimResult<Tile> {
        self.ops.neg(a)
    }

    /// `max(a, 0)` element-wise (TRELU).
    pub fn relu(&mut self, a: &Tile) -> SimResult<Tile> {
        self.ops.relu(a)
    }

    /// `op(a, b)` element-wise; see [`Ops::binary`](crate::Ops::binary).
    pub fn binary(&mut self, op: BinaryOp, a: &Tile, b: &Tile) -> SimResult<Tile> {
        self.ops.binary(op, a, b)
    }

    /// `a - b` (TSUB).
    pub fn sub(&mut self, a: &Tile, b: &Tile) -> SimResult<Tile> {
        self.ops.sub(a, b)
    }

    /// `a / b` (TDIV); float tiles.
    pub fn div(&mut self, a: &Tile, b: &Tile) -> SimResult<Tile> {
        self.ops.div(a, b)
    }

    /// `op(a, s)` element-wise; see [`Ops::binary_scalar`](crate::Ops::binary_scalar).
    pub fn binary_scalar(&mut self, op: BinaryOp, a: &Tile, s: f64) -> SimResult<Tile> {
        self.ops.binary_scalar(op, a, s)
    }

    /// `a - s` (TSUBS).
    pub fn subs(&mut self, a: &Tile, s: f64) -> SimResult<Tile> {
        self.ops.subs(a, s)
    }

    /// `a / s` (TDIVS).
    pub fn divs(&mut self, a: &Tile, s: f64) -> SimResult<Tile> {
        self.ops.divs(a, s)
    }

    /// `max(a, s)` (TMAXS).
    pub fn maxs(&mut self, a: &Tile, s: f64) -> SimResult<Tile> {
        self.ops.maxs(a, s)
    }

    /// `min(a, s)` (TMINS).
    pub fn mins(&mut self, a: &Tile, s: f64) -> SimResult<Tile> {
        self.ops.mins(a, s)
    }

    /// A 0/1 tile of `a op b` (TCMP); see [`Ops::cmp`](crate::Ops::cmp).
    pub fn cmp(&mut self, a: &Tile, b: &Tile, op: CmpOp) -> SimResult<Tile> {
        self.ops.cmp(a, b, op)
    }

    /// A 0/1 tile of `a op s` (TCMPS).
    pub fn cmps(&mut self, a: &Tile, s: f64, op: CmpOp) -> SimResult<Tile> {
        self.ops.cmps(a, s, op)
    }

    /// `a` where `mask` is not zero, else `b` (TSEL); see [`Ops::select`](crate::Ops::select).
    pub fn select(&mut self, mask: &Tile, a: &Tile, b: &Tile) -> SimResult<Tile> {
        self.ops.select(mask, a, b)
    }

    /// `a` where `mask` is not zero, else `s` (TSELS).
    pub fn selects(&mut self, mask: &Tile, a: &Tile, s: f64) -> SimResult<Tile> {
        self.ops.selects(mask, a, s)
    }

    /// A `rows x cols` tile of `dtype` filled with `value` (TEXPANDS, `pl.full`).
    pub fn full(&mut self, dtype: DType, rows: usize, cols: usize, value: f64) -> SimResult<Tile> {
        self.ops.full(dtype, rows, cols, value)
    }

    /// `target`'s dtype and shapes filled with `value` (`pl.expands`).
    pub fn expands(&mut self, target: &Tile, value: f64) -> SimResult<Tile> {
        self.ops.expands(target, value)
    }

    /// `target`'s shape with row `r` filled with `col[r, 0]` (TROWEXPAND).
    pub fn row_expand(&mut self, target: &Tile, col: &Tile) -> SimResult<Tile> {
        self.ops.row_expand(target, col)
    }

    /// `target`'s shape with column `c` filled with `row[0, c]` (TCOLEXPAND).
    pub fn col_expand(&mut self, target: &Tile, row: &Tile) -> SimResult<Tile> {
        self.ops.col_expand(target, row)
    }

    /// Minimum of each row (`pl.row_min`).
    pub fn row_min(&mut self, a: &Tile) -> SimResult<Tile> {
        self.ops.row_min(a)
    }

    /// Minimum of each column (`pl.col_min`).
    pub fn col_min(&mut self, a: &Tile) -> SimResult<Tile> {
        self.ops.col_min(a)
    }

    /// Loads only the `valid_shape` part of a `shape` region into a `shape` tile, the rest
    /// zero; see [`Ops::load_valid`](crate::Ops::load_valid).
    #[track_caller]
    pub fn load_valid(
        &mut self,
        src: &Tensor,
        offsets: &[usize],
        shape: &[usize],
        valid_shape: &[usize],
    ) -> SimResult<Tile> {
        self.ops.caller = Some(Location::caller());
        wait_ready(self.ops.load_valid(src, offsets, shape, valid_shape))
    }
}
