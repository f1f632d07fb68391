//! How runs are executed: the options the host sets on a [`World`](crate::World) and the engine
//! reads. They sit below both, so the scheduler takes them without reaching up into the host.

use crate::base::time::{SimDuration, SimTime};
use crate::sim::fibers::Fibers;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Seeded perturbation of a run's timing: every transfer and memory access completes up to
/// `op` later, every dispatch starts up to `dispatch` later, drawn from one RNG seeded with
/// `seed`. The same seed gives the same run.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Jitter {
    /// Seed of the delays: each chip draws from a stream of its own made from it and the chip.
    pub seed: u64,
    /// Largest extra delay of one transfer or memory access.
    pub op: SimDuration,
    /// Largest extra delay of one dispatch start.
    pub dispatch: SimDuration,
}

/// How runs are executed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Record every operation, notify-to-wait flow and link occupancy (for Chrome traces).
    pub trace: bool,
    /// Seeded timing jitter (off by default).
    pub jitter: Option<Jitter>,
    /// Run the protocol checker (races, stale reads, signal misuse); findings land in
    /// [`RunReport::findings`](crate::RunReport::findings).
    pub check: bool,
    /// Let notifies overtake payload as on a relaxed fabric, whatever the config says (to find
    /// missing fences).
    pub relaxed_ordering: bool,
    /// Where the engine publishes how far the run has got, for a host that shows progress
    /// while it runs (`None`: nothing is published).
    pub progress: Option<Progress>,
    /// How synchronous kernels ([`Task::new`](crate::Task::new)) run: as coroutines on the
    /// scheduler's thread (the default) or on one OS thread per simulated core. Results and
    /// times are the same either way.
    pub kernel_exec: KernelExec,
    /// With coroutine kernels ([`KernelExec::Coroutines`]), run each synchronous kernel's
    /// block as a fiber of the host's instead of a coroutine of sim-core's (`None`: sim-core's
    /// own coroutines). For hosts whose kernels cannot run on a foreign stack (Python's).
    pub fibers: Option<Fibers>,
    /// Split each run into this many partitions of whole islands (chips joined without a
    /// switch), each simulated by an engine of its own on a host thread, advancing in windows
    /// of the lookahead (the least latency into a switch). Results are the same as one
    /// engine's. 0 or 1: one engine. Needs coroutine kernels, and no trace, checker or
    /// observer.
    pub partitions: usize,
    /// Split over the processes of this process's group (`split::join_processes`, MPI's ranks
    /// through the `ranksim` library): each runs its own partition, and `partitions` is
    /// their number.
    pub processes: bool,
    /// End the run with [`SimError::Budget`](crate::SimError::Budget) when an event is due
    /// after this simulated time ([`RunOptions::DEFAULT_MAX_SIM_TIME`] by default).
    pub max_sim_time: SimTime,
    /// End the run with [`SimError::Budget`](crate::SimError::Budget) once it has applied
    /// this many events ([`RunOptions::DEFAULT_MAX_EVENTS`] by default).
    pub max_events: u64,
    /// End the run with [`SimError::Livelock`](crate::SimError::Livelock) once every running
    /// core has polled this many times with nothing else happening in the machine (0: never).
    /// A poll loop that gives up after more polls than this is taken for a livelock.
    pub livelock_polls: u64,
    /// Set from outside (a signal handler, Python's interrupt check) to end the run between
    /// two events with [`SimError::Interrupted`](crate::SimError::Interrupted) (`None`: never).
    pub interrupt: Option<Interrupt>,
    /// Refuse a run, before it starts, whose memory estimate
    /// ([`World::run_scale`](crate::World::run_scale)) exceeds this many bytes, with
    /// [`SimError::Memory`](crate::SimError::Memory) (`None`: no limit). sim-core reads no
    /// system figure: the host sets it (the `ranksim` library from the memory the machine has
    /// available, or `--max-memory`).
    pub max_memory: Option<u64>,
}

impl RunOptions {
    /// The default simulated-time limit: one simulated hour, far beyond any correct program
    /// in the repository (the longest sweeps simulate well under a second; a sweep at the
    /// largest configured costs, 1 s per operation, about a minute).
    pub const DEFAULT_MAX_SIM_TIME: SimTime = SimTime::from_ps(3_600_000_000_000_000);
    /// The default event limit: 2^32, about a quarter of an hour of host time at the engine's
    /// speed, where the largest runs in the repository apply a few hundred million.
    pub const DEFAULT_MAX_EVENTS: u64 = 1 << 32;
    /// The default polls each spinning core makes, with nothing else happening, before the
    /// run is ended as a livelock.
    pub const DEFAULT_LIVELOCK_POLLS: u64 = 1000;
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            trace: false,
            jitter: None,
            check: false,
            relaxed_ordering: false,
            progress: None,
            kernel_exec: KernelExec::default(),
            fibers: None,
            partitions: 0,
            processes: false,
            max_sim_time: RunOptions::DEFAULT_MAX_SIM_TIME,
            max_events: RunOptions::DEFAULT_MAX_EVENTS,
            livelock_polls: RunOptions::DEFAULT_LIVELOCK_POLLS,
            interrupt: None,
            max_memory: None,
        }
    }
}

/// A flag the host raises to stop runs: engines read it between events (every
/// [`Progress::EVERY`] events), never block on it, and end with
/// [`SimError::Interrupted`](crate::SimError::Interrupted). Clones share one flag.
#[derive(Clone, Debug, Default)]
pub struct Interrupt(Arc<AtomicBool>);

impl Interrupt {
    /// A flag not raised.
    pub fn new() -> Interrupt {
        Interrupt::default()
    }

    /// A handle on `flag` (a `static` a signal handler sets, say).
    pub fn from_flag(flag: Arc<AtomicBool>) -> Interrupt {
        Interrupt(flag)
    }

    /// Asks every run watching this flag to stop.
    pub fn raise(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether the flag is raised.
    pub fn is_raised(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Lowers the flag (for the next run).
    pub fn clear(&self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

/// Two handles are equal when they share one flag.
impl PartialEq for Interrupt {
    fn eq(&self, o: &Interrupt) -> bool {
        Arc::ptr_eq(&self.0, &o.0)
    }
}

impl Eq for Interrupt {}

/// How the blocks of a synchronous kernel (a `|core| { .. }` closure) are run. Async kernels
/// are polled by the scheduler either way.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum KernelExec {
    /// Each running block is a stackful coroutine switched on the scheduler's own thread: a
    /// blocking operation suspends it until its answer, with no OS thread and no lock. A block
    /// gets a stack when it starts and gives it back to a pool when it ends. Overflowing the
    /// stack (a guard page below it) ends the run with
    /// [`SimError::KernelStackOverflow`](crate::SimError::KernelStackOverflow) on Linux
    /// x86-64; elsewhere the process dies of SIGSEGV. A kernel must not use its core from
    /// another host thread (that panics); use [`KernelExec::Threads`] for kernels that block
    /// on host code.
    Coroutines {
        /// Usable bytes of each block's stack (rounded up to pages; only the pages a kernel
        /// touches use memory).
        stack_bytes: usize,
    },
    /// One OS thread per simulated core, handing off to the scheduler under a lock at every
    /// blocking operation: slower, but a kernel may block on host code (channels, locks,
    /// threads it spawns) and gets a 2 MiB thread stack.
    Threads,
}

impl KernelExec {
    /// The default coroutine stack: 1 MiB, of which a kernel typically touches a few pages.
    pub const DEFAULT_STACK_BYTES: usize = 1 << 20;
}

impl Default for KernelExec {
    fn default() -> KernelExec {
        KernelExec::Coroutines { stack_bytes: KernelExec::DEFAULT_STACK_BYTES }
    }
}

/// How far runs have got, shared between the engines that publish it and a host thread that
/// shows it. The engine publishes every [`Progress::EVERY`] events, so watching costs nothing
/// measurable; what is published never affects the run.
#[derive(Clone, Debug, Default)]
pub struct Progress(Arc<Counters>);

#[derive(Debug, Default)]
struct Counters {
    events: AtomicU64,
    now_ps: AtomicU64,
}

impl Progress {
    /// Events between two publications of one engine.
    pub const EVERY: u64 = 1 << 14;

    /// A fresh counter: no event, time zero.
    pub fn new() -> Progress {
        Progress::default()
    }

    /// Engine events applied so far by every run sharing this counter (to within
    /// [`Progress::EVERY`] per run).
    pub fn events(&self) -> u64 {
        self.0.events.load(Ordering::Relaxed)
    }

    /// The simulated time the latest publication reached.
    pub fn now(&self) -> SimTime {
        SimTime::from_ps(self.0.now_ps.load(Ordering::Relaxed))
    }

    /// Adds `events` applied events and records the run's simulated time `now`.
    pub(crate) fn publish(&self, events: u64, now: SimTime) {
        self.0.events.fetch_add(events, Ordering::Relaxed);
        self.0.now_ps.store(now.as_ps(), Ordering::Relaxed);
    }
}

/// Two handles are equal when they share one counter.
impl PartialEq for Progress {
    fn eq(&self, o: &Progress) -> bool {
        Arc::ptr_eq(&self.0, &o.0)
    }
}

impl Eq for Progress {}
