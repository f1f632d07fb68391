//! One block of a synchronous kernel, run the same way by every driver that gives it a stack
//! (an OS thread, a coroutine, a host's fiber): only how its requests reach the engine differs.

use super::futures::panic_message;
use crate::api::kernel::{Core, Ops, Transport, Uplink};
use crate::api::program::Kernel;
use crate::base::time::SimTime;
use crate::model::ChipTiming;
use crate::sim::engine::wake::Assignment;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

/// Runs `kernel` as `assignment`'s block from `at` on a core whose requests go through `port`,
/// and finishes the block with its result (a panic ends it with the panic's message).
pub(super) fn run_block(
    kernel: &Kernel,
    port: Box<dyn Transport>,
    chip: Arc<dyn ChipTiming>,
    at: SimTime,
    assignment: &Assignment,
) {
    let ops = Ops::new(Uplink::Thread(port), chip, at, assignment.ctx.clone(), assignment.block, assignment.lane);
    let mut core = Core::new(ops);
    let result = catch_unwind(AssertUnwindSafe(|| kernel(&mut core)));
    core.into_ops().finish(result.map_err(panic_message));
}
