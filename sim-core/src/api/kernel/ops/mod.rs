//! [`Ops`]: the program API with its blocking operations as `async fn`s. Collectives are
//! written against it once and run either inside a synchronous kernel, where every future is ready
//! at once (see [`Core::ops`](crate::Core::ops)), or as a future the scheduler polls.
//!
//! Local work (tile arithmetic, [`Ops::compute`]) only advances this core's clock. Every
//! memory access and every signal operation is a request to the scheduler stamped with that
//! clock; blocking ones (`load`, `wait`, `remote_load`, `put`, `get`, `defer_wait`) resolve
//! when the scheduler has applied them, posted ones (`store`, `remote_store`, `notify`)
//! return at once.

mod checks;
mod cube;
mod math;
mod pipe_ops;
mod sdma;

use super::copy::{CopyOpts, chunk_places};
use super::pipes::{Pipe, Pipes};
use super::sdma_handle::SdmaState;
use super::uplink::{CallFuture, Uplink};
use crate::api::request::{CopySpec, OpKind, Reply, Request, TaskCtx};
use crate::base::addr::{Cells, Place};
use crate::base::convert::RoundMode;
use crate::base::dtype::DType;
use crate::base::error::{SimError, SimResult};
use crate::base::signal::{AtomicType, NotifyOp, WaitCmp};
use crate::base::tensor::Tensor;
use crate::base::tile::{Axis, ReduceOp, Tile};
use crate::base::time::SimTime;
use crate::model::{ChipTiming, DmaDir};
use std::borrow::Cow;
use std::future::Future;
use std::panic::Location;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// One condition of [`Ops::defer_wait`]: `signal[offsets] as u32 >= expected`.
#[derive(Clone, Debug)]
pub struct DeferCond {
    /// The signal tensor (a window) holding the cell.
    pub signal: Tensor,
    /// The cell's coordinates in `signal`.
    pub offsets: Vec<usize>,
    /// The value the cell, read as unsigned, must reach.
    pub expected: u32,
}

/// A kernel's handle on the core it runs on, with blocking operations as futures.
pub struct Ops {
    pub(super) link: Uplink,
    pub(super) clock: SimTime,
    ctx: Arc<TaskCtx>,
    block: usize,
    chip: Arc<dyn ChipTiming>,
    error: Option<SimError>,
    deferred: bool,
    lane: usize,
    /// The source location of the `Core` call being served (for checker reports).
    pub(crate) caller: Option<&'static Location<'static>>,
    /// Pipe occupancy, flags and loads in flight (see `pipes.rs`).
    pub(super) pipes: Pipes,
    /// SDMA transfers posted and not yet waited (see `ops/sdma.rs`).
    sdma: SdmaState,
    /// The chip's clock, and the last `compute` cycle count with its duration: kernels mostly
    /// compute the same count again, which then costs no call into the model and no division.
    cycle_clock: crate::base::time::Frequency,
    last_compute: (u64, crate::base::time::SimDuration),
    /// The cell `test_signal` polled last (see `scalar.rs`).
    pub(super) polled: super::polled::PolledCell,
    /// A notify of this core into its own rank's window may still be in flight: a scalar
    /// read of its own window waits for it first (see `scalar.rs`).
    pub(super) self_notified: bool,
}

impl Ops {
    pub(crate) fn new(
        link: Uplink,
        chip: Arc<dyn ChipTiming>,
        clock: SimTime,
        ctx: Arc<TaskCtx>,
        block: usize,
        lane: usize,
    ) -> Ops {
        Ops {
            link,
            clock,
            ctx,
            block,
            error: None,
            deferred: false,
            lane,
            caller: None,
            pipes: Pipes::default(),
            sdma: Default::default(),
            cycle_clock: chip.clock(),
            last_compute: (0, crate::base::time::SimDuration::ZERO),
            polled: Default::default(),
            self_notified: false,
            chip,
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
        self.ctx.domain.as_ref().map_or(self.ctx.world_size, |d| d.size())
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

    /// Which lane of its block this core is (`get_subblockid`): 0 unless the task runs
    /// several lanes per block (see [`Task::lanes`](crate::Task::lanes)).
    pub fn sub_block_idx(&self) -> usize {
        self.lane
    }

    /// Lanes per block of the task (`get_subblockdim`).
    pub fn sub_block_num(&self) -> usize {
        self.ctx.lanes
    }

    /// This core's current simulated time.
    pub fn now(&self) -> SimTime {
        self.clock
    }

    /// The chip's timing model (UB size, clock, costs).
    pub fn chip(&self) -> &dyn ChipTiming {
        &*self.chip
    }

    /// Where this kernel runs (rank, block, task), as error messages name it.
    pub fn site(&self) -> crate::base::error::Site {
        self.ctx.site(self.block)
    }

    /// An argument error of operation `op` at this core; like a refused primitive, it fails
    /// the run even if the kernel drops it. For library code built on `Ops` (collectives).
    pub fn error(&mut self, op: &'static str, msg: impl Into<String>) -> SimError {
        let e = SimError::BadOp { site: self.site(), op, msg: msg.into() };
        self.error.get_or_insert(e.clone());
        e
    }

    /// Spends `cycles` core cycles of local work.
    pub fn compute(&mut self, cycles: u64) {
        if self.last_compute.0 != cycles {
            self.last_compute = (cycles, self.cycle_clock.cycles(cycles));
        }
        self.local("compute", self.last_compute.1);
    }

    /// Advances the clock by local work `d`, reporting it when the run is traced.
    pub(super) fn local(&mut self, name: &'static str, d: crate::base::time::SimDuration) {
        let start = self.clock;
        self.clock += d;
        self.note(name, start, self.clock);
    }

    /// Reports local work over `[start, end]` when the run is traced.
    fn note(&mut self, name: &'static str, start: SimTime, end: SimTime) {
        if self.ctx.trace {
            self.link.post(self.clock, self.clock, Request::Note { name, start, end });
        }
    }

    /// Runs `d` of vector work on tiles ready at `inputs`; returns when its result is ready.
    /// Serially the core waits for it; with overlapping pipes only the vector pipe does.
    fn vector(&mut self, d: crate::base::time::SimDuration, inputs: &[&Tile]) -> SimTime {
        if !self.pipes.overlap {
            self.local("vector", d);
            return self.clock;
        }
        let ready = inputs.iter().map(|t| t.ready).max().unwrap_or(SimTime::ZERO);
        let start = self.clock.max(self.pipes.vector_free).max(self.pipes.gate(Pipe::Vector)).max(ready);
        self.pipes.vector_free = start + d;
        self.note("vector", start, start + d);
        start + d
    }

    // ---- tiles -----------------------------------------------------------------------------

    /// Loads `shape` elements at `offsets` of a local GM tensor or of this rank's copy of a
    /// window into a tile (TLOAD).
    pub async fn load(&mut self, src: &Tensor, offsets: &[usize], shape: &[usize]) -> SimResult<Tile> {
        self.read("load", src, None, offsets, shape, None).await
    }

    /// Stores a tile's valid part at `offsets` of a local GM tensor or this rank's window
    /// (TSTORE). Posted: returns once the core's DMA has issued it.
    #[track_caller]
    pub fn store(&mut self, tile: &Tile, dst: &Tensor, offsets: &[usize]) -> SimResult<()> {
        self.write(OpKind::Store, tile, dst, None, offsets, AtomicType::None)
    }

    /// Element-wise `op(a, b)` on the vector unit.
    pub fn reduce(&mut self, op: ReduceOp, a: &Tile, b: &Tile) -> SimResult<Tile> {
        // Errors name the call the kernel made.
        let name = match op {
            ReduceOp::Sum => "add",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
            ReduceOp::Prod => "mul",
        };
        self.ub_op(name)?;
        let r = match a.combine(op, b) {
            Ok(r) => r,
            Err(e) => return self.bad(name, e.to_string()),
        };
        let d = self.chip.vector_op(a.dtype(), a.len() as u64);
        let mut r = r;
        r.ready = self.vector(d, &[a, b]);
        Ok(r)
    }

    /// `a + s` element-wise, with `s` converted to the tile's dtype (TADDS).
    pub fn adds(&mut self, a: &Tile, s: f64) -> SimResult<Tile> {
        self.combine_scalar("adds", ReduceOp::Sum, a, s)
    }

    /// `a * s` element-wise, with `s` converted to the tile's dtype (TMULS).
    pub fn muls(&mut self, a: &Tile, s: f64) -> SimResult<Tile> {
        self.combine_scalar("muls", ReduceOp::Prod, a, s)
    }

    /// `op(a, s)` element-wise on the vector unit, as the operation `name`, at the cost of
    /// `add`.
    fn combine_scalar(&mut self, name: &'static str, op: ReduceOp, a: &Tile, s: f64) -> SimResult<Tile> {
        self.ub_op(name)?;
        let d = self.chip.vector_op(a.dtype(), a.len() as u64);
        let mut r = a.combine_scalar(op, s);
        r.ready = self.vector(d, &[a]);
        Ok(r)
    }

    /// `a` converted to `to` with rounding `mode` (TCVT), on the vector unit at the cost of
    /// the wider of the two types. Only pairs the unit converts directly are allowed.
    pub fn cast(&mut self, a: &Tile, to: DType, mode: RoundMode) -> SimResult<Tile> {
        self.ub_op("cast")?;
        let mut r = match a.cast(to, mode) {
            Ok(r) => r,
            Err(e) => return self.bad("cast", e.to_string()),
        };
        let wide = if to.size() > a.dtype().size() { to } else { a.dtype() };
        let d = self.chip.vector_op(wide, a.len() as u64);
        r.ready = self.vector(d, &[a]);
        Ok(r)
    }

    /// `op` along each row (`Axis::Rows`: TROWSUM / TROWMAX / ..., an `[rows, 1]` tile) or
    /// down each column (`Axis::Cols`, a `[1, cols]` tile) on the vector unit.
    pub fn reduce_axis(&mut self, op: ReduceOp, axis: Axis, a: &Tile) -> SimResult<Tile> {
        self.ub_op("reduce_axis")?;
        let mut r = a.reduce_axis(op, axis);
        let d = self.chip.vector_op(a.dtype(), a.len() as u64);
        r.ready = self.vector(d, &[a]);
        Ok(r)
    }

    /// The same tile viewed as `rows x cols` (`pl.reshape`): no data moves, so it is free.
    pub fn reshape(&mut self, a: &Tile, rows: usize, cols: usize) -> SimResult<Tile> {
        self.ub_op("reshape")?;
        match a.reshape(rows, cols) {
            Ok(r) => Ok(r),
            Err(e) => self.bad("reshape", e.to_string()),
        }
    }

    // ---- signals ---------------------------------------------------------------------------

    /// Changes cell `offsets` of `signal` in `peer`'s window (TNOTIFY). `peer` is a dense rank
    /// of the signal's domain; notifying yourself hits the same cell peers notify. Posted.
    #[track_caller]
    pub fn notify(
        &mut self,
        signal: &Tensor,
        peer: usize,
        offsets: &[usize],
        value: i32,
        op: NotifyOp,
    ) -> SimResult<()> {
        let caller = self.caller.take().or(Some(Location::caller()));
        self.live("notify")?;
        let cell = self.cell("notify", signal, Some(peer), offsets)?;
        self.self_notified |= cell.chip() == self.world_rank();
        let at = self.clock;
        self.clock += self.chip.notify_issue();
        self.link.post(at, self.clock, Request::Notify { cell, value, op, caller });
        Ok(())
    }

    /// Resolves once every write (`store`, `remote_store`, put chunk) and notify this core
    /// issued before has landed (`pld.system.fence`): a notify sent after it can no longer
    /// overtake them, whatever the fabric's ordering.
    pub async fn fence(&mut self) -> SimResult<()> {
        self.live("fence")?;
        self.self_notified = false;
        self.call(Request::Fence).await.map(|_| ())
    }

    /// Declares the `shape` cells at `offsets` of this rank's `signal` self-clearing: a
    /// checked run reports them if they are not zero when it ends (credits left behind).
    /// Costs nothing and does nothing in unchecked runs.
    pub fn expect_clear(&mut self, signal: &Tensor, offsets: &[usize], shape: &[usize]) -> SimResult<()> {
        self.live("expect_clear")?;
        let cells = self.cells("expect_clear", signal, offsets, shape)?;
        self.link.post(self.clock, self.clock, Request::ExpectClear { cells });
        Ok(())
    }

    /// Resolves once cell `offsets` of this rank's `signal` satisfies `cmp expected` (signed;
    /// TWAIT).
    pub async fn wait(&mut self, signal: &Tensor, offsets: &[usize], expected: i32, cmp: WaitCmp) -> SimResult<()> {
        let req = self.wait_request(signal, offsets, expected, cmp)?;
        self.call(req).await.map(|_| ())
    }

    /// The request of [`Ops::wait`] (checked).
    pub(super) fn wait_request(
        &mut self,
        signal: &Tensor,
        offsets: &[usize],
        expected: i32,
        cmp: WaitCmp,
    ) -> SimResult<Request> {
        // `wait_all` over one cell, resolved as one cell (the same checks and messages).
        self.live("wait")?;
        let cell = self.cell("wait", signal, None, offsets)?;
        let caller = self.caller.take();
        Ok(Request::Wait { cells: Cells::from(cell), expected, cmp, caller })
    }

    /// Resolves once every cell of the `shape` region at `offsets` of this rank's `signal`
    /// satisfies `cmp expected` (TWAIT over a signal view).
    pub async fn wait_all(
        &mut self,
        signal: &Tensor,
        offsets: &[usize],
        shape: &[usize],
        expected: i32,
        cmp: WaitCmp,
    ) -> SimResult<()> {
        self.live("wait")?;
        let cells = self.cells("wait", signal, offsets, shape)?;
        let caller = self.caller.take();
        self.call(Request::Wait { cells, expected, cmp, caller }).await.map(|_| ())
    }

    /// Registers `conds` (each `cell as u32 >= expected`) for this block's task and releases
    /// the core: the task completes when all hold (`pld.system.defer_wait`). The kernel must
    /// return right after this call; any further operation is an error.
    pub async fn defer_wait(&mut self, conds: &[DeferCond]) -> SimResult<()> {
        self.live("defer_wait")?;
        let mut cells = Vec::with_capacity(conds.len());
        for c in conds {
            if c.expected > i32::MAX as u32 {
                let msg = format!(
                    "expected value {} is above INT32_MAX; deferred counters must stay in [0, INT32_MAX]",
                    c.expected
                );
                return self.bad("defer_wait", msg);
            }
            cells.push((self.cell("defer_wait", &c.signal, None, &c.offsets)?, c.expected));
        }
        let caller = self.caller.take();
        self.call(Request::DeferWait { conds: cells, caller }).await?;
        self.deferred = true;
        Ok(())
    }

    // ---- remote memory ---------------------------------------------------------------------

    /// Loads `shape` elements at `offsets` of `peer`'s copy of window `target` (TLOAD from
    /// peer GM). Resolves when the data has arrived.
    pub async fn remote_load(
        &mut self,
        target: &Tensor,
        peer: usize,
        offsets: &[usize],
        shape: &[usize],
    ) -> SimResult<Tile> {
        self.read("remote_load", target, Some(peer), offsets, shape, None).await
    }

    /// As [`Ops::remote_load`], but only the `valid_shape` part is read; the tile keeps its
    /// full physical `shape` and the rest is zero.
    pub async fn remote_load_valid(
        &mut self,
        target: &Tensor,
        peer: usize,
        offsets: &[usize],
        shape: &[usize],
        valid_shape: &[usize],
    ) -> SimResult<Tile> {
        self.read("remote_load", target, Some(peer), offsets, shape, Some(valid_shape)).await
    }

    /// Stores a tile's valid part at `offsets` of `peer`'s copy of window `target` (TSTORE to
    /// peer GM), overwriting or atomically adding. Posted.
    #[track_caller]
    pub fn remote_store(
        &mut self,
        tile: &Tile,
        target: &Tensor,
        peer: usize,
        offsets: &[usize],
        atomic: AtomicType,
    ) -> SimResult<()> {
        self.write(OpKind::RemoteStore, tile, target, Some(peer), offsets, atomic)
    }

    /// Copies local `src` into `peer`'s window `dst`, staged through UB (TPUT). Resolves when
    /// the last chunk has left this core; order the receiver with a notify after the put.
    pub async fn put(&mut self, dst: &Tensor, peer: usize, src: &Tensor, opts: &CopyOpts) -> SimResult<()> {
        self.copy(OpKind::Put, (dst, Some(peer)), (src, None), opts).await
    }

    /// Copies `peer`'s window `src` into local `dst`, staged through UB (TGET). Resolves when
    /// the last chunk is stored.
    pub async fn get(&mut self, dst: &Tensor, peer: usize, src: &Tensor, opts: &CopyOpts) -> SimResult<()> {
        if opts.atomic != AtomicType::None {
            return self
                .bad("get", "atomic accumulation is only available on put; pass AtomicType::None to get".into());
        }
        self.copy(OpKind::Get, (dst, None), (src, Some(peer)), opts).await
    }

    // ---- internals -------------------------------------------------------------------------

    async fn read(
        &mut self,
        op: &'static str,
        src: &Tensor,
        peer: Option<usize>,
        offsets: &[usize],
        shape: &[usize],
        valid: Option<&[usize]>,
    ) -> SimResult<Tile> {
        let (req, shape) = self.read_request(op, src, peer, offsets, shape, valid)?;
        let reply = self.call(req).await?;
        self.read_reply(op, src.dtype(), shape, reply)
    }

    /// [`Ops::read`] of a whole region on a synchronous link: the same request, answered
    /// without a future.
    pub(super) fn read_now(
        &mut self,
        op: &'static str,
        src: &Tensor,
        peer: Option<usize>,
        offsets: &[usize],
        shape: &[usize],
    ) -> SimResult<Tile> {
        let (req, shape) = self.read_request(op, src, peer, offsets, shape, None)?;
        let reply = self.call_now(req)?;
        self.read_reply(op, src.dtype(), shape, reply)
    }

    /// The request of a read (checked), and the tile's shape: `(rows, cols, valid rows,
    /// valid cols)`.
    fn read_request(
        &mut self,
        op: &'static str,
        src: &Tensor,
        peer: Option<usize>,
        offsets: &[usize],
        shape: &[usize],
        valid: Option<&[usize]>,
    ) -> SimResult<(Request, [usize; 4])> {
        self.ub_op(op)?;
        // With a valid region only that part is read, so only it must lie in the tensor: the
        // tile itself may be larger (a padded tile at a tensor's ragged end, as PyPTO's
        // `valid_shapes` loads are).
        let whole = match valid {
            None => Some(self.region(op, src, offsets, shape)?),
            Some(_) => None,
        };
        let (rows, cols) = whole.as_ref().map_or_else(|| tile_dims(shape), |r| (r.rows, r.cols));
        self.fits_ub(op, src.dtype(), rows, cols, 1)?;
        let place = match (valid, whole) {
            // The whole region is read: it is the one just resolved.
            (None, Some(full)) => Place { mem: self.locate(op, src, peer)?, region: full, tensor: src.clone() },
            (None, None) => return self.bad(op, "internal error: a whole read without its region".into()),
            (Some(v), _) => {
                if v.len() != shape.len() || v.iter().zip(shape).any(|(a, b)| a > b || *a == 0) {
                    let msg = format!(
                        "valid_shape {v:?} must have the rank of shape {shape:?}, with 0 < valid <= shape in every dimension"
                    );
                    return self.bad(op, msg);
                }
                self.place(op, src, peer, offsets, v)?
            }
        };
        let (vr, vc) = (place.region.rows, place.region.cols);
        let caller = self.caller.take();
        let start = self.clock.max(self.pipes.gate(Pipe::Mte2));
        Ok((Request::Read { src: place, caller, start, ticket: None }, [rows, cols, vr, vc]))
    }

    /// The tile a read of `dtype` and `shape` (as [`Ops::read_request`] gives it) returns for
    /// the scheduler's `reply`.
    fn read_reply(&mut self, op: &'static str, dtype: DType, shape: [usize; 4], reply: Reply) -> SimResult<Tile> {
        let Reply::Data(bytes) = reply else {
            return self.bad(op, "the scheduler answered a read without data".into());
        };
        let [rows, cols, vr, vc] = shape;
        let mut t = Tile::from_valid_bytes(dtype, rows, cols, (vr, vc), bytes);
        t.ready = self.clock;
        Ok(t)
    }

    #[track_caller]
    fn write(
        &mut self,
        kind: OpKind,
        tile: &Tile,
        dst: &Tensor,
        peer: Option<usize>,
        offsets: &[usize],
        atomic: AtomicType,
    ) -> SimResult<()> {
        let op = kind.name();
        let caller = self.caller.take().or(Some(Location::caller()));
        self.ub_op(op)?;
        if tile.dtype() != dst.dtype() {
            let msg = format!(
                "tile is {} but `{}` is {}; the tile and the tensor need the same dtype",
                tile.dtype(),
                dst.name(),
                dst.dtype()
            );
            return self.bad(op, msg);
        }
        self.fits_ub(op, tile.dtype(), tile.shape().0, tile.shape().1, 1)?;
        let atomic = self.atomic_dtype(op, atomic, dst)?;
        let (vr, vc) = tile.valid_shape();
        let n = dst.shape().len();
        // The extent lives on the stack for any tensor of up to 8 dimensions (a write per
        // tile: no allocation).
        let (mut small, mut big) = ([1usize; 8], Vec::new());
        let extent: &mut [usize] = match small.get_mut(..n) {
            Some(s) => s,
            None => {
                big.resize(n, 1);
                &mut big
            }
        };
        match n {
            1 if vr == 1 => extent[0] = vc,
            1 => {
                let msg = format!(
                    "a {vr}x{vc} tile cannot be stored into the 1-D tensor `{}`; use a [1, n] tile",
                    dst.name()
                );
                return self.bad(op, msg);
            }
            _ => {
                extent[n - 2] = vr;
                extent[n - 1] = vc;
            }
        }
        let place = self.place(op, dst, peer, offsets, extent)?;
        let data = tile.valid_bytes();
        let dma = self.chip.dma(DmaDir::UbToGm, data.len() as u64);
        let at = self.clock;
        let start = if self.pipes.overlap {
            let start = at.max(self.pipes.mte3_free).max(self.pipes.gate(Pipe::Mte3)).max(tile.ready);
            self.pipes.mte3_free = start + dma;
            start
        } else {
            self.clock += dma;
            at
        };
        self.link.post(at, self.clock, Request::Write { dst: place, data, atomic, op: kind, caller, start });
        Ok(())
    }

    async fn copy(
        &mut self,
        kind: OpKind,
        dst: (&Tensor, Option<usize>),
        src: (&Tensor, Option<usize>),
        o: &CopyOpts,
    ) -> SimResult<()> {
        let op = kind.name();
        self.ub_op(op)?;
        let atomic = self.atomic_dtype(op, o.atomic, dst.0)?;
        let dst_loc = self.locate(op, dst.0, dst.1)?;
        let src_loc = self.locate(op, src.0, src.1)?;
        let ub = self.chip.ub_bytes();
        let chunks = match chunk_places(op, (dst.0, dst_loc), (src.0, src_loc), o, ub) {
            Ok(c) => c,
            Err(msg) => return self.bad(op, msg),
        };
        let caller = self.caller.take();
        self.call(Request::Copy(CopySpec { chunks, pipeline: o.pipeline, atomic, op: kind, caller })).await.map(|_| ())
    }

    /// Sends a blocking request; a refused one becomes this kernel's error. The request
    /// leaves at once (a mailbox link leaves it in the outbox, for the driver to take when the
    /// kernel yields at the first poll), so it never moves through the kernel's future state;
    /// every caller awaits the call right away, at the same clock.
    pub(super) fn call(&mut self, req: Request) -> OpsCall<'_> {
        let answer = self.link.call(self.clock, req);
        OpsCall { ops: self, answer }
    }

    /// [`Ops::call`] of a [`Request::Retest`], by the link's short way.
    pub(super) fn retest(&mut self, expected: i32, cmp: WaitCmp) -> OpsCall<'_> {
        let answer = self.link.retest(self.clock, expected, cmp);
        OpsCall { ops: self, answer }
    }

    /// [`Ops::call`] on a synchronous link (a thread or coroutine kernel's `Core`): the same
    /// request at the same time, its answer returned without a future.
    pub(crate) fn call_now(&mut self, req: Request) -> SimResult<Reply> {
        let answer = self.link.call_now(self.clock, req);
        self.settle(answer)
    }

    /// [`Ops::call_now`] of a [`Request::Retest`] (see [`Transport::retest`]).
    ///
    /// [`Transport::retest`]: super::uplink::Transport::retest
    pub(crate) fn retest_now(&mut self, expected: i32, cmp: WaitCmp) -> SimResult<Reply> {
        let answer = self.link.retest_now(self.clock, expected, cmp);
        self.settle(answer)
    }

    /// Takes the answer to a blocking request: the clock moves to its resume time; a refused
    /// request becomes this kernel's error.
    fn settle(&mut self, answer: super::uplink::Answer) -> SimResult<Reply> {
        let (t, reply) = answer.map_err(|e| *e)?;
        self.clock = t;
        match reply {
            Reply::Err(e) => {
                self.error.get_or_insert((*e).clone());
                Err(*e)
            }
            r => Ok(r),
        }
    }

    /// Ends the block: reports the kernel's result (or its first recorded error) once the
    /// vector pipe has drained (stores drain in the scheduler, which ends a block only when
    /// its writes have landed); an SDMA transfer never waited is an error.
    pub(crate) fn finish(mut self, result: Result<SimResult<()>, String>) {
        self.clock = self.clock.max(self.pipes.vector_free);
        if let Some(msg) = self.sdma_finish() {
            self.error("wait_async", msg);
        }
        let result = match result {
            Err(msg) => Err(SimError::KernelPanic { site: self.ctx.site(self.block), time: self.clock, msg }),
            Ok(r) => match (r, self.error.clone()) {
                (Ok(()), None) => Ok(()),
                (Ok(()), Some(e)) => Err(e),
                (Err(e), sticky) if e.is_abort() => sticky.map_or(Err(e), Err),
                (Err(e), _) => Err(e),
            },
        };
        self.link.post(self.clock, self.clock, Request::Finish { result });
    }
}

/// The answer to a blocking request [`Ops::call`] sent: the reply, once the scheduler has
/// given it, with the core's clock moved to its resume time.
pub(super) struct OpsCall<'a> {
    ops: &'a mut Ops,
    answer: CallFuture,
}

impl Future for OpsCall<'_> {
    type Output = SimResult<Reply>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<SimResult<Reply>> {
        let this = self.get_mut();
        match Pin::new(&mut this.answer).poll(cx) {
            Poll::Ready(answer) => Poll::Ready(this.ops.settle(answer)),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// The extent of one element of a tensor of rank `rank`: borrowed for every rank a tensor is
/// likely to have, so single-element operations (`wait`, `test_signal`, scalar access) do not
/// allocate a shape of ones each time.
pub(super) fn ones(rank: usize) -> Cow<'static, [usize]> {
    static ONES: [usize; 8] = [1; 8];
    match ONES.get(..rank) {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(vec![1; rank]),
    }
}

/// `(rows, cols)` of a tile of `shape`: the product of its leading dimensions, and its last
/// (a 1-D shape is one row).
fn tile_dims(shape: &[usize]) -> (usize, usize) {
    match shape.split_last() {
        Some((cols, lead)) => (lead.iter().product::<usize>().max(1), *cols),
        None => (1, 1),
    }
}
