//! `Config` and `World`: the machine, its memory, host data in and out as numpy arrays,
//! dispatches, runs and checks.

use crate::core::{self as pycore, Shared};
use crate::errors::{self, bad};
use crate::program::{PyDispatch, PyDomain, PyTensor, dtype, lock};
use crate::report::{PyCheckReport, PyRunReport};
use pyo3::buffer::PyUntypedBuffer;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use ranksim::measure::memory::MemoryLimit;
use sim_core::check::CheckOptions;
use sim_core::{DType, Dispatch, DomainOptions, SimDuration, SimError, SimResult, World};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, TryLockError};

/// A machine: chips, cores, fabric (`Config.preset("a2a3")`, `Config.from_toml(text)`).
#[pyclass(name = "Config", module = "ranksim", frozen)]
#[derive(Clone)]
pub(crate) struct PyConfig(pub(crate) ranksim::Config);

#[pymethods]
impl PyConfig {
    /// An embedded preset: a2a3, a3-supernode, a5, cluster1024, ring8, torus4x4, two-node.
    #[staticmethod]
    fn preset(py: Python<'_>, name: &str) -> PyResult<PyConfig> {
        ranksim::Config::preset(name).map(PyConfig).map_err(|e| errors::config(py, e))
    }
    /// The default preset (a2a3: 8 x Ascend 910B on an HCCS full mesh).
    #[staticmethod]
    fn default() -> PyConfig {
        PyConfig(ranksim::Config::default_preset())
    }
    /// A config from TOML text; `origin` names it in errors.
    #[staticmethod]
    #[pyo3(signature = (text, origin = "<string>"))]
    fn from_toml(py: Python<'_>, text: &str, origin: &str) -> PyResult<PyConfig> {
        ranksim::Config::from_toml(text, origin).map(PyConfig).map_err(|e| errors::config(py, e))
    }
    /// A config file.
    #[staticmethod]
    fn load(py: Python<'_>, path: std::path::PathBuf) -> PyResult<PyConfig> {
        ranksim::Config::load(&path).map(PyConfig).map_err(|e| errors::config(py, e))
    }
    /// The same machine with `ranks` chips.
    fn with_ranks(&self, py: Python<'_>, ranks: usize) -> PyResult<PyConfig> {
        self.0.clone().with_ranks(ranks).map(PyConfig).map_err(|e| errors::config(py, e))
    }
    /// The machine's name.
    #[getter]
    fn name(&self) -> String {
        self.0.machine.name.clone()
    }
    /// Number of chips (world ranks).
    #[getter]
    fn ranks(&self) -> usize {
        self.0.machine.ranks
    }
    /// A fresh world of this machine.
    fn world(&self, py: Python<'_>) -> PyResult<PyWorld> {
        PyWorld::of(py, &self.0)
    }
    fn __repr__(&self) -> String {
        format!("<ranksim Config `{}`: {} ranks>", self.0.machine.name, self.0.machine.ranks)
    }
}

/// A simulated machine's memory and queued work (`Config.world()`).
#[pyclass(name = "World", module = "ranksim", frozen)]
pub(crate) struct PyWorld {
    inner: Mutex<Slot>,
    shared: Arc<Shared>,
    size: usize,
    /// The host arrays lent to GM copies (`lend`), held until `end_loans`.
    loans: Mutex<Vec<PyUntypedBuffer>>,
}

/// The world a `PyWorld` stands for: its own, or one the measuring functions lend a
/// collective's callback for the duration of the call.
enum Slot {
    Owned(Box<World>),
    /// Lent for `setup` / `stage` / `call`.
    Lent(LentPtr),
    /// Lent read-only for `wrong`.
    LentRead(LentPtr),
    /// The callback it was lent to has returned.
    Gone,
}

/// A lent world's pointer.
struct LentPtr(*mut World);
// SAFETY: dereferenced only under the `PyWorld`'s mutex while the callback it was lent to runs
// (the lender's `&mut World` / `&World` is not used meanwhile); `Slot::Gone` afterwards.
unsafe impl Send for LentPtr {}

const BUSY: &str = "the world is busy: a run or check is in progress (kernels cannot use their world)";

/// The most payload bytes one buffer may keep over all its ranks (the host's memory is the
/// limit; timing-only worlds keep none).
const MAX_PAYLOAD_BYTES: usize = 4 << 30;

/// The most jittered reruns `check` makes (the CLI's limit).
const MAX_SEEDS: u64 = 100_000;

/// The checker's options checked with the CLI's ranges: at most [`MAX_SEEDS`] seeds, jitter
/// up to 1 s.
pub(crate) fn check_options(py: Python<'_>, o: &CheckOptions) -> PyResult<()> {
    if o.seeds > MAX_SEEDS {
        return Err(bad(py, format!("seeds={}: at most {MAX_SEEDS} jittered reruns", o.seeds)));
    }
    jitter_ok(py, o.op_jitter, "op_jitter_ns")?;
    jitter_ok(py, o.dispatch_jitter, "dispatch_jitter_ns")
}

/// A jitter of at most 1 s.
fn jitter_ok(py: Python<'_>, d: SimDuration, name: &str) -> PyResult<()> {
    if d.as_ps() > ranksim::measure::MAX_JITTER_PS {
        return Err(bad(py, format!("{name}={}: jitter must be in 0..=1000000000 ns (1 s)", d.as_ps() / 1000)));
    }
    Ok(())
}

/// The error of a lent world used after its callback returned.
fn gone(py: Python<'_>) -> PyErr {
    bad(py, "this World was lent to a collective's callback that has returned; keep tensors, not the world")
}

/// A panic's message.
pub(crate) fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

/// The numpy dtype name of a dtype numpy has (bf16 has none).
fn numpy_name(dt: DType) -> Option<&'static str> {
    match dt {
        DType::F32 => Some("<f4"),
        DType::F16 => Some("<f2"),
        DType::I32 => Some("<i4"),
        DType::I16 => Some("<i2"),
        DType::I8 => Some("i1"),
        DType::BF16 => None,
    }
}

/// Whether `arr` is a numpy array whose bytes are `t`'s as they are: C-contiguous, of `t`'s
/// dtype (bf16 has none) and element count, and writeable when `write`.
fn fits(py: Python<'_>, t: &sim_core::Tensor, arr: &Bound<'_, PyAny>, write: bool) -> PyResult<bool> {
    let Some(name) = numpy_name(t.dtype()) else { return Ok(false) };
    let np = py.import("numpy")?;
    if !arr.is_instance(&np.getattr("ndarray")?)? || !arr.getattr("dtype")?.eq(np.call_method1("dtype", (name,))?)? {
        return Ok(false);
    }
    let flags = arr.getattr("flags")?;
    let size: usize = arr.getattr("size")?.extract()?;
    Ok(flags.getattr("c_contiguous")?.is_truthy()?
        && (!write || flags.getattr("writeable")?.is_truthy()?)
        && size == t.numel())
}

/// Runs `w`'s Python kernels as greenlets when the `greenlet` module is there, else on OS
/// threads.
pub(crate) fn use_greenlets(py: Python<'_>, w: &mut World) {
    let o = w.options_mut();
    o.fibers = crate::fibers::host(py);
    o.kernel_exec = match o.fibers {
        Some(_) => sim_core::KernelExec::default(),
        None => sim_core::KernelExec::Threads,
    };
}

impl PyWorld {
    fn of(py: Python<'_>, cfg: &ranksim::Config) -> PyResult<PyWorld> {
        let mut w = cfg.world().map_err(|e| errors::config(py, e))?;
        // Python kernels run as greenlets on the run's thread (`fibers.rs`), or on OS threads
        // without them: CPython's thread state cannot survive a stack switch of sim-core's
        // own coroutines, so those are not for them.
        use_greenlets(py, &mut w);
        let size = w.size();
        Ok(PyWorld {
            inner: Mutex::new(Slot::Owned(Box::new(w))),
            shared: Arc::new(Shared::default()),
            size,
            loans: Mutex::new(Vec::new()),
        })
    }

    /// Lends `w` to a collective's callback: a `World` object valid until [`PyWorld::end_loan`].
    /// Its kernels report to `shared`.
    pub(crate) fn lend(py: Python<'_>, w: *mut World, read_only: bool, shared: Arc<Shared>) -> PyResult<Py<PyWorld>> {
        // SAFETY: the caller holds the world for the duration of the loan.
        let size = unsafe { (*w).size() };
        let slot = if read_only { Slot::LentRead(LentPtr(w)) } else { Slot::Lent(LentPtr(w)) };
        Py::new(py, PyWorld { inner: Mutex::new(slot), shared, size, loans: Mutex::new(Vec::new()) })
    }

    /// Ends a loan: the object raises from now on.
    pub(crate) fn end_loan(&self) {
        *lock(&self.inner) = Slot::Gone;
    }

    /// Runs `f` on the world, or raises if a run holds it (a kernel calling its own world).
    pub(crate) fn with<R>(&self, py: Python<'_>, f: impl FnOnce(&mut World) -> SimResult<R>) -> PyResult<R> {
        let mut g = self.slot(py)?;
        let w: &mut World = match &mut *g {
            Slot::Owned(w) => w,
            // SAFETY: see `LentPtr`.
            Slot::Lent(p) => unsafe { &mut *p.0 },
            Slot::LentRead(_) => {
                return Err(bad(py, "the world is read-only in wrong(): read results, change nothing"));
            }
            Slot::Gone => return Err(gone(py)),
        };
        f(w).map_err(|e| errors::sim(py, &e))
    }

    /// One of the world's run options (a property's getter).
    fn option<R>(&self, py: Python<'_>, f: impl FnOnce(&mut sim_core::RunOptions) -> R) -> PyResult<R> {
        self.with(py, |w| Ok(f(w.options_mut())))
    }

    /// Sets one of the world's run options (a property's setter).
    fn set_option(&self, py: Python<'_>, f: impl FnOnce(&mut sim_core::RunOptions)) -> PyResult<()> {
        self.with(py, |w| {
            f(w.options_mut());
            Ok(())
        })
    }

    /// Runs `f` on the world, read-only.
    fn with_ref<R>(&self, py: Python<'_>, f: impl FnOnce(&World) -> SimResult<R>) -> PyResult<R> {
        let g = self.slot(py)?;
        let w: &World = match &*g {
            Slot::Owned(w) => w,
            // SAFETY: see `LentPtr`.
            Slot::Lent(p) | Slot::LentRead(p) => unsafe { &*p.0 },
            Slot::Gone => return Err(gone(py)),
        };
        f(w).map_err(|e| errors::sim(py, &e))
    }

    fn slot(&self, py: Python<'_>) -> PyResult<std::sync::MutexGuard<'_, Slot>> {
        match self.inner.try_lock() {
            Ok(g) => Ok(g),
            Err(TryLockError::Poisoned(p)) => Ok(p.into_inner()),
            Err(TryLockError::WouldBlock) => Err(bad(py, BUSY)),
        }
    }

    /// Runs `f` on the world with the GIL released, a Rust panic caught as a `SimError`.
    fn engine<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut World) -> SimResult<R> + Send) -> PyResult<R> {
        let mut g = self.slot(py)?;
        let w: &mut World = match &mut *g {
            Slot::Owned(w) => w,
            Slot::Gone => return Err(gone(py)),
            _ => return Err(bad(py, "a collective's callbacks only queue calls: the measuring function runs them")),
        };
        self.shared.clear();
        // On a helper thread, so that Ctrl-C reaches Python (KeyboardInterrupt) and stops it.
        let progress = sim_core::Progress::new();
        let counts = progress.clone();
        let greenlets = w.options_mut().fibers.is_some();
        let r = crate::interrupt::interruptible_progress(py, sim_core::Interrupt::new(), Some(counts), move |stop| {
            w.options_mut().interrupt = Some(stop.clone());
            let kept = w.options_mut().progress.replace(progress);
            let run = || catch_unwind(AssertUnwindSafe(|| f(&mut *w)));
            let r = if greenlets { crate::fibers::run_on_greenlets(run) } else { run() };
            w.options_mut().interrupt = None;
            w.options_mut().progress = kept;
            r
        })?;
        match r {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(self.run_error(py, &e)),
            Err(p) => {
                Err(errors::raise(py, "SimError", format!("internal error: the engine panicked: {}", panic_text(&p))))
            }
        }
    }

    /// A run's error as its Python exception: a deadlock with the Python line of every wait
    /// still blocked, a kernel's error with the Python exception as its cause.
    fn run_error(&self, py: Python<'_>, e: &SimError) -> PyErr {
        match e {
            SimError::Deadlock(report) => {
                // Each wait is named by its kernel's Python line, not the binding's Rust line.
                let mut report = (**report).clone();
                let waits = lock(&self.shared.waits);
                for w in report.waits.iter_mut().chain(report.deferred.iter_mut()) {
                    // A Python kernel's blocked wait (or the Rust composite it called, such as
                    // `pld.tensor.barrier`) is named by the kernel's Python line.
                    let python = waits
                        .iter()
                        .find(|((c, b, _, t), _)| (*c, *b, t.as_str()) == (w.chip, w.block, w.task.as_str()))
                        .map(|(_, at)| at.clone());
                    if python.is_some() || w.location.as_deref().is_some_and(|l| l.starts_with(pycore::CORE_FILE)) {
                        w.location = python;
                    }
                }
                let python: Vec<String> = waits
                    .iter()
                    .map(|((chip, block, _, task), at)| format!("rank {chip} block {block} (task `{task}`): {at}"))
                    .collect();
                drop(waits);
                let err = errors::raise(py, "DeadlockError", report.to_string());
                let _ = err.value(py).setattr("python_waits", python);
                err
            }
            SimError::Livelock(report) => {
                // Each poll and wait is named by its kernel's Python line.
                let mut report = (**report).clone();
                let polls = lock(&self.shared.polls);
                for p in &mut report.polls {
                    let python = polls
                        .iter()
                        .find(|((c, b, _, t), _)| (*c, *b, t.as_str()) == (p.chip, p.block, p.task.as_str()))
                        .map(|(_, at)| at.clone());
                    if python.is_some() || p.location.as_deref().is_some_and(|l| l.starts_with(pycore::CORE_FILE)) {
                        p.location = python;
                    }
                }
                let python: Vec<String> = report
                    .polls
                    .iter()
                    .filter_map(|p| {
                        p.location
                            .as_ref()
                            .map(|at| format!("rank {} block {} (task `{}`): {at}", p.chip, p.block, p.task))
                    })
                    .collect();
                drop(polls);
                let waits = lock(&self.shared.waits);
                for w in report.waits.iter_mut().chain(report.deferred.iter_mut()) {
                    let python = waits
                        .iter()
                        .find(|((c, b, _, t), _)| (*c, *b, t.as_str()) == (w.chip, w.block, w.task.as_str()))
                        .map(|(_, at)| at.clone());
                    if python.is_some() || w.location.as_deref().is_some_and(|l| l.starts_with(pycore::CORE_FILE)) {
                        w.location = python;
                    }
                }
                drop(waits);
                let err = errors::raise(py, "LivelockError", report.to_string());
                let _ = err.value(py).setattr("python_polls", python);
                err
            }
            SimError::Budget(report) => {
                // A core's last operation is named by its kernel's Python line when known.
                let mut report = (**report).clone();
                let (polls, waits) = (lock(&self.shared.polls), lock(&self.shared.waits));
                for c in &mut report.cores {
                    if c.location.as_deref().is_some_and(|l| l.starts_with(pycore::CORE_FILE)) {
                        let same = |((ch, b, _, t), _): &(&pycore::BlockKey, &String)| {
                            (*ch, *b, t.as_str()) == (c.chip, c.block, c.task.as_str())
                        };
                        let line = match c.last_op.as_str() {
                            "wait" => waits.iter().find(same),
                            _ => polls.iter().find(same),
                        };
                        c.location = line.map(|(_, at)| at.clone());
                    }
                }
                errors::raise(py, "BudgetError", report.to_string())
            }
            SimError::BadOp { site, op, .. } if *op == crate::errors::KERNEL_OP => {
                let err = errors::sim(py, e);
                let cause = lock(&self.shared.raised)
                    .iter()
                    .find(|((c, b, _, t), _)| (*c, *b, t.as_str()) == (site.chip, site.block, site.task.as_str()))
                    .map(|(_, v)| v.clone_ref(py));
                if let Some(c) = cause {
                    err.set_cause(py, Some(PyErr::from_value(c.into_bound(py))));
                }
                err
            }
            _ => errors::sim(py, e),
        }
    }

    /// Copies `rank`'s copy of `t` into `out`, a writable C-contiguous numpy array of exactly
    /// `t.nbytes()` bytes.
    fn fill(&self, py: Python<'_>, t: &sim_core::Tensor, rank: usize, out: &Bound<'_, PyAny>) -> PyResult<()> {
        let buf = PyUntypedBuffer::get(out)?;
        if buf.readonly() || !buf.is_c_contiguous() {
            return Err(bad(
                py,
                format!("host read of `{}`: the array to fill is read-only or not contiguous", t.name()),
            ));
        }
        // SAFETY: a writable C-contiguous buffer of `len_bytes` bytes, held (and the GIL with
        // it, so no Python code can touch the array) while the slice is used.
        let bytes = unsafe { std::slice::from_raw_parts_mut(buf.buf_ptr() as *mut u8, buf.len_bytes()) };
        self.with_ref(py, |w| w.read_bytes_into(t, rank, bytes))
    }

    /// Refuses a buffer whose payload (`copies` ranks of `shape` x `dt`) the host could not
    /// hold: the allocation would abort the process, not fail.
    fn room(&self, py: Python<'_>, name: &str, dt: DType, shape: &[usize], copies: usize) -> PyResult<()> {
        if !self.with_ref(py, |w| Ok(w.has_payload()))? {
            return Ok(());
        }
        let total = shape.iter().try_fold(dt.size(), |a, &d| a.checked_mul(d)).and_then(|b| b.checked_mul(copies));
        match total {
            Some(t) if t <= MAX_PAYLOAD_BYTES => Ok(()),
            _ => Err(bad(
                py,
                format!(
                    "`{name}` ({dt} {shape:?} on {copies} rank(s)) needs more than {} GiB of payload on the host; shrink it, or call world.set_timing_only() first (same times, no values)",
                    MAX_PAYLOAD_BYTES >> 30
                ),
            )),
        }
    }

    /// `tensor`'s own `Tensor`, checked to be one.
    fn domain_ranks(&self, ranks: Option<Vec<usize>>) -> Vec<usize> {
        ranks.unwrap_or_else(|| (0..self.size).collect())
    }

    /// Binds the dispatch's Python kernels to this world.
    fn bind(&self, py: Python<'_>, d: &PyDispatch) -> Dispatch {
        let mut out = Dispatch::new(&d.name);
        for spec in d.specs(py) {
            out.add(crate::kernel_task::bind(py, &spec, &self.shared));
        }
        out
    }
}

/// A run's budgets as keyword arguments give them (`None`: the world's own).
#[derive(Clone, Copy, Default)]
pub(crate) struct Budgets {
    max_sim_time: Option<sim_core::SimTime>,
    max_events: Option<u64>,
    livelock_polls: Option<u64>,
    max_memory: Option<u64>,
}

/// The budgets of keyword arguments, checked.
pub(crate) fn budgets(
    py: Python<'_>,
    max_sim_time_us: Option<f64>,
    max_events: Option<u64>,
    livelock_polls: Option<u64>,
    max_memory: Option<u64>,
) -> PyResult<Budgets> {
    let max_sim_time = max_sim_time_us.map(|us| sim_time_us(py, us)).transpose()?;
    if max_memory == Some(0) {
        return Err(bad(py, "max_memory=0: must be more than 0 bytes (None: what the host has available)"));
    }
    Ok(Budgets { max_sim_time, max_events, livelock_polls, max_memory })
}

impl Budgets {
    /// Sets the budgets given on `o`.
    pub(crate) fn apply(&self, o: &mut sim_core::RunOptions) {
        if let Some(t) = self.max_sim_time {
            o.max_sim_time = t;
        }
        if let Some(n) = self.max_events {
            o.max_events = n;
        }
        if let Some(n) = self.livelock_polls {
            o.livelock_polls = n;
        }
        if let Some(n) = self.max_memory {
            o.max_memory = Some(n);
        }
    }

    /// The library's budgets: the given ones over the defaults.
    pub(crate) fn measure(&self) -> ranksim::measure::Budgets {
        let mut o = sim_core::RunOptions::default();
        self.apply(&mut o);
        ranksim::measure::Budgets {
            max_sim_time: o.max_sim_time,
            max_events: o.max_events,
            livelock_polls: o.livelock_polls,
            max_memory: self.max_memory.map(MemoryLimit::Given).or_else(MemoryLimit::host),
        }
    }
}

/// Runs `f` on `w` with `b` in force (and, when neither sets a memory limit, the memory the
/// host has available now), the world's own budgets back afterwards.
fn within<R>(w: &mut World, b: Budgets, f: impl FnOnce(&mut World) -> R) -> R {
    let o = w.options_mut();
    let saved = (o.max_sim_time, o.max_events, o.livelock_polls, o.max_memory);
    b.apply(o);
    if o.max_memory.is_none() {
        o.max_memory = ranksim::measure::memory::available();
    }
    let r = f(w);
    let o = w.options_mut();
    (o.max_sim_time, o.max_events, o.livelock_polls, o.max_memory) = saved;
    r
}

/// `us` microseconds of simulated time, checked to be positive and to fit the clock.
fn sim_time_us(py: Python<'_>, us: f64) -> PyResult<sim_core::SimTime> {
    let max = sim_core::SimTime::NEVER.as_ps() as f64 / 1e6;
    if us.is_finite() && us > 0.0 && us < max {
        Ok(sim_core::SimTime::from_ps((us * 1e6).round() as u64))
    } else {
        Err(bad(py, format!("max_sim_time_us={us}: must be a positive number of microseconds below {max:.0}")))
    }
}

#[pymethods]
impl PyWorld {
    /// A world of `config` (default: the a2a3 preset).
    #[new]
    #[pyo3(signature = (config = None))]
    fn new(py: Python<'_>, config: Option<PyRef<'_, PyConfig>>) -> PyResult<PyWorld> {
        match config {
            Some(c) => PyWorld::of(py, &c.0),
            None => PyWorld::of(py, &ranksim::Config::default_preset()),
        }
    }
    /// Number of chips (world ranks).
    #[getter]
    fn size(&self) -> usize {
        self.size
    }
    /// A comm domain over `ranks` (default: every chip), windows unlimited. `persistent=True`
    /// keeps its windows across runs; `reset` (default: `persistent`) zeroes them before each
    /// reuse, as PyPTO's `prepare(persistent=..., reset_persistent_windows=...)`.
    #[pyo3(signature = (name, ranks = None, *, persistent = false, reset = None))]
    fn create_domain(
        &self,
        py: Python<'_>,
        name: &str,
        ranks: Option<Vec<usize>>,
        persistent: bool,
        reset: Option<bool>,
    ) -> PyResult<PyDomain> {
        let ranks = self.domain_ranks(ranks);
        self.with(py, |w| w.create_domain(name, &ranks, DomainOptions { persistent, reset })).map(PyDomain)
    }
    /// A comm domain whose windows must fit in `window_size` bytes per rank (simpler's
    /// `allocate_domain`); `persistent` and `reset` as for `create_domain`.
    #[pyo3(signature = (name, ranks, window_size, *, persistent = false, reset = None))]
    fn allocate_domain(
        &self,
        py: Python<'_>,
        name: &str,
        ranks: Vec<usize>,
        window_size: usize,
        persistent: bool,
        reset: Option<bool>,
    ) -> PyResult<PyDomain> {
        self.with(py, |w| w.allocate_domain(name, &ranks, window_size, DomainOptions { persistent, reset }))
            .map(PyDomain)
    }
    /// Frees the domain's windows after the run that still uses them; the name is free again.
    fn release_domain(&self, py: Python<'_>, dom: PyRef<'_, PyDomain>) -> PyResult<()> {
        self.with(py, |w| w.release_domain(&dom.0))
    }
    /// A zeroed symmetric window buffer on every member of `dom`.
    fn alloc_window(
        &self,
        py: Python<'_>,
        dom: PyRef<'_, PyDomain>,
        name: &str,
        dtype: &Bound<'_, PyAny>,
        shape: Vec<usize>,
    ) -> PyResult<PyTensor> {
        let dt = self::dtype(py, dtype)?;
        self.room(py, name, dt, &shape, dom.0.size())?;
        self.with(py, |w| w.alloc_window(&dom.0, name, dt, &shape)).map(PyTensor)
    }
    /// A zeroed GM tensor on every chip.
    fn alloc_tensor(
        &self,
        py: Python<'_>,
        name: &str,
        dtype: &Bound<'_, PyAny>,
        shape: Vec<usize>,
    ) -> PyResult<PyTensor> {
        let dt = self::dtype(py, dtype)?;
        self.room(py, name, dt, &shape, self.size)?;
        self.with(py, |w| w.alloc_tensor(name, dt, &shape)).map(PyTensor)
    }
    /// Copies host data (a numpy array, or anything `numpy.asarray` takes) into `rank`'s copy
    /// of `tensor`. Its shape must be the tensor's (or flat with as many elements); floats go
    /// into float tensors (rounded to nearest), integers into any tensor (ints must fit).
    fn write(&self, py: Python<'_>, tensor: PyRef<'_, PyTensor>, rank: usize, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let t = &tensor.0;
        let np = py.import("numpy")?;
        let arr = np.call_method1("asarray", (data,))?;
        let shape: Vec<usize> = arr.getattr("shape")?.extract()?;
        let size: usize = arr.getattr("size")?.extract()?;
        if shape != t.shape() && !(shape.len() == 1 && size == t.numel()) {
            return Err(bad(
                py,
                format!(
                    "host write of `{}`: data of shape {shape:?} does not match the tensor's shape {:?} ({} elements)",
                    t.name(),
                    t.shape(),
                    t.numel()
                ),
            ));
        }
        let kind: String = arr.getattr("dtype")?.getattr("kind")?.extract()?;
        let dt = t.dtype();
        let ok = match kind.as_str() {
            "f" => dt.is_float(),
            "i" | "u" | "b" => true,
            _ => false,
        };
        if !ok {
            let np_dt: String = arr.getattr("dtype")?.str()?.extract()?;
            return Err(bad(
                py,
                format!("host write of `{}` ({dt}): numpy dtype {np_dt} cannot be written to a {dt} tensor", t.name()),
            ));
        }
        if !dt.is_float() && size > 0 {
            let (lo, hi): (i128, i128) = match dt {
                DType::I32 => (i32::MIN.into(), i32::MAX.into()),
                DType::I16 => (i16::MIN.into(), i16::MAX.into()),
                _ => (i8::MIN.into(), i8::MAX.into()),
            };
            let min: i128 = arr.call_method0("min")?.call_method0("__int__")?.extract()?;
            let max: i128 = arr.call_method0("max")?.call_method0("__int__")?.extract()?;
            if min < lo || max > hi {
                return Err(bad(
                    py,
                    format!("host write of `{}` ({dt}): values from {min} to {max} do not fit in {dt}", t.name()),
                ));
            }
        }
        match numpy_name(dt) {
            Some(name) => {
                // The array's own bytes go straight into simulated memory: numpy converts (or
                // gathers a strided view) only when the array is not already C-contiguous of
                // the tensor's dtype.
                let arr = np.call_method1("ascontiguousarray", (arr, name))?;
                let buf = PyUntypedBuffer::get(&arr)?;
                // SAFETY: a C-contiguous buffer of `len_bytes` bytes, held (and the GIL with it,
                // so no Python code can change or free the array) while the slice is used.
                let bytes = unsafe { std::slice::from_raw_parts(buf.buf_ptr() as *const u8, buf.len_bytes()) };
                self.with(py, |w| w.write_bytes(t, rank, bytes))
            }
            None => {
                let bytes = arr.call_method1("astype", ("<f8",))?.call_method0("tobytes")?;
                let vals: Vec<f64> = bytes
                    .cast::<PyBytes>()?
                    .as_bytes()
                    .chunks_exact(8)
                    .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                    .collect();
                self.with(py, |w| w.write_f64(t, rank, &vals))
            }
        }
    }
    /// `rank`'s copy of `tensor` as a numpy array of its shape (bf16 as float32, exact).
    fn read<'py>(&self, py: Python<'py>, tensor: PyRef<'_, PyTensor>, rank: usize) -> PyResult<Bound<'py, PyAny>> {
        let t = &tensor.0;
        let np = py.import("numpy")?;
        match numpy_name(t.dtype()) {
            Some(name) => {
                let out = np.call_method1("empty", (t.shape().to_vec(), name))?;
                self.fill(py, t, rank, &out)?;
                Ok(out)
            }
            None => {
                let vals = self.with_ref(py, |w| w.read_f64(t, rank))?;
                let bytes: Vec<u8> = vals.iter().flat_map(|&v| (v as f32).to_le_bytes()).collect();
                let arr = np.call_method1("frombuffer", (PyBytes::new(py, &bytes), "<f4"))?;
                arr.call_method1("reshape", (t.shape().to_vec(),))?.call_method0("copy")
            }
        }
    }
    /// Lends `array`, the host's own numpy array, to `rank`'s copy of the GM tensor `tensor`
    /// until `end_loans()`, and returns True: staging it and reading it back then copy
    /// nothing. `writable=True` lets kernels write the array in place (an output: it holds
    /// the results as the run leaves them); otherwise a kernel's first write gives the copy
    /// bytes of its own and the array stays as it was. Returns False, nothing lent, when
    /// `array` is not a C-contiguous array of the tensor's dtype and size (writeable, for
    /// `writable`) or the world keeps no values: write it instead. `tensor` must be a whole
    /// GM tensor (`alloc_tensor`'s), not a view. Do not resize or free the array (nor, while a run goes on, change it) until
    /// the loans end.
    #[pyo3(name = "lend", signature = (tensor, rank, array, writable = false))]
    fn lend_array(
        &self,
        py: Python<'_>,
        tensor: PyRef<'_, PyTensor>,
        rank: usize,
        array: &Bound<'_, PyAny>,
        writable: bool,
    ) -> PyResult<bool> {
        let t = &tensor.0;
        if !self.with_ref(py, |w| Ok(w.has_payload()))? || !fits(py, t, array, writable)? {
            return Ok(false);
        }
        let buf = PyUntypedBuffer::get(array)?;
        if (writable && buf.readonly()) || !buf.is_c_contiguous() || buf.len_bytes() != t.nbytes() {
            return Ok(false);
        }
        let (ptr, len) = (buf.buf_ptr() as *mut u8, buf.len_bytes());
        // SAFETY: `buf` holds the array's buffer (numpy refuses to resize an array whose buffer
        // is held) until `end_loans` drops it after ending the loans; the caller promises not
        // to touch the array while a run goes on.
        self.with(py, |w| unsafe { w.lend(t, rank, ptr, len, writable) })?;
        lock(&self.loans).push(buf);
        Ok(true)
    }
    /// Ends every loan of `lend`: the arrays are the host's alone again, and each lent GM copy
    /// reads as zeros until written.
    fn end_loans(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, |w| {
            w.end_loans();
            Ok(())
        })?;
        lock(&self.loans).clear();
        Ok(())
    }
    /// Reads `rank`'s copy of `tensor` straight into `out` when `out` is a writable
    /// C-contiguous numpy array of the tensor's dtype and element count (any shape), and returns
    /// True; returns False, `out` untouched, when it is not (bf16 tensors never are: read them
    /// with `read`).
    fn read_into(
        &self,
        py: Python<'_>,
        tensor: PyRef<'_, PyTensor>,
        rank: usize,
        out: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let t = &tensor.0;
        if !fits(py, t, out, true)? {
            return Ok(false);
        }
        self.fill(py, t, rank, out)?;
        Ok(true)
    }
    /// Queues `dispatch` on chip `rank`.
    fn dispatch(&self, py: Python<'_>, rank: usize, dispatch: PyRef<'_, PyDispatch>) -> PyResult<()> {
        let d = self.bind(py, &dispatch);
        self.with(py, |w| w.dispatch(rank, d))
    }
    /// Queues `dispatch` on every member of `dom`, ranks answered for that domain.
    fn dispatch_all(&self, py: Python<'_>, dom: PyRef<'_, PyDomain>, dispatch: PyRef<'_, PyDispatch>) -> PyResult<()> {
        let d = self.bind(py, &dispatch);
        self.with(py, |w| w.dispatch_all(&dom.0, d))
    }
    /// Runs every queued dispatch to completion (the GIL released while the engine runs).
    /// Raises `DeadlockError` or `LivelockError` with the report, `BudgetError` when the run
    /// passes `max_sim_time_us` / `max_events` (this call's, else the world's),
    /// `MemoryLimitError` before it starts when its memory estimate exceeds `max_memory` (bytes;
    /// default: what the host has available), the error a
    /// kernel ended the run with, or `KeyboardInterrupt` on Ctrl-C (the run stops between
    /// two events).
    #[pyo3(signature = (*, max_sim_time_us = None, max_events = None, livelock_polls = None, max_memory = None))]
    fn run(
        &self,
        py: Python<'_>,
        max_sim_time_us: Option<f64>,
        max_events: Option<u64>,
        livelock_polls: Option<u64>,
        max_memory: Option<u64>,
    ) -> PyResult<PyRunReport> {
        // A checked or traced run records each operation's Python line (findings and trace
        // spans name it).
        let record = self.option(py, |o| o.check || o.trace)?;
        self.shared.record.store(record, Ordering::Relaxed);
        let budgets = budgets(py, max_sim_time_us, max_events, livelock_polls, max_memory)?;
        let inner = self.engine(py, |w| within(w, budgets, |w| w.run()))?;
        let report = PyRunReport::new(py, inner, self.size, &|seed, s| self.shared.line_of(seed, s))?;
        Ok(report.with_lines(self.shared.op_lines()))
    }
    /// Runs the queued dispatches under the protocol checker: unperturbed, then once per seed
    /// `1..=seeds` with timing jitter of up to `op_jitter_ns` per transfer and
    /// `dispatch_jitter_ns` per dispatch start (defaults: the checker's); each run within the
    /// budgets (as `run`'s). Deadlocks and livelocks are findings.
    #[pyo3(signature = (seeds = 0, op_jitter_ns = None, dispatch_jitter_ns = None, *, max_sim_time_us = None, max_events = None, livelock_polls = None, max_memory = None))]
    #[allow(clippy::too_many_arguments)]
    fn check(
        &self,
        py: Python<'_>,
        seeds: u64,
        op_jitter_ns: Option<u64>,
        dispatch_jitter_ns: Option<u64>,
        max_sim_time_us: Option<f64>,
        max_events: Option<u64>,
        livelock_polls: Option<u64>,
        max_memory: Option<u64>,
    ) -> PyResult<PyCheckReport> {
        let budgets = budgets(py, max_sim_time_us, max_events, livelock_polls, max_memory)?;
        let mut opts = CheckOptions { seeds, ..CheckOptions::default() };
        if let Some(ns) = op_jitter_ns {
            opts.op_jitter = SimDuration::from_ns(ns);
        }
        if let Some(ns) = dispatch_jitter_ns {
            opts.dispatch_jitter = SimDuration::from_ns(ns);
        }
        check_options(py, &opts)?;
        self.shared.record.store(true, Ordering::Relaxed);
        let r = self.engine(py, |w| within(w, budgets, |w| w.check(&opts)));
        self.shared.record.store(false, Ordering::Relaxed);
        PyCheckReport::new(py, &r?, &|seed, s| self.shared.line_of(seed, s))
    }
    /// The simulated time, in microseconds, after which a run ends with `BudgetError`
    /// (default: one simulated hour).
    #[getter]
    fn get_max_sim_time_us(&self, py: Python<'_>) -> PyResult<f64> {
        self.option(py, |o| o.max_sim_time.as_ps() as f64 / 1e6)
    }
    #[setter]
    fn set_max_sim_time_us(&self, py: Python<'_>, us: f64) -> PyResult<()> {
        let t = sim_time_us(py, us)?;
        self.set_option(py, |o| o.max_sim_time = t)
    }
    /// The engine events after which a run ends with `BudgetError` (default: 2**32).
    #[getter]
    fn get_max_events(&self, py: Python<'_>) -> PyResult<u64> {
        self.option(py, |o| o.max_events)
    }
    #[setter]
    fn set_max_events(&self, py: Python<'_>, n: u64) -> PyResult<()> {
        self.set_option(py, |o| o.max_events = n)
    }
    /// The polls every running core makes, with nothing else happening, before a run ends
    /// with `LivelockError` (default 1000; 0: never).
    #[getter]
    fn get_livelock_polls(&self, py: Python<'_>) -> PyResult<u64> {
        self.option(py, |o| o.livelock_polls)
    }
    #[setter]
    fn set_livelock_polls(&self, py: Python<'_>, n: u64) -> PyResult<()> {
        self.set_option(py, |o| o.livelock_polls = n)
    }
    /// The bytes a run may hold: a run whose memory estimate (its payload, the machine, the
    /// kernels' stacks or threads) exceeds it is refused with `MemoryLimitError` before it
    /// starts. None (the default): what the host has available when the run starts.
    #[getter]
    fn get_max_memory(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        self.option(py, |o| o.max_memory)
    }
    #[setter]
    fn set_max_memory(&self, py: Python<'_>, n: Option<u64>) -> PyResult<()> {
        if n == Some(0) {
            return Err(bad(py, "max_memory=0: must be more than 0 bytes (None: what the host has available)"));
        }
        self.set_option(py, |o| o.max_memory = n)
    }
    /// Whether runs keep a timeline (for `RunReport.chrome_trace()`).
    #[getter]
    fn get_trace(&self, py: Python<'_>) -> PyResult<bool> {
        self.option(py, |o| o.trace)
    }
    #[setter]
    fn set_trace(&self, py: Python<'_>, on: bool) -> PyResult<()> {
        self.set_option(py, |o| o.trace = on)
    }
    /// Whether notifies may overtake payload (a relaxed fabric), to find missing fences.
    #[getter]
    fn get_relaxed_ordering(&self, py: Python<'_>) -> PyResult<bool> {
        self.option(py, |o| o.relaxed_ordering)
    }
    #[setter]
    fn set_relaxed_ordering(&self, py: Python<'_>, on: bool) -> PyResult<()> {
        self.set_option(py, |o| o.relaxed_ordering = on)
    }
    /// Whether plain runs also run the checker (findings in `RunReport.findings`).
    #[getter]
    fn get_check_races(&self, py: Python<'_>) -> PyResult<bool> {
        self.option(py, |o| o.check)
    }
    #[setter]
    fn set_check_races(&self, py: Python<'_>, on: bool) -> PyResult<()> {
        self.set_option(py, |o| o.check = on)
    }
    /// Records that `rank`'s copy of `tensor` was staged without values (timing-only worlds,
    /// which keep none): tasks reading it need no producer, as after `write`.
    fn mark_staged(&self, py: Python<'_>, tensor: PyRef<'_, PyTensor>, rank: usize) -> PyResult<()> {
        self.with(py, |w| w.mark_staged(&tensor.0, rank))
    }
    /// Whether the world keeps payload bytes (False after `set_timing_only`).
    #[getter]
    fn has_payload(&self, py: Python<'_>) -> PyResult<bool> {
        self.with_ref(py, |w| Ok(w.has_payload()))
    }
    /// Keeps no payload bytes from now on (same times, no values): before anything is
    /// written or queued.
    fn set_timing_only(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, |w| w.set_timing_only())
    }
    /// Perturbs every later run's timing with seeded jitter: each transfer and memory access
    /// up to `op_ns` later, each dispatch start up to `dispatch_ns` later (`seed=None`: off;
    /// the defaults are the checker's).
    #[pyo3(signature = (seed, op_ns = 500, dispatch_ns = 5000))]
    fn set_jitter(&self, py: Python<'_>, seed: Option<u64>, op_ns: u64, dispatch_ns: u64) -> PyResult<()> {
        jitter_ok(py, SimDuration::from_ns(op_ns), "op_ns")?;
        jitter_ok(py, SimDuration::from_ns(dispatch_ns), "dispatch_ns")?;
        self.set_option(py, |o| {
            o.jitter = seed.map(|seed| sim_core::Jitter {
                seed,
                op: SimDuration::from_ns(op_ns),
                dispatch: SimDuration::from_ns(dispatch_ns),
            })
        })
    }
    fn __repr__(&self) -> String {
        format!("<ranksim World: {} ranks>", self.size)
    }
}
