//! A run's budgets and stop flag, as the event loop checks them (`limits.rs` acts on them).

use crate::base::time::SimTime;
use crate::sim::options::{Interrupt, Progress, RunOptions};

/// A run's budgets and stop flag.
pub(in crate::sim::engine) struct Limits {
    /// No event after this time is applied.
    pub(in crate::sim::engine) max_time: SimTime,
    pub(in crate::sim::engine) max_events: u64,
    /// The event count at which [`Engine::checkpoint`] runs next.
    pub(in crate::sim::engine) next_check: u64,
    pub(in crate::sim::engine) interrupt: Option<Interrupt>,
}

impl Limits {
    pub(in crate::sim::engine) fn new(o: &RunOptions) -> Limits {
        let mut l = Limits {
            max_time: o.max_sim_time,
            max_events: o.max_events,
            next_check: 0,
            interrupt: o.interrupt.clone(),
        };
        l.next_check = l.after(0);
        l
    }

    /// The next event count to look at after `events`: the next publication, or the limit.
    pub(in crate::sim::engine) fn after(&self, events: u64) -> u64 {
        (events / Progress::EVERY + 1).saturating_mul(Progress::EVERY).min(self.max_events)
    }
}
