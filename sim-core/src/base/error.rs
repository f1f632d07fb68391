//! The one error type of sim-core. Every message names the rank, core, operation, buffer and
//! values involved, and says what to change.

use crate::base::budget::BudgetReport;
use crate::base::deadlock::DeadlockReport;
use crate::base::livelock::LivelockReport;
use crate::base::memory::MemoryReport;
use crate::base::time::SimTime;
use thiserror::Error;

/// Where in the simulated machine an operation ran: used to prefix error messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    /// Chip (world rank) the kernel ran on.
    pub chip: usize,
    /// Block index of the kernel within its task.
    pub block: usize,
    /// Name of the task or dispatch.
    pub task: String,
}

impl std::fmt::Display for Site {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "rank {} block {} (task `{}`)", self.chip, self.block, self.task)
    }
}

/// Everything that can go wrong in a simulation.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum SimError {
    /// A kernel passed an invalid argument to a program-API operation.
    #[error("{site}: {op}: {msg}")]
    BadOp {
        /// Where the kernel ran.
        site: Site,
        /// The operation called.
        op: &'static str,
        /// What was wrong and what to change.
        msg: String,
    },

    /// A host-side call (allocation, staging, dispatch) was invalid.
    #[error("{0}")]
    Invalid(String),

    /// Every live core is blocked and nothing can make progress.
    #[error("{0}")]
    Deadlock(Box<DeadlockReport>),

    /// Every running core polls cells that nothing in flight can change: the run could only
    /// spin.
    #[error("{0}")]
    Livelock(Box<LivelockReport>),

    /// The run reached a budget ([`RunOptions::max_sim_time`](crate::RunOptions::max_sim_time)
    /// or [`RunOptions::max_events`](crate::RunOptions::max_events)).
    #[error("{0}")]
    Budget(Box<BudgetReport>),

    /// The host asked the run to stop ([`RunOptions::interrupt`](crate::RunOptions::interrupt),
    /// Ctrl-C).
    #[error("interrupted at simulated time {time} after {events} events")]
    Interrupted {
        /// Simulated time reached.
        time: SimTime,
        /// Events applied.
        events: u64,
    },

    /// The run's memory estimate exceeds what it may use
    /// ([`RunOptions::max_memory`](crate::RunOptions::max_memory)): refused before it started.
    #[error("{0}")]
    Memory(Box<MemoryReport>),

    /// A kernel panicked; the run was aborted.
    #[error("{site}: kernel panicked at {time}: {msg}")]
    KernelPanic {
        /// Where the kernel ran.
        site: Site,
        /// The kernel's simulated time when it panicked.
        time: SimTime,
        /// The panic message.
        msg: String,
    },

    /// A kernel run as a coroutine overflowed its stack; the run was aborted (the block's
    /// locals are leaked, not dropped).
    #[error(
        "{site}: kernel overflowed its {stack_bytes}-byte coroutine stack; raise the stack with RunOptions::kernel_exec = KernelExec::Coroutines {{ stack_bytes }} or run it with KernelExec::Threads"
    )]
    KernelStackOverflow {
        /// Where the kernel ran.
        site: Site,
        /// The stack size it overflowed.
        stack_bytes: usize,
    },

    /// A checked run the simulator warned about (a builtin that returned at once) checked
    /// nothing, so the checker gives no report rather than a clean one.
    #[error("the run was cut short, so nothing was checked: {}", warnings.join("; "))]
    CutShort {
        /// The simulator's warnings of that run.
        warnings: Vec<String>,
    },

    /// Returned to kernels still running when another part of the run failed.
    #[error("the run was aborted because another kernel failed")]
    Aborted,

    /// In a run split into partitions, another partition failed; its error is the run's.
    #[error("partition {partition} of the split run failed, which ended this one")]
    PartitionFailed {
        /// The partition that failed first (the lowest-numbered, when several did at once).
        partition: usize,
    },
}

impl SimError {
    /// A host-side usage error.
    pub fn invalid(msg: impl Into<String>) -> SimError {
        SimError::Invalid(msg.into())
    }

    /// Whether this error only reports that another failure aborted the run.
    pub fn is_abort(&self) -> bool {
        matches!(self, SimError::Aborted)
    }
}

/// Shorthand for results of sim-core operations.
pub type SimResult<T> = Result<T, SimError>;
