//! The data of a sweep, shared by the text table, the JSON and the plot: what was run
//! ([`SweepConfig`]) and one measured size ([`ResultRow`]).

use serde::{Deserialize, Serialize};

/// What a sweep ran. Names are the CLI spellings, kept as strings so reports stay decoupled
/// from the simulator's types.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepConfig {
    /// Machine preset or config name.
    pub machine: String,
    /// Number of ranks taking part.
    pub ranks: usize,
    /// Collective name (`allreduce`, `all_to_all`, ...).
    pub collective: String,
    /// Algorithm (`mesh`, `ring`, `two-shot`, `aiv-mesh`, `sdma-mesh`).
    pub mode: String,
    /// Lowering (`host`, `incore`).
    pub path: String,
    /// AIV blocks per rank the collective ran on (`--core-num` where it applies, else 1).
    #[serde(default = "one")]
    pub core_num: usize,
    /// Element type as printed in the `type` column (`float`, `half`, ...).
    pub dtype: String,
    /// Reduction operator, `none` for non-reducing collectives.
    pub redop: String,
    /// Root rank, -1 for unrooted collectives.
    pub root: i64,
    /// Smallest requested size in bytes (`-b`).
    pub min_bytes: u64,
    /// Largest requested size in bytes (`-e`).
    pub max_bytes: u64,
    /// Multiplicative step between sizes (`-f`).
    pub step_factor: f64,
    /// Untimed iterations before measuring (`-w`).
    pub warmup: u32,
    /// Timed iterations averaged per size (`-n`).
    pub iters: u32,
    /// Seed of the timing jitter (0 without jitter; see `jitter_op_ns`).
    pub seed: u64,
    /// Largest jitter per transfer in ns, `None` when the run had no jitter.
    #[serde(default)]
    pub jitter_op_ns: Option<u64>,
    /// Largest jitter per dispatch start in ns, `None` when the run had no jitter.
    #[serde(default)]
    pub jitter_dispatch_ns: Option<u64>,
    /// True when results were not checked (the `#wrong` column then reads `N/A`).
    pub timing_only: bool,
}

fn one() -> usize {
    1
}

/// One series of a sweep in the JSON: what it ran and its bandwidths.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesSummary {
    /// The series' label, as in the rows' `series` and the plot legend.
    pub label: String,
    /// Everything that shaped its rows.
    pub config: SweepConfig,
    /// Mean of its rows' `busbw_gbps` (the table footer of the series).
    pub average_bus_bandwidth: f64,
    /// Its largest `busbw_gbps`.
    pub peak_bus_bandwidth: f64,
    /// The machine's bus-bandwidth bound, GB/s (`None` for a barrier or an unlimited fabric).
    pub bound_gbps: Option<f64>,
}

/// One line of the table: a size and its out-of-place measurement, in nccl-tests' columns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultRow {
    /// The `size` column `S` in bytes (see [`bytes_for`](super::bytes_for)).
    pub size: u64,
    /// The `count` column in elements (see [`count_for`](super::count_for)).
    pub count: u64,
    /// The `type` column (`float`, ...); serialized as `type`.
    #[serde(rename = "type")]
    pub type_name: String,
    /// The `redop` column, `none` for non-reducing collectives.
    pub redop: String,
    /// The `root` column, -1 for unrooted collectives.
    pub root: i64,
    /// Average time of one operation in microseconds (NaN, JSON `null`, on a failed row).
    #[serde(deserialize_with = "null_is_nan")]
    pub time_us: f64,
    /// Algorithm bandwidth in GB/s (1e9 bytes).
    #[serde(deserialize_with = "null_is_nan")]
    pub algbw_gbps: f64,
    /// Bus bandwidth in GB/s (1e9 bytes).
    #[serde(deserialize_with = "null_is_nan")]
    pub busbw_gbps: f64,
    /// Wrong elements, or `None` when validation was off (`N/A`, JSON `null`).
    pub nwrong: Option<u64>,
    /// The collective and algorithm of the row, when one sweep covers several (JSON only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<String>,
    /// The algorithm this row ran, where its series picks one per size as the vendor library
    /// does (the `hccl` series: the mode of ours and the library's executor); printed after
    /// the row's columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<String>,
    /// Why this size has no measurement: its run failed (an unsupported dtype for the path, a
    /// tile that overflows UB, ...) or was cut short by a builtin's early return. Such a row
    /// shows no time (NaN, JSON `null`) and fails the sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
    /// The first wrong elements (at most [`Mismatch::KEPT`]) when `nwrong` is above 0, so a
    /// wrong result says where; absent from the JSON when there is none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub first_wrong: Vec<Mismatch>,
}

/// One element that differs from its golden: on which rank, at which element of the buffer
/// the collective's result is read from, what it held and what was due.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Mismatch {
    /// The rank whose result is wrong.
    pub rank: usize,
    /// The element's index in that rank's result buffer (row-major).
    pub index: u64,
    /// The value read (NaN, JSON `null`, when the element is missing).
    #[serde(deserialize_with = "null_is_nan")]
    pub got: f64,
    /// The golden value.
    #[serde(deserialize_with = "null_is_nan")]
    pub expected: f64,
}

impl Mismatch {
    /// How many wrong elements a row keeps: enough to see a pattern, few enough to read.
    pub const KEPT: usize = 4;
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "rank {} element {}: got {}, expected {}", self.rank, self.index, self.got, self.expected)
    }
}

impl ResultRow {
    /// A row of `size` bytes (`count` elements) whose run gave no measurement, and why.
    pub fn failed(size: u64, count: u64, type_name: &str, redop: &str, root: i64, why: String) -> ResultRow {
        ResultRow {
            size,
            count,
            type_name: type_name.to_string(),
            redop: redop.to_string(),
            root,
            time_us: f64::NAN,
            algbw_gbps: f64::NAN,
            busbw_gbps: f64::NAN,
            nwrong: None,
            series: None,
            algorithm: None,
            failed: Some(why),
            first_wrong: Vec::new(),
        }
    }
}

/// A measured row of `count` float elements (root -1) with algbw and busbw `bw`, as the
/// formats' tests write them.
#[cfg(test)]
pub(crate) fn test_row(
    size: u64,
    count: u64,
    redop: &str,
    time_us: f64,
    bw: (f64, f64),
    nwrong: Option<u64>,
) -> ResultRow {
    ResultRow {
        size,
        count,
        type_name: "float".to_string(),
        redop: redop.to_string(),
        root: -1,
        time_us,
        algbw_gbps: bw.0,
        busbw_gbps: bw.1,
        nwrong,
        series: None,
        algorithm: None,
        failed: None,
        first_wrong: Vec::new(),
    }
}

/// A number that JSON wrote as `null` (NaN and the infinities) reads back as NaN.
fn null_is_nan<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}
