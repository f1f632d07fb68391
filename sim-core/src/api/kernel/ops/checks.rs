//! Argument validation of the program API: every operation's tensors, peers, signal cells,
//! dtypes and UB capacity are checked here before a request is built, and a bad argument
//! becomes the kernel's sticky error ([`Ops::bad`]), named after the operation.

use super::Ops;
use crate::api::kernel::copy::ub_check;
use crate::base::addr::{CellRef, Cells, Coords, MemKey, Place};
use crate::base::dtype::DType;
use crate::base::error::SimResult;
use crate::base::signal::AtomicType;
use crate::base::tensor::{Region, Space, Tensor, element_offset, resolve_region};

impl Ops {
    /// Resolves a tensor region (validated) without a peer.
    pub(in crate::api::kernel) fn region(
        &mut self,
        op: &'static str,
        t: &Tensor,
        offsets: &[usize],
        shape: &[usize],
    ) -> SimResult<Region> {
        match resolve_region(t, offsets, shape) {
            Ok(r) => Ok(r),
            Err(m) => self.bad(op, m),
        }
    }

    /// Resolves `t[offsets, shape]` on this chip (`peer = None`) or on `peer`'s window.
    pub(in crate::api::kernel) fn place(
        &mut self,
        op: &'static str,
        t: &Tensor,
        peer: Option<usize>,
        offsets: &[usize],
        shape: &[usize],
    ) -> SimResult<Place> {
        let mem = self.locate(op, t, peer)?;
        let region = self.region(op, t, offsets, shape)?;
        Ok(Place { mem, region, tensor: t.clone() })
    }

    /// Which memory (on which chip) `t` refers to, for this core or for `peer`.
    pub(super) fn locate(&mut self, op: &'static str, t: &Tensor, peer: Option<usize>) -> SimResult<MemKey> {
        let me = self.ctx.chip;
        match (&t.0.space, peer) {
            (Space::Gm { buf }, None) => Ok(MemKey::gm(*buf, me)),
            (Space::Gm { .. }, Some(_)) => {
                let msg = format!(
                    "`{}` is a GM tensor; peers can only reach window buffers (allocate it with alloc_window)",
                    t.name()
                );
                self.bad(op, msg)
            }
            (Space::Window { domain }, peer) => {
                if domain.is_freed() {
                    let msg = format!(
                        "`{}` is a window of domain `{}`, which was released (World::release_domain) and whose windows were freed after its last run; allocate a new domain and its windows",
                        t.name(),
                        domain.name
                    );
                    return self.bad(op, msg);
                }
                let Some(my_rank) = domain.rank_of(me) else {
                    let msg = format!(
                        "rank {me} is not a member of domain `{}` (members {:?}) that owns `{}`",
                        domain.name,
                        domain.members,
                        t.name()
                    );
                    return self.bad(op, msg);
                };
                let member = peer.unwrap_or(my_rank);
                if member >= domain.size() {
                    let msg = format!(
                        "peer {member} is out of range for `{}`: domain `{}` has {} ranks (valid peers 0..={})",
                        t.name(),
                        domain.name,
                        domain.size(),
                        domain.size() - 1
                    );
                    return self.bad(op, msg);
                }
                Ok(MemKey::win(domain.id, member, domain.members[member]))
            }
        }
    }

    pub(in crate::api::kernel) fn cell(
        &mut self,
        op: &'static str,
        signal: &Tensor,
        peer: Option<usize>,
        offsets: &[usize],
    ) -> SimResult<CellRef> {
        self.signal_check(op, signal)?;
        let peer = match peer {
            // A GM cell (pto-isa's ready-queue counters) is this rank's own: a notify names
            // the rank itself.
            Some(p) if !signal.is_window() && p == self.rank() => None,
            Some(p) if !signal.is_window() => {
                let msg = format!(
                    "`{}` is a GM tensor, so only this rank ({}) can notify it, not rank {p}; allocate it with alloc_window to signal peers",
                    signal.name(),
                    self.rank()
                );
                return self.bad(op, msg);
            }
            p => p,
        };
        let mem = self.locate(op, signal, peer)?;
        let offset = match element_offset(signal, offsets) {
            Ok(o) => o,
            Err(m) => return self.bad(op, m),
        };
        Ok(CellRef { mem, offset, buffer: signal.0.name.clone(), coords: Coords::new(offsets) })
    }

    pub(in crate::api::kernel) fn cells(
        &mut self,
        op: &'static str,
        signal: &Tensor,
        offsets: &[usize],
        shape: &[usize],
    ) -> SimResult<Cells> {
        self.signal_check(op, signal)?;
        let mem = self.locate(op, signal, None)?;
        let region = self.region(op, signal, offsets, shape)?;
        let mut cells = Cells::default();
        let mut coords = Coords::new(offsets);
        for &(start, len) in &region.runs {
            for off in (start..start + len).step_by(4) {
                cells.push(CellRef { mem, offset: off, buffer: signal.0.name.clone(), coords: coords.clone() });
                bump(&mut coords, offsets, shape);
            }
        }
        Ok(cells)
    }

    /// Signal cells are INT32, in a window (reachable by peers) or in this rank's GM (TTEST /
    /// TWAIT on a ready-queue counter, as pto-isa's kernels poll plain GM).
    pub(super) fn signal_check(&mut self, op: &'static str, signal: &Tensor) -> SimResult<()> {
        if signal.dtype() != DType::I32 {
            let msg = format!(
                "signal `{}` is {}; signal cells must be INT32 (allocate it as i32: DType::I32, pl.INT32)",
                signal.name(),
                signal.dtype()
            );
            return self.bad(op, msg);
        }
        Ok(())
    }

    pub(super) fn atomic_dtype(
        &mut self,
        op: &'static str,
        atomic: AtomicType,
        dst: &Tensor,
    ) -> SimResult<Option<DType>> {
        match atomic {
            AtomicType::None => Ok(None),
            AtomicType::Add if self.chip.atomic_add_supported(dst.dtype()) => Ok(Some(dst.dtype())),
            AtomicType::Add => {
                let supported: Vec<&str> =
                    DType::ALL.iter().filter(|d| self.chip.atomic_add_supported(**d)).map(|d| d.name()).collect();
                let msg = format!(
                    "atomic Add is not supported for {} destinations on this chip (`{}`); supported: {}",
                    dst.dtype(),
                    dst.name(),
                    supported.join(", ")
                );
                self.bad(op, msg)
            }
        }
    }

    pub(super) fn fits_ub(
        &mut self,
        op: &'static str,
        dtype: DType,
        rows: usize,
        cols: usize,
        tiles: usize,
    ) -> SimResult<()> {
        match ub_check(dtype, rows, cols, tiles, self.chip.ub_bytes()) {
            Ok(()) => Ok(()),
            Err(msg) => self.bad(op, msg),
        }
    }

    /// [`Ops::live`] for an operation on UB tiles, which AIC (cube) cores do not have.
    pub(in crate::api::kernel) fn ub_op(&mut self, op: &'static str) -> SimResult<()> {
        self.live(op)?;
        if self.ctx.cube {
            let msg = format!(
                "`{op}` works on UB tiles, but task `{}` runs on AIC (cube) cores, which have no UB and no vector unit; \
                 do vector work in an AIV task that reads the cube's results from GM (Task::after)",
                self.ctx.task
            );
            return self.bad(op, msg);
        }
        Ok(())
    }

    /// [`Ops::live`] for an operation of the cube (L1, L0, matmul), which AIV cores do not have.
    pub(in crate::api::kernel) fn cube_op(&mut self, op: &'static str) -> SimResult<()> {
        self.live(op)?;
        if !self.ctx.cube {
            let msg = format!(
                "`{op}` needs an AIC (cube) core, but task `{}` runs on AIV (vector) cores; build the task with \
                 Task::on_cube()",
                self.ctx.task
            );
            return self.bad(op, msg);
        }
        Ok(())
    }

    pub(in crate::api::kernel) fn live(&mut self, op: &'static str) -> SimResult<()> {
        if self.deferred {
            let msg = "the kernel continued after defer_wait; defer_wait releases the core, so return right after it";
            return self.bad(op, msg.into());
        }
        Ok(())
    }

    /// Records and returns an argument error; the run fails with it even if the kernel
    /// ignores it.
    pub(in crate::api::kernel) fn bad<T>(&mut self, op: &'static str, msg: String) -> SimResult<T> {
        Err(self.error(op, msg))
    }
}

/// Advances row-major coordinates inside the region `offsets .. offsets + shape`.
fn bump(coords: &mut [usize], offsets: &[usize], shape: &[usize]) {
    for d in (0..coords.len()).rev() {
        coords[d] += 1;
        if coords[d] < offsets[d] + shape[d] {
            return;
        }
        coords[d] = offsets[d];
    }
}
