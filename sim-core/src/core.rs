//! The program API: what a kernel running on one AIV core can do. Names follow PyPTO's
//! `pld.*` / `pl.*` operations so a kernel ports line by line.
//!
//! Local work (tile arithmetic, [`Core::compute`]) only advances this core's clock. Every
//! memory access and every signal operation is a request to the scheduler stamped with that
//! clock; blocking ones (`load`, `wait`, `remote_load`, `put`, `get`) return when the scheduler
//! has applied them, posted ones (`store`, `remote_store`, `notify`) return at once.

use crate::driver::{self, Shared};
use crate::dtype::DType;
use crate::engine::request::{CellRef, CopySpec, MemKey, Place, Reply, Request, TaskCtx};
use crate::error::{SimError, SimResult};
use crate::model::{ChipTiming, DmaDir};
use crate::signal::{AtomicType, NotifyOp, WaitCmp};
use crate::tensor::{
    Region, Space, Tensor, element_offset, merge_runs, resolve_region, row_starts,
};
use crate::tile::{ReduceOp, Tile};
use crate::time::SimTime;
use std::sync::Arc;

/// Options of [`Core::put`] and [`Core::get`] (PyPTO's keyword arguments).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CopyOpts {
    region: Option<(Vec<usize>, Vec<usize>, Vec<usize>)>,
    atomic: AtomicType,
    chunk_rows: usize,
    chunk_cols: usize,
    pipeline: bool,
}

impl CopyOpts {
    /// Copy the whole tensor (shapes must match), unchunked, overwriting.
    pub fn new() -> CopyOpts {
        CopyOpts::default()
    }

    /// Copy the sub-region `shape` from `src_offsets` in the source to `dst_offsets` in the
    /// destination (PyPTO requires all three together).
    pub fn region(
        mut self,
        dst_offsets: &[usize],
        src_offsets: &[usize],
        shape: &[usize],
    ) -> CopyOpts {
        self.region = Some((dst_offsets.to_vec(), src_offsets.to_vec(), shape.to_vec()));
        self
    }

    /// Stage through UB in `rows x cols` tiles (0 = the full extent of that dimension).
    pub fn chunks(mut self, rows: usize, cols: usize) -> CopyOpts {
        self.chunk_rows = rows;
        self.chunk_cols = cols;
        self
    }

    /// Overlap the load of chunk i+1 with the store of chunk i (needs both chunk sizes > 0).
    pub fn pipeline(mut self, on: bool) -> CopyOpts {
        self.pipeline = on;
        self
    }

    /// Overwrite (`None`) or accumulate (`Add`) at the destination (put only).
    pub fn atomic(mut self, atomic: AtomicType) -> CopyOpts {
        self.atomic = atomic;
        self
    }
}

/// One condition of [`Core::defer_wait`]: `signal[offsets] as u32 >= expected`.
#[derive(Clone, Debug)]
pub struct DeferCond {
    pub signal: Tensor,
    pub offsets: Vec<usize>,
    pub expected: u32,
}

/// A kernel's handle on the core it runs on.
pub struct Core {
    shared: Arc<Shared>,
    actor: usize,
    clock: SimTime,
    ctx: Arc<TaskCtx>,
    block: usize,
    chip: Arc<dyn ChipTiming>,
    error: Option<SimError>,
    deferred: bool,
}

impl Core {
    pub(crate) fn new(
        shared: Arc<Shared>,
        actor: usize,
        clock: SimTime,
        ctx: Arc<TaskCtx>,
        block: usize,
    ) -> Core {
        let chip = shared.chip.clone();
        Core {
            shared,
            actor,
            clock,
            ctx,
            block,
            chip,
            error: None,
            deferred: false,
        }
    }

    /// This chip's dense rank in the dispatch's comm domain (`pld.rank`); the world rank when
    /// the dispatch has no domain.
    pub fn rank(&self) -> usize {
        match &self.ctx.domain {
            Some(d) => d.rank_of(self.ctx.chip).unwrap_or(self.ctx.chip),
            None => self.ctx.chip,
        }
    }

    /// Number of ranks in the dispatch's comm domain (`pld.nranks`); the world size when the
    /// dispatch has no domain.
    pub fn nranks(&self) -> usize {
        self.ctx
            .domain
            .as_ref()
            .map_or(self.ctx.world_size, |d| d.size())
    }

    /// This chip's world rank (its device index).
    pub fn world_rank(&self) -> usize {
        self.ctx.chip
    }

    /// This core's dense rank in the domain of window `t` (for kernels that use two domains).
    pub fn rank_in(&self, t: &Tensor) -> Option<usize> {
        t.domain().and_then(|d| d.rank_of(self.ctx.chip))
    }

    /// Index of this block in its task (`get_block_idx`).
    pub fn block_idx(&self) -> usize {
        self.block
    }

    /// Number of blocks of the task (`get_block_num`).
    pub fn block_num(&self) -> usize {
        self.ctx.blocks
    }

    /// This core's current simulated time.
    pub fn now(&self) -> SimTime {
        self.clock
    }

    /// The chip's timing model (UB size, clock, costs).
    pub fn chip(&self) -> &dyn ChipTiming {
        &*self.chip
    }

    /// Spends `cycles` core cycles of local work.
    pub fn compute(&mut self, cycles: u64) {
        self.clock += self.chip.clock().cycles(cycles);
    }

    // ---- tiles -----------------------------------------------------------------------------

    /// Loads `shape` elements at `offsets` of a local GM tensor or of this rank's copy of a
    /// window into a tile (TLOAD).
    pub fn load(&mut self, src: &Tensor, offsets: &[usize], shape: &[usize]) -> SimResult<Tile> {
        self.read("load", src, None, offsets, shape, None)
    }

    /// Stores a tile's valid part at `offsets` of a local GM tensor or this rank's window
    /// (TSTORE). Posted: returns once the core's DMA has issued it.
    pub fn store(&mut self, tile: &Tile, dst: &Tensor, offsets: &[usize]) -> SimResult<()> {
        self.write("store", tile, dst, None, offsets, AtomicType::None)
    }

    /// Element-wise `op(a, b)` on the vector unit.
    pub fn reduce(&mut self, op: ReduceOp, a: &Tile, b: &Tile) -> SimResult<Tile> {
        self.live("tile op")?;
        let r = match a.combine(op, b) {
            Ok(r) => r,
            Err(e) => return self.bad("tile op", e.to_string()),
        };
        self.clock += self.chip.vector_op(a.dtype(), a.len() as u64);
        Ok(r)
    }

    /// `a + b` (TADD).
    pub fn add(&mut self, a: &Tile, b: &Tile) -> SimResult<Tile> {
        self.reduce(ReduceOp::Sum, a, b)
    }

    /// `max(a, b)` (TMAX).
    pub fn max(&mut self, a: &Tile, b: &Tile) -> SimResult<Tile> {
        self.reduce(ReduceOp::Max, a, b)
    }

    /// `min(a, b)` (TMIN).
    pub fn min(&mut self, a: &Tile, b: &Tile) -> SimResult<Tile> {
        self.reduce(ReduceOp::Min, a, b)
    }

    /// `a * b` (TMUL).
    pub fn mul(&mut self, a: &Tile, b: &Tile) -> SimResult<Tile> {
        self.reduce(ReduceOp::Prod, a, b)
    }

    /// `a + s` element-wise, with `s` converted to the tile's dtype (TADDS).
    pub fn adds(&mut self, a: &Tile, s: f64) -> SimResult<Tile> {
        self.live("adds")?;
        self.clock += self.chip.vector_op(a.dtype(), a.len() as u64);
        Ok(a.combine_scalar(ReduceOp::Sum, s))
    }

    /// `a * s` element-wise, with `s` converted to the tile's dtype (TMULS).
    pub fn muls(&mut self, a: &Tile, s: f64) -> SimResult<Tile> {
        self.live("muls")?;
        self.clock += self.chip.vector_op(a.dtype(), a.len() as u64);
        Ok(a.combine_scalar(ReduceOp::Prod, s))
    }

    // ---- signals ---------------------------------------------------------------------------

    /// Changes cell `offsets` of `signal` in `peer`'s window (TNOTIFY). `peer` is a dense rank
    /// of the signal's domain; notifying yourself hits the same cell peers notify. Posted.
    pub fn notify(
        &mut self,
        signal: &Tensor,
        peer: usize,
        offsets: &[usize],
        value: i32,
        op: NotifyOp,
    ) -> SimResult<()> {
        self.live("notify")?;
        let cell = self.cell("notify", signal, Some(peer), offsets)?;
        let at = self.clock;
        self.clock += self.chip.notify_issue();
        driver::post(
            &self.shared,
            self.actor,
            at,
            self.clock,
            Request::Notify { cell, value, op },
        );
        Ok(())
    }

    /// Blocks until cell `offsets` of this rank's `signal` satisfies `cmp expected` (signed;
    /// TWAIT).
    pub fn wait(
        &mut self,
        signal: &Tensor,
        offsets: &[usize],
        expected: i32,
        cmp: WaitCmp,
    ) -> SimResult<()> {
        let ones = vec![1; signal.shape().len()];
        self.wait_all(signal, offsets, &ones, expected, cmp)
    }

    /// Blocks until every cell of the `shape` region at `offsets` of this rank's `signal`
    /// satisfies `cmp expected` (TWAIT over a signal view).
    pub fn wait_all(
        &mut self,
        signal: &Tensor,
        offsets: &[usize],
        shape: &[usize],
        expected: i32,
        cmp: WaitCmp,
    ) -> SimResult<()> {
        self.live("wait")?;
        let cells = self.cells("wait", signal, offsets, shape)?;
        self.call(
            "wait",
            Request::Wait {
                cells,
                expected,
                cmp,
            },
        )
        .map(|_| ())
    }

    /// Registers `conds` (each `cell as u32 >= expected`) for this block's task and releases
    /// the core: the task completes when all hold (`pld.system.defer_wait`). The kernel must
    /// return right after this call; any further operation is an error.
    pub fn defer_wait(&mut self, conds: &[DeferCond]) -> SimResult<()> {
        self.live("defer_wait")?;
        let mut cells = Vec::with_capacity(conds.len());
        for c in conds {
            if c.expected > i32::MAX as u32 {
                return self.bad("defer_wait", format!("expected value {} is above INT32_MAX; deferred counters must stay in [0, INT32_MAX]", c.expected));
            }
            cells.push((
                self.cell("defer_wait", &c.signal, None, &c.offsets)?,
                c.expected,
            ));
        }
        self.call("defer_wait", Request::DeferWait { conds: cells })?;
        self.deferred = true;
        Ok(())
    }

    // ---- remote memory ---------------------------------------------------------------------

    /// Loads `shape` elements at `offsets` of `peer`'s copy of window `target` (TLOAD from
    /// peer GM). Blocks until the data has arrived.
    pub fn remote_load(
        &mut self,
        target: &Tensor,
        peer: usize,
        offsets: &[usize],
        shape: &[usize],
    ) -> SimResult<Tile> {
        self.read("remote_load", target, Some(peer), offsets, shape, None)
    }

    /// As [`Core::remote_load`], but only the `valid_shape` part is read; the tile keeps its
    /// full physical `shape` and the rest is zero.
    pub fn remote_load_valid(
        &mut self,
        target: &Tensor,
        peer: usize,
        offsets: &[usize],
        shape: &[usize],
        valid_shape: &[usize],
    ) -> SimResult<Tile> {
        self.read(
            "remote_load",
            target,
            Some(peer),
            offsets,
            shape,
            Some(valid_shape),
        )
    }

    /// Stores a tile's valid part at `offsets` of `peer`'s copy of window `target` (TSTORE to
    /// peer GM), overwriting or atomically adding. Posted.
    pub fn remote_store(
        &mut self,
        tile: &Tile,
        target: &Tensor,
        peer: usize,
        offsets: &[usize],
        atomic: AtomicType,
    ) -> SimResult<()> {
        self.write("remote_store", tile, target, Some(peer), offsets, atomic)
    }

    /// Copies local `src` into `peer`'s window `dst`, staged through UB (TPUT). Returns when
    /// the last chunk has left this core; order the receiver with a notify after the put.
    pub fn put(
        &mut self,
        dst: &Tensor,
        peer: usize,
        src: &Tensor,
        opts: &CopyOpts,
    ) -> SimResult<()> {
        self.copy("put", (dst, Some(peer)), (src, None), opts)
    }

    /// Copies `peer`'s window `src` into local `dst`, staged through UB (TGET). Returns when
    /// the last chunk is stored.
    pub fn get(
        &mut self,
        dst: &Tensor,
        peer: usize,
        src: &Tensor,
        opts: &CopyOpts,
    ) -> SimResult<()> {
        if opts.atomic != AtomicType::None {
            return self.bad(
                "get",
                "atomic accumulation is only available on put; pass AtomicType::None to get".into(),
            );
        }
        self.copy("get", (dst, None), (src, Some(peer)), opts)
    }

    // ---- internals -------------------------------------------------------------------------

    fn read(
        &mut self,
        op: &'static str,
        src: &Tensor,
        peer: Option<usize>,
        offsets: &[usize],
        shape: &[usize],
        valid: Option<&[usize]>,
    ) -> SimResult<Tile> {
        self.live(op)?;
        let full = self.region(op, src, offsets, shape)?;
        self.fits_ub(op, src.dtype(), full.rows, full.cols, 1)?;
        let place = match valid {
            None => self.place(op, src, peer, offsets, shape)?,
            Some(v) => {
                if v.len() != shape.len() || v.iter().zip(shape).any(|(a, b)| a > b || *a == 0) {
                    return self.bad(op, format!("valid_shape {v:?} must have the rank of shape {shape:?}, with 0 < valid <= shape in every dimension"));
                }
                self.place(op, src, peer, offsets, v)?
            }
        };
        let (vr, vc) = (place.region.rows, place.region.cols);
        let Reply::Data(bytes) = self.call(op, Request::Read { src: place })? else {
            return self.bad(op, "the scheduler answered a read without data".into());
        };
        Ok(Tile::from_valid_bytes(
            src.dtype(),
            full.rows,
            full.cols,
            (vr, vc),
            &bytes,
        ))
    }

    fn write(
        &mut self,
        op: &'static str,
        tile: &Tile,
        dst: &Tensor,
        peer: Option<usize>,
        offsets: &[usize],
        atomic: AtomicType,
    ) -> SimResult<()> {
        self.live(op)?;
        if tile.dtype() != dst.dtype() {
            return self.bad(
                op,
                format!(
                    "tile is {} but `{}` is {}; the tile and the tensor need the same dtype",
                    tile.dtype(),
                    dst.name(),
                    dst.dtype()
                ),
            );
        }
        self.fits_ub(op, tile.dtype(), tile.shape().0, tile.shape().1, 1)?;
        let atomic = self.atomic_dtype(op, atomic, dst)?;
        let (vr, vc) = tile.valid_shape();
        let n = dst.shape().len();
        let mut extent = vec![1; n];
        match n {
            1 if vr == 1 => extent[0] = vc,
            1 => return self.bad(
                op,
                format!(
                    "a {vr}x{vc} tile cannot be stored into the 1-D tensor `{}`; use a [1, n] tile",
                    dst.name()
                ),
            ),
            _ => {
                extent[n - 2] = vr;
                extent[n - 1] = vc;
            }
        }
        let place = self.place(op, dst, peer, offsets, &extent)?;
        let data = tile.valid_bytes();
        let at = self.clock;
        self.clock += self.chip.dma(DmaDir::UbToGm, data.len() as u64);
        driver::post(
            &self.shared,
            self.actor,
            at,
            self.clock,
            Request::Write {
                dst: place,
                data,
                atomic,
                op,
            },
        );
        Ok(())
    }

    fn copy(
        &mut self,
        op: &'static str,
        dst: (&Tensor, Option<usize>),
        src: (&Tensor, Option<usize>),
        o: &CopyOpts,
    ) -> SimResult<()> {
        self.live(op)?;
        let (dt, st) = (dst.0, src.0);
        if dt.dtype() != st.dtype() {
            return self.bad(
                op,
                format!(
                    "dst `{}` is {} but src `{}` is {}; both need the same dtype",
                    dt.name(),
                    dt.dtype(),
                    st.name(),
                    st.dtype()
                ),
            );
        }
        let (doff, soff, shape) = match &o.region {
            Some((d, s, sh)) => (d.clone(), s.clone(), sh.clone()),
            None => {
                if dt.shape() != st.shape() {
                    return self.bad(op, format!(
                        "full-tensor {op} needs equal shapes, got dst `{}` {:?} and src `{}` {:?}; pass a region (offsets and shape) instead",
                        dt.name(), dt.shape(), st.name(), st.shape()
                    ));
                }
                (
                    vec![0; dt.shape().len()],
                    vec![0; st.shape().len()],
                    dt.shape().to_vec(),
                )
            }
        };
        if o.pipeline && (o.chunk_rows == 0 || o.chunk_cols == 0) {
            return self.bad(op, format!(
                "pipeline=true requires both chunk_rows>0 and chunk_cols>0 (got chunk_rows={}, chunk_cols={})",
                o.chunk_rows, o.chunk_cols
            ));
        }
        let atomic = self.atomic_dtype(op, o.atomic, dt)?;
        let dst_place = self.place(op, dt, dst.1, &doff, &shape)?;
        let src_place = self.place(op, st, src.1, &soff, &shape)?;
        let d_rows = self.check(op, row_starts(dt, &doff, &shape))?;
        let s_rows = self.check(op, row_starts(st, &soff, &shape))?;
        let (rows, cols) = (d_rows.len(), shape[shape.len() - 1]);
        let cr = if o.chunk_rows == 0 {
            rows
        } else {
            o.chunk_rows.min(rows)
        };
        let cc = if o.chunk_cols == 0 {
            cols
        } else {
            o.chunk_cols.min(cols)
        };
        self.fits_ub(op, dt.dtype(), cr, cc, if o.pipeline { 2 } else { 1 })?;
        let es = dt.dtype().size();
        let mut chunks = Vec::new();
        for r0 in (0..rows).step_by(cr) {
            let nr = cr.min(rows - r0);
            for c0 in (0..cols).step_by(cc) {
                let nc = cc.min(cols - c0);
                let sub = |place: &Place, starts: &[usize]| Place {
                    region: Region {
                        runs: merge_runs(
                            starts[r0..r0 + nr].iter().map(|&s| (s + c0 * es, nc * es)),
                        ),
                        rows: nr,
                        cols: nc,
                    },
                    ..place.clone()
                };
                chunks.push((sub(&src_place, &s_rows), sub(&dst_place, &d_rows)));
            }
        }
        self.call(
            op,
            Request::Copy(CopySpec {
                chunks,
                pipeline: o.pipeline,
                atomic,
                op,
            }),
        )
        .map(|_| ())
    }

    /// Sends a blocking request; a refused one becomes this kernel's error.
    fn call(&mut self, _op: &'static str, req: Request) -> SimResult<Reply> {
        let (t, reply) = driver::call(&self.shared, self.actor, self.clock, req)?;
        self.clock = t;
        match reply {
            Reply::Err(e) => {
                self.error.get_or_insert(e.clone());
                Err(e)
            }
            r => Ok(r),
        }
    }

    /// Resolves a tensor region (validated) without a peer.
    fn region(
        &mut self,
        op: &'static str,
        t: &Tensor,
        offsets: &[usize],
        shape: &[usize],
    ) -> SimResult<Region> {
        let r = resolve_region(t, offsets, shape);
        self.check(op, r)
    }

    /// Resolves `t[offsets, shape]` on this chip (`peer = None`) or on `peer`'s window.
    fn place(
        &mut self,
        op: &'static str,
        t: &Tensor,
        peer: Option<usize>,
        offsets: &[usize],
        shape: &[usize],
    ) -> SimResult<Place> {
        let (mem, chip) = self.locate(op, t, peer)?;
        let region = self.region(op, t, offsets, shape)?;
        Ok(Place {
            mem,
            chip,
            region,
            buffer: t.0.name.clone(),
        })
    }

    /// Which memory and chip `t` refers to, for this core or for `peer`.
    fn locate(
        &mut self,
        op: &'static str,
        t: &Tensor,
        peer: Option<usize>,
    ) -> SimResult<(MemKey, usize)> {
        let me = self.ctx.chip;
        match (&t.0.space, peer) {
            (Space::Gm { buf }, None) => Ok((MemKey::Gm { buf: *buf, chip: me }, me)),
            (Space::Gm { .. }, Some(_)) => {
                self.bad(op, format!("`{}` is a GM tensor; peers can only reach window buffers (allocate it with alloc_window)", t.name()))
            }
            (Space::Window { domain }, peer) => {
                let Some(my_rank) = domain.rank_of(me) else {
                    return self.bad(op, format!("rank {me} is not a member of domain `{}` (members {:?}) that owns `{}`", domain.name, domain.members, t.name()));
                };
                let member = peer.unwrap_or(my_rank);
                if member >= domain.size() {
                    return self.bad(op, format!(
                        "peer {member} is out of range for `{}`: domain `{}` has {} ranks (valid peers 0..={})",
                        t.name(), domain.name, domain.size(), domain.size() - 1
                    ));
                }
                Ok((MemKey::Win { domain: domain.id, member }, domain.members[member]))
            }
        }
    }

    fn cell(
        &mut self,
        op: &'static str,
        signal: &Tensor,
        peer: Option<usize>,
        offsets: &[usize],
    ) -> SimResult<CellRef> {
        self.signal_check(op, signal)?;
        let (mem, chip) = self.locate(op, signal, peer)?;
        let offset = self.check(op, element_offset(signal, offsets))?;
        Ok(CellRef {
            mem,
            chip,
            offset,
            buffer: signal.0.name.clone(),
            coords: offsets.to_vec(),
        })
    }

    fn cells(
        &mut self,
        op: &'static str,
        signal: &Tensor,
        offsets: &[usize],
        shape: &[usize],
    ) -> SimResult<Vec<CellRef>> {
        self.signal_check(op, signal)?;
        let (mem, chip) = self.locate(op, signal, None)?;
        let region = self.region(op, signal, offsets, shape)?;
        let mut cells = Vec::new();
        let mut coords = offsets.to_vec();
        for &(start, len) in &region.runs {
            for off in (start..start + len).step_by(4) {
                cells.push(CellRef {
                    mem,
                    chip,
                    offset: off,
                    buffer: signal.0.name.clone(),
                    coords: coords.clone(),
                });
                bump(&mut coords, offsets, shape);
            }
        }
        Ok(cells)
    }

    fn signal_check(&mut self, op: &'static str, signal: &Tensor) -> SimResult<()> {
        if !signal.is_window() {
            return self.bad(
                op,
                format!(
                    "signal `{}` is a GM tensor; signals must be INT32 window buffers",
                    signal.name()
                ),
            );
        }
        if signal.dtype() != DType::I32 {
            return self.bad(op, format!("signal `{}` is {}; signals must be INT32 window buffers (allocate it with DType::I32)", signal.name(), signal.dtype()));
        }
        Ok(())
    }

    fn atomic_dtype(
        &mut self,
        op: &'static str,
        atomic: AtomicType,
        dst: &Tensor,
    ) -> SimResult<Option<DType>> {
        match atomic {
            AtomicType::None => Ok(None),
            AtomicType::Add if self.chip.atomic_add_supported(dst.dtype()) => Ok(Some(dst.dtype())),
            AtomicType::Add => self.bad(op, format!(
                "atomic Add is not supported for {} destinations on this chip (`{}`); supported: {}",
                dst.dtype(),
                dst.name(),
                DType::ALL.iter().filter(|d| self.chip.atomic_add_supported(**d)).map(|d| d.name()).collect::<Vec<_>>().join(", ")
            )),
        }
    }

    fn fits_ub(
        &mut self,
        op: &'static str,
        dtype: DType,
        rows: usize,
        cols: usize,
        tiles: usize,
    ) -> SimResult<()> {
        let need = rows * cols * dtype.size() * tiles;
        let ub = self.chip.ub_bytes();
        if need > ub {
            let what = if tiles > 1 {
                format!("{tiles} staging tiles of {rows}x{cols} {dtype}")
            } else {
                format!("a {rows}x{cols} {dtype} tile")
            };
            return self.bad(op, format!("{what} need {need} bytes but UB holds {ub} bytes per core; use a smaller tile or chunk the transfer"));
        }
        Ok(())
    }

    fn live(&mut self, op: &'static str) -> SimResult<()> {
        if self.deferred {
            return self.bad(op, "the kernel continued after defer_wait; defer_wait releases the core, so return right after it".into());
        }
        Ok(())
    }

    fn check<T>(&mut self, op: &'static str, r: Result<T, impl Into<String>>) -> SimResult<T> {
        match r {
            Ok(v) => Ok(v),
            Err(m) => self.bad(op, m.into()),
        }
    }

    /// Records and returns an argument error; the run fails with it even if the kernel
    /// ignores it.
    fn bad<T>(&mut self, op: &'static str, msg: String) -> SimResult<T> {
        let e = SimError::BadOp {
            site: self.ctx.site(self.block),
            op,
            msg,
        };
        self.error.get_or_insert(e.clone());
        Err(e)
    }

    /// Ends the block: reports the kernel's result (or its first recorded error).
    pub(crate) fn finish(self, result: Result<SimResult<()>, String>) {
        let result = match result {
            Err(msg) => Err(SimError::KernelPanic {
                site: self.ctx.site(self.block),
                time: format!("{}", self.clock),
                msg,
            }),
            Ok(r) => match (r, self.error.clone()) {
                (Ok(()), None) => Ok(()),
                (Ok(()), Some(e)) => Err(e),
                (Err(e), sticky) if e.is_abort() => sticky.map_or(Err(e), Err),
                (Err(e), _) => Err(e),
            },
        };
        driver::post(
            &self.shared,
            self.actor,
            self.clock,
            self.clock,
            Request::Finish { result },
        );
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
