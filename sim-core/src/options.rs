//! How runs are executed: the options the host sets on a [`World`](crate::World) and the engine
//! reads. They sit below both, so the scheduler takes them without reaching up into the host.

use crate::time::{SimDuration, SimTime};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Seeded perturbation of a run's timing: every transfer and memory access completes up to
/// `op` later, every dispatch starts up to `dispatch` later, drawn from one RNG seeded with
/// `seed`. The same seed gives the same run.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Jitter {
    /// Seed of the RNG the delays are drawn from.
    pub seed: u64,
    /// Largest extra delay of one transfer or memory access.
    pub op: SimDuration,
    /// Largest extra delay of one dispatch start.
    pub dispatch: SimDuration,
}

/// How runs are executed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
