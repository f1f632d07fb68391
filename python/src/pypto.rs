//! What `ranksim.pypto` needs beyond the kernel API: PyPTO's collectives (`pld.tensor.*`) as
//! ranksim's own Rust implementations, called from a Python kernel (the InCore composite on
//! the calling core) or from the host orchestrator (the HOST builtin, one chip dispatch per
//! rank of the operands' domain).

use crate::core::PyCore;
use crate::errors::bad;
use crate::program::PyTensor;
use crate::world::PyWorld;
use pyo3::prelude::*;
use ranksim::collectives::{self, AllGather, AllReduce, Mode, Path, incore};
use sim_core::{ReduceOp, SimResult, Tensor};

/// The collectives PyPTO names `pld.tensor.<kind>`, and the operands each takes in order.
const KINDS: &str = "allreduce (data, signal), barrier (signal), broadcast (data, signal), allgather (stage, target, signal), reduce_scatter (data, signal), all_to_all (input, target, signal), all_to_all_v (input, target, send_counts, recv_counts, signal)";

fn operands(py: Python<'_>, kind: &str, ts: &[PyRef<'_, PyTensor>]) -> PyResult<Vec<Tensor>> {
    let want = match kind {
        "barrier" => 1,
        "allreduce" | "broadcast" | "reduce_scatter" => 2,
        "allgather" | "all_to_all" => 3,
        "all_to_all_v" => 5,
        _ => return Err(bad(py, format!("unknown collective `{kind}`: expected one of {KINDS}"))),
    };
    if ts.len() != want {
        return Err(bad(
            py,
            format!("pld.tensor.{kind} takes {want} window operand(s), got {}; the operands are {KINDS}", ts.len()),
        ));
    }
    Ok(ts.iter().map(|t| t.0.clone()).collect())
}

fn parse<T: std::str::FromStr<Err = String>>(py: Python<'_>, s: &str) -> PyResult<T> {
    s.parse::<T>().map_err(|e| bad(py, e))
}

/// Runs the InCore composite `kind` on the calling kernel's core (`pld.tensor.<kind>` inside a
/// `@pl.jit.incore` function). `mode` picks the allreduce algorithm (mesh, ring, ...).
#[pyfunction]
#[pyo3(signature = (core, kind, tensors, op = "sum", mode = "mesh", root = 0))]
pub(crate) fn _incore_collective(
    py: Python<'_>,
    core: PyRef<'_, PyCore>,
    kind: &str,
    tensors: Vec<PyRef<'_, PyTensor>>,
    op: &str,
    mode: &str,
    root: usize,
) -> PyResult<()> {
    let ts = operands(py, kind, &tensors)?;
    let op: ReduceOp = parse(py, op)?;
    let mode: Mode = parse(py, mode)?;
    let refs: Vec<&PyTensor> = tensors.iter().map(|t| &**t).collect();
    let kind = kind.to_string();
    core.waiting(py, &refs, move |c| {
        c.run(async move |ops| -> SimResult<()> {
            match kind.as_str() {
                "allreduce" => incore::allreduce(ops, &ts[0], &ts[1], op, mode).await,
                "barrier" => incore::barrier(ops, &ts[0]).await,
                "broadcast" => incore::broadcast(ops, &ts[0], &ts[1], root).await,
                "allgather" => incore::allgather(ops, &ts[0], &ts[1], &ts[2]).await,
                "reduce_scatter" => incore::reduce_scatter(ops, &ts[0], &ts[1], op).await,
                "all_to_all" => incore::all_to_all(ops, &ts[0], &ts[1], &ts[2]).await,
                _ => incore::all_to_all_v(ops, &ts[0], &ts[1], &ts[2], &ts[3], &ts[4]).await,
            }
        })
    })
}

/// Queues the HOST builtin `kind` on every rank of the operands' comm domain (`pld.tensor.<kind>`
/// in a `@pl.jit.host` orchestrator): one chip dispatch per rank, named like PyPTO's variant.
#[pyfunction]
#[pyo3(signature = (world, kind, tensors, op = "sum", mode = "mesh", root = 0, core_num = 1))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn _host_collective(
    py: Python<'_>,
    world: PyRef<'_, PyWorld>,
    kind: &str,
    tensors: Vec<PyRef<'_, PyTensor>>,
    op: &str,
    mode: &str,
    root: usize,
    core_num: usize,
) -> PyResult<()> {
    let ts = operands(py, kind, &tensors)?;
    let op: ReduceOp = parse(py, op)?;
    let mode: Mode = parse(py, mode)?;
    let path = Path::Host;
    world.with(py, |w| match kind {
        "allreduce" => collectives::allreduce(w, &ts[0], &ts[1], AllReduce { op, mode, path, core_num }),
        "barrier" => collectives::barrier(w, &ts[0], path),
        "broadcast" => collectives::broadcast(w, &ts[0], &ts[1], root, path),
        "allgather" => collectives::allgather(w, &ts[0], &ts[1], &ts[2], path),
        "reduce_scatter" => collectives::reduce_scatter(w, &ts[0], &ts[1], op, path),
        "all_to_all" => collectives::all_to_all(w, &ts[0], &ts[1], &ts[2], path),
        _ => collectives::all_to_all_v_with(w, &ts[0], &ts[1], &ts[2], &ts[3], &ts[4], AllGather::default()),
    })
}
