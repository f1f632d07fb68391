//! What a run leaves behind: [`RunReport`].

use crate::base::time::{SimDuration, SimTime};
use crate::results::stats::{DispatchRecord, EngineStats, HostStats, Traffic};
use crate::results::trace::Trace;
use crate::sim::check::Finding;

/// What one run did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunReport {
    /// When the last dispatch ended.
    pub end: SimTime,
    /// Every dispatch, in completion order.
    pub dispatches: Vec<DispatchRecord>,
    /// The scheduler's work counters (deterministic).
    pub stats: EngineStats,
    /// How the host ran it (thread hand-offs; not deterministic).
    pub host: HostStats,
    /// What each chip (world rank) moved.
    pub traffic: Vec<Traffic>,
    /// Warnings raised while the run was set up (e.g. a builtin that silently does nothing).
    pub warnings: Vec<String>,
    /// The timeline, when [`RunOptions::trace`](crate::sim::options::RunOptions::trace) was on.
    pub trace: Option<Trace>,
    /// What the protocol checker found, when [`RunOptions::check`](crate::sim::options::RunOptions::check) was on.
    pub findings: Vec<Finding>,
}

impl RunReport {
    /// Dispatches of one chip, in order.
    pub fn of_chip(&self, chip: usize) -> impl Iterator<Item = &DispatchRecord> {
        self.dispatches.iter().filter(move |d| d.chip == chip)
    }

    /// Per call — the `i`-th dispatch of every chip that ran one — the slowest chip's device
    /// wall ([`DispatchRecord::device_wall`]): the time PyPTO's benchmark and `ranksim sweep`
    /// report for that call.
    pub fn device_time_per_call(&self) -> Vec<SimDuration> {
        let calls = self.dispatches.iter().map(|d| d.index + 1).max().unwrap_or(0);
        let mut per_call = vec![SimDuration::ZERO; calls];
        for d in &self.dispatches {
            per_call[d.index] = per_call[d.index].max(d.device_wall());
        }
        per_call
    }

    /// The device time of the run: [`RunReport::device_time_per_call`] summed over the calls.
    /// For a run of one collective call it is that call's time as `ranksim sweep` prints it.
    pub fn device_time(&self) -> SimDuration {
        self.device_time_per_call().into_iter().fold(SimDuration::ZERO, |a, b| a + b)
    }
}
