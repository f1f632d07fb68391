//! What runs and checks leave behind, as Python objects and plain Python values.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use sim_core::RunReport;
use sim_core::check::{CheckReport, Finding, FindingSite};

/// What one run did: device time, per-rank dispatch records, traffic, engine counters.
#[pyclass(name = "RunReport", module = "ranksim", frozen)]
pub(crate) struct PyRunReport {
    pub(crate) inner: RunReport,
    pub(crate) ranks: usize,
    pub(crate) findings: Vec<Py<PyFinding>>,
    /// The Python line of each operation of a traced run's Python kernels: `(chip, op,
    /// from_ps, to_ps, line)`, named on the trace's operation spans.
    pub(crate) op_lines: Vec<(usize, &'static str, u64, u64, String)>,
}

impl PyRunReport {
    /// `inner` for Python, its findings' sites named by `python_line` where it knows them.
    pub(crate) fn new(
        py: Python<'_>,
        inner: RunReport,
        ranks: usize,
        python_line: &dyn Fn(Option<u64>, &FindingSite) -> Option<String>,
    ) -> PyResult<PyRunReport> {
        let findings = inner
            .findings
            .iter()
            .map(|f| Py::new(py, PyFinding::from_rust(f, python_line)))
            .collect::<PyResult<_>>()?;
        Ok(PyRunReport { inner, ranks, findings, op_lines: Vec::new() })
    }

    /// With the Python lines of its kernels' operations, for the trace.
    pub(crate) fn with_lines(mut self, lines: Vec<(usize, &'static str, u64, u64, String)>) -> PyRunReport {
        if self.inner.trace.is_some() {
            self.op_lines = lines;
        }
        self
    }

    /// The Chrome trace JSON with each operation span of a Python kernel carrying its line
    /// (`args.line`): the recorded operation of the same name on the same chip whose clock
    /// span holds the span's start.
    fn trace_json(&self) -> Option<String> {
        let json = ranksim::measure::chrome_trace(&self.inner, self.ranks)?;
        if self.op_lines.is_empty() {
            return Some(json);
        }
        let Ok(mut v) = serde_json::from_str::<serde_json::Value>(&json) else {
            return Some(json);
        };
        let events = match &mut v {
            serde_json::Value::Object(m) => m.get_mut("traceEvents"),
            other => Some(other),
        };
        if let Some(serde_json::Value::Array(events)) = events {
            for e in events.iter_mut() {
                if e.get("cat").and_then(|c| c.as_str()) != Some("op") {
                    continue;
                }
                let (Some(pid), Some(ts), Some(name)) = (
                    e.get("pid").and_then(|p| p.as_u64()),
                    e.get("ts").and_then(|t| t.as_f64()),
                    e.get("name").and_then(|n| n.as_str()),
                ) else {
                    continue;
                };
                let at = (ts * 1e6).round() as u64;
                let line = self
                    .op_lines
                    .iter()
                    .find(|(chip, op, from, to, _)| {
                        *chip as u64 == pid && name.starts_with(op) && *from <= at && at <= *to
                    })
                    .map(|l| l.4.clone());
                if let (Some(line), Some(serde_json::Value::Object(args))) = (line, e.get_mut("args")) {
                    args.insert("line".into(), serde_json::Value::String(line));
                }
            }
        }
        Some(serde_json::to_string(&v).unwrap_or(json))
    }
}

#[pymethods]
impl PyRunReport {
    /// The run's device time (per call the slowest rank's device wall, summed), in picoseconds.
    #[getter]
    fn device_time_ps(&self) -> u64 {
        self.inner.device_time().as_ps()
    }
    /// The same in microseconds.
    #[getter]
    fn device_time_us(&self) -> f64 {
        self.inner.device_time().as_us_f64()
    }
    /// Per call (the i-th dispatch of every chip), the slowest chip's device wall, in us.
    #[getter]
    fn device_time_per_call_us(&self) -> Vec<f64> {
        self.inner.device_time_per_call().iter().map(|d| d.as_us_f64()).collect()
    }
    /// When the last dispatch ended, in picoseconds.
    #[getter]
    fn end_ps(&self) -> u64 {
        self.inner.end.as_ps()
    }
    /// Every dispatch, in completion order: dicts with chip, index, name, start_ps, end_ps,
    /// device_wall_ps and tasks (name, blocks, start_ps, end_ps).
    #[getter]
    fn dispatches<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for d in &self.inner.dispatches {
            let row = PyDict::new(py);
            row.set_item("chip", d.chip)?;
            row.set_item("index", d.index)?;
            row.set_item("name", &d.name)?;
            row.set_item("start_ps", d.start.as_ps())?;
            row.set_item("end_ps", d.end.as_ps())?;
            row.set_item("device_wall_ps", d.device_wall().as_ps())?;
            let tasks = PyList::empty(py);
            for t in &d.tasks {
                let td = PyDict::new(py);
                td.set_item("name", &t.name)?;
                td.set_item("blocks", t.blocks)?;
                td.set_item("start_ps", t.start.as_ps())?;
                td.set_item("end_ps", t.end.as_ps())?;
                tasks.append(td)?;
            }
            row.set_item("tasks", tasks)?;
            out.append(row)?;
        }
        Ok(out)
    }
    /// What each chip moved: one dict per world rank.
    #[getter]
    fn traffic<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for t in &self.inner.traffic {
            let d = PyDict::new(py);
            d.set_item("remote_read_bytes", t.remote_read_bytes)?;
            d.set_item("remote_write_bytes", t.remote_write_bytes)?;
            d.set_item("local_read_bytes", t.local_read_bytes)?;
            d.set_item("local_write_bytes", t.local_write_bytes)?;
            d.set_item("remote_notifies", t.remote_notifies)?;
            d.set_item("local_notifies", t.local_notifies)?;
            d.set_item("waits", t.waits)?;
            out.append(d)?;
        }
        Ok(out)
    }
    /// The scheduler's work counters: requests, events, packets.
    #[getter]
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("requests", self.inner.stats.requests)?;
        d.set_item("events", self.inner.stats.events)?;
        d.set_item("packets", self.inner.stats.packets)?;
        Ok(d)
    }
    /// Warnings raised while the run was set up.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.inner.warnings.clone()
    }
    /// What the checker found, when the world's `check_races` option was on.
    #[getter]
    fn findings(&self, py: Python<'_>) -> Vec<Py<PyFinding>> {
        self.findings.iter().map(|f| f.clone_ref(py)).collect()
    }
    /// Whether the run kept a timeline (the world's `trace` option).
    #[getter]
    fn traced(&self) -> bool {
        self.inner.trace.is_some()
    }
    /// The Chrome trace-event JSON of a traced run (for ui.perfetto.dev), or None.
    fn chrome_trace(&self) -> Option<String> {
        self.trace_json()
    }
    /// Writes the Chrome trace-event JSON of a traced run to `path` (raises if not traced).
    fn write_trace(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        let Some(json) = self.trace_json() else {
            return Err(crate::errors::bad(py, "this run was not traced: set `world.trace = True` before `run()`"));
        };
        std::fs::write(&path, json)
            .map_err(|e| crate::errors::bad(py, format!("cannot write the trace to {}: {e}", path.display())))
    }
    fn __repr__(&self) -> String {
        format!(
            "<ranksim RunReport: device time {}, {} dispatch(es)>",
            self.inner.device_time(),
            self.inner.dispatches.len()
        )
    }
}

/// One protocol bug the checker found.
#[pyclass(name = "Finding", module = "ranksim", frozen, get_all)]
pub(crate) struct PyFinding {
    /// The kind's name (`data-race`, `deadlock`, ...).
    kind: String,
    /// The rank whose memory or signal it concerns.
    rank: usize,
    /// When it was detected, in picoseconds.
    time_ps: u64,
    /// What is wrong and what to change.
    message: String,
    /// The operations involved: dicts with rank, block, task, dispatch, op, target, time_ps,
    /// location (a source line, or None).
    sites: Vec<Py<PyAny>>,
    /// How many times it was seen.
    count: usize,
    /// The jitter seed of the run that showed it (None: the unperturbed run).
    seed: Option<u64>,
    text: String,
}

impl PyFinding {
    /// `f` for Python; `python_line` gives a site's Python line where the Rust location is
    /// the binding's own.
    pub(crate) fn from_rust(
        f: &Finding,
        python_line: &dyn Fn(Option<u64>, &FindingSite) -> Option<String>,
    ) -> PyFinding {
        let mut f = f.clone();
        for s in &mut f.sites {
            if s.location.as_deref().is_some_and(|l| l.starts_with(crate::core::CORE_FILE)) {
                s.location = python_line(f.seed, s);
            }
        }
        Python::attach(|py| {
            let sites = f
                .sites
                .iter()
                .map(|s| {
                    let d = PyDict::new(py);
                    let _ = d.set_item("rank", s.rank);
                    let _ = d.set_item("block", s.block);
                    let _ = d.set_item("task", &s.task);
                    let _ = d.set_item("dispatch", &s.dispatch);
                    let _ = d.set_item("op", &s.op);
                    let _ = d.set_item("target", &s.target);
                    let _ = d.set_item("time_ps", s.time.as_ps());
                    let _ = d.set_item("location", &s.location);
                    d.into_any().unbind()
                })
                .collect();
            PyFinding {
                kind: f.kind.name().to_string(),
                rank: f.rank,
                time_ps: f.time.as_ps(),
                message: f.message.clone(),
                sites,
                count: f.count,
                seed: f.seed,
                text: f.to_string(),
            }
        })
    }
}

#[pymethods]
impl PyFinding {
    fn __str__(&self) -> String {
        self.text.clone()
    }
    fn __repr__(&self) -> String {
        format!("<ranksim Finding [{}] rank {}: {}>", self.kind, self.rank, self.message)
    }
}

/// The checker's verdict over the unperturbed run and the seeded reruns.
#[pyclass(name = "CheckReport", module = "ranksim", frozen, get_all)]
pub(crate) struct PyCheckReport {
    /// Runs made.
    runs: usize,
    /// Every distinct finding.
    findings: Vec<Py<PyFinding>>,
    text: String,
}

impl PyCheckReport {
    pub(crate) fn new(
        py: Python<'_>,
        r: &CheckReport,
        python_line: &dyn Fn(Option<u64>, &FindingSite) -> Option<String>,
    ) -> PyResult<PyCheckReport> {
        let findings: Vec<Py<PyFinding>> =
            r.findings.iter().map(|f| Py::new(py, PyFinding::from_rust(f, python_line))).collect::<PyResult<_>>()?;
        let text = findings.iter().map(|f| f.get().text.clone()).collect::<Vec<_>>().join("\n");
        Ok(PyCheckReport { runs: r.runs, findings, text })
    }
}

#[pymethods]
impl PyCheckReport {
    /// Whether nothing was found.
    #[getter]
    fn is_clean(&self) -> bool {
        self.findings.is_empty()
    }
    fn __str__(&self) -> String {
        self.text.clone()
    }
    fn __repr__(&self) -> String {
        format!("<ranksim CheckReport: {} run(s), {} finding(s)>", self.runs, self.findings.len())
    }
}
