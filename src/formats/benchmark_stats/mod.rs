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
mod names;
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
pub use names::{
    DEVICE_SPAN, HOST_SPAN, NO_TREE_MSG, NON_INVOCATION_PREFIXES, ORCH_SPAN, SCHED_SPAN, UNSTABLE_SLOTS_MSG,
};
pub use parse::{group_invocations, is_invocation_span, parse_strace};
pub use render::Spread;
pub use span::{TraceInvocation, TraceSpan};
pub use stats::{BenchmarkStats, Metric};
pub use write::{ATTRS_CAPACITY, NAME_CAPACITY, format_clock_anchor, format_span_line, hid_hex};
