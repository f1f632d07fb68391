//! Python kernels: the `Core` handle a kernel function gets and its tiles (`kernel_task.rs`
//! binds a Python function to a sim-core `Task`).
//!
//! A kernel runs on its core's OS thread. It holds the GIL while Python runs and releases it
//! around every operation that talks to the scheduler, so other kernels and the engine go on.
//! The `Core` object points at the Rust core only while the kernel call lasts; afterwards (or
//! from another thread) every operation raises `BadArgument`.

use crate::enums::{AtomicArg, CmpArg, NotifyArg, WaitArg};
use crate::errors::{self, KERNEL_OP, bad};
use crate::program::{PyTensor, dtype, lock, round_mode};
use pyo3::prelude::*;
use sim_core::check::FindingSite;
use sim_core::{
    AtomicType, CmpOp, CopyOpts, Core, CubeTile, DeferCond, NotifyOp, SdmaHandle, SdmaOpts, SimError, SimResult, Tile,
    WaitCmp,
};
use std::collections::BTreeMap;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

/// This file, as Rust locations name it: a wait's caller recorded by `Core::wait` is here,
/// and is replaced by the kernel's Python line in reports.
pub(crate) const CORE_FILE: &str = file!();

/// A block of a task on a chip: (world rank, block, lane, task).
pub(crate) type BlockKey = (usize, usize, usize, String);

/// One operation a kernel issued while lines were recorded: its name, the buffers it named,
/// the core's clock before and after it (ps), which run of the block it was in, and the
/// kernel's Python line.
pub(crate) struct OpLine {
    op: &'static str,
    targets: Vec<String>,
    from_ps: u64,
    to_ps: u64,
    generation: u64,
    at: String,
}

/// What a world's Python kernels leave for the host, in key order (deterministic).
#[derive(Default)]
pub(crate) struct Shared {
    /// The Python line of every wait that has not returned successfully.
    pub(crate) waits: Mutex<BTreeMap<BlockKey, String>>,
    /// The Python line of each block's last poll (`test_signal`, `read_scalar`), for a
    /// livelock's report.
    pub(crate) polls: Mutex<BTreeMap<BlockKey, String>>,
    /// The exception each raising kernel raised.
    pub(crate) raised: Mutex<BTreeMap<BlockKey, Py<PyAny>>>,
    /// Whether kernels record the Python line of every memory and signal operation (on
    /// checked runs, so findings name Python lines).
    pub(crate) record: AtomicBool,
    /// The recorded operations, per block.
    pub(crate) lines: Mutex<BTreeMap<BlockKey, Vec<OpLine>>>,
    /// Per block, which run it is in (a block starting earlier than its last end on the
    /// simulated clock is in the next run: the checker reruns from time zero) and that end.
    generations: Mutex<BTreeMap<BlockKey, (u64, u64)>>,
}

impl Shared {
    /// Forgets the last run.
    pub(crate) fn clear(&self) {
        lock(&self.waits).clear();
        lock(&self.polls).clear();
        lock(&self.raised).clear();
        lock(&self.lines).clear();
        lock(&self.generations).clear();
    }

    /// The run a block starting at `now_ps` is in.
    pub(crate) fn generation(&self, key: &BlockKey, now_ps: u64) -> u64 {
        let mut g = lock(&self.generations);
        let e = g.entry(key.clone()).or_insert((0, 0));
        if now_ps < e.1 {
            e.0 += 1;
        }
        e.0
    }

    /// Notes where a block's kernel ended.
    pub(crate) fn ended(&self, key: &BlockKey, now_ps: u64) {
        if let Some(e) = lock(&self.generations).get_mut(key) {
            e.1 = e.1.max(now_ps);
        }
    }

    /// The Python line of the operation a checker finding's site names, in the run `seed`
    /// shows (None: the unperturbed run): the same block's operation of the same name on the
    /// same buffer whose clock span holds the site's time (else of the same name only).
    /// Every recorded operation of the run with its Python line, as `(chip, op, from_ps,
    /// to_ps, line)`, for naming a traced run's operation spans.
    pub(crate) fn op_lines(&self) -> Vec<(usize, &'static str, u64, u64, String)> {
        lock(&self.lines)
            .iter()
            .flat_map(|(k, ops)| ops.iter().map(move |o| (k.0, o.op, o.from_ps, o.to_ps, o.at.clone())))
            .collect()
    }

    pub(crate) fn line_of(&self, seed: Option<u64>, s: &FindingSite) -> Option<String> {
        let run = seed.unwrap_or(0);
        let same = |k: &BlockKey| (k.0, k.1, k.3.as_str()) == (s.rank, s.block, s.task.as_str());
        let names = |o: &OpLine| o.targets.iter().any(|t| s.target == *t || s.target.starts_with(&format!("{t}[")));
        let lines = lock(&self.lines);
        let t = s.time.as_ps();
        let candidates: Vec<&OpLine> = lines
            .iter()
            .filter(|(k, _)| same(k))
            .flat_map(|(_, ops)| ops)
            .filter(|o| o.generation == run && o.from_ps <= t && t <= o.to_ps && s.op.starts_with(o.op))
            .collect();
        if let Some(o) = candidates.iter().find(|o| names(o)).or(candidates.first()) {
            return Some(o.at.clone());
        }
        // The run was not told apart (a jittered rerun can start after the previous run's
        // end): the same block's operation of the same name on the same buffer in any run,
        // the one whose span holds the time first.
        let loose: Vec<&OpLine> = lines
            .iter()
            .filter(|(k, _)| same(k))
            .flat_map(|(_, ops)| ops)
            .filter(|o| s.op.starts_with(o.op) && names(o))
            .collect();
        if let Some(o) = loose.iter().find(|o| o.from_ps <= t && t <= o.to_ps).or(loose.first()) {
            return Some(o.at.clone());
        }
        if s.op.starts_with("wait")
            && let Some((_, at)) = lock(&self.waits).iter().find(|(k, _)| same(k))
        {
            return Some(at.clone());
        }
        None
    }
}

/// A raw core pointer that may cross into `Python::detach` (only its own thread uses it).
#[derive(Clone, Copy)]
struct CorePtr(*mut Core);
// SAFETY: the pointer is dereferenced only on the kernel thread that owns the core, while the
// kernel call that lent it is running (checked by `PyCore::ptr`).
unsafe impl Send for CorePtr {}

impl CorePtr {
    /// SAFETY: see the `Send` impl; the caller is the owning thread within the kernel call.
    unsafe fn get<'a>(self) -> &'a mut Core {
        unsafe { &mut *self.0 }
    }
}

/// A kernel's handle on its core: the Rust `Core`'s operations under the same names, the
/// hand-written ones (`ranksim.Core`, a subclass in `tile_ops.rs`, adds the tile operations
/// written from their list).
#[pyclass(name = "CoreBase", module = "ranksim", frozen, subclass)]
pub(crate) struct PyCore {
    ptr: AtomicPtr<Core>,
    owner: ThreadId,
    key: BlockKey,
    shared: Arc<Shared>,
    /// Which run of its block this is (see `Shared::generation`).
    generation: u64,
    /// The first Rust error an operation raised, returned as the kernel's error if the
    /// kernel lets the exception escape.
    last_err: Mutex<Option<SimError>>,
}

impl PyCore {
    /// The handle of `core` for one call of the kernel of block `key` (its `generation`-th
    /// run); valid until [`PyCore::detach`].
    pub(crate) fn attach(core: &mut Core, key: BlockKey, shared: Arc<Shared>, generation: u64) -> PyCore {
        PyCore {
            ptr: AtomicPtr::new(core as *mut Core),
            owner: std::thread::current().id(),
            key,
            shared,
            generation,
            last_err: Mutex::new(None),
        }
    }

    /// Ends the handle's use of its core (every later operation raises) and returns the first
    /// Rust error an operation raised, if any.
    pub(crate) fn detach(&self) -> Option<SimError> {
        self.ptr.store(null_mut(), Ordering::Release);
        lock(&self.last_err).take()
    }
}

/// A tile in a core's unified buffer (opaque: pass it to operations; `numpy()` copies it out).
#[pyclass(name = "Tile", module = "ranksim", frozen)]
pub(crate) struct PyTile(pub(crate) Tile);

/// The face a tile class shows Python: its shape, valid shape and dtype and its values
/// (`$tile` bound to the object, `$get` the `&Tile` it holds), then the class's own methods.
macro_rules! tile_face {
    ($class:ty, $tile:ident => $get:expr, $repr:literal, { $($own:tt)* }) => {
        #[pymethods]
        impl $class {
            /// `(rows, cols)` as allocated.
            #[getter]
            fn shape(&self) -> (usize, usize) {
                let $tile = self;
                let t: &Tile = $get;
                t.shape()
            }
            /// `(rows, cols)` holding data.
            #[getter]
            fn valid_shape(&self) -> (usize, usize) {
                let $tile = self;
                let t: &Tile = $get;
                t.valid_shape()
            }
            /// The element type's short name.
            #[getter]
            fn dtype(&self) -> &'static str {
                let $tile = self;
                let t: &Tile = $get;
                t.dtype().name()
            }
            /// The values as a list of rows of floats (exact for every dtype).
            fn tolist(&self) -> Vec<Vec<f64>> {
                let $tile = self;
                let t: &Tile = $get;
                let (r, c) = t.shape();
                (0..r).map(|i| (0..c).map(|j| t.get_f64(i, j)).collect()).collect()
            }
            /// The values as a float64 numpy array of the tile's shape.
            fn numpy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                py.import("numpy")?.call_method1("array", (self.tolist(), "float64"))
            }
            fn __repr__(&self) -> String {
                format!($repr, self.0)
            }
            $($own)*
        }
    };
}

tile_face!(PyTile, t => &t.0, "<ranksim tile {:?}>", {});

/// A tile in one of an AIC core's buffers (`buf`: "L1", "L0A", "L0B" or "L0C"); opaque as a
/// `Tile` is (`numpy()` copies it out).
#[pyclass(name = "CubeTile", module = "ranksim", frozen)]
pub(crate) struct PyCubeTile(pub(crate) CubeTile);

tile_face!(PyCubeTile, t => t.0.tile(), "<ranksim cube tile {:?}>", {
    /// The buffer it sits in: "L1", "L0A", "L0B" or "L0C".
    #[getter]
    fn buf(&self) -> String {
        self.0.buf().to_string()
    }
});

impl PyCore {
    /// The core, if called on its own thread during its kernel call.
    fn ptr(&self, py: Python<'_>) -> PyResult<CorePtr> {
        let p = self.ptr.load(Ordering::Acquire);
        if p.is_null() {
            return Err(bad(py, format!("core of task `{}` used after its kernel returned", self.key.3)));
        }
        if std::thread::current().id() != self.owner {
            return Err(bad(py, format!("core of task `{}` used from another thread than its kernel's", self.key.3)));
        }
        Ok(CorePtr(p))
    }

    /// The Python exception for `e`, remembering `e` for the kernel's result; an operation's
    /// error names the kernel's Python line that called it.
    fn fail(&self, py: Python<'_>, e: SimError) -> PyErr {
        let e = at_line(e, &python_line(py));
        let err = errors::sim(py, &e);
        lock(&self.last_err).get_or_insert(e);
        err
    }

    /// Runs `f` on the core with the GIL held (local work: no request to the scheduler).
    pub(crate) fn local<R>(&self, py: Python<'_>, f: impl FnOnce(&mut Core) -> SimResult<R>) -> PyResult<R> {
        let p = self.ptr(py)?;
        // SAFETY: `ptr` checked the thread and the call.
        f(unsafe { p.get() }).map_err(|e| self.fail(py, e))
    }

    /// Runs operation `op` (`f`) on the core with the GIL released (it may block until the
    /// scheduler answers); on a recording run, notes its Python line and clock span.
    pub(crate) fn blocking<R: Send>(
        &self,
        py: Python<'_>,
        op: &'static str,
        targets: &[&PyTensor],
        f: impl FnOnce(&mut Core) -> SimResult<R> + Send,
    ) -> PyResult<R> {
        let p = self.ptr(py)?;
        let record = self.shared.record.load(Ordering::Relaxed);
        // SAFETY: `ptr` checked the thread and the call; the closure runs on this thread.
        let from_ps = if record { unsafe { p.get() }.now().as_ps() } else { 0 };
        // A greenlet kernel keeps the GIL: it switches to the driver, on this thread, rather
        // than waiting for another thread.
        let r = if crate::fibers::on_greenlets() {
            f(unsafe { p.get() })
        } else {
            py.detach(move || f(unsafe { p.get() }))
        };
        if record {
            let to_ps = unsafe { p.get() }.now().as_ps();
            let targets = targets.iter().map(|t| t.0.name().to_string()).collect();
            let line = OpLine { op, targets, from_ps, to_ps, generation: self.generation, at: python_line(py) };
            lock(&self.shared.lines).entry(self.key.clone()).or_default().push(line);
        }
        r.map_err(|e| self.fail(py, e))
    }

    /// A poll: its Python line is kept as the block's last, for a livelock's report.
    pub(crate) fn polling<R: Send>(
        &self,
        py: Python<'_>,
        op: &'static str,
        targets: &[&PyTensor],
        f: impl FnOnce(&mut Core) -> SimResult<R> + Send,
    ) -> PyResult<R> {
        let here = python_line(py);
        lock(&self.shared.polls).insert(self.key.clone(), here);
        self.blocking(py, op, targets, f)
    }

    /// A wait: its Python line is recorded until it returns, for a deadlock's report.
    pub(crate) fn waiting<R: Send>(
        &self,
        py: Python<'_>,
        targets: &[&PyTensor],
        f: impl FnOnce(&mut Core) -> SimResult<R> + Send,
    ) -> PyResult<R> {
        let here = python_line(py);
        lock(&self.shared.waits).insert(self.key.clone(), here);
        let r = self.blocking(py, "wait", targets, f)?;
        lock(&self.shared.waits).remove(&self.key);
        Ok(r)
    }
}

/// `e` with ` (at file:line in function)` after its message when it is an operation's own
/// error (a bad argument): so the error a run ends with names the kernel's line.
fn at_line(e: SimError, line: &str) -> SimError {
    match e {
        SimError::BadOp { site, op, msg } if op != KERNEL_OP => {
            SimError::BadOp { site, op, msg: format!("{msg} (at {line})") }
        }
        SimError::Invalid(msg) => SimError::Invalid(format!("{msg} (at {line})")),
        other => other,
    }
}

/// `file:line in function` of the kernel line calling us (frames of a layer written on top of
/// the bindings, such as `ranksim.pypto`, skipped).
fn python_line(py: Python<'_>) -> String {
    crate::frames::python_line(py)
}

/// A tile or a number, as the second operand of `cmp` and `select` may be.
enum Operand<'py> {
    Tile(PyRef<'py, PyTile>),
    Number(f64),
}

/// Argument `arg` of `op`: a tile or a number (a bool counts as 0 / 1).
fn tile_or_number<'py>(py: Python<'_>, op: &str, arg: &str, v: &Bound<'py, PyAny>) -> PyResult<Operand<'py>> {
    if let Ok(t) = v.extract::<PyRef<'py, PyTile>>() {
        return Ok(Operand::Tile(t));
    }
    match v.extract::<f64>() {
        Ok(s) => Ok(Operand::Number(s)),
        Err(_) => {
            let ty = v.get_type().name().map(|n| n.to_string()).unwrap_or_default();
            Err(bad(py, format!("{op}: `{arg}` must be a tile or a number, not {ty}")))
        }
    }
}

/// A 2-D tile shape from a shape list: `[rows, cols]`; `[n]` is `1 x n`; further leading
/// dimensions fold into the rows.
fn tile_shape(py: Python<'_>, op: &str, shape: &Bound<'_, PyAny>) -> PyResult<(usize, usize)> {
    let dims: Vec<usize> = match shape.extract::<usize>() {
        Ok(n) => vec![n],
        Err(_) => shape
            .extract()
            .map_err(|_| bad(py, format!("{op}: the shape must be a list of non-negative ints, like [rows, cols]")))?,
    };
    match dims.split_last() {
        None => Err(bad(py, format!("{op}: the shape is empty; give [rows, cols] or [n]"))),
        Some((&cols, lead)) => {
            let rows = lead.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
            rows.map(|r| (r, cols)).ok_or_else(|| bad(py, format!("{op}: the shape {dims:?} is too large")))
        }
    }
}

/// Copy options from keyword arguments.
fn copy_opts(
    py: Python<'_>,
    dst_offsets: Option<Vec<usize>>,
    src_offsets: Option<Vec<usize>>,
    shape: Option<Vec<usize>>,
    chunks: Option<(usize, usize)>,
    atomic: AtomicType,
    pipeline: bool,
) -> PyResult<CopyOpts> {
    let mut o = CopyOpts::new().pipeline(pipeline).atomic(atomic);
    match (dst_offsets, src_offsets, shape) {
        (Some(d), Some(s), Some(sh)) => o = o.region(&d, &s, &sh),
        (None, None, None) => {}
        _ => return Err(bad(py, "dst_offsets, src_offsets and shape go together (PyPTO requires all three)")),
    }
    if let Some((r, c)) = chunks {
        o = o.chunks(r, c);
    }
    Ok(o)
}

#[pymethods]
impl PyCore {
    /// This chip's dense rank in the dispatch's comm domain (`pld.rank`).
    fn rank(&self, py: Python<'_>) -> PyResult<usize> {
        self.local(py, |c| Ok(c.rank()))
    }
    /// Number of ranks in the dispatch's comm domain.
    fn nranks(&self, py: Python<'_>) -> PyResult<usize> {
        self.local(py, |c| Ok(c.nranks()))
    }
    /// This chip's world rank.
    fn world_rank(&self, py: Python<'_>) -> PyResult<usize> {
        self.local(py, |c| Ok(c.world_rank()))
    }
    /// This chip's dense rank in the domain of window `t`, or None.
    fn rank_in(&self, py: Python<'_>, t: &PyTensor) -> PyResult<Option<usize>> {
        self.local(py, |c| Ok(c.rank_in(&t.0)))
    }
    /// This block's index in its task.
    fn block_idx(&self, py: Python<'_>) -> PyResult<usize> {
        self.local(py, |c| Ok(c.block_idx()))
    }
    /// Number of blocks of the task.
    fn block_num(&self, py: Python<'_>) -> PyResult<usize> {
        self.local(py, |c| Ok(c.block_num()))
    }
    /// Which lane of its block this core is.
    fn sub_block_idx(&self, py: Python<'_>) -> PyResult<usize> {
        self.local(py, |c| Ok(c.sub_block_idx()))
    }
    /// Lanes per block.
    fn sub_block_num(&self, py: Python<'_>) -> PyResult<usize> {
        self.local(py, |c| Ok(c.sub_block_num()))
    }
    /// The core's clock, in picoseconds of simulated time.
    fn now(&self, py: Python<'_>) -> PyResult<u64> {
        self.local(py, |c| Ok(c.now().as_ps()))
    }
    /// Scalar work: advances the core's clock by `cycles` of the chip clock.
    fn compute(&self, py: Python<'_>, cycles: u64) -> PyResult<()> {
        self.local(py, |c| {
            c.compute(cycles);
            Ok(())
        })
    }
    /// Loads a region of a GM tensor or of this rank's window into a tile (TLOAD). With
    /// `valid_shape`, only that part of the region is read: the tile keeps `shape`, the rest
    /// is zero, and the load moves only the valid bytes.
    #[pyo3(signature = (src, offsets, shape, valid_shape = None))]
    fn load(
        &self,
        py: Python<'_>,
        src: &PyTensor,
        offsets: Vec<usize>,
        shape: Vec<usize>,
        valid_shape: Option<Vec<usize>>,
    ) -> PyResult<PyTile> {
        match valid_shape {
            None => self.blocking(py, "load", &[src], |c| c.load(&src.0, &offsets, &shape)),
            Some(v) => self.blocking(py, "load", &[src], |c| c.load_valid(&src.0, &offsets, &shape, &v)),
        }
        .map(PyTile)
    }
    /// `load(src, offsets, shape, valid_shape)` under the Rust name.
    fn load_valid(
        &self,
        py: Python<'_>,
        src: &PyTensor,
        offsets: Vec<usize>,
        shape: Vec<usize>,
        valid_shape: Vec<usize>,
    ) -> PyResult<PyTile> {
        self.load(py, src, offsets, shape, Some(valid_shape))
    }
    /// Stores a tile into a region of a GM tensor or this rank's window (TSTORE). Posted.
    fn store(&self, py: Python<'_>, tile: &PyTile, dst: &PyTensor, offsets: Vec<usize>) -> PyResult<()> {
        self.blocking(py, "store", &[dst], |c| c.store(&tile.0, &dst.0, &offsets))
    }
    /// Converts a tile to `dtype` with a rounding mode (TCVT).
    #[pyo3(signature = (a, dtype, mode = "rint"))]
    fn cast(&self, py: Python<'_>, a: &PyTile, dtype: &Bound<'_, PyAny>, mode: &str) -> PyResult<PyTile> {
        let (to, m) = (self::dtype(py, dtype)?, round_mode(py, mode)?);
        self.local(py, |c| c.cast(&a.0, to, m)).map(PyTile)
    }
    /// The same elements as a `rows x cols` tile: `reshape(t, rows, cols)` or `reshape(t,
    /// shape)` with a shape list (`[n]` is `1 x n`; leading dimensions fold into the rows).
    #[pyo3(signature = (a, rows, cols = None))]
    fn reshape(&self, py: Python<'_>, a: &PyTile, rows: &Bound<'_, PyAny>, cols: Option<usize>) -> PyResult<PyTile> {
        let (r, c) = match cols {
            Some(c) => {
                (rows.extract::<usize>().map_err(|_| bad(py, "reshape: rows must be an int when cols is given"))?, c)
            }
            None => tile_shape(py, "reshape", rows)?,
        };
        self.local(py, |core| core.reshape(&a.0, r, c)).map(PyTile)
    }
    /// `1` where `a cmp b` holds and `0` elsewhere, a tile of `a`'s dtype and shape (TCMP, or
    /// TCMPS when `b` is a number). `cmp` is "eq", "ne", "lt", "le", "gt", "ge" or PyPTO's
    /// `cmp_type` code 0-5.
    #[pyo3(signature = (a, b, cmp = None))]
    fn cmp(&self, py: Python<'_>, a: &PyTile, b: &Bound<'_, PyAny>, cmp: Option<CmpArg>) -> PyResult<PyTile> {
        let op = cmp.map_or(CmpOp::Eq, |c| c.0);
        match tile_or_number(py, "cmp", "b", b)? {
            Operand::Tile(t) => self.local(py, |c| c.cmp(&a.0, &t.0, op)),
            Operand::Number(s) => self.local(py, |c| c.cmps(&a.0, s, op)),
        }
        .map(PyTile)
    }
    /// `a` where `mask` is not zero and `b` elsewhere (TSEL; TSELS when `b` is a number).
    /// `mask` is a `cmp` result, or any tile of `a`'s shape.
    fn select(&self, py: Python<'_>, mask: &PyTile, a: &PyTile, b: &Bound<'_, PyAny>) -> PyResult<PyTile> {
        match tile_or_number(py, "select", "b", b)? {
            Operand::Tile(t) => self.local(py, |c| c.select(&mask.0, &a.0, &t.0)),
            Operand::Number(s) => self.local(py, |c| c.selects(&mask.0, &a.0, s)),
        }
        .map(PyTile)
    }
    /// A tile of `shape` (`[rows, cols]`, `[n]` for `1 x n`) and `dtype` filled with `value`
    /// (TEXPANDS, `pl.full`).
    fn full(&self, py: Python<'_>, shape: &Bound<'_, PyAny>, dtype: &Bound<'_, PyAny>, value: f64) -> PyResult<PyTile> {
        let (r, c) = tile_shape(py, "full", shape)?;
        let dt = self::dtype(py, dtype)?;
        self.local(py, |core| core.full(dt, r, c, value)).map(PyTile)
    }
    /// Changes cell `offsets` of `signal` in `peer`'s window (TNOTIFY): `op` a `NotifyOp` (or
    /// "add" / "set", or its code).
    #[pyo3(signature = (signal, peer, offsets, value = 1, op = NotifyArg(NotifyOp::AtomicAdd)))]
    fn notify(
        &self,
        py: Python<'_>,
        signal: &PyTensor,
        peer: usize,
        offsets: Vec<usize>,
        value: i32,
        op: NotifyArg,
    ) -> PyResult<()> {
        let op = op.0;
        self.blocking(py, "notify", &[signal], |c| c.notify(&signal.0, peer, &offsets, value, op))
    }
    /// Blocks until cell `offsets` of this rank's `signal` satisfies `cmp expected` (TWAIT).
    #[pyo3(signature = (signal, offsets, expected, cmp = WaitArg(WaitCmp::Ge)))]
    fn wait(
        &self,
        py: Python<'_>,
        signal: &PyTensor,
        offsets: Vec<usize>,
        expected: i32,
        cmp: WaitArg,
    ) -> PyResult<()> {
        let cmp = cmp.0;
        self.waiting(py, &[signal], |c| c.wait(&signal.0, &offsets, expected, cmp))
    }
    /// Blocks until every cell of a region of this rank's `signal` satisfies `cmp expected`.
    #[pyo3(signature = (signal, offsets, shape, expected, cmp = WaitArg(WaitCmp::Ge)))]
    fn wait_all(
        &self,
        py: Python<'_>,
        signal: &PyTensor,
        offsets: Vec<usize>,
        shape: Vec<usize>,
        expected: i32,
        cmp: WaitArg,
    ) -> PyResult<()> {
        let cmp = cmp.0;
        self.waiting(py, &[signal], |c| c.wait_all(&signal.0, &offsets, &shape, expected, cmp))
    }
    /// Whether cell `offsets` satisfies `cmp expected` now, without waiting (TTEST).
    #[pyo3(signature = (signal, offsets, expected, cmp = WaitArg(WaitCmp::Ge)))]
    fn test_signal(
        &self,
        py: Python<'_>,
        signal: &PyTensor,
        offsets: Vec<usize>,
        expected: i32,
        cmp: WaitArg,
    ) -> PyResult<bool> {
        let cmp = cmp.0;
        self.polling(py, "test", &[signal], |c| c.test_signal(&signal.0, &offsets, expected, cmp))
    }
    /// Loads a region of `peer`'s copy of window `target` (TLOAD from peer GM); with
    /// `valid_shape`, only that part (the rest of the tile is zero).
    #[pyo3(signature = (target, peer, offsets, shape, valid_shape = None))]
    fn remote_load(
        &self,
        py: Python<'_>,
        target: &PyTensor,
        peer: usize,
        offsets: Vec<usize>,
        shape: Vec<usize>,
        valid_shape: Option<Vec<usize>>,
    ) -> PyResult<PyTile> {
        let t = &target.0;
        match valid_shape {
            None => self.blocking(py, "remote_load", &[target], |c| c.remote_load(t, peer, &offsets, &shape)),
            Some(v) => {
                self.blocking(py, "remote_load", &[target], |c| c.remote_load_valid(t, peer, &offsets, &shape, &v))
            }
        }
        .map(PyTile)
    }
    /// `remote_load(target, peer, offsets, shape, valid_shape)` under the Rust name.
    fn remote_load_valid(
        &self,
        py: Python<'_>,
        target: &PyTensor,
        peer: usize,
        offsets: Vec<usize>,
        shape: Vec<usize>,
        valid_shape: Vec<usize>,
    ) -> PyResult<PyTile> {
        self.remote_load(py, target, peer, offsets, shape, Some(valid_shape))
    }
    /// Stores a tile into `peer`'s copy of window `target` (TSTORE to peer GM). Posted.
    #[pyo3(signature = (tile, target, peer, offsets, atomic = AtomicArg(AtomicType::None)))]
    fn remote_store(
        &self,
        py: Python<'_>,
        tile: &PyTile,
        target: &PyTensor,
        peer: usize,
        offsets: Vec<usize>,
        atomic: AtomicArg,
    ) -> PyResult<()> {
        let at = atomic.0;
        self.blocking(py, "remote_store", &[target], |c| c.remote_store(&tile.0, &target.0, peer, &offsets, at))
    }
    /// Copies local `src` into `peer`'s window `dst` through UB (TPUT).
    #[pyo3(signature = (dst, peer, src, dst_offsets = None, src_offsets = None, shape = None, chunks = None, atomic = AtomicArg(AtomicType::None), pipeline = false))]
    #[allow(clippy::too_many_arguments)]
    fn put(
        &self,
        py: Python<'_>,
        dst: &PyTensor,
        peer: usize,
        src: &PyTensor,
        dst_offsets: Option<Vec<usize>>,
        src_offsets: Option<Vec<usize>>,
        shape: Option<Vec<usize>>,
        chunks: Option<(usize, usize)>,
        atomic: AtomicArg,
        pipeline: bool,
    ) -> PyResult<()> {
        let o = copy_opts(py, dst_offsets, src_offsets, shape, chunks, atomic.0, pipeline)?;
        self.blocking(py, "put", &[dst, src], |c| c.put(&dst.0, peer, &src.0, &o))
    }
    /// Copies `peer`'s window `src` into local `dst` through UB (TGET).
    #[pyo3(signature = (dst, peer, src, dst_offsets = None, src_offsets = None, shape = None, chunks = None, atomic = AtomicArg(AtomicType::None), pipeline = false))]
    #[allow(clippy::too_many_arguments)]
    fn get(
        &self,
        py: Python<'_>,
        dst: &PyTensor,
        peer: usize,
        src: &PyTensor,
        dst_offsets: Option<Vec<usize>>,
        src_offsets: Option<Vec<usize>>,
        shape: Option<Vec<usize>>,
        chunks: Option<(usize, usize)>,
        atomic: AtomicArg,
        pipeline: bool,
    ) -> PyResult<()> {
        let o = copy_opts(py, dst_offsets, src_offsets, shape, chunks, atomic.0, pipeline)?;
        self.blocking(py, "get", &[dst, src], |c| c.get(&dst.0, peer, &src.0, &o))
    }
    /// Blocks until every write and notify this core issued has landed (`pld.system.fence`).
    fn fence(&self, py: Python<'_>) -> PyResult<()> {
        self.blocking(py, "fence", &[], |c| c.fence())
    }
    /// Reads one element of a GM tensor or window (`pl.read`).
    fn read_scalar(&self, py: Python<'_>, src: &PyTensor, offsets: Vec<usize>) -> PyResult<f64> {
        self.polling(py, "read_scalar", &[src], |c| c.read_scalar(&src.0, &offsets))
    }
    /// Writes one element of a GM tensor or window (`pl.write`).
    fn write_scalar(&self, py: Python<'_>, dst: &PyTensor, offsets: Vec<usize>, value: f64) -> PyResult<()> {
        self.blocking(py, "write_scalar", &[dst], |c| c.write_scalar(&dst.0, &offsets, value))
    }
    /// Asserts a region of this rank's `signal` is all zero (a self-clearing protocol's end).
    fn expect_clear(&self, py: Python<'_>, signal: &PyTensor, offsets: Vec<usize>, shape: Vec<usize>) -> PyResult<()> {
        self.blocking(py, "expect_clear", &[signal], |c| c.expect_clear(&signal.0, &offsets, &shape))
    }
    /// Registers deferred conditions `[(signal, offsets, expected), ...]` (each cell, read as
    /// unsigned, must reach `expected`) for this block's task and releases the core
    /// (`pld.system.defer_wait`); return right after it.
    fn defer_wait(&self, py: Python<'_>, conds: Vec<(PyRef<'_, PyTensor>, Vec<usize>, u32)>) -> PyResult<()> {
        let conds: Vec<DeferCond> = conds
            .into_iter()
            .map(|(t, offsets, expected)| DeferCond { signal: t.0.clone(), offsets, expected })
            .collect();
        self.waiting(py, &[], |c| c.defer_wait(&conds))
    }
    /// Starts an SDMA copy of local `src` into `peer`'s window `dst` (TPUT_ASYNC); returns a
    /// handle at once. Wait it with `wait_async` before notifying the peer. `block_bytes`
    /// sizes its descriptors and `queues` stripes them over that many channels (pto-isa's
    /// session options).
    #[pyo3(signature = (dst, peer, src, dst_offsets = None, src_offsets = None, shape = None, channel = None, atomic = AtomicArg(AtomicType::None), block_bytes = None, queues = None))]
    #[allow(clippy::too_many_arguments)]
    fn put_async(
        &self,
        py: Python<'_>,
        dst: &PyTensor,
        peer: usize,
        src: &PyTensor,
        dst_offsets: Option<Vec<usize>>,
        src_offsets: Option<Vec<usize>>,
        shape: Option<Vec<usize>>,
        channel: Option<usize>,
        atomic: AtomicArg,
        block_bytes: Option<u64>,
        queues: Option<usize>,
    ) -> PyResult<PySdmaHandle> {
        let o = sdma_opts(py, (dst_offsets, src_offsets, shape), channel, atomic.0, (block_bytes, queues))?;
        self.blocking(py, "put_async", &[dst, src], |c| c.put_async(&dst.0, peer, &src.0, &o)).map(PySdmaHandle::new)
    }
    /// Starts an SDMA copy of `peer`'s window `src` into local `dst` (TGET_ASYNC).
    #[pyo3(signature = (dst, peer, src, dst_offsets = None, src_offsets = None, shape = None, channel = None, atomic = AtomicArg(AtomicType::None), block_bytes = None, queues = None))]
    #[allow(clippy::too_many_arguments)]
    fn get_async(
        &self,
        py: Python<'_>,
        dst: &PyTensor,
        peer: usize,
        src: &PyTensor,
        dst_offsets: Option<Vec<usize>>,
        src_offsets: Option<Vec<usize>>,
        shape: Option<Vec<usize>>,
        channel: Option<usize>,
        atomic: AtomicArg,
        block_bytes: Option<u64>,
        queues: Option<usize>,
    ) -> PyResult<PySdmaHandle> {
        let o = sdma_opts(py, (dst_offsets, src_offsets, shape), channel, atomic.0, (block_bytes, queues))?;
        self.blocking(py, "get_async", &[dst, src], |c| c.get_async(&dst.0, peer, &src.0, &o)).map(PySdmaHandle::new)
    }
    /// Whether the SDMA transfer has completed (one poll).
    fn test_async(&self, py: Python<'_>, handle: &PySdmaHandle) -> PyResult<bool> {
        let g = lock(&handle.0);
        let Some(h) = g.as_ref() else {
            return Err(bad(py, "test_async: this SDMA handle was already waited"));
        };
        self.blocking(py, "test_async", &[], |c| c.test_async(h))
    }
    /// Blocks until the SDMA transfer has completed; consumes the handle.
    fn wait_async(&self, py: Python<'_>, handle: &PySdmaHandle) -> PyResult<()> {
        let Some(h) = lock(&handle.0).take() else {
            return Err(bad(py, "wait_async: this SDMA handle was already waited"));
        };
        self.blocking(py, "wait_async", &[], move |c| c.wait_async(h))
    }
    /// Blocks until the transfer and every earlier one of this block have completed, and
    /// closes them all (pto-isa's wait on a session's latest event); consumes the handle.
    fn wait_async_through(&self, py: Python<'_>, handle: &PySdmaHandle) -> PyResult<()> {
        let Some(h) = lock(&handle.0).take() else {
            return Err(bad(py, "wait_async_through: this SDMA handle was already waited"));
        };
        self.blocking(py, "wait_async_through", &[], move |c| c.wait_async_through(h))
    }
    /// Loads a region of a GM tensor or this rank's window into L1 (a cube task's TLOAD to
    /// the Mat buffer).
    fn load_l1(&self, py: Python<'_>, src: &PyTensor, offsets: Vec<usize>, shape: Vec<usize>) -> PyResult<PyCubeTile> {
        self.blocking(py, "load_l1", &[src], |c| c.load_l1(&src.0, &offsets, &shape)).map(PyCubeTile)
    }
    /// Stores an L0C accumulator into a GM tensor or this rank's window through the FIXPIPE
    /// (f32 to f16 / bf16 rounds to nearest). Posted.
    fn store_acc(&self, py: Python<'_>, acc: &PyCubeTile, dst: &PyTensor, offsets: Vec<usize>) -> PyResult<()> {
        self.blocking(py, "store_acc", &[dst], |c| c.store_acc(&acc.0, &dst.0, &offsets))
    }
    /// Cleans and invalidates a cache line (pto-isa's `dcci`): costs `chip.dcci_ns`.
    fn dcci(&self, py: Python<'_>) -> PyResult<()> {
        self.blocking(py, "dcci", &[], |c| c.dcci())
    }
    fn __repr__(&self) -> String {
        format!("<ranksim core: rank {} block {} task `{}`>", self.key.0, self.key.1, self.key.3)
    }
}

/// An SDMA transfer in flight (`put_async` / `get_async`); `wait_async` consumes it.
#[pyclass(name = "SdmaHandle", module = "ranksim", frozen)]
pub(crate) struct PySdmaHandle(Mutex<Option<SdmaHandle>>);

impl PySdmaHandle {
    fn new(h: SdmaHandle) -> PySdmaHandle {
        PySdmaHandle(Mutex::new(Some(h)))
    }
}

#[pymethods]
impl PySdmaHandle {
    /// The SDMA channel the transfer runs on, or None once waited.
    #[getter]
    fn channel(&self) -> Option<usize> {
        lock(&self.0).as_ref().map(|h| h.channel())
    }
    /// How many channels its descriptors are striped over, or None once waited.
    #[getter]
    fn queues(&self) -> Option<usize> {
        lock(&self.0).as_ref().map(|h| h.queues())
    }
    /// Bytes the transfer moves, or None once waited.
    #[getter]
    fn bytes(&self) -> Option<usize> {
        lock(&self.0).as_ref().map(|h| h.bytes())
    }
}

/// The region keywords of an SDMA copy: destination offsets, source offsets, shape.
type Region = (Option<Vec<usize>>, Option<Vec<usize>>, Option<Vec<usize>>);

/// SDMA options from keyword arguments (`session`: block_bytes and queues).
fn sdma_opts(
    py: Python<'_>,
    region: Region,
    channel: Option<usize>,
    atomic: AtomicType,
    session: (Option<u64>, Option<usize>),
) -> PyResult<SdmaOpts> {
    let mut o = SdmaOpts::new().atomic(atomic);
    if let Some(b) = session.0 {
        o = o.block_bytes(b);
    }
    if let Some(q) = session.1 {
        o = o.queues(q);
    }
    match region {
        (Some(d), Some(s), Some(sh)) => o = o.region(&d, &s, &sh),
        (None, None, None) => {}
        _ => return Err(bad(py, "dst_offsets, src_offsets and shape go together (PyPTO requires all three)")),
    }
    if let Some(ch) = channel {
        o = o.channel(ch);
    }
    Ok(o)
}
