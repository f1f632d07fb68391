//! How runs are executed: the options the host sets on a [`World`](crate::World) and the engine
//! reads. They sit below both, so the scheduler takes them without reaching up into the host.

use crate::time::SimDuration;

/// Seeded perturbation of a run's timing: every transfer and memory access completes up to
/// `op` later, every dispatch starts up to `dispatch` later, drawn from one RNG seeded with
/// `seed`. The same seed gives the same run.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Jitter {
    pub seed: u64,
    pub op: SimDuration,
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
}
