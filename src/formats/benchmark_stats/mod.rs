//! PyPTO's benchmark statistics and the `[STRACE]` v=1 trace wire format.
//!
//! PyPTO's `benchmark()` measures a program by reading the `[STRACE]` span records the runtime
//! writes for every chip dispatch, then folding them into a [`BenchmarkStats`]. ranksim emits
//! the same records for simulated dispatches, so this module holds both directions:
//!
//! - [`format_span_line`] / [`format_clock_anchor`] write records in the emitter's exact shape;
//! - [`parse_strace`] and [`group_invocations`] read them back the way PyPTO does;
//! - [`BenchmarkStats::from_l2`] / [`BenchmarkStats::from_l3`] aggregate invocations with
//!   PyPTO's rules, and the renderings ([`std::fmt::Display`], [`BenchmarkStats::format_tree`],
//!   [`BenchmarkStats::format_mean_tree`]) reproduce its text byte for byte.
//!
//! Everything here is pure: values and strings in, values and strings out. Nothing reads a
//! clock or touches a file; callers supply timestamps and decide where text goes.
//!
//! Floating-point summaries follow Python's `statistics` module (`fmean` is an exactly rounded
//! sum divided by `n`, `median` averages the two middle values, `stdev` is the sample standard
//! deviation) and `:.1f` formatting, which Rust's `{:.1}` matches (round half to even on the
//! exact binary value).

mod aggregate;
mod error;
mod mean;
mod numeric;
mod parse;
mod pytext;
mod render;
mod span;
mod stats;
mod tree;
mod write;

#[cfg(test)]
mod tests;

pub use error::BenchError;
pub use parse::{group_invocations, is_invocation_span, parse_strace};
pub use render::Spread;
pub use span::{TraceInvocation, TraceSpan};
pub use stats::{BenchmarkStats, Metric};
pub use write::{ATTRS_CAPACITY, NAME_CAPACITY, format_clock_anchor, format_span_line, hid_hex};

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
const STR_MAX_DISPATCHES: usize = 8;
