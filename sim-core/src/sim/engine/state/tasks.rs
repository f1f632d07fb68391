//! Each chip's task-scheduling state: its queue of dispatches, the active dispatch's tasks
//! with their dependencies and blocks left, and which cores are busy. `sched.rs` applies the
//! engine's events to it.

use crate::api::program::{Dispatch, Task};
use crate::api::request::TaskCtx;
use crate::base::time::SimTime;
use crate::results::stats::TaskRecord;
use std::collections::VecDeque;
use std::sync::Arc;

/// At most this many conditions per deferred task (PyPTO `MAX_COMPLETIONS_PER_TASK`).
pub(crate) const MAX_CONDS_PER_TASK: usize = 64;
/// At most this many concurrently deferred tasks per chip (PyPTO `MAX_ASYNC_WAITS`).
pub(crate) const MAX_DEFERRED_TASKS: usize = 64;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum TaskState {
    /// Waiting for dependencies.
    Waiting,
    /// Dependencies done; waiting for free cores.
    Ready,
    /// Blocks placed.
    Running,
    Done,
}

pub(crate) struct TaskRun {
    pub(crate) task: Task,
    pub(crate) ctx: Arc<TaskCtx>,
    pub(crate) state: TaskState,
    pub(in crate::sim::engine) deps_left: usize,
    pub(in crate::sim::engine) dependents: Vec<usize>,
    pub(in crate::sim::engine) blocks_left: usize,
    pub(crate) conds_total: usize,
    pub(crate) conds_left: usize,
    pub(in crate::sim::engine) start: SimTime,
}

pub(crate) struct Active {
    pub(crate) index: usize,
    pub(crate) name: Arc<str>,
    pub(in crate::sim::engine) start: SimTime,
    pub(crate) tasks: Vec<TaskRun>,
    pub(in crate::sim::engine) left: usize,
    /// Completed tasks, in completion order.
    pub(in crate::sim::engine) done: Vec<TaskRecord>,
}

/// Scheduling state of one chip.
pub(crate) struct ChipSched {
    pub(in crate::sim::engine) queue: VecDeque<Dispatch>,
    pub(crate) active: Option<Active>,
    /// `busy[core]`: a block occupies the core.
    pub(crate) busy: Vec<bool>,
    pub(crate) deferred_tasks: usize,
    pub(in crate::sim::engine) started: usize,
}

impl ChipSched {
    pub(crate) fn new(queue: Vec<Dispatch>, cores: usize) -> ChipSched {
        ChipSched { queue: queue.into(), active: None, busy: vec![false; cores], deferred_tasks: 0, started: 0 }
    }

    pub(crate) fn has_queued(&self) -> bool {
        !self.queue.is_empty()
    }

    pub(crate) fn is_idle(&self) -> bool {
        self.queue.is_empty() && self.active.is_none()
    }

    pub(crate) fn queued(&self) -> impl Iterator<Item = &Dispatch> {
        self.queue.iter()
    }
}
