//! Every output format ranksim writes (and the one it reads back), in one place. Pure text:
//! numbers and records in, strings out; no simulation happens here.
//!
//! - the nccl-tests table of a sweep (`nccl_table`: [`header`], [`row`], [`preamble`],
//!   [`footer`], out-of-place half only, and the dtype names [`nccl_type`]), with nccl-tests'
//!   conventions: the `-b -e -f` size list ([`parse_size`], [`sweep_sizes`]) and bandwidths
//!   and sizes ([`bus_factor`], [`algbw_gbps`], [`busbw_gbps`], [`count_for`], [`bytes_for`]);
//! - a sweep's JSON record ([`SweepJson`], [`to_json_string`]) and its two-panel log-log SVG
//!   ([`plot_svg`]: time and busbw against size);
//! - PyPTO's `[STRACE]` v=1 spans of simulated dispatches ([`strace`]: [`StraceLog`]) and
//!   PyPTO's `BenchmarkStats` over them ([`benchmark_stats`]: the record writer and parser,
//!   the L2 / L3 aggregation and the byte-exact renderings);
//! - a traced run's Chrome trace-event JSON for Perfetto ([`chrome`]: [`to_chrome_json`]).

pub mod benchmark_stats;
mod busbw;
mod cfmt;
pub mod chrome;
mod json;
mod nccl_table;
mod record;
mod sizes;
pub mod strace;
mod svg;

pub use busbw::{CollKind, algbw_gbps, average_busbw, bus_factor, busbw_gbps, bytes_for, count_for};
pub use chrome::to_chrome_json;
pub use json::{SweepJson, to_json_string};
pub use nccl_table::{Verdict, float_str, footer, header, nccl_type, preamble, row, time_str};
pub use record::{Mismatch, ResultRow, SeriesSummary, SweepConfig};
pub use sizes::{MAX_SWEEP_POINTS, parse_size, size_label, sweep_sizes};
pub use strace::StraceLog;
pub use svg::{Series, plot_svg};
