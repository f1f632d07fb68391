//! What a run leaves behind: when each dispatch and task ran, and how much work the scheduler
//! did.

use crate::time::{SimDuration, SimTime};

/// One task of a dispatch: when its blocks were placed and when it completed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskRecord {
    pub name: String,
    pub blocks: usize,
    /// When its kernels started.
    pub start: SimTime,
    /// When its last block ended (or its last deferred condition held).
    pub end: SimTime,
}

/// One dispatch on one chip.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DispatchRecord {
    /// World rank of the chip.
    pub chip: usize,
    /// Position in the chip's dispatch sequence within this run.
    pub index: usize,
    pub name: String,
    pub start: SimTime,
    pub end: SimTime,
    /// Tasks in completion order.
    pub tasks: Vec<TaskRecord>,
}

impl DispatchRecord {
    /// Device wall time: first start to last end.
    pub fn device_wall(&self) -> SimDuration {
        self.end.saturating_since(self.start)
    }
}

/// Counters of the scheduler's own work. They are deterministic: the same program and config
/// always give the same counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineStats {
    /// Requests taken from actors.
    pub requests: u64,
    /// Events applied (requests and the events they caused).
    pub events: u64,
    /// Fabric transfers timed.
    pub transfers: u64,
}

/// Counters of how the host ran the simulation; they depend on OS scheduling and are not
/// part of any simulated result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostStats {
    /// Blocking requests whose sender had to park its thread until another thread answered.
    pub handoffs: u64,
    /// Host threads started for simulated cores.
    pub threads: u64,
}
