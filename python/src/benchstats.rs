//! PyPTO's `BenchmarkStats` over runs made from Python: the runs' dispatches become `[STRACE]`
//! spans (`ranksim::formats::StraceLog`, one pid per rank, a fresh `inv` per dispatch) and the
//! spans PyPTO's L3 aggregation, views and renderings (`ranksim::formats::benchmark_stats`).

use crate::errors::bad;
use crate::report::PyRunReport;
use crate::world::PyConfig;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use ranksim::formats::StraceLog;
use ranksim::formats::benchmark_stats::{BenchError, BenchmarkStats, Spread, TraceInvocation, TraceSpan};

fn value_error(e: BenchError) -> PyErr {
    match e {
        BenchError::LaunchOutOfRange { .. } => pyo3::exceptions::PyIndexError::new_err(e.to_string()),
        _ => pyo3::exceptions::PyValueError::new_err(e.to_string()),
    }
}

/// One `[STRACE]` record.
#[pyclass(name = "TraceSpan", module = "ranksim.pypto.runtime", frozen, get_all)]
pub(crate) struct PyTraceSpan {
    pid: u64,
    tid: u64,
    inv: i64,
    hid: String,
    depth: u32,
    name: String,
    ts: i64,
    dur: i64,
    attrs: String,
}

#[pymethods]
impl PyTraceSpan {
    /// Whether the span is on the device clock (`clk=dev`).
    #[getter]
    fn is_device(&self) -> bool {
        self.attrs.contains("clk=dev")
    }
    /// Duration in microseconds.
    #[getter]
    fn dur_us(&self) -> f64 {
        self.dur as f64 / 1000.0
    }
    fn __repr__(&self) -> String {
        format!(
            "TraceSpan(pid={}, inv={}, depth={}, name={:?}, ts={}, dur={})",
            self.pid, self.inv, self.depth, self.name, self.ts, self.dur
        )
    }
}

impl PyTraceSpan {
    fn of(s: &TraceSpan) -> PyTraceSpan {
        PyTraceSpan {
            pid: s.pid,
            tid: s.tid,
            inv: s.inv,
            hid: s.hid.clone(),
            depth: s.depth,
            name: s.name.clone(),
            ts: s.ts,
            dur: s.dur,
            attrs: s.attrs.clone(),
        }
    }
}

/// One dispatch's spans (a `(pid, inv)` group).
#[pyclass(name = "TraceInvocation", module = "ranksim.pypto.runtime", frozen)]
pub(crate) struct PyTraceInvocation {
    inner: TraceInvocation,
    task: String,
}

#[pymethods]
impl PyTraceInvocation {
    /// The process id (one per rank).
    #[getter]
    fn pid(&self) -> u64 {
        self.inner.pid
    }
    /// The invocation id.
    #[getter]
    fn inv(&self) -> i64 {
        self.inner.inv
    }
    /// The callable hash.
    #[getter]
    fn hid(&self) -> String {
        self.inner.hid.clone()
    }
    /// The spans, in emission order.
    #[getter]
    fn spans(&self) -> Vec<PyTraceSpan> {
        self.inner.spans.iter().map(PyTraceSpan::of).collect()
    }
    /// The dispatch's name (the callable the hid stands for).
    #[getter]
    fn task_name(&self) -> String {
        self.task.clone()
    }
    /// `device_wall` in us (0.0 if absent).
    #[getter]
    fn device_wall_us(&self) -> f64 {
        self.inner.device_wall_us()
    }
    /// `chip.run` in us.
    #[getter]
    fn host_wall_us(&self) -> f64 {
        self.inner.host_wall_us()
    }
    /// The orch/sched window in us.
    #[getter]
    fn effective_us(&self) -> f64 {
        self.inner.effective_us()
    }
    /// The span tree, durations in us (or ns).
    #[pyo3(signature = (*, us = true))]
    fn format_tree(&self, us: bool) -> String {
        self.inner.format_tree(us)
    }
    fn __repr__(&self) -> String {
        format!(
            "TraceInvocation(pid={}, inv={}, hid={}, task={})",
            self.inner.pid, self.inner.inv, self.inner.hid, self.task
        )
    }
}

/// PyPTO's `BenchmarkStats` (L3): per-round headline timings, the dispatch grid, its views and
/// renderings, plus `strace`, the `[STRACE]` log the stats were parsed from.
#[pyclass(name = "_BenchmarkStats", module = "ranksim.pypto.runtime", frozen, subclass)]
pub(crate) struct PyBenchmarkStats {
    inner: BenchmarkStats,
    strace: String,
}

impl PyBenchmarkStats {
    fn inv(&self, i: &TraceInvocation) -> PyTraceInvocation {
        PyTraceInvocation { inner: i.clone(), task: self.inner.task_name(i).to_string() }
    }
    fn keyed<'py, V: IntoPyObject<'py> + Clone>(
        py: Python<'py>,
        m: &std::collections::BTreeMap<(u64, usize), V>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in m {
            d.set_item(*k, v.clone())?;
        }
        Ok(d)
    }
}

#[pymethods]
impl PyBenchmarkStats {
    /// Stats of `reports` (one run per launch, `warmup` first) of a program on `config`'s
    /// host costs.
    #[new]
    fn new(
        py: Python<'_>,
        config: PyRef<'_, PyConfig>,
        reports: Vec<PyRef<'_, PyRunReport>>,
        rounds: usize,
        warmup: usize,
    ) -> PyResult<Self> {
        if rounds == 0 {
            return Err(bad(py, "rounds must be at least 1"));
        }
        if reports.len() != rounds + warmup {
            return Err(bad(py, format!("{} run reports for warmup {warmup} + rounds {rounds}", reports.len())));
        }
        let mut log = StraceLog::new(&config.0.host);
        for r in &reports {
            log.add_run(&r.inner);
        }
        let inner = BenchmarkStats::from_l3(log.invocations().to_vec(), rounds, warmup).with_names(log.names().clone());
        Ok(PyBenchmarkStats { inner, strace: log.text() })
    }
    /// Per-round device wall (us): per round, the max over ranks of each rank's summed dispatches.
    #[getter]
    fn device_wall_us(&self) -> Vec<f64> {
        self.inner.device_wall_us.clone()
    }
    /// Per-round host wall (us), from `chip.run`.
    #[getter]
    fn host_wall_us(&self) -> Vec<f64> {
        self.inner.host_wall_us.clone()
    }
    #[getter]
    fn rounds(&self) -> usize {
        self.inner.rounds
    }
    #[getter]
    fn warmup(&self) -> usize {
        self.inner.warmup
    }
    /// Every measured dispatch, flattened.
    #[getter]
    fn invocations(&self) -> Vec<PyTraceInvocation> {
        self.inner.invocations.iter().map(|i| self.inv(i)).collect()
    }
    /// `rounds_dispatches[k][pid]`: that rank's dispatches in round k.
    #[getter]
    fn rounds_dispatches<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let mut out = Vec::new();
        for round in &self.inner.rounds_dispatches {
            let d = PyDict::new(py);
            for (pid, idxs) in round {
                let invs: Vec<PyTraceInvocation> =
                    idxs.iter().filter_map(|&i| self.inner.invocations.get(i)).map(|i| self.inv(i)).collect();
                d.set_item(pid, invs)?;
            }
            out.push(d);
        }
        Ok(out)
    }
    #[getter]
    fn fallback_flattened(&self) -> bool {
        self.inner.fallback_flattened
    }
    #[getter]
    fn unstable_dispatch_slots(&self) -> bool {
        self.inner.unstable_dispatch_slots
    }
    /// `{(pid, slot): [that dispatch in round 0, 1, ...]}`.
    fn dispatch_groups<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in self.inner.dispatch_groups() {
            let invs: Vec<PyTraceInvocation> = v.into_iter().map(|i| self.inv(i)).collect();
            d.set_item(k, invs)?;
        }
        Ok(d)
    }
    /// `{(pid, slot): task name}`.
    fn dispatch_tasks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        Self::keyed(py, &self.inner.dispatch_tasks())
    }
    /// `{(pid, slot): [metric per round]}`; metric: device, host or effective.
    #[pyo3(signature = (metric = "device"))]
    fn per_dispatch<'py>(&self, py: Python<'py>, metric: &str) -> PyResult<Bound<'py, PyDict>> {
        Self::keyed(py, &self.inner.per_dispatch(metric).map_err(value_error)?)
    }
    /// `{pid: [sum of the rank's dispatches' metric per round]}`.
    #[pyo3(signature = (metric = "device"))]
    fn per_rank(&self, metric: &str) -> PyResult<std::collections::BTreeMap<u64, Vec<f64>>> {
        self.inner.per_rank(metric).map_err(value_error)
    }
    /// Per round: device, host, effective or union.
    #[pyo3(signature = (metric = "device"))]
    fn per_round(&self, metric: &str) -> PyResult<Vec<f64>> {
        self.inner.per_round(metric).map_err(value_error)
    }
    /// The span tree of launch `launch` (every launch when None).
    #[pyo3(signature = (launch = None, *, us = true))]
    fn format_tree(&self, launch: Option<usize>, us: bool) -> PyResult<String> {
        self.inner.format_tree(launch, us).map_err(value_error)
    }
    /// The mean span tree of each dispatch; spread: stdev, minmax, both or none.
    #[pyo3(signature = (*, us = true, spread = "stdev", pid = None, slot = None))]
    fn format_mean_tree(&self, us: bool, spread: &str, pid: Option<u64>, slot: Option<usize>) -> PyResult<String> {
        let spread = match spread {
            "stdev" => Spread::Stdev,
            "minmax" => Spread::MinMax,
            "both" => Spread::Both,
            "none" => Spread::None,
            o => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "spread must be one of 'stdev', 'minmax', 'both', 'none', got {o:?}"
                )));
            }
        };
        Ok(self.inner.format_mean_tree(us, spread, pid, slot))
    }
    /// The span-wise mean of one dispatch's launches (None when nothing matches).
    #[pyo3(signature = (*, pid = None, slot = None))]
    fn mean_invocation(&self, pid: Option<u64>, slot: Option<usize>) -> PyResult<Option<PyTraceInvocation>> {
        Ok(self.inner.mean_invocation(pid, slot).map_err(value_error)?.map(|i| self.inv(&i)))
    }
    #[getter]
    fn device_us_min(&self) -> f64 {
        self.inner.device_us_min()
    }
    #[getter]
    fn device_us_median(&self) -> f64 {
        self.inner.device_us_median()
    }
    #[getter]
    fn device_us_mean(&self) -> f64 {
        self.inner.device_us_mean()
    }
    #[getter]
    fn device_us_max(&self) -> f64 {
        self.inner.device_us_max()
    }
    #[getter]
    fn device_us_stdev(&self) -> f64 {
        self.inner.device_us_stdev()
    }
    #[getter]
    fn samples(&self) -> Vec<f64> {
        self.inner.samples().to_vec()
    }
    #[getter]
    fn device_wall_us_min(&self) -> f64 {
        self.inner.device_us_min()
    }
    #[getter]
    fn device_wall_us_median(&self) -> f64 {
        self.inner.device_us_median()
    }
    #[getter]
    fn device_wall_us_mean(&self) -> f64 {
        self.inner.device_us_mean()
    }
    #[getter]
    fn device_wall_us_max(&self) -> f64 {
        self.inner.device_us_max()
    }
    #[getter]
    fn device_wall_us_stdev(&self) -> f64 {
        self.inner.device_us_stdev()
    }
    #[getter]
    fn all_zero_device(&self) -> bool {
        self.inner.all_zero_device()
    }
    /// The `[STRACE]` log (with `CLOCK_ANCHOR` lines) the stats were parsed from, as PyPTO's
    /// runtime would write it to stderr.
    #[getter]
    fn strace(&self) -> String {
        self.strace.clone()
    }
    fn __str__(&self) -> String {
        self.inner.to_string()
    }
    fn __repr__(&self) -> String {
        self.inner.to_string()
    }
}
