//! How a core's operations reach the scheduler. A kernel on its own thread sends requests
//! straight into the engine and blocks its thread for replies; a kernel run as a future inside
//! the engine (no thread) leaves requests in a mailbox and is polled again when its reply is
//! there. Both send the same requests at the same times, so they give the same results.

use crate::driver::{self, Shared};
use crate::engine::request::{Reply, Request};
use crate::error::{SimError, SimResult};
use crate::time::SimTime;
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

/// A reply as the transport hands it back: the resume time and the answer.
pub(crate) type Answer = SimResult<(SimTime, Reply)>;

/// What a polled kernel has left for the driver and what the driver has left for it.
#[derive(Default)]
pub(crate) struct MailState {
    /// Requests in program order: `(issue time, resume time, request)`.
    pub(crate) outbox: VecDeque<(SimTime, SimTime, Request)>,
    /// The answer to the blocking request last sent.
    pub(crate) answer: Option<Answer>,
}

/// The mailbox of a kernel that runs as a future.
#[derive(Default)]
pub(crate) struct Mailbox(pub(crate) Mutex<MailState>);

/// A core's connection to the scheduler.
pub(crate) enum Link {
    /// A kernel on its own host thread.
    Thread { shared: Arc<Shared>, actor: usize },
    /// A kernel polled by the driver.
    Mail(Arc<Mailbox>),
}

impl Link {
    /// Sends a posted request; the core continues at `resume`.
    pub(crate) fn post(&self, at: SimTime, resume: SimTime, req: Request) {
        match self {
            Link::Thread { shared, actor } => driver::post(shared, *actor, at, resume, req),
            Link::Mail(m) => m.0.lock().outbox.push_back((at, at.max(resume), req)),
        }
    }

    /// Sends a blocking request; the future resolves with its answer.
    pub(crate) fn call(&self, at: SimTime, req: Request) -> CallFuture<'_> {
        match self {
            Link::Thread { shared, actor } => CallFuture::Done(Some(driver::call(shared, *actor, at, req))),
            Link::Mail(m) => CallFuture::Mail { mailbox: m, req: Some((at, req)) },
        }
    }
}

/// The answer to a blocking request, now (thread link) or once the driver has it (mailbox).
pub(crate) enum CallFuture<'a> {
    Done(Option<Answer>),
    Mail { mailbox: &'a Mailbox, req: Option<(SimTime, Request)> },
}

impl Future for CallFuture<'_> {
    type Output = Answer;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Answer> {
        match self.get_mut() {
            CallFuture::Done(a) => Poll::Ready(a.take().unwrap_or(Err(SimError::Aborted))),
            CallFuture::Mail { mailbox, req } => {
                let mut m = mailbox.0.lock();
                if let Some((at, r)) = req.take() {
                    m.answer = None;
                    m.outbox.push_back((at, at, r));
                    return Poll::Pending;
                }
                match m.answer.take() {
                    Some(a) => Poll::Ready(a),
                    None => Poll::Pending,
                }
            }
        }
    }
}

/// Polls `f` once. Futures built on a thread link are always ready at once; `None` means the
/// future is waiting for the scheduler and cannot be driven from a kernel thread.
pub fn block_on<F: Future>(f: F) -> Option<F::Output> {
    let mut f = std::pin::pin!(f);
    match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => Some(v),
        Poll::Pending => None,
    }
}
