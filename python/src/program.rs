//! Host-side handles: tensors, domains, tasks and dispatches.

use crate::errors::bad;
use pyo3::prelude::*;
use sim_core::{ArgDir, DType, Domain, RoundMode, Tensor};
use std::sync::{Mutex, MutexGuard};

/// Locks `m`, ignoring poisoning (a panic already became a Python exception).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A dtype from a string (`"f32"`, `"bf16"`, PyPTO's `"float16"`, ...) or a `ranksim.dtype`.
pub(crate) fn dtype(py: Python<'_>, d: &Bound<'_, PyAny>) -> PyResult<DType> {
    let s: String = match d.getattr("value") {
        Ok(v) => v.extract()?,
        Err(_) => d.str()?.extract()?,
    };
    s.parse::<DType>().map_err(|e| bad(py, e))
}

/// `"rint"`, `"round"`, `"floor"`, `"ceil"`, `"trunc"` or `"odd"`.
pub(crate) fn round_mode(py: Python<'_>, s: &str) -> PyResult<RoundMode> {
    Ok(match s.to_ascii_lowercase().as_str() {
        "rint" => RoundMode::Rint,
        "round" => RoundMode::Round,
        "floor" => RoundMode::Floor,
        "ceil" => RoundMode::Ceil,
        "trunc" => RoundMode::Trunc,
        "odd" => RoundMode::Odd,
        o => return Err(bad(py, format!("unknown round mode `{o}`: expected rint, round, floor, ceil, trunc or odd"))),
    })
}

/// A GM tensor or a window (a view of one), as `alloc_tensor` / `alloc_window` return it.
#[pyclass(name = "Tensor", module = "ranksim", frozen)]
pub(crate) struct PyTensor(pub(crate) Tensor);

#[pymethods]
impl PyTensor {
    /// The tensor's name.
    #[getter]
    fn name(&self) -> String {
        self.0.name().to_string()
    }
    /// The element type's short name (`"f32"`, ...).
    #[getter]
    fn dtype(&self) -> &'static str {
        self.0.dtype().name()
    }
    /// The shape, as a tuple.
    #[getter]
    fn shape(&self) -> Vec<usize> {
        self.0.shape().to_vec()
    }
    /// Number of elements.
    #[getter]
    fn numel(&self) -> usize {
        self.0.numel()
    }
    /// Bytes of the view.
    #[getter]
    fn nbytes(&self) -> usize {
        self.0.nbytes()
    }
    /// Whether it is a window on a comm domain.
    #[getter]
    fn is_window(&self) -> bool {
        self.0.is_window()
    }
    /// A sub-region view (`offsets`, `shape`) of the same memory.
    fn slice(&self, py: Python<'_>, offsets: Vec<usize>, shape: Vec<usize>) -> PyResult<PyTensor> {
        self.0.slice(&offsets, &shape).map(PyTensor).map_err(|e| crate::errors::sim(py, &e))
    }
    /// The same bytes seen as another dtype and shape.
    fn view(&self, py: Python<'_>, dtype: &Bound<'_, PyAny>, shape: Vec<usize>) -> PyResult<PyTensor> {
        let dt = self::dtype(py, dtype)?;
        self.0.view(dt, &shape).map(PyTensor).map_err(|e| crate::errors::sim(py, &e))
    }
    fn __repr__(&self) -> String {
        let kind = if self.0.is_window() { "window" } else { "tensor" };
        format!("<ranksim {kind} `{}` {} {:?}>", self.0.name(), self.0.dtype(), self.0.shape())
    }
}

/// A comm domain: a set of chips (ranks) whose windows are symmetric.
#[pyclass(name = "Domain", module = "ranksim", frozen)]
pub(crate) struct PyDomain(pub(crate) Domain);

#[pymethods]
impl PyDomain {
    /// The domain's name.
    #[getter]
    fn name(&self) -> String {
        self.0.info().name().to_string()
    }
    /// Number of member ranks.
    #[getter]
    fn size(&self) -> usize {
        self.0.size()
    }
    /// Member chips (world ranks), in dense rank order.
    #[getter]
    fn members(&self) -> Vec<usize> {
        self.0.members().to_vec()
    }
    fn __len__(&self) -> usize {
        self.0.size()
    }
    fn __repr__(&self) -> String {
        format!("<ranksim domain `{}` members {:?}>", self.0.info().name(), self.0.members())
    }
}

/// What a task is made of until a `World` queues it (the kernel is bound to the world then).
pub(crate) struct TaskSpec {
    pub(crate) name: String,
    pub(crate) blocks: usize,
    pub(crate) kernel: Py<PyAny>,
    pub(crate) args: Vec<(ArgDir, Tensor)>,
    pub(crate) after: Vec<usize>,
    pub(crate) lanes: usize,
    pub(crate) cube: bool,
}

impl TaskSpec {
    fn clone_ref(&self, py: Python<'_>) -> TaskSpec {
        TaskSpec {
            name: self.name.clone(),
            blocks: self.blocks,
            kernel: self.kernel.clone_ref(py),
            args: self.args.clone(),
            after: self.after.clone(),
            lanes: self.lanes,
            cube: self.cube,
        }
    }
}

/// `Task(name, blocks, kernel)`: `blocks` copies of `kernel(core)` started together. The
/// declaration methods change the task and return it, so they chain.
#[pyclass(name = "Task", module = "ranksim", frozen)]
pub(crate) struct PyTask(Mutex<TaskSpec>);

impl PyTask {
    fn declare<'a>(slf: PyRef<'a, Self>, dir: ArgDir, t: &PyTensor) -> PyRef<'a, Self> {
        lock(&slf.0).args.push((dir, t.0.clone()));
        slf
    }
}

#[pymethods]
impl PyTask {
    #[new]
    fn new(py: Python<'_>, name: String, blocks: usize, kernel: Bound<'_, PyAny>) -> PyResult<PyTask> {
        if !kernel.is_callable() {
            return Err(bad(py, format!("task `{name}`: the kernel must be a function taking a core")));
        }
        if blocks == 0 {
            return Err(bad(py, format!("task `{name}`: blocks must be at least 1")));
        }
        Ok(PyTask(Mutex::new(TaskSpec {
            name,
            blocks,
            kernel: kernel.unbind(),
            args: Vec::new(),
            after: Vec::new(),
            lanes: 1,
            cube: false,
        })))
    }
    /// Declares a read of `t` (PyPTO INPUT).
    fn input<'a>(slf: PyRef<'a, Self>, t: PyRef<'a, PyTensor>) -> PyRef<'a, Self> {
        Self::declare(slf, ArgDir::Input, &t)
    }
    /// Declares that the task creates `t` (PyPTO OUTPUT).
    fn output<'a>(slf: PyRef<'a, Self>, t: PyRef<'a, PyTensor>) -> PyRef<'a, Self> {
        Self::declare(slf, ArgDir::Output, &t)
    }
    /// Declares a read and write of `t` (PyPTO INOUT).
    fn inout<'a>(slf: PyRef<'a, Self>, t: PyRef<'a, PyTensor>) -> PyRef<'a, Self> {
        Self::declare(slf, ArgDir::InOut, &t)
    }
    /// Declares an overwrite of `t` (PyPTO OUTPUT_EXISTING).
    fn output_existing<'a>(slf: PyRef<'a, Self>, t: PyRef<'a, PyTensor>) -> PyRef<'a, Self> {
        Self::declare(slf, ArgDir::OutputExisting, &t)
    }
    /// Passes `t` without ordering (PyPTO NO_DEP).
    fn no_dep<'a>(slf: PyRef<'a, Self>, t: PyRef<'a, PyTensor>) -> PyRef<'a, Self> {
        Self::declare(slf, ArgDir::NoDep, &t)
    }
    /// Starts only after the tasks with these ids (what `Dispatch.add` returned), given as
    /// ints or lists of ints.
    #[pyo3(signature = (*ids))]
    fn after<'a>(slf: PyRef<'a, Self>, ids: Vec<Bound<'a, PyAny>>) -> PyResult<PyRef<'a, Self>> {
        let mut all = Vec::new();
        for id in ids {
            match id.extract::<usize>() {
                Ok(i) => all.push(i),
                Err(_) => all.extend(id.extract::<Vec<usize>>()?),
            }
        }
        lock(&slf.0).after.extend(all);
        Ok(slf)
    }
    /// `lanes` cores per block (AIV sub-blocks; `core.sub_block_idx()`).
    fn lanes(slf: PyRef<'_, Self>, lanes: usize) -> PyRef<'_, Self> {
        lock(&slf.0).lanes = lanes.max(1);
        slf
    }
    /// Places the task's blocks on the chip's AIC (cube) cores: its kernel uses `load_l1`,
    /// `to_l0a` / `to_l0b`, `matmul` / `matmul_acc` and `store_acc`, and no UB tile.
    fn on_cube(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        lock(&slf.0).cube = true;
        slf
    }
    /// The task's name.
    #[getter]
    fn name(&self) -> String {
        lock(&self.0).name.clone()
    }
    fn __repr__(&self) -> String {
        let s = lock(&self.0);
        let on = if s.cube { " on the cube" } else { "" };
        format!("<ranksim task `{}` x{}{on} after {:?}>", s.name, s.blocks, s.after)
    }
}

/// `Dispatch(name)`: one kernel launch per chip, a small graph of tasks.
#[pyclass(name = "Dispatch", module = "ranksim", frozen)]
pub(crate) struct PyDispatch {
    pub(crate) name: String,
    pub(crate) tasks: Mutex<Vec<TaskSpec>>,
}

impl PyDispatch {
    /// A copy of the tasks as they were added.
    pub(crate) fn specs(&self, py: Python<'_>) -> Vec<TaskSpec> {
        lock(&self.tasks).iter().map(|t| t.clone_ref(py)).collect()
    }
}

#[pymethods]
impl PyDispatch {
    #[new]
    fn new(name: String) -> PyDispatch {
        PyDispatch { name, tasks: Mutex::new(Vec::new()) }
    }
    /// A dispatch of one task: `kernel` on `blocks` cores.
    #[staticmethod]
    fn kernel(py: Python<'_>, name: String, blocks: usize, kernel: Bound<'_, PyAny>) -> PyResult<PyDispatch> {
        let t = PyTask::new(py, name.clone(), blocks, kernel)?;
        let spec = t.0.into_inner().unwrap_or_else(|e| e.into_inner());
        Ok(PyDispatch { name, tasks: Mutex::new(vec![spec]) })
    }
    /// Appends `task` as it is now (later changes to it do not apply) and returns its id.
    fn add(&self, py: Python<'_>, task: PyRef<'_, PyTask>) -> PyResult<usize> {
        let spec = lock(&task.0).clone_ref(py);
        let mut tasks = lock(&self.tasks);
        if let Some(&bad_id) = spec.after.iter().find(|&&i| i >= tasks.len()) {
            return Err(bad(
                py,
                format!(
                    "task `{}` in dispatch `{}`: after({bad_id}), but only {} task(s) were added before it",
                    spec.name,
                    self.name,
                    tasks.len()
                ),
            ));
        }
        tasks.push(spec);
        Ok(tasks.len() - 1)
    }
    /// The dispatch's name.
    #[getter]
    fn name(&self) -> String {
        self.name.clone()
    }
    fn __len__(&self) -> usize {
        lock(&self.tasks).len()
    }
}
