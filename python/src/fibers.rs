//! Python kernels as greenlets on the run's own thread: each block of a Python kernel is a
//! greenlet that sim-core's driver resumes where it would resume a coroutine
//! ([`sim_core::FiberHost`]). A blocking operation switches back to the driver's greenlet and
//! the driver switches in the kernel its answer wakes: two greenlet switches and a GIL
//! acquire, no OS thread, no hand-off between threads. Greenlets switch CPython's thread
//! state (frames, exception state, recursion depth) with the stack, which sim-core's own
//! coroutines cannot. Without the `greenlet` module (or with `RANKSIM_PY_KERNELS=threads`)
//! kernels run on OS threads as before.
//!
//! The GIL: the run's thread holds a thread state for the whole run. The driver takes the GIL
//! (`PyGILState_Ensure`) at its first switch into a kernel and keeps it, kernels and driver
//! alike, and gives it back when the run ends. So a switch costs no GIL hand-over, and PyO3's
//! per-thread count of GIL holds, which a switched-out kernel's calls leave raised, never
//! claims a GIL the thread does not hold. Other Python threads get their turn as from any
//! thread running Python (kernels' code gives the GIL up when asked); the caller's thread,
//! which looks at Ctrl-C every 20 ms, is let in by hand-over: it says it waits
//! ([`caller_wants_gil`]) and the driver, at its next switch, lets go of the GIL until the
//! caller has had it. A plain release and re-take on a timer would not do: CPython counts the
//! driver's own re-take as a switch, so a waiting thread never asks for the GIL and can starve
//! for seconds (a Ctrl-C then took up to a minute to land).

use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyCFunction;
use sim_core::{Fiber, FiberBody, FiberHost, Fibers, Suspend};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

thread_local! {
    /// Whether this thread runs Python kernels as greenlets (the run's thread, during a run).
    static ON: Cell<bool> = const { Cell::new(false) };
    /// The GIL the driver holds on this thread between switches.
    static HELD: Cell<Option<ffi::PyGILState_STATE>> = const { Cell::new(None) };
}

/// Callers' threads (see [`crate::interrupt`]) about to take the GIL back to look at their
/// signals.
static CALLERS_WAITING: AtomicUsize = AtomicUsize::new(0);
/// How many times a waiting caller has got the GIL: a driver that let go of it waits for this
/// to move.
static CALLER_TURNS: AtomicU64 = AtomicU64::new(0);

/// The longest a driver waits for a caller to take the GIL it let go of (a caller that went
/// away must not stall the run).
const HAND_OVER: Duration = Duration::from_millis(50);

/// Says that a caller's thread is about to take the GIL back (call it last before the GIL is
/// taken, and [`caller_has_gil`] once it is held).
pub(crate) fn caller_wants_gil() {
    CALLERS_WAITING.fetch_add(1, Ordering::SeqCst);
}

/// Says that a caller's thread, which said it waits, holds the GIL.
pub(crate) fn caller_has_gil() {
    CALLER_TURNS.fetch_add(1, Ordering::SeqCst);
    CALLERS_WAITING.fetch_sub(1, Ordering::SeqCst);
}

/// Makes sure the driver holds the GIL, first handing it to a caller that waits for it.
fn hold() {
    match HELD.get() {
        None => {
            // SAFETY: the interpreter is running (a run was started from Python).
            HELD.set(Some(unsafe { ffi::PyGILState_Ensure() }));
        }
        Some(state) if CALLERS_WAITING.load(Ordering::SeqCst) > 0 => {
            let turn = CALLER_TURNS.load(Ordering::SeqCst);
            // SAFETY: pairs with the `Ensure` that took it; nothing of Python runs between.
            unsafe { ffi::PyGILState_Release(state) };
            let until = Instant::now() + HAND_OVER;
            while CALLER_TURNS.load(Ordering::SeqCst) == turn
                && CALLERS_WAITING.load(Ordering::SeqCst) > 0
                && Instant::now() < until
            {
                std::thread::sleep(Duration::from_micros(20));
            }
            // SAFETY: as in the first arm.
            HELD.set(Some(unsafe { ffi::PyGILState_Ensure() }));
        }
        Some(_) => {}
    }
}

/// Gives back the GIL [`hold`] took on this thread, if any.
fn let_go() {
    if let Some(state) = HELD.take() {
        // SAFETY: pairs with the `Ensure` of `hold`, on this thread.
        unsafe { ffi::PyGILState_Release(state) };
    }
}

/// Whether a kernel on this thread runs as a greenlet: its operations then keep the GIL.
pub(crate) fn on_greenlets() -> bool {
    ON.get()
}

/// The greenlet host for a run, or None (kernels on OS threads): no `greenlet` module, or
/// `RANKSIM_PY_KERNELS=threads`.
pub(crate) fn host(py: Python<'_>) -> Option<Fibers> {
    if std::env::var("RANKSIM_PY_KERNELS").is_ok_and(|v| v == "threads") {
        return None;
    }
    let m = py.import("greenlet").ok()?;
    let class = m.getattr("greenlet").ok()?.unbind();
    let getcurrent = m.getattr("getcurrent").ok()?.unbind();
    Some(Fibers(Arc::new(Greenlets { class, getcurrent })))
}

/// Runs `f` on this (the run's) thread with kernels as greenlets: the thread keeps a Python
/// thread state for the whole of `f` (so each switch's `PyGILState_Ensure` / `Release` pair
/// never creates or destroys one), the GIL released.
pub(crate) fn run_on_greenlets<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    Python::attach(|py| {
        py.detach(|| {
            let was = ON.replace(true);
            let r = f();
            let_go();
            ON.set(was);
            r
        })
    })
}

/// The greenlet module's class and `getcurrent`.
struct Greenlets {
    class: Py<PyAny>,
    getcurrent: Py<PyAny>,
}

/// A value used only on the run's thread (a fiber body, which is not `Send`).
struct OnRunThread<T>(T);
// SAFETY: a greenlet runs on the thread that made it; the body is only taken there.
unsafe impl<T> Send for OnRunThread<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for OnRunThread<T> {}

impl<T> OnRunThread<T> {
    /// The value (a method, so that closures capture the wrapper, not its field).
    fn get(&self) -> &T {
        &self.0
    }
}

impl FiberHost for Greenlets {
    fn spawn(&self, body: FiberBody) -> Box<dyn Fiber> {
        hold();
        // SAFETY: `hold` holds the GIL.
        let py = unsafe { Python::assume_attached() };
        let made = (|| -> PyResult<(Py<PyAny>, Arc<AtomicBool>)> {
            // Each suspend switches back to the greenlet running the driver on this thread.
            let parent = self.getcurrent.call0(py)?;
            let switch = intern!(py, "switch").clone().unbind();
            let back = parent.getattr(py, &switch)?;
            let body = OnRunThread(Mutex::new(Some(body)));
            let ended = Arc::new(AtomicBool::new(false));
            let done = ended.clone();
            let run = PyCFunction::new_closure(py, None, None, move |_args, _kwargs| -> PyResult<()> {
                let taken = body.get().lock().map(|mut b| b.take()).unwrap_or(None);
                if let Some(body) = taken {
                    body(&Back(&back));
                }
                done.store(true, Ordering::Relaxed);
                Ok(())
            })?;
            let g = self.class.call1(py, (run, parent))?;
            Ok((g.getattr(py, &switch)?, ended))
        })();
        match made {
            Ok((switch, ended)) => Box::new(Greenlet { switch: Some(switch), ended }),
            Err(e) => panic!("cannot make a greenlet for a Python kernel: {e}"),
        }
    }
}

/// The way back from a kernel's greenlet to the driver's: the driver's greenlet's bound
/// `switch`.
struct Back<'a>(&'a Py<PyAny>);

impl Suspend for Back<'_> {
    fn suspend(&self) {
        // SAFETY: a kernel's operation suspends from Python code, which holds the GIL (and
        // the driver keeps it).
        let py = unsafe { Python::assume_attached() };
        // A switch that raises is the greenlet being killed (GreenletExit) as the run ends:
        // the operation then returns an abort, which ends the kernel.
        let _ = self.0.call0(py);
    }
}

/// A block's greenlet: its bound `switch` (which holds it), and whether its body has returned.
struct Greenlet {
    switch: Option<Py<PyAny>>,
    ended: Arc<AtomicBool>,
}

impl Fiber for Greenlet {
    fn resume(&mut self) -> bool {
        let Some(switch) = &self.switch else { return true };
        hold();
        // SAFETY: `hold` holds the GIL.
        let py = unsafe { Python::assume_attached() };
        if let Err(e) = switch.call0(py) {
            // The body catches everything the kernel raises; this is greenlet's own failure.
            e.print(py);
            return true;
        }
        self.ended.load(Ordering::Relaxed)
    }
}

impl Drop for Greenlet {
    fn drop(&mut self) {
        if let Some(g) = self.switch.take() {
            hold();
            // Released now, on the greenlet's own thread (a greenlet still suspended is killed
            // there, its kernel unwinding), not deferred to whichever thread next takes the GIL.
            // SAFETY: `hold` holds the GIL and `g` owns this reference.
            unsafe { ffi::Py_DecRef(g.into_ptr()) };
        }
    }
}
