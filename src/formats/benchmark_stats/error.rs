//! The errors of the bench views: the cases where PyPTO raises `ValueError` or `IndexError`.
//! Messages match PyPTO's text, with Python's `repr` / `None` spelling of the values.

use super::pytext::py_repr;
use thiserror::Error;

/// A bench view was asked for something it cannot answer.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum BenchError {
    /// `per_dispatch` / `per_rank` take only `device`, `host` or `effective`.
    #[error("{caller}: metric must be one of ['device', 'effective', 'host'], got {}", py_repr(.metric))]
    InvalidMetric {
        /// The method called.
        caller: &'static str,
        /// The metric given.
        metric: String,
    },

    /// `per_round` takes `device`, `host`, `effective` or `union`.
    #[error("per_round(): unknown metric {}", py_repr(.metric))]
    UnknownRoundMetric {
        /// The metric given.
        metric: String,
    },

    /// `mean_invocation` selectors matched several dispatches; averaging them would fuse kernels.
    #[error(
        "mean_invocation(): {count} dispatches match pid={} slot={} ({}); averaging them by span name would fuse \
         distinct dispatches. Pass pid=/slot= to select one, or use format_mean_tree().",
        py_option(.pid), py_option(.slot), py_keys(.keys)
    )]
    AmbiguousDispatch {
        /// How many dispatches matched.
        count: usize,
        /// The `pid=` selector, if given.
        pid: Option<u64>,
        /// The `slot=` selector, if given.
        slot: Option<usize>,
        /// The `(pid, slot)` of every match.
        keys: Vec<(u64, usize)>,
    },

    /// `format_tree` was asked for a launch index past the measured launches.
    #[error("format_tree(): launch index {launch} out of range ({len} measured launches)")]
    LaunchOutOfRange {
        /// The launch index asked for.
        launch: usize,
        /// Measured launches.
        len: usize,
    },
}

/// An optional selector as Python prints it: the value, or `None`.
pub(crate) fn py_option<T: std::fmt::Display>(value: &Option<T>) -> String {
    value.as_ref().map_or_else(|| "None".to_string(), ToString::to_string)
}

/// A sorted list of `(pid, slot)` keys as Python prints it: `[(1, 0), (1, 1)]`.
fn py_keys(keys: &[(u64, usize)]) -> String {
    let cells: Vec<String> = keys.iter().map(|(pid, slot)| format!("({pid}, {slot})")).collect();
    format!("[{}]", cells.join(", "))
}
