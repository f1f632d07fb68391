//! What a run leaves behind: when each dispatch and task ran, and how much work the scheduler
//! did.

use crate::base::time::{SimDuration, SimTime};

/// One task of a dispatch: when its blocks were placed and when it completed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TaskRecord {
    /// Name of the task.
    pub name: String,
    /// Blocks it launched.
    pub blocks: usize,
    /// When its kernels started.
    pub start: SimTime,
    /// When its last block ended (or its last deferred condition held).
    pub end: SimTime,
}

/// One dispatch on one chip.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DispatchRecord {
    /// World rank of the chip.
    pub chip: usize,
    /// Position in the chip's dispatch sequence within this run.
    pub index: usize,
    /// Name of the dispatch.
    pub name: String,
    /// When the dispatch was launched on the chip.
    pub start: SimTime,
    /// When its last task completed.
    pub end: SimTime,
    /// Tasks in completion order.
    pub tasks: Vec<TaskRecord>,
}

impl DispatchRecord {
    /// When the first block of the dispatch started running (its device-wall origin).
    pub fn first_start(&self) -> SimTime {
        self.tasks.iter().map(|t| t.start).min().unwrap_or(self.start)
    }

    /// Device wall time: the first block's start to the last task's end (PyPTO's
    /// `device_wall`, without the launch gap before the first block).
    pub fn device_wall(&self) -> SimDuration {
        self.end.saturating_since(self.first_start())
    }
}

/// Counters of the scheduler's own work. They are deterministic: the same program and config
/// always give the same counts.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EngineStats {
    /// Requests taken from actors.
    pub requests: u64,
    /// Events applied (requests and the events they caused).
    pub events: u64,
    /// Packets moved through the network (every flow sends at least one).
    pub packets: u64,
}

/// Counters of how the host ran the simulation; they depend on OS scheduling and are not
/// part of any simulated result.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HostStats {
    /// Blocking requests whose sender had to park its thread until another thread answered.
    pub handoffs: u64,
    /// Host threads started for simulated cores.
    pub threads: u64,
    /// Blocks run as coroutines.
    pub coroutines: u64,
    /// Coroutine stacks mapped (the most live at once: the rest were reused from the pool).
    pub stacks: u64,
}

/// What one chip moved during a run. "Remote" counts only transfers to or from another chip;
/// a chip addressing its own window is local.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Traffic {
    /// Bytes this chip read from peers (remote_load, get chunks).
    pub remote_read_bytes: u64,
    /// Bytes this chip wrote to peers (remote_store, put chunks).
    pub remote_write_bytes: u64,
    /// Bytes read from this chip's own GM and window.
    pub local_read_bytes: u64,
    /// Bytes written to this chip's own GM and window.
    pub local_write_bytes: u64,
    /// Notifies sent to another chip's cells.
    pub remote_notifies: u64,
    /// Notifies to this chip's own cells.
    pub local_notifies: u64,
    /// Blocking waits issued.
    pub waits: u64,
}

impl Traffic {
    /// Counts a read of `bytes`, remote or local.
    pub(crate) fn read(&mut self, remote: bool, bytes: u64) {
        if remote {
            self.remote_read_bytes += bytes;
        } else {
            self.local_read_bytes += bytes;
        }
    }

    /// Counts a write of `bytes`, remote or local.
    pub(crate) fn write(&mut self, remote: bool, bytes: u64) {
        if remote {
            self.remote_write_bytes += bytes;
        } else {
            self.local_write_bytes += bytes;
        }
    }
}
