//! Ctrl-C in Python: a run goes on a helper thread while the calling thread, the GIL released,
//! wakes every few milliseconds to let Python handle its signals. A `KeyboardInterrupt`
//! raises the run's stop flag (`RunOptions::interrupt`, which the engine reads between
//! events), waits for the run to end and is raised in the caller. The engine itself never
//! sees Python.

use pyo3::prelude::*;
use sim_core::{Interrupt, Progress};
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// How often the calling thread looks at Python's signals while a run goes on.
const TICK: Duration = Duration::from_millis(20);

/// Stack of the thread a run goes on (as a main thread's: the engine and its drivers may
/// recurse deeper than a spawned thread's default allows).
const STACK_BYTES: usize = 8 << 20;

/// Runs `f(stop)` on a helper thread with the GIL released; when a signal handler raises
/// (Ctrl-C: `KeyboardInterrupt`), raises `stop`, waits for `f` and returns that exception.
/// `stop` is the run's own flag, or the command line's, which its runs watch.
pub(crate) fn interruptible_with<R: Send>(
    py: Python<'_>,
    stop: Interrupt,
    f: impl FnOnce(&Interrupt) -> R + Send,
) -> PyResult<R> {
    interruptible_progress(py, stop, None, f)
}

/// After how long a run shows a progress line on stderr: `RANKSIM_PROGRESS` unset, 2 s when
/// stderr is a terminal (else never); `0`, never; a positive number N, after N seconds even
/// when stderr is not a terminal.
fn progress_after() -> Option<Duration> {
    match std::env::var("RANKSIM_PROGRESS") {
        Err(_) => std::io::stderr().is_terminal().then_some(Duration::from_secs(2)),
        Ok(v) => v.trim().parse::<f64>().ok().filter(|s| *s > 0.0 && s.is_finite()).map(Duration::from_secs_f64),
    }
}

/// [`interruptible_with`] that, when the run takes long (see [`progress_after`]), rewrites one
/// line on stderr with `progress`'s counts every half second, and clears it at the end.
pub(crate) fn interruptible_progress<R: Send>(
    py: Python<'_>,
    stop: Interrupt,
    progress: Option<Progress>,
    f: impl FnOnce(&Interrupt) -> R + Send,
) -> PyResult<R> {
    let after = progress.as_ref().and_then(|_| progress_after());
    let start = Instant::now();
    let mut shown: Option<Instant> = None;
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
                // A run with Python kernels as greenlets holds the GIL: it hands it over.
                crate::fibers::caller_wants_gil();
            });
            crate::fibers::caller_has_gil();
            if raised.is_none()
                && let Err(e) = py.check_signals()
            {
                stop.raise();
                raised = Some(e);
            }
            if let (Some(p), Some(after)) = (&progress, after)
                && start.elapsed() >= after
                && shown.is_none_or(|t| t.elapsed() >= Duration::from_millis(500))
            {
                let line = format!(
                    "\r[ranksim] running {:.1} s: {} events, simulated {:.3} us  (Ctrl-C stops it)",
                    start.elapsed().as_secs_f64(),
                    p.events(),
                    p.now().as_ps() as f64 / 1e6
                );
                let _ = std::io::stderr().write_all(line.as_bytes());
                shown = Some(Instant::now());
            }
        }
        if shown.is_some() {
            let _ = std::io::stderr().write_all(b"\r\x1b[2K");
        }
        let r = py.detach(|| run.join());
        match (raised, r) {
            (Some(e), _) => Err(e),
            (None, Ok(v)) => Ok(v),
            (None, Err(p)) => std::panic::resume_unwind(p),
        }
    })
}
