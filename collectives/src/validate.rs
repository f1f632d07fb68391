//! The validation rules of reference §3.1: what each collective accepts, as clear errors
//! before anything is dispatched.

use sim_core::{DType, ReduceOp, SimError, SimResult, Tensor, World};

/// The most ranks a HOST builtin handles; beyond it the kernels silently return.
pub const MAX_BUILTIN_RANKS: usize = 16;

pub(crate) fn fail<T>(what: &str, msg: String) -> SimResult<T> {
    Err(SimError::invalid(format!("{what}: {msg}")))
}

/// The chip has copy engines (`[chip.sdma]`), which the copy-engine modes post to.
pub(crate) fn has_sdma(world: &World, what: &str) -> SimResult<()> {
    if world.chip().sdma().is_none() {
        return fail(what, "the chip has no SDMA engines; add a [chip.sdma] table to the machine config".into());
    }
    Ok(())
}

/// Every operand is a window buffer of one comm domain, and no two share an allocation.
pub(crate) fn windows(what: &str, operands: &[(&str, &Tensor)]) -> SimResult<()> {
    for (name, t) in operands {
        if !t.is_window() {
            return fail(
                what,
                format!("{name} `{}` is a GM tensor; collective operands must be window buffers", t.name()),
            );
        }
    }
    let first = operands[0].1.domain().map(|d| d.name().to_string());
    for (name, t) in operands {
        let dom = t.domain().map(|d| d.name().to_string());
        if dom != first {
            return fail(
                what,
                format!(
                    "{name} `{}` lives in domain `{}` but {} `{}` in `{}`; all operands must share one comm domain",
                    t.name(),
                    dom.unwrap_or_default(),
                    operands[0].0,
                    operands[0].1.name(),
                    first.clone().unwrap_or_default()
                ),
            );
        }
    }
    for (i, (a, ta)) in operands.iter().enumerate() {
        for (b, tb) in &operands[i + 1..] {
            if ta.same_buffer(tb) {
                return fail(
                    what,
                    format!(
                        "{a} and {b} are the same window buffer `{}`; they must be distinct allocations",
                        ta.name()
                    ),
                );
            }
        }
    }
    Ok(())
}

/// The signal is INT32 with exactly `shape`.
pub(crate) fn signal(what: &str, sig: &Tensor, shape: &[usize]) -> SimResult<()> {
    if sig.dtype() != DType::I32 {
        return fail(what, format!("signal `{}` is {}; signals must be INT32", sig.name(), sig.dtype()));
    }
    if sig.shape() != shape {
        return fail(what, format!("signal `{}` has shape {:?}; this call needs {shape:?}", sig.name(), sig.shape()));
    }
    Ok(())
}

/// `[NR]` or `[NR, 1]` INT32 (barrier-style signals).
pub(crate) fn rank_signal(what: &str, sig: &Tensor, nranks: usize, allow_flat: bool) -> SimResult<()> {
    let ok = sig.shape() == [nranks, 1] || (allow_flat && sig.shape() == [nranks]);
    if sig.dtype() != DType::I32 || !ok {
        let want = if allow_flat { format!("[{nranks}] or [{nranks}, 1]") } else { format!("[{nranks}, 1]") };
        return fail(
            what,
            format!("signal `{}` is {}{:?}; it must be INT32 {want}", sig.name(), sig.dtype(), sig.shape()),
        );
    }
    Ok(())
}

/// The dtype is one of `allowed`.
pub(crate) fn dtype(what: &str, t: &Tensor, allowed: &[DType]) -> SimResult<()> {
    if allowed.contains(&t.dtype()) {
        return Ok(());
    }
    let names: Vec<&str> = allowed.iter().map(|d| d.name()).collect();
    fail(what, format!("`{}` is {}; this collective supports {}", t.name(), t.dtype(), names.join(", ")))
}

/// The reduce op is one of `allowed`.
pub(crate) fn op(what: &str, op: ReduceOp, allowed: &[ReduceOp]) -> SimResult<()> {
    if allowed.contains(&op) {
        return Ok(());
    }
    let names: Vec<&str> = allowed.iter().map(|o| o.name()).collect();
    fail(what, format!("op {op} is not supported; this collective supports {}", names.join(", ")))
}

/// Rows of a `[NR, ...]` operand: its first dimension must be `nranks`.
pub(crate) fn leading(what: &str, t: &Tensor, nranks: usize) -> SimResult<usize> {
    if t.shape().len() < 2 || t.shape()[0] != nranks {
        return fail(
            what,
            format!("`{}` has shape {:?}; it must be [{nranks}, ...] (one row per rank)", t.name(), t.shape()),
        );
    }
    Ok(t.shape()[1..].iter().product())
}
