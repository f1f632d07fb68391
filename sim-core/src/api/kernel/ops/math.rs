//! The vector unit's operations beyond `add` / `mul` / `max` / `min`: functions of one tile,
//! `sub` and `div` and the scalar forms, comparisons and selects, fills and row / column
//! broadcasts, `row_min` / `col_min`, and a load of a partial valid region.
//!
//! Values come from [`Tile`]'s element-wise math; times from the chip model:
//! [`ChipTiming::vector_op_of`] for the operations with a cost of their own ([`VecOp`]: the
//! `[chip.vector.ops]` table of a config), [`ChipTiming::vector_op`] for the ones in the class
//! of `add` (`sub`, `subs`, `maxs`, `mins`, `neg` = `muls` by -1, `row_min`, `col_min`). The
//! one-line operations (`exp` is `unary(UnaryOp::Exp, a)`, ...) are written here from the list
//! of tile operations (`op_list.rs`).

use super::Ops;
use crate::api::kernel::op_list::{for_each_tile_op, ops_methods};
use crate::base::dtype::DType;
use crate::base::error::SimResult;
use crate::base::tensor::Tensor;
use crate::base::tile::math::{BinaryOp, CmpOp, UnaryOp};
use crate::base::tile::{Axis, ReduceOp, Tile};
use crate::base::time::SimDuration;
use crate::model::VecOp;

impl Ops {
    // The one-line operations (`exp`, `sub`, `row_sum`, ...), written from the list of tile
    // operations.
    for_each_tile_op!(ops_methods);

    /// The time of `op` over tile `t` on this chip's vector unit.
    fn cost_of(&self, op: Option<VecOp>, t: &Tile) -> SimDuration {
        let (rows, _) = t.shape();
        match op {
            Some(op) => self.chip.vector_op_of(op, t.dtype(), t.len() as u64, rows as u64),
            None => self.chip.vector_op(t.dtype(), t.len() as u64),
        }
    }

    /// Takes the result of a tile computation: an error names `op`; a result is ready when the
    /// vector unit has spent `cost` on tiles ready at `inputs`.
    fn finish_vector(
        &mut self,
        op: &'static str,
        r: Result<Tile, crate::base::error::SimError>,
        cost: SimDuration,
        inputs: &[&Tile],
    ) -> SimResult<Tile> {
        let mut r = match r {
            Ok(r) => r,
            Err(e) => return self.bad(op, e.to_string()),
        };
        r.ready = self.vector(cost, inputs);
        Ok(r)
    }

    /// `op` of every valid element of `a` (TEXP, TLOG, TSQRT, TRSQRT, TRECIP, TABS, TNEG,
    /// TRELU). `neg` is `muls` by -1 and costs what `muls` costs.
    pub fn unary(&mut self, op: UnaryOp, a: &Tile) -> SimResult<Tile> {
        let name = op.name();
        self.ub_op(name)?;
        let cost_op = match op {
            UnaryOp::Exp => Some(VecOp::Exp),
            UnaryOp::Log => Some(VecOp::Log),
            UnaryOp::Sqrt => Some(VecOp::Sqrt),
            UnaryOp::Rsqrt => Some(VecOp::Rsqrt),
            UnaryOp::Recip => Some(VecOp::Recip),
            UnaryOp::Abs => Some(VecOp::Abs),
            UnaryOp::Relu => Some(VecOp::Relu),
            UnaryOp::Neg => None,
        };
        let cost = self.cost_of(cost_op, a);
        let r = a.unary(op);
        self.finish_vector(name, r, cost, &[a])
    }

    /// `op(a, b)` element-wise over two tiles of one dtype and shape. `add`, `mul`, `max` and
    /// `min` are [`Ops::reduce`]'s; `div` takes float tiles.
    pub fn binary(&mut self, op: BinaryOp, a: &Tile, b: &Tile) -> SimResult<Tile> {
        if let Some(c) = op.as_reduce() {
            return self.reduce(c, a, b);
        }
        let name = op.name();
        self.ub_op(name)?;
        let cost = self.cost_of(op.divides().then_some(VecOp::Div), a);
        let r = a.binary(op, b);
        self.finish_vector(name, r, cost, &[a, b])
    }

    /// `op(a, s)` element-wise, with `s` converted to the tile's dtype first. `adds` and
    /// `muls` are [`Ops::adds`] / [`Ops::muls`]; `divs` of an integer tile truncates toward
    /// zero and refuses a zero divisor.
    pub fn binary_scalar(&mut self, op: BinaryOp, a: &Tile, s: f64) -> SimResult<Tile> {
        match op {
            BinaryOp::Add => return self.adds(a, s),
            BinaryOp::Mul => return self.muls(a, s),
            _ => {}
        }
        let name = op.scalar_name();
        self.ub_op(name)?;
        let cost = self.cost_of(op.divides().then_some(VecOp::Divs), a);
        let r = a.binary_scalar(op, s);
        self.finish_vector(name, r, cost, &[a])
    }

    /// `1` where `a op b` holds and `0` elsewhere, a tile of `a`'s dtype and shape (TCMP):
    /// the mask [`Ops::select`] takes.
    pub fn cmp(&mut self, a: &Tile, b: &Tile, op: CmpOp) -> SimResult<Tile> {
        self.ub_op("cmp")?;
        let cost = self.cost_of(Some(VecOp::Cmp), a);
        let r = a.compare(op, b);
        self.finish_vector("cmp", r, cost, &[a, b])
    }

    /// `1` where `a op s` holds and `0` elsewhere (TCMPS), `s` converted to `a`'s dtype.
    pub fn cmps(&mut self, a: &Tile, s: f64, op: CmpOp) -> SimResult<Tile> {
        self.ub_op("cmps")?;
        let cost = self.cost_of(Some(VecOp::Cmps), a);
        let r = Ok(a.compare_scalar(op, s));
        self.finish_vector("cmps", r, cost, &[a])
    }

    /// `a` where `mask` is not zero and `b` elsewhere (TSEL); `mask` of any dtype with `a`'s
    /// shape and valid shape (a [`Ops::cmp`] result).
    pub fn select(&mut self, mask: &Tile, a: &Tile, b: &Tile) -> SimResult<Tile> {
        self.ub_op("select")?;
        let cost = self.cost_of(Some(VecOp::Select), a);
        let r = Tile::select(mask, a, b);
        self.finish_vector("select", r, cost, &[mask, a, b])
    }

    /// `a` where `mask` is not zero and `s` elsewhere (TSELS).
    pub fn selects(&mut self, mask: &Tile, a: &Tile, s: f64) -> SimResult<Tile> {
        self.ub_op("selects")?;
        let cost = self.cost_of(Some(VecOp::Select), a);
        let r = Tile::select_scalar(mask, a, s);
        self.finish_vector("selects", r, cost, &[mask, a])
    }

    /// A `rows x cols` tile of `dtype` filled with `value` (TEXPANDS, PyPTO's `full`); it must
    /// fit in UB.
    pub fn full(&mut self, dtype: DType, rows: usize, cols: usize, value: f64) -> SimResult<Tile> {
        self.ub_op("full")?;
        if rows == 0 || cols == 0 {
            return self.bad("full", format!("a {rows}x{cols} tile has no elements; give a shape of at least 1x1"));
        }
        self.fits_ub("full", dtype, rows, cols, 1)?;
        let t = Tile::full(dtype, rows, cols, value);
        let cost = self.cost_of(Some(VecOp::Full), &t);
        self.finish_vector("full", Ok(t), cost, &[])
    }

    /// A tile of `target`'s dtype and shapes filled with `value` (TEXPANDS into a tile,
    /// PyPTO's `expands`).
    pub fn expands(&mut self, target: &Tile, value: f64) -> SimResult<Tile> {
        self.ub_op("expands")?;
        let cost = self.cost_of(Some(VecOp::Full), target);
        let r = Ok(target.expands(value));
        self.finish_vector("expands", r, cost, &[target])
    }

    /// `target`'s shape with each row `r` filled with `col[r, 0]` (TROWEXPAND).
    pub fn row_expand(&mut self, target: &Tile, col: &Tile) -> SimResult<Tile> {
        self.ub_op("row_expand")?;
        let cost = self.cost_of(Some(VecOp::RowExpand), target);
        let r = target.row_expand(col);
        self.finish_vector("row_expand", r, cost, &[target, col])
    }

    /// `target`'s shape with each column `c` filled with `row[0, c]` (TCOLEXPAND).
    pub fn col_expand(&mut self, target: &Tile, row: &Tile) -> SimResult<Tile> {
        self.ub_op("col_expand")?;
        let cost = self.cost_of(Some(VecOp::ColExpand), target);
        let r = target.col_expand(row);
        self.finish_vector("col_expand", r, cost, &[target, row])
    }

    /// As [`Ops::load`], but only the `valid_shape` part of the `shape` region is read (TLOAD
    /// into a tile with a valid region): the tile has the full physical `shape`, the rest is
    /// zero, and the load moves (and costs) only the valid bytes.
    pub async fn load_valid(
        &mut self,
        src: &Tensor,
        offsets: &[usize],
        shape: &[usize],
        valid_shape: &[usize],
    ) -> SimResult<Tile> {
        self.read("load", src, None, offsets, shape, Some(valid_shape)).await
    }
}
