//! Async kernels as futures the driver polls on its own thread: a block's future (the
//! kernel's, then its result posted), starting and polling it, and the message of a panic,
//! which thread, coroutine and async blocks all report the same way.

use crate::api::kernel::{Mailbox, Ops, Uplink};
use crate::api::program::AsyncKernel;
use crate::api::request::Request;
use crate::base::error::SimError;
use crate::base::time::SimTime;
use crate::model::ChipTiming;
use crate::sim::engine::Engine;
use crate::sim::engine::wake::Assignment;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

/// A block running as a future: the kernel's, followed by posting its result, so a poll
/// hands back nothing but readiness (the kernel's output, with its `Ops`, never moves
/// through the driver).
type BlockFuture = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// A block running as a future.
pub(super) struct Virtual {
    fut: BlockFuture,
    assignment: Assignment,
}

/// An async block, ready for its first poll.
pub(super) fn start_virtual(
    chip: &Arc<dyn ChipTiming>,
    at: SimTime,
    assignment: Assignment,
    k: AsyncKernel,
) -> Virtual {
    let ops = Ops::new(Uplink::Mail, chip.clone(), at, assignment.ctx.clone(), assignment.block, assignment.lane);
    Virtual { fut: block_future(k, ops), assignment }
}

/// Polls an async block once and hands the requests it made to the engine; a finished block
/// has posted its result, a panicked one gets a failed result posted for it.
pub(super) fn poll_virtual(eng: &mut Engine, slot: &mut Option<Virtual>, actor: usize) {
    let Some(v) = slot.as_mut() else { return };
    let polled = catch_unwind(AssertUnwindSafe(|| v.fut.as_mut().poll(&mut Context::from_waker(Waker::noop()))));
    Mailbox::drain(|at, resume, req| eng.submit(actor, at, resume, req));
    match polled {
        Ok(Poll::Pending) => {}
        Ok(Poll::Ready(())) => *slot = None,
        Err(p) => {
            if let Some(v) = slot.take() {
                let site = v.assignment.ctx.site(v.assignment.block);
                let now = eng.now();
                let err = SimError::KernelPanic { site, time: now, msg: panic_message(p) };
                eng.submit(actor, now, now, Request::Finish { result: Err(err) });
            }
        }
    }
}

/// The kernel's future over the block's `ops`, then its result posted (as the block's last
/// request).
fn block_future(kernel: AsyncKernel, mut ops: Ops) -> BlockFuture {
    Box::pin(async move {
        let result = kernel(&mut ops).await;
        ops.finish(Ok(result));
    })
}

/// The message of a kernel's panic payload.
pub(crate) fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}
