//! What the engine hands the driver: the releases of actors ([`Wake`]) and the block a core
//! runs next ([`Assignment`]), which carries the kernel's body. Only the engine and the driver
//! see these; the program API never does.

use crate::api::program::Body;
use crate::api::request::{Reply, TaskCtx};
use crate::base::time::SimTime;
use std::sync::Arc;

/// What a core thread runs next: one block of a task.
#[derive(Clone)]
pub(crate) struct Assignment {
    pub(crate) body: Body,
    pub(crate) ctx: Arc<TaskCtx>,
    pub(crate) block: usize,
    /// Which lane of the block (0 unless the task has several lanes per block).
    pub(crate) lane: usize,
}

/// A release of an actor, produced by the scheduler and delivered by the driver.
pub(crate) enum Wake {
    /// Start a block at `at`.
    Start { actor: usize, at: SimTime, assignment: Assignment },
    /// Answer a blocking request; the actor resumes at `at`.
    Reply { actor: usize, at: SimTime, reply: Reply },
    /// The run ended early; every blocked actor gets this.
    Abort { actor: usize },
}
