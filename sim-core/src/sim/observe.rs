//! Watching a run: the typed facts the scheduler reports as it applies events, and
//! [`Observe`], the trait that receives them.
//!
//! Every run is watched by three built-in observers: the per-rank traffic counters
//! ([`RunReport::traffic`](crate::RunReport)), the timeline of a traced run
//! ([`crate::results::trace`]) and the protocol checker of a checked run ([`crate::sim::check`]). They
//! implement this trait; an observer of yours implements it too and is attached with
//! [`World::observe`](crate::World::observe): it then sees every later run, from
//! [`Observe::run_started`] to [`Observe::run_ended`].
//!
//! Observing never steers: no fact returns anything, and a run with an observer attached
//! computes the same bytes at the same times as one without. An observer reports its results
//! through state it shares with the host (an `Arc<Mutex<..>>`), or is handed back by
//! [`World::take_observers`](crate::World::take_observers).
//!
//! Facts that belong together carry ids the observer layer assigns, sequential within a run
//! and increasing in issue order: an [`OpId`] per operation of a core (the id of its span in
//! a traced run's timeline), a [`WriteId`] per write or notify in flight (given again when it
//! lands), an [`SdmaId`] per SDMA transfer (given again as it moves bytes and completes).
//!
//! Counting the bytes each rank writes to peers:
//!
//! ```
//! use sim_core::model::simple::{SimpleChip, SimpleNet};
//! use sim_core::observe::{CoreId, Observe, OpId};
//! use sim_core::{AtomicType, DType, Dispatch, DomainOptions, World};
//! use std::sync::{Arc, Mutex};
//!
//! /// Bytes stored to another rank, per rank.
//! struct RemoteBytes(Arc<Mutex<Vec<u64>>>);
//!
//! impl Observe for RemoteBytes {
//!     fn run_started(&mut self, ranks: usize, _cores: usize) {
//!         *self.0.lock().unwrap() = vec![0; ranks];
//!     }
//!     fn store_posted(&mut self, core: CoreId, _op: OpId, to: usize, bytes: u64) {
//!         if to != core.rank() {
//!             self.0.lock().unwrap()[core.rank()] += bytes;
//!         }
//!     }
//! }
//!
//! let mut world = World::new(2, Arc::new(SimpleChip), Box::new(SimpleNet))?;
//! let all = world.create_domain("all", &[0, 1], DomainOptions::default())?;
//! let buf = world.alloc_window(&all, "buf", DType::F32, &[1, 64])?;
//! let b = buf.clone();
//! let send = Dispatch::kernel("send", 1, move |core| {
//!     if core.rank() == 0 {
//!         let t = core.load(&b, &[0, 0], &[1, 64])?;
//!         core.remote_store(&t, &b, 1, &[0, 0], AtomicType::None)?;
//!     }
//!     Ok(())
//! });
//! world.dispatch_all(&all, send.in_domain(&all))?;
//! let bytes = Arc::new(Mutex::new(Vec::new()));
//! world.observe(Box::new(RemoteBytes(bytes.clone())));
//! let report = world.run()?;
//! assert_eq!(*bytes.lock().unwrap(), [256, 0]);
//! assert_eq!(report.traffic[0].remote_write_bytes, 256);
//! # Ok::<(), sim_core::SimError>(())
//! ```

use crate::api::request::OpKind;
use crate::base::addr::{Caller, CellRef, MemKey, Place};
use crate::base::call_site::CallSite;
use crate::base::signal::{Cond, NotifyOp};
use crate::base::tensor::Tensor;
use crate::base::time::SimTime;
use crate::results::trace::LinkBusy;
use std::fmt;
use std::num::NonZeroU64;
use std::panic::Location;
use std::sync::Arc;

/// Every fact of a run, declared once: its doc, its recorded variant, its method and its
/// arguments. The [`Observe`] trait's methods, the recorded `Fact` of a split run's
/// partition, its recorder and its replay (`sim/engine/observe/record.rs`), and so the
/// bytes a recording travels as, are all generated from this list by calling
/// `for_each_fact!(then)`, which hands the list to the macro `then`. A new fact is one entry
/// here (and, for an argument of a new type, its `Keep` in `sim/engine/observe/keep.rs`).
macro_rules! for_each_fact {
    ($then:ident) => {
        $then! {
            // ---- the run's structure ----------------------------------------------------

            /// `rank` starts its dispatch number `instance` (0, 1, ... on the rank), of `tasks`
            /// tasks.
            DispatchStarted dispatch_started(rank: usize, tasks: usize, instance: usize);

            /// Task `task` (its index in the dispatch) of `rank`'s active dispatch is placed on
            /// cores; it depends on the tasks `deps`.
            TaskPlaced task_placed(rank: usize, task: usize, deps: &[usize]);

            /// A block starts on a core.
            BlockStarted block_started(block: &BlockStart<'_>);

            /// The block of task `task` on `core` ended (its writes have landed).
            BlockEnded block_ended(core: CoreId, task: usize);

            /// A deferred condition (`defer_wait`) of task `task` of `rank` holds on `cell`.
            DeferredReady deferred_ready(rank: usize, task: usize, cell: SignalCell<'_>);

            /// `rank`'s active dispatch completed.
            DispatchEnded dispatch_ended(rank: usize);

            // ---- operations of a core ---------------------------------------------------

            /// A core starts a blocking operation; it ends when the core is
            /// [`Observe::resumed`].
            OpStarted op_started(op: &OpInfo);

            /// An operation of known extent, `[op.start, end]`: a posted store, notify or SDMA
            /// transfer (the core's issue cost), local work (traced runs only: kernels report
            /// it only then) or an asynchronous load (issue to arrival).
            OpSpan op_span(op: &OpInfo, end: SimTime);

            /// `core` is released at `at`: its blocking operation, if any, ends.
            Resumed resumed(core: CoreId, at: SimTime);

            /// `core` issues a load of `bytes` from rank `from` (its own rank for a local load).
            LoadIssued load_issued(core: CoreId, from: usize, bytes: u64);

            /// `core` posts the store `op` of `bytes` to rank `to`.
            StorePosted store_posted(core: CoreId, op: OpId, to: usize, bytes: u64);

            /// `core` starts the put or get `op` (its [`OpInfo::name`] says which; the span of
            /// [`Observe::op_started`] with the same id).
            CopyStarted copy_started(op: &OpInfo);

            /// A chunk of a put or get of `core` read `bytes` from rank `from`.
            ChunkRead chunk_read(core: CoreId, from: usize, bytes: u64);

            /// A chunk of a put or get of `core` stored `bytes` to rank `to`.
            ChunkStored chunk_stored(core: CoreId, to: usize, bytes: u64);

            /// `core` reads `src` now (the bytes are taken from memory at this fact).
            Read read(core: CoreId, src: MemRegion<'_>, at: OpAt);

            /// `core` issues the write `id` to `dst` (an atomic add if `atomic`); it lands at
            /// [`Observe::write_landed`] with the same id.
            WriteIssued write_issued(core: CoreId, id: WriteId, dst: MemRegion<'_>, atomic: bool, at: OpAt);

            /// The write `id` (a data write, or an SDMA descriptor's) has landed.
            WriteLanded write_landed(id: WriteId);

            // ---- signals ----------------------------------------------------------------

            /// `core` posts the notify `op` to a cell of rank `to`.
            NotifyPosted notify_posted(core: CoreId, op: OpId, to: usize);

            /// `core` issues the notify `id`: `op` of `value` on `cell`; it lands at
            /// [`Observe::notify_landed`] with the same id.
            NotifyIssued notify_issued(core: CoreId, id: WriteId, cell: SignalCell<'_>, op: NotifyOp, value: i32, at: OpAt);

            /// The notify `id` changed `cell` from `old_new.0` to `old_new.1`; `eq` lists the
            /// `Eq` waits on the cell (computed only when asked).
            NotifyLanded notify_landed(id: WriteId, cell: SignalCell<'_>, old_new: (i32, i32), eq: EqWaiters<'_>);

            /// `core` starts the blocking wait `op` at `at` for `cells` to satisfy `cond`.
            WaitStarted wait_started(core: CoreId, op: OpId, cells: SignalCells<'_>, cond: Cond, at: SimTime);

            /// The wait of `core` held as soon as it was made, at `at`.
            WaitHeldAtOnce wait_held_at_once(core: CoreId, cells: SignalCells<'_>, cond: Cond, at: SimTime);

            /// The wait `op` of `core` was satisfied at `at` by a write to `cells` (with the
            /// wait's condition): the notify operation `by`, or a data write (`None`).
            WaitReleased wait_released(core: CoreId, op: OpId, cells: (SignalCells<'_>, Cond), at: SimTime, by: Option<OpId>);

            /// `core` polled `cells` for their condition once at `at` (`test`, the operation
            /// `op`); `holds` is the answer.
            TestPolled test_polled(core: CoreId, op: OpId, cells: (SignalCells<'_>, Cond), holds: bool, at: SimTime);

            /// The cells of a self-clearing signal, which must read zero when the run ends.
            ExpectClear expect_clear(cells: SignalCells<'_>);

            // ---- SDMA -------------------------------------------------------------------

            /// `core` posts the SDMA transfer `ids.0` (the operation `ids.1`): a get from, or
            /// a put to, rank `peer` (`None` for a transfer of no descriptor), of `bytes` in
            /// all.
            SdmaPosted sdma_posted(core: CoreId, ids: (SdmaId, OpId), get: bool, peer: Option<usize>, bytes: u64);

            /// A descriptor of transfer `ids.0` reads `places.0` now and issues the write
            /// `ids.1` to `places.1`.
            SdmaMoved sdma_moved(ids: (SdmaId, WriteId), places: (MemRegion<'_>, MemRegion<'_>), atomic: bool, at: OpAt);

            /// `core` observed transfer `id` complete (`wait_async`, or a `test_async` that
            /// answered true); `retired` when the handle is done with (`wait_async`).
            SdmaCompleted sdma_completed(core: CoreId, id: SdmaId, retired: bool);

            // ---- the fabric -------------------------------------------------------------

            /// A network resource was busy with one packet (only if [`Observe::wants_links`]).
            LinkBusy link_busy(busy: &LinkBusy);
        }
    };
}
pub(crate) use for_each_fact;

/// The [`Observe`] trait's fact methods, each a no-op unless implemented.
macro_rules! observe_methods {
    ($($(#[$doc:meta])* $variant:ident $method:ident($($arg:ident: $ty:ty),*);)*) => {
        $(
            $(#[$doc])*
            fn $method(&mut self, $($arg: $ty),*) {}
        )*
    };
}

/// What watches a run: one method per kind of fact, each a no-op unless implemented. The
/// scheduler calls them in the order it applies events (a total order, so the same program
/// and config always give the same facts in the same order), on the thread that runs the
/// scheduler; an observer must therefore be `Send` to be attached. A run split into
/// partitions on threads (`RunOptions::partitions`) tells its observers the same facts in the
/// same order once it has ended, from what its partitions recorded; over processes it refuses
/// them.
///
/// Ranks are world ranks; a core is named by a [`CoreId`]. A core's blocking operation
/// starts with [`Observe::op_started`] and ends when the core is [`Observe::resumed`]; an
/// operation whose extent is known at once (a posted store, notify or SDMA transfer, whose
/// span is the core's issue cost; local work; an asynchronous load, from issue to arrival) is
/// reported by [`Observe::op_span`]. Memory and signal facts follow.
#[allow(unused_variables)]
pub trait Observe {
    /// Whether this observer wants [`Observe::link_busy`] facts. The scheduler collects them
    /// (one per packet and resource it crossed) only when some observer asks; asked once per
    /// run, when the run starts.
    fn wants_links(&self) -> bool {
        false
    }

    /// A run of `ranks` chips with `cores` cores each (AIV then AIC) starts.
    fn run_started(&mut self, ranks: usize, cores: usize) {}

    /// The run ended at `end` (the time of its last event), finished or not.
    fn run_ended(&mut self, end: SimTime) {}

    for_each_fact!(observe_methods);
}

/// One core of the machine: its rank and its index on the chip (AIV cores first, then AIC).
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct CoreId {
    /// `rank * cores + core`: the scheduler's actor.
    pub(crate) actor: usize,
    /// Cores per chip.
    pub(crate) cores: usize,
    /// `actor / cores`, worked out once (observers ask for it on most facts).
    pub(crate) rank: usize,
}

impl CoreId {
    /// Actor `actor` of a machine of `cores` cores per chip.
    pub(crate) fn new(actor: usize, cores: usize) -> CoreId {
        CoreId { actor, cores, rank: actor / cores.max(1) }
    }

    /// The world rank of the core's chip.
    pub fn rank(self) -> usize {
        self.rank
    }

    /// The core's index on its chip.
    pub fn core(self) -> usize {
        self.actor - self.rank * self.cores
    }

    /// The core's index in the machine (`rank * cores + core`).
    pub fn index(self) -> usize {
        self.actor
    }
}

impl fmt::Debug for CoreId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rank {} core {}", self.rank(), self.core())
    }
}

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
        pub struct $name(NonZeroU64);

        impl $name {
            /// The id's number (1, 2, ... in issue order within a run).
            pub fn get(self) -> u64 {
                self.0.get()
            }

            /// The id numbered `n` (none for 0), as [`Self::get`] gave it: how an id
            /// travels between the partitions of a split run.
            pub(crate) fn from_raw(n: u64) -> Option<Self> {
                NonZeroU64::new(n).map(Self)
            }
        }
    };
}

id_type!(
    /// An operation of a core: the id of its span in a traced run's timeline
    /// ([`crate::results::trace::OpSpan::id`]).
    OpId
);
id_type!(
    /// A write or notify in flight (data writes, SDMA descriptors' writes and notifies share
    /// one sequence).
    WriteId
);
id_type!(
    /// An SDMA transfer.
    SdmaId
);

/// The next id of each kind in a run.
#[derive(Debug)]
pub(crate) struct Ids {
    op: NonZeroU64,
    write: NonZeroU64,
    sdma: NonZeroU64,
}

impl Default for Ids {
    fn default() -> Ids {
        Ids { op: NonZeroU64::MIN, write: NonZeroU64::MIN, sdma: NonZeroU64::MIN }
    }
}

impl Ids {
    /// The ids of partition `part` of a split run: numbered from `part << 40`, so ids from
    /// different partitions never meet (the merge numbers them again). Partition 0's, and a
    /// whole run's, start at 1.
    pub(crate) fn of_partition(part: usize) -> Ids {
        let base = NonZeroU64::new(((part as u64) << 40) | 1).unwrap_or(NonZeroU64::MIN);
        Ids { op: base, write: base, sdma: base }
    }

    pub(crate) fn op(&mut self) -> OpId {
        let id = self.op;
        self.op = id.saturating_add(1);
        OpId(id)
    }

    pub(crate) fn write(&mut self) -> WriteId {
        let id = self.write;
        self.write = id.saturating_add(1);
        WriteId(id)
    }

    pub(crate) fn sdma(&mut self) -> SdmaId {
        let id = self.sdma;
        self.sdma = id.saturating_add(1);
        SdmaId(id)
    }
}

/// A block starting on a core.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct BlockStart<'a> {
    /// The core it runs on.
    pub core: CoreId,
    /// Its task's index in the dispatch.
    pub task: usize,
    /// Its task's name.
    pub name: &'a Arc<str>,
    /// The block's index within its task.
    pub block: usize,
    /// Which lane of the block this core runs, of `lanes` (0 of 1 unless the task has lanes).
    pub lane: usize,
    /// Lanes (cores) per block of the task.
    pub lanes: usize,
    /// The chip's active dispatch: its name and instance number.
    pub dispatch: Option<(&'a Arc<str>, usize)>,
}

/// An operation of a core.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct OpInfo {
    /// Its id (its span's in a traced run).
    pub id: OpId,
    /// The core that issued it.
    pub core: CoreId,
    /// `load`, `remote_store`, `put`, `notify`, `wait`, ... as the program API spells it, or
    /// the name of local work (`compute`, `vector`, ...).
    pub name: &'static str,
    /// When it was issued.
    pub start: SimTime,
    /// Payload bytes it moves (0 for signals and compute).
    pub bytes: u64,
    /// The rank on the other side, for a remote operation.
    pub peer: Option<usize>,
}

/// One access of a core's operation: what it is, when it was applied, and where in the
/// kernel's source it was called.
#[derive(Copy, Clone, Debug)]
pub struct OpAt {
    pub(crate) op: OpKind,
    pub(crate) time: SimTime,
    pub(crate) caller: Option<CallSite>,
}

impl OpAt {
    /// The operation's name (`load`, `put`, `notify`, ...).
    pub fn name(&self) -> &'static str {
        self.op.name()
    }

    /// When the access was applied.
    pub fn time(&self) -> SimTime {
        self.time
    }

    /// The kernel's source location of the call, when known.
    pub fn location(&self) -> Option<&'static Location<'static>> {
        self.caller.and_then(|s| s.location())
    }

    /// An access of `op` at `time`, called at `caller`.
    pub(crate) fn new(op: OpKind, time: SimTime, caller: Caller) -> OpAt {
        OpAt { op, time, caller: caller.map(CallSite::from) }
    }
}

/// A region of simulated memory an access touches: byte runs of one buffer on one rank.
#[derive(Copy, Clone)]
pub struct MemRegion<'a>(pub(crate) &'a Place);

impl<'a> MemRegion<'a> {
    /// The rank whose memory it is.
    pub fn rank(&self) -> usize {
        self.0.chip()
    }

    /// Whether it is in a comm domain's window (else in a GM buffer).
    pub fn in_window(&self) -> bool {
        matches!(self.0.mem, MemKey::Win { .. })
    }

    /// The name of the buffer.
    pub fn buffer(&self) -> &'a str {
        &self.0.tensor.0.name
    }

    /// The tensor (or view) the access named.
    pub fn tensor(&self) -> &'a Tensor {
        &self.0.tensor
    }

    /// The `(byte offset, length)` runs touched, offsets in the rank's memory (the window, or
    /// the GM buffer), in order.
    pub fn runs(&self) -> &'a [(usize, usize)] {
        &self.0.region.runs
    }

    /// Bytes touched.
    pub fn bytes(&self) -> usize {
        self.0.region.bytes()
    }
}

impl fmt::Debug for MemRegion<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` on rank {} {:?}", self.buffer(), self.rank(), self.runs())
    }
}

/// One INT32 signal cell.
#[derive(Copy, Clone)]
pub struct SignalCell<'a>(pub(crate) &'a CellRef);

impl<'a> SignalCell<'a> {
    /// The rank that holds the cell.
    pub fn rank(&self) -> usize {
        self.0.chip()
    }

    /// The name of its signal buffer.
    pub fn buffer(&self) -> &'a str {
        &self.0.buffer
    }

    /// Its byte offset in the rank's memory.
    pub fn offset(&self) -> usize {
        self.0.offset
    }

    /// Its coordinates in the signal tensor (the cell's index).
    pub fn coords(&self) -> &'a [usize] {
        &self.0.coords
    }
}

impl fmt::Debug for SignalCell<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}{:?}` on rank {}", self.buffer(), self.coords(), self.rank())
    }
}

/// The cells one wait, test or `expect_clear` names, in row-major order.
#[derive(Copy, Clone)]
pub struct SignalCells<'a>(pub(crate) &'a [CellRef]);

impl<'a> SignalCells<'a> {
    /// How many cells.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether it names no cell.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The cells, in order.
    pub fn iter(&self) -> impl Iterator<Item = SignalCell<'a>> + 'a {
        self.0.iter().map(SignalCell)
    }
}

impl fmt::Debug for SignalCells<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// The `Eq` waits blocked on a cell when a notify lands, computed only when asked.
#[derive(Copy, Clone)]
pub struct EqWaiters<'a> {
    pub(crate) list: EqList<'a>,
    pub(crate) cores: usize,
}

/// Where the `Eq` waits of a landing notify come from: the engine, asked only when an
/// observer wants them, or a split run's recording, which kept them.
#[derive(Copy, Clone)]
pub(crate) enum EqList<'a> {
    Ask(&'a dyn Fn() -> Vec<(i32, usize)>),
    Known(&'a [(i32, usize)]),
}

impl EqWaiters<'_> {
    /// Each blocked `Eq` wait on the cell: the value it expects and the waiting core.
    pub fn get(&self) -> Vec<(i32, CoreId)> {
        self.raw().into_iter().map(|(v, actor)| (v, CoreId::new(actor, self.cores))).collect()
    }

    /// Each blocked `Eq` wait on the cell: the value it expects and the waiting actor.
    pub(crate) fn raw(&self) -> Vec<(i32, usize)> {
        match self.list {
            EqList::Ask(list) => list(),
            EqList::Known(list) => list.to_vec(),
        }
    }
}

impl fmt::Debug for EqWaiters<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EqWaiters")
    }
}
