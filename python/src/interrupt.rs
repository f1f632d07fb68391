//! Ctrl-C in Python: a run goes on a helper thread while the calling thread, the GIL released,
//! wakes every few milliseconds to let Python handle its signals. A `KeyboardInterrupt`
//! raises the run's stop flag (`RunOptions::interrupt`, which the engine reads between
//! events), waits for the run to end and is raised in the caller. The engine itself never
//! sees Python.

use pyo3::prelude::*;
use sim_core::Interrupt;
use std::time::Duration;

/// How often the calling thread looks at Python's signals while a run goes on.
const TICK: Duration = Duration::from_millis(20);

/// Stack of the thread a run goes on (as a main thread's: the engine and its drivers may
/// recurse deeper than a spawned thread's default allows).
const STACK_BYTES: usize = 8 << 20;

/// Runs `f(stop)` on a helper thread with the GIL released; when a signal handler raises
/// (Ctrl-C: `KeyboardInterrupt`), raises `stop`, waits for `f` and returns that exception.
pub(crate) fn interruptible<R: Send>(py: Python<'_>, f: impl FnOnce(&Interrupt) -> R + Send) -> PyResult<R> {
    interruptible_with(py, Interrupt::new(), f)
}

/// [`interruptible`] with a given stop flag (the command line's, which its runs watch).
pub(crate) fn interruptible_with<R: Send>(
    py: Python<'_>,
    stop: Interrupt,
    f: impl FnOnce(&Interrupt) -> R + Send,
) -> PyResult<R> {
    std::thread::scope(|s| {
        let stop_ref = &stop;
        let run = std::thread::Builder::new()
            .name("ranksim-run".into())
            .stack_size(STACK_BYTES)
            .spawn_scoped(s, move || f(stop_ref))
            .map_err(|e| PyErr::new::<pyo3::exceptions::PyRuntimeError, _>(format!("cannot start a run: {e}")))?;
        let mut raised: Option<PyErr> = None;
        while !run.is_finished() {
            py.detach(|| {
                let until = std::time::Instant::now() + TICK;
                while !run.is_finished() && std::time::Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(1));
                }
            });
            if raised.is_none()
                && let Err(e) = py.check_signals()
            {
                stop.raise();
                raised = Some(e);
            }
        }
        let r = py.detach(|| run.join());
        match (raised, r) {
            (Some(e), _) => Err(e),
            (None, Ok(v)) => Ok(v),
            (None, Err(p)) => std::panic::resume_unwind(p),
        }
    })
}
