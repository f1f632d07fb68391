//! [`Core`], the blocking face of the kernel API that a synchronous kernel (`Task::new`) gets:
//! each blocking operation is an [`Ops`] future that is ready at once, because the transport's
//! call returns only with the scheduler's answer. `cube.rs` and `sdma.rs` add the AIC core's
//! and the SDMA engines' operations, `tile_ops.rs` the tile operations (forwards written from
//! their list).

mod cube;
mod sdma;
mod tile_ops;

use super::copy::CopyOpts;
use super::ops::{DeferCond, Ops};
use super::pipes::{Pipe, TileLoad};
use super::uplink::{self, block_on};
use crate::base::error::SimResult;
use crate::base::signal::{AtomicType, NotifyOp, WaitCmp};
use crate::base::tensor::Tensor;
use crate::base::tile::Tile;
use crate::base::time::SimTime;
use crate::model::ChipTiming;
use std::future::Future;
use std::panic::Location;

/// A kernel's handle on the core it runs on (one AIV core of one chip, running one block).
///
/// Local work only advances this core's clock. Every memory access and every signal operation
/// is a request to the scheduler stamped with that clock; blocking ones (`load`, `wait`,
/// `remote_load`, `put`, `get`) return when the scheduler has applied them, posted ones
/// (`store`, `remote_store`, `notify`) return at once.
pub struct Core {
    ops: Ops,
}

impl Core {
    pub(crate) fn new(ops: Ops) -> Core {
        Core { ops }
    }

    /// The same core with blocking operations as futures; in a synchronous kernel they are ready
    /// at once, so `block_on(f(core.ops()))` runs async code written against [`Ops`].
    pub fn ops(&mut self) -> &mut Ops {
        &mut self.ops
    }

    /// Runs an async body written against [`Ops`] (a collective, say) on this core.
    pub fn run<T>(&mut self, f: impl AsyncFnOnce(&mut Ops) -> SimResult<T>) -> SimResult<T> {
        wait_ready(f(&mut self.ops))
    }

    pub(crate) fn into_ops(self) -> Ops {
        self.ops
    }

    /// This chip's dense rank in the dispatch's comm domain (`pld.rank`).
    pub fn rank(&self) -> usize {
        self.ops.rank()
    }

    /// Number of ranks in the dispatch's comm domain (`pld.nranks`).
    pub fn nranks(&self) -> usize {
        self.ops.nranks()
    }

    /// This chip's world rank (its device index).
    pub fn world_rank(&self) -> usize {
        self.ops.world_rank()
    }

    /// This core's dense rank in the domain of window `t`.
    pub fn rank_in(&self, t: &Tensor) -> Option<usize> {
        self.ops.rank_in(t)
    }

    /// Index of this block in its task (`get_block_idx`).
    pub fn block_idx(&self) -> usize {
        self.ops.block_idx()
    }

    /// Number of blocks of the task (`get_block_num`).
    pub fn block_num(&self) -> usize {
        self.ops.block_num()
    }

    /// This core's current simulated time.
    pub fn now(&self) -> SimTime {
        self.ops.now()
    }

    /// The chip's timing model.
    pub fn chip(&self) -> &dyn ChipTiming {
        self.ops.chip()
    }

    /// Which lane of its block this core is (`get_subblockid`); see [`Ops::sub_block_idx`].
    pub fn sub_block_idx(&self) -> usize {
        self.ops.sub_block_idx()
    }

    /// Lanes per block of the task.
    pub fn sub_block_num(&self) -> usize {
        self.ops.sub_block_num()
    }

    /// Spends `cycles` core cycles of local work.
    pub fn compute(&mut self, cycles: u64) {
        self.ops.compute(cycles)
    }

    /// Loads a region of a local GM tensor or of this rank's window into a tile (TLOAD).
    #[track_caller]
    pub fn load(&mut self, src: &Tensor, offsets: &[usize], shape: &[usize]) -> SimResult<Tile> {
        self.ops.caller = Some(Location::caller());
        self.ops.read_now("load", src, None, offsets, shape)
    }

    /// Loads only the `valid_shape` part of a `shape` region into a `shape` tile, the rest
    /// zero; see [`Ops::load_valid`].
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

    /// Stores a tile's valid part into a local GM tensor or this rank's window (TSTORE).
    #[track_caller]
    pub fn store(&mut self, tile: &Tile, dst: &Tensor, offsets: &[usize]) -> SimResult<()> {
        self.ops.store(tile, dst, offsets)
    }

    /// Changes cell `offsets` of `signal` in `peer`'s window (TNOTIFY). Posted.
    #[track_caller]
    pub fn notify(
        &mut self,
        signal: &Tensor,
        peer: usize,
        offsets: &[usize],
        value: i32,
        op: NotifyOp,
    ) -> SimResult<()> {
        self.ops.notify(signal, peer, offsets, value, op)
    }

    /// Blocks until cell `offsets` of this rank's `signal` satisfies `cmp expected` (TWAIT).
    #[track_caller]
    pub fn wait(&mut self, signal: &Tensor, offsets: &[usize], expected: i32, cmp: WaitCmp) -> SimResult<()> {
        self.ops.caller = Some(Location::caller());
        let req = self.ops.wait_request(signal, offsets, expected, cmp)?;
        self.ops.call_now(req).map(|_| ())
    }

    /// Blocks until every cell of a region of this rank's `signal` satisfies `cmp expected`.
    #[track_caller]
    pub fn wait_all(
        &mut self,
        signal: &Tensor,
        offsets: &[usize],
        shape: &[usize],
        expected: i32,
        cmp: WaitCmp,
    ) -> SimResult<()> {
        self.ops.caller = Some(Location::caller());
        wait_ready(self.ops.wait_all(signal, offsets, shape, expected, cmp))
    }

    /// Registers deferred conditions for this block's task and releases the core
    /// (`pld.system.defer_wait`); return right after it.
    #[track_caller]
    pub fn defer_wait(&mut self, conds: &[DeferCond]) -> SimResult<()> {
        self.ops.caller = Some(Location::caller());
        wait_ready(self.ops.defer_wait(conds))
    }

    /// Loads a region of `peer`'s copy of window `target` (TLOAD from peer GM).
    #[track_caller]
    pub fn remote_load(&mut self, target: &Tensor, peer: usize, offsets: &[usize], shape: &[usize]) -> SimResult<Tile> {
        self.ops.caller = Some(Location::caller());
        self.ops.read_now("remote_load", target, Some(peer), offsets, shape)
    }

    /// As [`Core::remote_load`], reading only `valid_shape`; the rest of the tile is zero.
    #[track_caller]
    pub fn remote_load_valid(
        &mut self,
        target: &Tensor,
        peer: usize,
        offsets: &[usize],
        shape: &[usize],
        valid_shape: &[usize],
    ) -> SimResult<Tile> {
        self.ops.caller = Some(Location::caller());
        wait_ready(self.ops.remote_load_valid(target, peer, offsets, shape, valid_shape))
    }

    /// Stores a tile into `peer`'s copy of window `target` (TSTORE to peer GM). Posted.
    #[track_caller]
    pub fn remote_store(
        &mut self,
        tile: &Tile,
        target: &Tensor,
        peer: usize,
        offsets: &[usize],
        atomic: AtomicType,
    ) -> SimResult<()> {
        self.ops.remote_store(tile, target, peer, offsets, atomic)
    }

    /// Copies local `src` into `peer`'s window `dst` through UB (TPUT).
    #[track_caller]
    pub fn put(&mut self, dst: &Tensor, peer: usize, src: &Tensor, opts: &CopyOpts) -> SimResult<()> {
        self.ops.caller = Some(Location::caller());
        wait_ready(self.ops.put(dst, peer, src, opts))
    }

    /// Copies `peer`'s window `src` into local `dst` through UB (TGET).
    #[track_caller]
    pub fn get(&mut self, dst: &Tensor, peer: usize, src: &Tensor, opts: &CopyOpts) -> SimResult<()> {
        self.ops.caller = Some(Location::caller());
        wait_ready(self.ops.get(dst, peer, src, opts))
    }

    /// Blocks until every write and notify this core issued before has landed
    /// (`pld.system.fence`); see [`Ops::fence`].
    pub fn fence(&mut self) -> SimResult<()> {
        wait_ready(self.ops.fence())
    }

    /// Declares cells of this rank's `signal` self-clearing; see [`Ops::expect_clear`].
    pub fn expect_clear(&mut self, signal: &Tensor, offsets: &[usize], shape: &[usize]) -> SimResult<()> {
        self.ops.expect_clear(signal, offsets, shape)
    }

    // ---- pipes -----------------------------------------------------------------------------

    /// Lets this core's pipes overlap; see [`Ops::overlap_pipes`].
    pub fn overlap_pipes(&mut self) {
        self.ops.overlap_pipes()
    }

    /// Starts a load on MTE2 and returns at once; see [`Ops::load_async`].
    #[track_caller]
    pub fn load_async(&mut self, src: &Tensor, offsets: &[usize], shape: &[usize]) -> SimResult<TileLoad> {
        self.ops.caller = Some(Location::caller());
        self.ops.load_async(src, offsets, shape)
    }

    /// Starts a load from a peer's window on MTE2; see [`Ops::remote_load_async`].
    #[track_caller]
    pub fn remote_load_async(
        &mut self,
        target: &Tensor,
        peer: usize,
        offsets: &[usize],
        shape: &[usize],
    ) -> SimResult<TileLoad> {
        self.ops.caller = Some(Location::caller());
        self.ops.remote_load_async(target, peer, offsets, shape)
    }

    /// The tile of a load started with `load_async`, once it is in UB.
    pub fn wait_load(&mut self, load: TileLoad) -> SimResult<Tile> {
        wait_ready(self.ops.wait_load(load))
    }

    /// `set_flag(from, to, event)`; see [`Ops::set_flag`].
    pub fn set_flag(&mut self, from: Pipe, to: Pipe, event: u32) -> SimResult<()> {
        self.ops.set_flag(from, to, event)
    }

    /// `wait_flag(from, to, event)`; see [`Ops::wait_flag`].
    pub fn wait_flag(&mut self, from: Pipe, to: Pipe, event: u32) -> SimResult<()> {
        wait_ready(self.ops.wait_flag(from, to, event))
    }

    /// `pipe_barrier(pipe)`; see [`Ops::pipe_barrier`].
    pub fn pipe_barrier(&mut self, pipe: Pipe) -> SimResult<()> {
        wait_ready(self.ops.pipe_barrier(pipe))
    }

    // ---- scalar unit -----------------------------------------------------------------------

    /// Whether a cell of this rank's `signal` satisfies `cmp expected` now (TTEST); one poll.
    #[track_caller]
    pub fn test_signal(&mut self, signal: &Tensor, offsets: &[usize], expected: i32, cmp: WaitCmp) -> SimResult<bool> {
        self.ops.caller = Some(Location::caller());
        let reply = if self.ops.is_retest(signal, offsets)? {
            // Polled again: no request is built (the transport's short way).
            self.ops.retest_now(expected, cmp)?
        } else {
            let req = self.ops.first_test(signal, offsets, expected, cmp)?;
            self.ops.call_now(req)?
        };
        self.ops.test_reply(reply)
    }

    /// Reads one element of a local GM tensor or this rank's window (`pl.read`).
    #[track_caller]
    pub fn read_scalar(&mut self, src: &Tensor, offsets: &[usize]) -> SimResult<f64> {
        self.ops.caller = Some(Location::caller());
        wait_ready(self.ops.read_scalar(src, offsets))
    }

    /// Writes one element of a local GM tensor or this rank's window (`pl.write`).
    #[track_caller]
    pub fn write_scalar(&mut self, dst: &Tensor, offsets: &[usize], value: f64) -> SimResult<()> {
        self.ops.caller = Some(Location::caller());
        self.ops.write_scalar(dst, offsets, value)
    }

    /// Cleans and invalidates a cache line (`dcci`); see [`Ops::dcci`].
    pub fn dcci(&mut self) -> SimResult<()> {
        self.ops.dcci()
    }
}

/// Drives a future of a thread-linked core, which is always ready at once.
fn wait_ready<T>(f: impl Future<Output = SimResult<T>>) -> SimResult<T> {
    block_on(f).unwrap_or_else(|| Err(uplink::not_synchronous()))
}
