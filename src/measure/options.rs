//! How to measure: [`Measure`], the one options struct of every measuring function, and the
//! [`Budgets`] of its runs.

use super::host_memory::MemoryLimit;
use sim_core::{Interrupt, Jitter, Progress, RunOptions, SimTime};

/// How to measure: ranks, calls, jitter, payload, trace. The one options struct of every
/// measuring function (each says which fields it reads).
#[derive(Clone, Debug)]
pub struct Measure {
    /// Ranks taking part: the first `ranks` chips.
    pub ranks: usize,
    /// Timed calls per size (their mean is the time).
    pub iters: u32,
    /// Calls before the timed ones.
    pub warmup: u32,
    /// Seeded timing jitter (`None`: unperturbed).
    pub jitter: Option<Jitter>,
    /// Keep no payload bytes: same times, no check.
    pub timing_only: bool,
    /// Record the timeline of the run a result is read from
    /// ([`RunReport::trace`](sim_core::RunReport::trace); for
    /// [`check_program`](super::check_program), the unperturbed run's, findings as marks).
    pub trace: bool,
    /// Where the runs publish how far they have got (a sweep's progress bar); `None`: nowhere.
    pub progress: Option<Progress>,
    /// Partitions each run is split into (`RunOptions::partitions`; 1: one engine).
    pub partitions: usize,
    /// The partitions are this thread's process group's members, one each
    /// (`RunOptions::processes`, `sim_core::join_processes`).
    pub processes: bool,
    /// What ends a run that never would: simulated time, events, livelock threshold.
    pub budgets: Budgets,
    /// The host's stop flag (Ctrl-C), watched by every run (`RunOptions::interrupt`).
    pub interrupt: Option<Interrupt>,
}

/// The budgets of every run a [`Measure`] makes (`RunOptions::max_sim_time`, `max_events`,
/// `livelock_polls`); the defaults are `RunOptions`'.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budgets {
    /// No event after this simulated time.
    pub max_sim_time: SimTime,
    /// No more events than this.
    pub max_events: u64,
    /// Polls per spinning core that make a livelock (0: never).
    pub livelock_polls: u64,
    /// Refuse a run whose memory estimate ([`memory::estimate`](super::memory::estimate))
    /// exceeds this, before it starts
    /// (`None`: no limit; the command line sets what the host has available).
    pub max_memory: Option<MemoryLimit>,
}

impl Default for Budgets {
    fn default() -> Budgets {
        Budgets {
            max_sim_time: RunOptions::DEFAULT_MAX_SIM_TIME,
            max_events: RunOptions::DEFAULT_MAX_EVENTS,
            livelock_polls: RunOptions::DEFAULT_LIVELOCK_POLLS,
            max_memory: None,
        }
    }
}

impl Budgets {
    /// Sets them, and the stop flag `interrupt`, on `o`.
    pub fn apply(&self, o: &mut RunOptions, interrupt: Option<&Interrupt>) {
        o.max_sim_time = self.max_sim_time;
        o.max_events = self.max_events;
        o.livelock_polls = self.livelock_polls;
        o.max_memory = self.max_memory.map(MemoryLimit::bytes);
        o.interrupt = interrupt.cloned();
    }
}

impl Measure {
    /// One timed call on `ranks` ranks, no warmup, no jitter, checked, not traced.
    pub fn new(ranks: usize) -> Measure {
        Measure {
            ranks,
            iters: 1,
            warmup: 0,
            jitter: None,
            timing_only: false,
            trace: false,
            progress: None,
            partitions: 1,
            processes: false,
            budgets: Budgets::default(),
            interrupt: None,
        }
    }

    /// Warmup plus timed calls (at least one): the calls of a timed run.
    pub fn calls(&self) -> usize {
        (self.iters as usize).saturating_add(self.warmup as usize).max(1)
    }
}
