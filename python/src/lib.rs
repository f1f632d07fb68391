//! `ranksim._native`: the PyO3 bindings behind the `ranksim` Python package. The package
//! (`python/ranksim/`) re-exports these classes; see `docs/python.md`.

mod benchstats;
mod collective;
mod core;
mod enums;
mod errors;
mod fibers;
mod frames;
mod interrupt;
mod kernel_task;
mod program;
mod pypto;
mod report;
mod selftest;
mod tile_ops;
mod world;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<world::PyConfig>()?;
    m.add_class::<world::PyWorld>()?;
    m.add_class::<program::PyTensor>()?;
    m.add_class::<program::PyDomain>()?;
    m.add_class::<program::PyTask>()?;
    m.add_class::<program::PyDispatch>()?;
    m.add_class::<tile_ops::PyCoreOps>()?;
    enums::add_to(m)?;
    m.add("TILE_OPS", tile_ops::table(m.py())?)?;
    m.add_class::<core::PyTile>()?;
    m.add_class::<core::PyCubeTile>()?;
    m.add_class::<core::PySdmaHandle>()?;
    m.add_class::<report::PyRunReport>()?;
    m.add_class::<report::PyCheckReport>()?;
    m.add_class::<report::PyFinding>()?;
    m.add_function(wrap_pyfunction!(collective::point, m)?)?;
    m.add_function(wrap_pyfunction!(collective::sweep, m)?)?;
    m.add_function(wrap_pyfunction!(collective::cli, m)?)?;
    m.add_function(wrap_pyfunction!(collective::bench, m)?)?;
    m.add_function(wrap_pyfunction!(collective::check, m)?)?;
    m.add_class::<benchstats::PyBenchmarkStats>()?;
    m.add_class::<benchstats::PyTraceInvocation>()?;
    m.add_class::<benchstats::PyTraceSpan>()?;
    m.add_function(wrap_pyfunction!(pypto::_incore_collective, m)?)?;
    m.add_function(wrap_pyfunction!(pypto::_host_collective, m)?)?;
    m.add_function(wrap_pyfunction!(frames::_skip_frames_under, m)?)?;
    m.add_function(wrap_pyfunction!(selftest::_rust_readme_program, m)?)?;
    m.add_function(wrap_pyfunction!(selftest::_rust_ping_pong, m)?)?;
    Ok(())
}
