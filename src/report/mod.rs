//! Pure formatting of `sweep` results; no simulation happens here.
//!
//! A sweep runs one collective over a range of message sizes and reports, per size, the
//! nccl-tests columns (size, count, type, redop, root, time, algbw, busbw, #wrong). This module
//! turns those numbers into text that can be diffed against real nccl-tests output:
//!
//! - [`parse_size`] / [`sweep_sizes`]: the `-b -e -f` size list;
//! - [`bus_factor`], [`algbw_gbps`], [`busbw_gbps`], [`count_for`], [`bytes_for`]: nccl-tests'
//!   bandwidth and size conventions;
//! - [`header`], [`row`], [`preamble`], [`footer`]: the text table (out-of-place half only);
//! - [`SweepJson`] / [`to_json_string`]: a JSON record of the sweep;
//! - [`plot_svg`]: a standalone two-panel SVG (time and busbw against size, log-log).

mod busbw;
mod cfmt;
mod json;
mod record;
mod sizes;
mod svg;
mod table;

pub use busbw::{CollKind, algbw_gbps, average_busbw, bus_factor, busbw_gbps, bytes_for, count_for};
pub use json::{SweepJson, to_json_string};
pub use record::{ResultRow, SeriesSummary, SweepConfig};
pub use sizes::{MAX_SWEEP_POINTS, parse_size, size_label, sweep_sizes};
pub use svg::{Series, plot_svg};
pub use table::{float_str, footer, header, preamble, row, time_str};
