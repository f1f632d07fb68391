//! A Python kernel function as a sim-core `Task`: each block calls the function with its
//! `ranksim.Core` (the tile operations' subclass of `core.rs`'s handle) and turns what it
//! raises into the run's error.

use crate::core::{BlockKey, PyCore, Shared};
use crate::errors::{self, KERNEL_OP};
use crate::program::{TaskSpec, lock};
use crate::tile_ops::PyCoreOps;
use pyo3::prelude::*;
use sim_core::{Core, SimError, SimResult, Site, Task, TaskId};
use std::sync::Arc;

/// `spec` as a sim-core task whose blocks call the Python kernel.
pub(crate) fn bind(py: Python<'_>, spec: &TaskSpec, shared: &Arc<Shared>) -> Task {
    let kernel = spec.kernel.clone_ref(py);
    let name: Arc<str> = spec.name.as_str().into();
    let shared = shared.clone();
    let mut t = Task::new(&spec.name, spec.blocks, move |core| run_kernel(&kernel, &name, &shared, core));
    for (dir, tensor) in &spec.args {
        t = t.arg(*dir, tensor);
    }
    let after: Vec<TaskId> = spec.after.iter().map(|&i| TaskId(i)).collect();
    let t = t.after(&after).lanes(spec.lanes);
    if spec.cube { t.on_cube() } else { t }
}

/// One block: calls `kernel(core)` with the GIL held. A kernel that raises ends the run with
/// the Rust error behind the exception (an operation's), or else a `KernelError` naming the
/// task, rank, block, the exception and its line.
fn run_kernel(kernel: &Py<PyAny>, task: &Arc<str>, shared: &Arc<Shared>, core: &mut Core) -> SimResult<()> {
    let site = Site { chip: core.world_rank(), block: core.block_idx(), task: task.to_string() };
    let key: BlockKey = (site.chip, site.block, core.sub_block_idx(), task.to_string());
    let generation = shared.generation(&key, core.now().as_ps());
    let result = Python::attach(|py| {
        let handle = PyCore::attach(core, key.clone(), shared.clone(), generation);
        let init = PyClassInitializer::from(handle).add_subclass(PyCoreOps);
        let obj = Py::new(py, init).map_err(|e| SimError::BadOp {
            site: site.clone(),
            op: KERNEL_OP,
            msg: format!("cannot make the core object: {e}"),
        })?;
        let res = kernel.call1(py, (obj.clone_ref(py),));
        let last = obj.bind(py).as_super().get().detach();
        match res {
            Ok(_) => Ok(()),
            Err(e) => {
                if let Some(le) = last
                    && errors::is_sim_error(py, &e)
                {
                    return Err(le);
                }
                let msg = describe(py, &e);
                lock(&shared.raised).entry(key.clone()).or_insert_with(|| e.value(py).clone().into_any().unbind());
                Err(SimError::BadOp { site, op: KERNEL_OP, msg })
            }
        }
    });
    shared.ended(&key, core.now().as_ps());
    result
}

/// `raised ValueError: msg (at file.py:12 in kernel)`: the exception and its innermost line.
fn describe(py: Python<'_>, e: &PyErr) -> String {
    let value = e.value(py);
    let ty = value.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "exception".into());
    let text = value.str().map(|s| s.to_string()).unwrap_or_default();
    let at = crate::frames::traceback_line(py, e);
    format!("raised {ty}: {text}{at}")
}
