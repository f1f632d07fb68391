//! Which Python frame names a kernel operation. A layer written in Python on top of the
//! bindings (`ranksim.pypto`) calls `Core` for the user's kernel; reports must name the
//! user's line, not the layer's. Files under a registered prefix are skipped when looking
//! for "the kernel line".

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyString;
use std::sync::{OnceLock, RwLock};

fn prefixes() -> &'static RwLock<Vec<String>> {
    static P: OnceLock<RwLock<Vec<String>>> = OnceLock::new();
    P.get_or_init(|| RwLock::new(Vec::new()))
}

/// Whether `file` belongs to a registered layer.
pub(crate) fn internal(file: &str) -> bool {
    let p = prefixes().read().unwrap_or_else(|e| e.into_inner());
    p.iter().any(|pre| file.starts_with(pre.as_str()))
}

/// Registers a directory whose Python frames are not the user's kernel lines (the
/// `ranksim.pypto` package registers its own).
#[pyfunction]
pub(crate) fn _skip_frames_under(prefix: String) {
    let mut p = prefixes().write().unwrap_or_else(|e| e.into_inner());
    if !prefix.is_empty() && !p.contains(&prefix) {
        p.push(prefix);
    }
}

/// `file:line in function` of a frame.
fn describe_frame(f: &Bound<'_, PyAny>, lineno: i64) -> PyResult<String> {
    let code = f.getattr("f_code")?;
    let file: String = code.getattr("co_filename")?.extract()?;
    let func: String = code.getattr("co_name")?.extract()?;
    Ok(format!("{file}:{lineno} in {func}"))
}

/// `file:line in function` of the innermost Python frame outside every registered layer
/// (the innermost frame when all are inside one). Called on every wait, so it keeps to
/// interned attribute names and borrowed strings.
pub(crate) fn python_line(py: Python<'_>) -> String {
    static GETFRAME: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let line = || -> PyResult<String> {
        let getframe = GETFRAME.get_or_try_init(py, || py.import("sys")?.getattr("_getframe").map(Bound::unbind))?;
        let innermost = getframe.bind(py).call1((0,))?;
        let mut f = innermost.clone();
        let mut skipped = false;
        loop {
            let code = f.getattr(intern!(py, "f_code"))?;
            let file = code.getattr(intern!(py, "co_filename"))?;
            let file = file.cast::<PyString>()?.to_cow()?;
            if skipped || !internal(&file) {
                let func = code.getattr(intern!(py, "co_name"))?;
                let lineno: i64 = f.getattr(intern!(py, "f_lineno"))?.extract()?;
                return Ok(format!("{file}:{lineno} in {}", func.cast::<PyString>()?.to_cow()?));
            }
            let back = f.getattr(intern!(py, "f_back"))?;
            if back.is_none() {
                f = innermost.clone();
                skipped = true;
            } else {
                f = back;
            }
        }
    };
    line().unwrap_or_else(|_| "<unknown Python line>".into())
}

/// ` (at file:line in function)` of the innermost traceback entry outside every registered
/// layer (else the innermost), or "" when there is no traceback.
pub(crate) fn traceback_line(py: Python<'_>, e: &PyErr) -> String {
    let Some(mut tb) = e.traceback(py).map(|t| t.into_any()) else {
        return String::new();
    };
    let at = |tb: &Bound<'_, PyAny>| -> PyResult<(String, String)> {
        let frame = tb.getattr("tb_frame")?;
        let file: String = frame.getattr("f_code")?.getattr("co_filename")?.extract()?;
        let lineno: i64 = tb.getattr("tb_lineno")?.extract()?;
        Ok((file, describe_frame(&frame, lineno)?))
    };
    let mut innermost = None;
    let mut outside = None;
    loop {
        if let Ok((file, text)) = at(&tb) {
            if !internal(&file) {
                outside = Some(text.clone());
            }
            innermost = Some(text);
        }
        match tb.getattr("tb_next") {
            Ok(next) if !next.is_none() => tb = next,
            _ => break,
        }
    }
    outside.or(innermost).map(|t| format!(" (at {t})")).unwrap_or_default()
}
