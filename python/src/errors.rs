//! Rust errors as Python exceptions. The classes live in `ranksim/_errors.py` (so they can
//! also derive from `ValueError`); Rust looks them up by name when it raises.

use pyo3::prelude::*;
use sim_core::SimError;

/// The `op` of the error a raising Python kernel ends its run with.
pub(crate) const KERNEL_OP: &str = "python kernel";

/// The name of the `ranksim` exception class a [`SimError`] becomes.
pub(crate) fn class_of(e: &SimError) -> &'static str {
    match e {
        SimError::Deadlock(_) => "DeadlockError",
        SimError::Livelock(_) => "LivelockError",
        SimError::Budget(_) => "BudgetError",
        SimError::Memory(_) => "MemoryLimitError",
        SimError::BadOp { op, .. } if *op == KERNEL_OP => "KernelError",
        SimError::BadOp { .. } | SimError::Invalid(_) => "BadArgument",
        SimError::KernelPanic { .. } | SimError::KernelStackOverflow { .. } => "KernelError",
        SimError::Aborted
        | SimError::CutShort { .. }
        | SimError::PartitionFailed { .. }
        | SimError::Interrupted { .. } => "SimError",
    }
}

/// An instance of `ranksim.<class>` carrying `msg`, as a `PyErr`.
pub(crate) fn raise(py: Python<'_>, class: &str, msg: String) -> PyErr {
    let made = py.import("ranksim._errors").and_then(|m| m.getattr(class)).and_then(|cls| cls.call1((msg,)));
    match made {
        Ok(inst) => PyErr::from_value(inst),
        Err(e) => e,
    }
}

/// `BadArgument(msg)`.
pub(crate) fn bad(py: Python<'_>, msg: impl Into<String>) -> PyErr {
    raise(py, "BadArgument", msg.into())
}

/// A [`SimError`] as its Python exception, with the same message.
pub(crate) fn sim(py: Python<'_>, e: &SimError) -> PyErr {
    raise(py, class_of(e), e.to_string())
}

/// `ConfigError(msg)`.
pub(crate) fn config(py: Python<'_>, e: impl std::fmt::Display) -> PyErr {
    raise(py, "ConfigError", e.to_string())
}

/// Whether `err` is a `ranksim.SimError`.
pub(crate) fn is_sim_error(py: Python<'_>, err: &PyErr) -> bool {
    py.import("ranksim._errors")
        .and_then(|m| m.getattr("SimError"))
        .map(|cls| err.is_instance(py, &cls))
        .unwrap_or(false)
}
