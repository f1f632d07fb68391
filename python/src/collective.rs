//! Your collective from Python, measured like `ranksim::measure::Collective`: a Python object
//! with `name`, `dtype`, `bus_factor`, `setup`, `stage`, `call`, `wrong` (and optionally
//! `count`, `bytes`, `redop`, `root`) driven through `custom::point`, `sweep`, `bench` and
//! `check`, which build and run the worlds themselves.

use crate::core::Shared;
use crate::errors::{self, bad};
use crate::program::{PyDomain, dtype};
use crate::report::PyCheckReport;
use crate::world::{PyConfig, PyWorld, panic_text};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use ranksim::measure::{self as custom, Collective, MAX_CALLS, MAX_SIZE_PAYLOAD, Measure, Wrong};
use sim_core::check::CheckOptions;
use sim_core::{DType, Domain, SimError, SimResult, World};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// A Python protocol object as a [`Collective`]; its buffers are whatever `setup` returned.
struct PyCollective {
    obj: Py<PyAny>,
    name: String,
    dtype: DType,
    /// Where the kernels its `call` queues report (Python lines for the checker's findings).
    shared: Arc<Shared>,
    /// A callback raised KeyboardInterrupt: the measuring function raises it again, not the
    /// error it became on the way.
    interrupted: Arc<std::sync::atomic::AtomicBool>,
}

/// `name.method raised Type: message` as a host error (the measuring functions report it).
fn callback_error(py: Python<'_>, name: &str, method: &str, e: &PyErr) -> SimError {
    if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
        INTERRUPTED.with(|f| f.set(true));
    }
    if errors::is_sim_error(py, e) {
        return SimError::invalid(e.value(py).to_string());
    }
    let ty = e.value(py).get_type().name().map(|n| n.to_string()).unwrap_or_default();
    SimError::invalid(format!("{name}.{method} raised {ty}: {}", e.value(py)))
}

thread_local! {
    /// Set when a callback on this thread raised KeyboardInterrupt (callbacks run on the
    /// measuring thread); [`PyCollective::take_interrupt`] moves it to the collective.
    static INTERRUPTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl PyCollective {
    /// Notes a KeyboardInterrupt a callback raised on this thread (see `INTERRUPTED`).
    fn take_interrupt(&self) {
        if INTERRUPTED.with(|f| f.replace(false)) {
            self.interrupted.store(true, Ordering::Relaxed);
        }
    }

    /// `r`, or KeyboardInterrupt when a callback raised it during the measurement.
    fn reraise<R>(&self, r: PyResult<R>) -> PyResult<R> {
        if self.interrupted.swap(false, Ordering::Relaxed) {
            return Err(pyo3::exceptions::PyKeyboardInterrupt::new_err("raised in a collective's callback"));
        }
        r
    }

    /// Calls `method(world, *args)` with `w` lent to Python for the call.
    fn with_world<'py>(
        &self,
        py: Python<'py>,
        method: &str,
        w: *mut World,
        read_only: bool,
        args: impl FnOnce(Py<PyWorld>) -> PyResult<Bound<'py, pyo3::types::PyTuple>>,
    ) -> SimResult<Bound<'py, PyAny>> {
        let fail = |e: PyErr| {
            let err = callback_error(py, &self.name, method, &e);
            self.take_interrupt();
            err
        };
        let world = PyWorld::lend(py, w, read_only, self.shared.clone()).map_err(fail)?;
        let r = args(world.clone_ref(py)).and_then(|a| self.obj.bind(py).call_method1(method, a));
        world.get().end_loan();
        r.map_err(fail)
    }

    /// An optional method's answer, or `None` when the object has no such attribute.
    fn optional<'py, T: for<'a> FromPyObject<'a, 'py>>(
        &self,
        py: Python<'py>,
        method: &str,
        args: impl pyo3::call::PyCallArgs<'py>,
    ) -> Option<T> {
        let o = self.obj.bind(py);
        if !o.hasattr(method).unwrap_or(false) {
            return None;
        }
        o.call_method1(method, args).ok().and_then(|v| v.extract::<T>().ok())
    }
}

impl Collective for PyCollective {
    type Buffers = Py<PyAny>;

    fn name(&self) -> String {
        self.name.clone()
    }
    fn dtype(&self) -> DType {
        self.dtype
    }
    fn bus_factor(&self, ranks: usize) -> f64 {
        Python::attach(|py| self.optional(py, "bus_factor", (ranks,)).unwrap_or(1.0))
    }
    fn count(&self, size_bytes: u64, ranks: usize) -> usize {
        Python::attach(|py| self.optional(py, "count", (size_bytes, ranks)))
            .unwrap_or_else(|| usize::try_from(size_bytes / self.dtype.size() as u64).unwrap_or(usize::MAX))
    }
    fn bytes(&self, count: usize, ranks: usize) -> u64 {
        Python::attach(|py| self.optional(py, "bytes", (count, ranks)))
            .unwrap_or_else(|| (count as u64).saturating_mul(self.dtype.size() as u64))
    }
    fn redop(&self) -> String {
        Python::attach(|py| self.optional(py, "redop", ())).unwrap_or_else(|| "none".into())
    }
    fn root(&self) -> i64 {
        Python::attach(|py| self.optional(py, "root", ())).unwrap_or(-1)
    }
    fn setup(&self, w: &mut World, dom: &Domain, count: usize) -> SimResult<Py<PyAny>> {
        // Python kernels run as greenlets, or on OS threads (see `PyWorld::of`); the measuring
        // functions make their own worlds, so each is set here, before its run, on the thread
        // that runs it: greenlets on the measuring function's own thread (`released_with`),
        // OS threads on the worker threads a parallel CLI sweep runs sizes on.
        Python::attach(|py| {
            if crate::fibers::on_greenlets() {
                crate::world::use_greenlets(py, w);
            } else {
                w.options_mut().fibers = None;
                w.options_mut().kernel_exec = sim_core::KernelExec::Threads;
            }
            let d = Py::new(py, PyDomain(dom.clone())).map_err(|e| callback_error(py, &self.name, "setup", &e))?;
            self.with_world(py, "setup", w, false, |pw| (pw, d, count).into_pyobject(py)).map(|b| b.unbind())
        })
    }
    fn stage(&self, w: &mut World, b: &Py<PyAny>, count: usize) -> SimResult<()> {
        Python::attach(|py| {
            self.with_world(py, "stage", w, false, |pw| (pw, b.clone_ref(py), count).into_pyobject(py)).map(|_| ())
        })
    }
    fn call(&self, w: &mut World, b: &Py<PyAny>) -> SimResult<()> {
        Python::attach(|py| {
            self.with_world(py, "call", w, false, |pw| (pw, b.clone_ref(py)).into_pyobject(py)).map(|_| ())
        })
    }
    fn wrong(&self, w: &World, b: &Py<PyAny>, count: usize) -> SimResult<Wrong> {
        Python::attach(|py| {
            let ptr = w as *const World as *mut World; // lent read-only: never written through
            let got = self.with_world(py, "wrong", ptr, true, |pw| (pw, b.clone_ref(py), count).into_pyobject(py))?;
            let fail = |e: PyErr| {
                let err = callback_error(py, &self.name, "wrong", &e);
                self.take_interrupt();
                err
            };
            // An int: the count of wrong elements; else (rank, got, expected) per rank.
            if let Ok(n) = got.extract::<u64>() {
                return Ok(n.into());
            }
            let np = py.import("numpy").map_err(fail)?;
            let mut wrong = Wrong::new();
            for item in got.try_iter().map_err(fail)? {
                let (rank, g, e): (usize, Bound<'_, PyAny>, Bound<'_, PyAny>) =
                    item.and_then(|i| i.extract()).map_err(fail)?;
                let flat = |a: &Bound<'_, PyAny>| -> PyResult<Vec<f64>> {
                    np.call_method1("asarray", (a, "float64"))?.call_method0("ravel")?.call_method0("tolist")?.extract()
                };
                let (g, e) = (flat(&g).map_err(fail)?, flat(&e).map_err(fail)?);
                if g.len() != e.len() {
                    return Err(SimError::invalid(format!(
                        "{}.wrong: rank {rank}: {} results against {} expected values",
                        self.name,
                        g.len(),
                        e.len()
                    )));
                }
                for (i, (a, b)) in g.iter().zip(&e).enumerate() {
                    wrong.compare(rank, i, *a, *b);
                }
            }
            Ok(wrong)
        })
    }
}

/// The Python object as a collective, its name and dtype read once.
fn collective(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<PyCollective> {
    for m in ["setup", "stage", "call", "wrong"] {
        if !obj.hasattr(m)? {
            return Err(bad(py, format!("a collective needs a `{m}` method (setup, stage, call, wrong)")));
        }
    }
    let name: String = match obj.getattr("name") {
        Ok(n) => n.str()?.extract()?,
        Err(_) => obj.get_type().name()?.to_string(),
    };
    let dt = match obj.getattr("dtype") {
        Ok(d) => dtype(py, &d)?,
        Err(_) => DType::F32,
    };
    Ok(PyCollective {
        obj: obj.clone().unbind(),
        name,
        dtype: dt,
        shared: Arc::new(Shared::default()),
        interrupted: Arc::default(),
    })
}

/// How to measure, its values checked with the CLI's ranges (calls, sizes).
fn measure(
    py: Python<'_>,
    cfg: &PyConfig,
    ranks: Option<usize>,
    iters: u32,
    warmup: u32,
    max_size: u64,
) -> PyResult<Measure> {
    let n = ranks.unwrap_or(cfg.0.machine.ranks);
    if n == 0 || n > cfg.0.machine.ranks {
        return Err(bad(
            py,
            format!("{n} ranks: the machine has {}; use 1..={}", cfg.0.machine.ranks, cfg.0.machine.ranks),
        ));
    }
    if iters == 0 || iters > MAX_CALLS {
        return Err(bad(py, format!("iters={iters}: timed calls must be in 1..={MAX_CALLS}")));
    }
    if warmup > MAX_CALLS {
        return Err(bad(py, format!("warmup={warmup}: warmup calls must be in 0..={MAX_CALLS}")));
    }
    if max_size > MAX_SIZE_PAYLOAD {
        return Err(bad(py, format!("size {max_size}: a size is at most {MAX_SIZE_PAYLOAD} bytes (1 GiB)")));
    }
    Ok(Measure { iters, warmup, ..Measure::new(n) })
}

/// An error of a measuring function as Python raises it: `SimError` with its message, but
/// `MemoryLimitError` for a run refused for its memory estimate.
trait Raised: std::fmt::Display + Send {
    fn class(&self) -> &'static str {
        "SimError"
    }
}

impl Raised for String {}

impl Raised for ranksim::measure::Error {
    fn class(&self) -> &'static str {
        match self {
            ranksim::measure::Error::Sim(e @ sim_core::SimError::Memory(_)) => errors::class_of(e),
            _ => "SimError",
        }
    }
}

/// Runs `f` with the GIL released (on a helper thread, stopped by Ctrl-C with its stop
/// flag, the `KeyboardInterrupt` raised), a panic caught, an error raised as its class
/// ([`Raised`]).
fn released<R: Send, E: Raised>(
    py: Python<'_>,
    f: impl FnOnce(&sim_core::Interrupt) -> Result<R, E> + Send,
) -> PyResult<R> {
    released_with(py, sim_core::Interrupt::new(), f)
}

/// [`released`] with a given stop flag.
fn released_with<R: Send, E: Raised>(
    py: Python<'_>,
    stop: sim_core::Interrupt,
    f: impl FnOnce(&sim_core::Interrupt) -> Result<R, E> + Send,
) -> PyResult<R> {
    // Python kernels in the measured worlds run as greenlets on this helper thread (`setup`).
    let run = move |stop: &sim_core::Interrupt| {
        crate::fibers::run_on_greenlets(|| catch_unwind(AssertUnwindSafe(|| f(stop))))
    };
    match crate::interrupt::interruptible_with(py, stop, run)? {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(errors::raise(py, e.class(), e.to_string())),
        Err(p) => {
            Err(errors::raise(py, "SimError", format!("internal error: the engine panicked: {}", panic_text(&p))))
        }
    }
}

/// `m`, its runs stopped by `stop`.
fn stopped(m: &Measure, stop: &sim_core::Interrupt) -> Measure {
    Measure { interrupt: Some(stop.clone()), ..m.clone() }
}

/// A result row (nccl-tests' columns) as a dict, through its JSON form.
fn row_dict<'py>(py: Python<'py>, row: &ranksim::formats::ResultRow) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(row).map_err(|e| bad(py, e.to_string()))?;
    py.import("json")?.call_method1("loads", (text,))
}

/// One size measured as `ranksim sweep` measures it: a dict of the row (size, count, type,
/// time_us, algbw_gbps, busbw_gbps, nwrong, ...), or None when the size gives no element.
#[pyfunction]
#[pyo3(signature = (config, collective, size_bytes, ranks = None, iters = 1, warmup = 0, *, max_sim_time_us = None, max_events = None, livelock_polls = None, max_memory = None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn point<'py>(
    py: Python<'py>,
    config: PyRef<'_, PyConfig>,
    collective: &Bound<'py, PyAny>,
    size_bytes: u64,
    ranks: Option<usize>,
    iters: u32,
    warmup: u32,
    max_sim_time_us: Option<f64>,
    max_events: Option<u64>,
    livelock_polls: Option<u64>,
    max_memory: Option<u64>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let c = self::collective(py, collective)?;
    let mut m = measure(py, &config, ranks, iters, warmup, size_bytes)?;
    m.budgets = crate::world::budgets(py, max_sim_time_us, max_events, livelock_polls, max_memory)?.measure();
    let cfg = &config.0;
    let p = c.reraise(released(py, |stop| custom::point(cfg, &c, &stopped(&m, stop), size_bytes)))?;
    p.map(|p| row_dict(py, &p.row)).transpose()
}

/// A sweep over `sizes` (bytes): `{"rows": [row dicts], "failed": bool, "table": str}`, the
/// table being `ranksim sweep`'s text. A run that fails is a row with `failed` set.
#[pyfunction]
#[pyo3(signature = (config, collective, sizes, ranks = None, iters = 1, warmup = 0, *, max_sim_time_us = None, max_events = None, livelock_polls = None, max_memory = None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn sweep<'py>(
    py: Python<'py>,
    config: PyRef<'_, PyConfig>,
    collective: &Bound<'py, PyAny>,
    sizes: Vec<u64>,
    ranks: Option<usize>,
    iters: u32,
    warmup: u32,
    max_sim_time_us: Option<f64>,
    max_events: Option<u64>,
    livelock_polls: Option<u64>,
    max_memory: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let c = self::collective(py, collective)?;
    let mut m = measure(py, &config, ranks, iters, warmup, sizes.iter().copied().max().unwrap_or(0))?;
    m.budgets = crate::world::budgets(py, max_sim_time_us, max_events, livelock_polls, max_memory)?.measure();
    let cfg = &config.0;
    let mut out = Vec::new();
    let (rows, failed) =
        c.reraise(released(py, |stop| custom::sweep(&mut out, cfg, &c, &stopped(&m, stop), &sizes)))?;
    let d = PyDict::new(py);
    let list = rows.iter().map(|r| row_dict(py, r)).collect::<PyResult<Vec<_>>>()?;
    d.set_item("rows", list)?;
    d.set_item("failed", failed)?;
    d.set_item("table", String::from_utf8_lossy(&out).into_owned())?;
    Ok(d)
}

/// PyPTO's `BenchmarkStats` of `warmup + iters` calls at `size_bytes`, as a dict: the
/// per-round `device_wall_us` and `host_wall_us`, `rounds`, `warmup`, the aggregates
/// `device_us_min` / `median` / `mean` / `max` / `stdev`, and `text`, its printed form.
#[pyfunction]
#[pyo3(signature = (config, collective, size_bytes, ranks = None, iters = 5, warmup = 1, *, max_sim_time_us = None, max_events = None, livelock_polls = None, max_memory = None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn bench<'py>(
    py: Python<'py>,
    config: PyRef<'_, PyConfig>,
    collective: &Bound<'py, PyAny>,
    size_bytes: u64,
    ranks: Option<usize>,
    iters: u32,
    warmup: u32,
    max_sim_time_us: Option<f64>,
    max_events: Option<u64>,
    livelock_polls: Option<u64>,
    max_memory: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let c = self::collective(py, collective)?;
    let mut m = measure(py, &config, ranks, iters, warmup, size_bytes)?;
    m.budgets = crate::world::budgets(py, max_sim_time_us, max_events, livelock_polls, max_memory)?.measure();
    let cfg = &config.0;
    let st = c.reraise(released(py, |stop| custom::bench(cfg, &c, &stopped(&m, stop), size_bytes)))?;
    let d = PyDict::new(py);
    d.set_item("device_wall_us", st.device_wall_us.clone())?;
    d.set_item("host_wall_us", st.host_wall_us.clone())?;
    d.set_item("rounds", st.rounds)?;
    d.set_item("warmup", st.warmup)?;
    d.set_item("device_us_min", st.device_us_min())?;
    d.set_item("device_us_median", st.device_us_median())?;
    d.set_item("device_us_mean", st.device_us_mean())?;
    d.set_item("device_us_max", st.device_us_max())?;
    d.set_item("device_us_stdev", st.device_us_stdev())?;
    d.set_item("text", st.to_string())?;
    Ok(d)
}

/// `calls` calls at `size_bytes` under the protocol checker: unperturbed, then once per seed.
#[pyfunction]
#[pyo3(signature = (config, collective, size_bytes, ranks = None, calls = 2, seeds = 0, *, max_sim_time_us = None, max_events = None, livelock_polls = None, max_memory = None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn check(
    py: Python<'_>,
    config: PyRef<'_, PyConfig>,
    collective: &Bound<'_, PyAny>,
    size_bytes: u64,
    ranks: Option<usize>,
    calls: usize,
    seeds: u64,
    max_sim_time_us: Option<f64>,
    max_events: Option<u64>,
    livelock_polls: Option<u64>,
    max_memory: Option<u64>,
) -> PyResult<PyCheckReport> {
    let c = self::collective(py, collective)?;
    let mut m = measure(py, &config, ranks, 1, 0, size_bytes)?;
    m.budgets = crate::world::budgets(py, max_sim_time_us, max_events, livelock_polls, max_memory)?.measure();
    if calls == 0 || calls > MAX_CALLS as usize {
        return Err(bad(py, format!("calls={calls}: calls must be in 1..={MAX_CALLS}")));
    }
    let cfg = &config.0;
    let opts = CheckOptions { seeds, ..CheckOptions::default() };
    crate::world::check_options(py, &opts)?;
    c.shared.record.store(true, Ordering::Relaxed);
    let r = c.reraise(released(py, |stop| {
        custom::check(cfg, &c, &stopped(&m, stop), size_bytes, calls, &opts).map(|r| r.report)
    }))?;
    PyCheckReport::new(py, &r, &|seed, s| c.shared.line_of(seed, s))
}

/// `python -m ranksim sweep | bench | check MODULE:OBJECT [FLAGS]`: the command line of
/// `ranksim_cli::main_for` for a Python collective (`args[0]` names the program), with the GIL
/// released while it runs; returns the exit code (0 ok, 1 failed, 2 a usage error).
#[pyfunction]
pub(crate) fn cli(py: Python<'_>, collective: &Bound<'_, PyAny>, args: Vec<String>) -> PyResult<u8> {
    let c = self::collective(py, collective)?;
    // The command line's runs watch its own stop flag: Ctrl-C raises it here.
    let stop = ranksim_cli::interrupt::flag();
    let r = released_with(py, stop.clone(), move |_| Ok::<u8, String>(ranksim_cli::run_for(&c, args)));
    stop.clear();
    r
}
