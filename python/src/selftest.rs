//! The README's Rust program, run from Python (`ranksim._native._rust_readme_program()`), so a
//! test can assert that the same program written in Python gives the same report and values.

use crate::errors;
use crate::report::PyRunReport;
use pyo3::prelude::*;
use sim_core::{AtomicType, DType, Dispatch, DomainOptions, NotifyOp, SimResult, Task, WaitCmp};

/// The README's "Writing a program" snippet: its report and rank 0's `out`.
#[pyfunction]
pub(crate) fn _rust_readme_program(py: Python<'_>) -> PyResult<(PyRunReport, Vec<f32>)> {
    let run = || -> SimResult<(sim_core::RunReport, Vec<f32>)> {
        let mut world =
            ranksim::Config::default_preset().world().map_err(|e| sim_core::SimError::invalid(e.to_string()))?;
        let ranks: Vec<usize> = (0..world.size()).collect();
        let dom = world.allocate_domain("comm_d0", &ranks, 4096, DomainOptions::default())?;
        let x = world.alloc_window(&dom, "x", DType::F32, &[1, 256])?;
        let y = world.alloc_window(&dom, "y", DType::F32, &[1, 256])?;
        let sig = world.alloc_window(&dom, "signal", DType::I32, &[8, 1])?;
        let out = world.alloc_tensor("out", DType::F32, &[1, 256])?;
        for r in 0..ranks.len() {
            world.write(&x, r, &[r as f32; 256])?;
        }
        let mut step = Dispatch::new("step");
        let (xk, yk, s) = (x.clone(), y.clone(), sig.clone());
        step.add(
            Task::new("shift", 1, move |core| {
                let (me, n) = (core.rank(), core.nranks());
                let t = core.load(&xk, &[0, 0], &[1, 256])?;
                core.remote_store(&t, &yk, (me + 1) % n, &[0, 0], AtomicType::None)?;
                core.notify(&s, (me + 1) % n, &[me, 0], 1, NotifyOp::AtomicAdd)?;
                core.wait(&s, &[(me + n - 1) % n, 0], 1, WaitCmp::Ge)
            })
            .input(&x)
            .output_existing(&y),
        );
        let (yk, o) = (y.clone(), out.clone());
        step.add(
            Task::new("plus_one", 1, move |core| {
                let t = core.load(&yk, &[0, 0], &[1, 256])?;
                let t = core.adds(&t, 1.0)?;
                core.store(&t, &o, &[0, 0])
            })
            .input(&y)
            .output(&out),
        );
        world.dispatch_all(&dom, step)?;
        let report = world.run()?;
        let got: Vec<f32> = world.read(&out, 0)?;
        Ok((report, got))
    };
    let (report, got) = py.detach(run).map_err(|e| errors::sim(py, &e))?;
    Ok((PyRunReport::new(py, report, 8, &|_, _| None)?, got))
}

/// The Rust twin of `python/bench/op_cost.py`'s ping-pong: host seconds of `rounds` rounds on
/// 2 ranks of a2a3, for comparing a Python kernel operation's cost with a Rust one's.
#[pyfunction]
pub(crate) fn _rust_ping_pong(py: Python<'_>, rounds: i32) -> PyResult<f64> {
    let run = || -> SimResult<f64> {
        let cfg =
            ranksim::Config::default_preset().with_ranks(2).map_err(|e| sim_core::SimError::invalid(e.to_string()))?;
        let mut world = cfg.world().map_err(|e| sim_core::SimError::invalid(e.to_string()))?;
        let dom = world.create_domain("d", &[0, 1], DomainOptions::default())?;
        let sig = world.alloc_window(&dom, "sig", DType::I32, &[1, 1])?;
        let kernel = Dispatch::kernel("pingpong", 1, move |core| {
            let me = core.rank();
            for i in 0..rounds {
                if me == 0 {
                    core.notify(&sig, 1, &[0, 0], 1, NotifyOp::AtomicAdd)?;
                    core.wait(&sig, &[0, 0], i + 1, WaitCmp::Ge)?;
                } else {
                    core.wait(&sig, &[0, 0], i + 1, WaitCmp::Ge)?;
                    core.notify(&sig, 0, &[0, 0], 1, NotifyOp::AtomicAdd)?;
                }
            }
            Ok(())
        });
        world.dispatch_all(&dom, kernel)?;
        let start = std::time::Instant::now();
        world.run()?;
        Ok(start.elapsed().as_secs_f64())
    };
    py.detach(run).map_err(|e| errors::sim(py, &e))
}
