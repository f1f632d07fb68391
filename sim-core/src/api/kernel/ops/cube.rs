//! The AIC (cube) core's operations: GM -> L1 (`load_l1`, TLOAD to a Mat tile on MTE2),
//! L1 -> L0A / L0B (`to_l0a` / `to_l0b`, TMOV / TEXTRACT on MTE1), the matrix multiply
//! (`matmul` / `matmul_acc`, TMATMUL / TMATMUL_ACC into L0C) and L0C -> GM (`store_acc`, the
//! FIXPIPE store, with an optional f32 -> f16 / bf16 conversion).
//!
//! Only blocks of a task built with [`Task::on_cube`](crate::Task::on_cube) may call them, and
//! those blocks cannot use UB (vector ops, load / store, put / get). A cube core runs serially:
//! every operation finishes before the next starts.
//!
//! Values are exact: each product of two inputs is computed exactly and rounded to f32 (exact
//! for f16 / bf16 inputs), then added to the f32 accumulator in ascending `k` order (i8 inputs:
//! i32 products and sums, wrapping). Times come from `[chip.cube]` (`CubeParams`):
//! `load_l1` is a flow of packets through the chip's HBM and the core's GM -> L1 engine after
//! `gm_to_l1`'s issue cost; `to_l0a` / `to_l0b` cost `ceil(bytes / bytes_per_cycle)` cycles;
//! a matmul costs `fixed_cycles + ceil(M/m0) ceil(K/k0) ceil(N/n0)` cycles over the physical
//! shapes; `store_acc` costs the core `l0c_to_gm` (issue + bytes / rate) and its bytes flow
//! through the core's fixpipe and the HBM. Each tile must fit its buffer on its own (as UB
//! tiles do); double buffering is the kernel's business.

use super::Ops;
use crate::api::kernel::cube_tile::{CubeBuf, CubeTile};
use crate::api::request::{OpKind, Reply, Request};
use crate::base::convert::RoundMode;
use crate::base::dtype::DType;
use crate::base::error::SimResult;
use crate::base::tensor::Tensor;
use crate::base::tile::Tile;
use crate::model::CubeParams;
use std::panic::Location;

impl Ops {
    /// The chip's cube parameters (a cube task only runs where they exist).
    fn cube_params(&mut self, op: &'static str) -> SimResult<CubeParams> {
        self.cube_op(op)?;
        match self.chip().cube() {
            Some(c) => Ok(c.clone()),
            None => self.bad(op, "the chip has no [chip.cube] table (chip.cube), so no AIC cores".into()),
        }
    }

    /// Fails unless a `rows x cols` tile of `dtype` fits `buf`.
    fn fits_cube(
        &mut self,
        op: &'static str,
        cube: &CubeParams,
        buf: CubeBuf,
        dtype: DType,
        (rows, cols): (usize, usize),
    ) -> SimResult<()> {
        let (cap, key) = match buf {
            CubeBuf::L1 => (cube.l1_bytes, "chip.l1_bytes"),
            CubeBuf::L0A => (cube.l0a_bytes, "chip.cube.l0a_bytes"),
            CubeBuf::L0B => (cube.l0b_bytes, "chip.cube.l0b_bytes"),
            CubeBuf::L0C => (cube.l0c_bytes, "chip.cube.l0c_bytes"),
        };
        let need = rows.saturating_mul(cols).saturating_mul(dtype.size());
        if need > cap {
            let msg = format!(
                "a {rows}x{cols} {dtype} tile needs {need} bytes of {buf}, which holds {cap} bytes per AIC core ({key}); \
                 split the operands into smaller tiles"
            );
            return self.bad(op, msg);
        }
        Ok(())
    }

    /// Fails unless `t` sits in `buf`.
    fn in_buf(&mut self, op: &'static str, what: &str, t: &CubeTile, buf: CubeBuf) -> SimResult<()> {
        if t.buf != buf {
            let msg = format!("{what} must be in {buf}, but it is {t:?}");
            return self.bad(op, msg);
        }
        Ok(())
    }

    /// Loads `shape` elements at `offsets` of a local GM tensor or this rank's window into L1
    /// (TLOAD to a Mat tile, on the AIC's MTE2). Resolves when the data is in L1.
    pub async fn load_l1(&mut self, src: &Tensor, offsets: &[usize], shape: &[usize]) -> SimResult<CubeTile> {
        let op = "load_l1";
        let cube = self.cube_params(op)?;
        let full = self.region(op, src, offsets, shape)?;
        self.fits_cube(op, &cube, CubeBuf::L1, src.dtype(), (full.rows, full.cols))?;
        let place = self.place(op, src, None, offsets, shape)?;
        let caller = self.caller.take();
        let start = self.clock;
        let Reply::Data(bytes) = self.call(Request::Read { src: place, caller, start, ticket: None }).await? else {
            return self.bad(op, "the scheduler answered a read without data".into());
        };
        let tile = Tile::from_valid_bytes(src.dtype(), full.rows, full.cols, (full.rows, full.cols), bytes);
        Ok(CubeTile { tile, buf: CubeBuf::L1 })
    }

    /// Moves an L1 tile into L0A, the left operand of a matmul (TMOV / TEXTRACT):
    /// `ceil(bytes / l1_to_l0a)` cycles.
    pub fn to_l0a(&mut self, l1: &CubeTile) -> SimResult<CubeTile> {
        self.move_to_l0("to_l0a", l1, CubeBuf::L0A)
    }

    /// Moves an L1 tile into L0B, the right operand of a matmul: `ceil(bytes / l1_to_l0b)`
    /// cycles.
    pub fn to_l0b(&mut self, l1: &CubeTile) -> SimResult<CubeTile> {
        self.move_to_l0("to_l0b", l1, CubeBuf::L0B)
    }

    fn move_to_l0(&mut self, op: &'static str, l1: &CubeTile, buf: CubeBuf) -> SimResult<CubeTile> {
        let cube = self.cube_params(op)?;
        self.in_buf(op, "the source", l1, CubeBuf::L1)?;
        self.fits_cube(op, &cube, buf, l1.dtype(), l1.shape())?;
        let rate = if buf == CubeBuf::L0A { cube.l1_to_l0a } else { cube.l1_to_l0b };
        let d = self.chip().clock().cycles((l1.tile.bytes() as u64).div_ceil(rate));
        self.local(op, d);
        Ok(CubeTile { tile: l1.tile.clone(), buf })
    }

    /// `a @ b` into a fresh L0C accumulator (TMATMUL): `a` (M x K) in L0A, `b` (K x N) in
    /// L0B, of the same input dtype; the result is M x N f32 (i32 for i8 inputs). Costs
    /// `fixed_cycles + ceil(M/m0) ceil(K/k0) ceil(N/n0)` cycles of the chip clock.
    pub fn matmul(&mut self, a: &CubeTile, b: &CubeTile) -> SimResult<CubeTile> {
        self.mm("matmul", None, a, b)
    }

    /// `acc + a @ b` (TMATMUL_ACC): as [`Ops::matmul`], accumulating onto `acc` (M x N in
    /// L0C), for a K loop.
    pub fn matmul_acc(&mut self, acc: &CubeTile, a: &CubeTile, b: &CubeTile) -> SimResult<CubeTile> {
        self.mm("matmul_acc", Some(acc), a, b)
    }

    fn mm(&mut self, op: &'static str, acc: Option<&CubeTile>, a: &CubeTile, b: &CubeTile) -> SimResult<CubeTile> {
        let cube = self.cube_params(op)?;
        self.in_buf(op, "the left operand", a, CubeBuf::L0A)?;
        self.in_buf(op, "the right operand", b, CubeBuf::L0B)?;
        let dt = a.dtype();
        if b.dtype() != dt {
            return self
                .bad(op, format!("operands differ in dtype ({a:?} vs {b:?}); both must be the same input type"));
        }
        let Some(_) = cube.fractal(dt) else {
            let takes: Vec<&str> = cube.fractal.iter().map(|(d, _)| d.name()).collect();
            let msg = format!(
                "the cube does not multiply {dt} inputs on this chip (chip.cube.fractal has {}); cast the operands first",
                takes.join(", ")
            );
            return self.bad(op, msg);
        };
        let ((m, k), (k2, n)) = (a.shape(), b.shape());
        if k != k2 {
            let msg =
                format!("a {m}x{k} left operand cannot multiply a {k2}x{n} right operand: K must match ({k} vs {k2})");
            return self.bad(op, msg);
        }
        let acc_dt = CubeParams::acc_dtype(dt);
        self.fits_cube(op, &cube, CubeBuf::L0C, acc_dt, (m, n))?;
        let out = match acc {
            None => Tile::zeros(acc_dt, m, n).with_valid(a.valid_shape().0, b.valid_shape().1),
            Some(c) => {
                self.in_buf(op, "the accumulator", c, CubeBuf::L0C)?;
                if c.dtype() != acc_dt || c.shape() != (m, n) {
                    let msg = format!(
                        "the accumulator is {c:?}, but {m}x{k} by {k}x{n} {dt} operands need a {m}x{n} {acc_dt} accumulator"
                    );
                    return self.bad(op, msg);
                }
                c.tile.clone()
            }
        };
        let out = out.matmul_acc(&a.tile, &b.tile);
        let cycles = cube.matmul_cycles(dt, m as u64, k as u64, n as u64).unwrap_or(0);
        let d = self.chip().clock().cycles(cycles);
        self.local(op, d);
        Ok(CubeTile { tile: out, buf: CubeBuf::L0C })
    }

    /// Stores an L0C accumulator's valid part at `offsets` of a local GM tensor or this rank's
    /// window (the FIXPIPE store). The destination's dtype is the accumulator's, or f16 / bf16
    /// from an f32 accumulator (rounded to nearest, ties to even). Posted: the core pays
    /// `l0c_to_gm` (issue + bytes / rate) and goes on.
    #[track_caller]
    pub fn store_acc(&mut self, acc: &CubeTile, dst: &Tensor, offsets: &[usize]) -> SimResult<()> {
        let caller = self.caller.take().or(Some(Location::caller()));
        let op = OpKind::StoreAcc.name();
        let cube = self.cube_params(op)?;
        self.in_buf(op, "the stored tile", acc, CubeBuf::L0C)?;
        let to = dst.dtype();
        let from = acc.dtype();
        let tile = if to == from {
            acc.tile.clone()
        } else if from == DType::F32 && matches!(to, DType::F16 | DType::BF16) {
            acc.tile.convert_all(to, RoundMode::Rint)
        } else {
            let msg = format!(
                "`{}` is {to}, but the accumulator is {from}; the fixpipe stores {from} as is, or f32 as f16 / bf16",
                dst.name()
            );
            return self.bad(op, msg);
        };
        let (vr, vc) = tile.valid_shape();
        let n = dst.shape().len();
        let mut extent = vec![1; n];
        if n == 1 {
            if vr != 1 {
                let msg = format!(
                    "a {vr}x{vc} tile cannot be stored into the 1-D tensor `{}`; use a [1, n] tile",
                    dst.name()
                );
                return self.bad(op, msg);
            }
            extent[0] = vc;
        } else {
            extent[n - 2] = vr;
            extent[n - 1] = vc;
        }
        let place = self.place(op, dst, None, offsets, &extent)?;
        let data = tile.valid_bytes();
        let at = self.clock;
        self.clock += cube.l0c_to_gm.time(data.len() as u64);
        let write = Request::Write { dst: place, data, atomic: None, op: OpKind::StoreAcc, caller, start: at };
        self.link.post(at, self.clock, write);
        Ok(())
    }
}
