//! The span names and fixed messages of PyPTO's benchmark statistics, which the parser, the
//! aggregation and the renderings share.

/// Depth-0 host span of one chip dispatch: its whole host wall (`host_wall_us`).
pub const HOST_SPAN: &str = "chip.run";
/// Device-clock span of the on-NPU wall (`device_wall_us`), at depth 2.
pub const DEVICE_SPAN: &str = "chip.run.runner_run.device_wall";
/// Device orchestrator window; with [`SCHED_SPAN`] it bounds the "effective" window.
pub const ORCH_SPAN: &str = "chip.run.runner_run.device_wall.orch";
/// Device scheduler window; with [`ORCH_SPAN`] it bounds the "effective" window.
pub const SCHED_SPAN: &str = "chip.run.runner_run.device_wall.sched";

/// Name prefixes of span families that carry no invocation id; PyPTO drops them before
/// grouping so they cannot forge an invocation.
pub const NON_INVOCATION_PREFIXES: [&str; 6] = ["l3.", "node.", "network1.", "network2.", "network3.", "ext."];

/// Rendered when no span tree was captured.
pub const NO_TREE_MSG: &str = "BenchmarkStats: no span tree captured (non-SIMPLER_HOST_STRACE build or *sim platform)";

/// Rendered by the mean-tree view when a slot does not identify one callable across rounds.
pub const UNSTABLE_SLOTS_MSG: &str = "BenchmarkStats: per-dispatch view unavailable — a rank's dispatch order varies \
     between rounds, so a slot does not identify one callable. The per-rank / per-round sums are unaffected.";

/// How many `(pid, slot)` cells the `Display` per-dispatch line lists before eliding the rest.
pub(super) const STR_MAX_DISPATCHES: usize = 8;
