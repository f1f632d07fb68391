//! How a core's operations reach the scheduler. A synchronous kernel goes through a
//! [`Transport`]: on its own thread it sends requests straight into the engine and blocks the
//! thread for replies; as a coroutine it leaves posts in the mailbox and suspends on a
//! blocking request, yielding it to the driver, until the driver resumes it with the reply. A kernel run as a future inside the engine leaves requests
//! in the mailbox and is polled again when its reply is there. All send the same requests at
//! the same times, so they give the same results.
//!
//! This module owns both ends a kernel sees: the [`Mailbox`] the driver fills and drains, and
//! the [`Transport`] trait the driver implements for its threads and coroutines. It names no driver type, so
//! the program API stays below the driver that runs it.

use crate::api::request::{Reply, Request};
use crate::base::error::SimError;
use crate::base::signal::WaitCmp;
use crate::base::time::SimTime;
use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

/// A reply as the transport hands it back: the resume time and the answer, or why there is
/// none (boxed: it is rare, and an answer moves several times on every blocking operation).
pub(crate) type Answer = Result<(SimTime, Reply), Box<SimError>>;

/// What a polled kernel has left for the driver and what the driver has left for it.
struct MailState {
    /// Requests in program order: `(issue time, resume time, request)`.
    outbox: Vec<(SimTime, SimTime, Request)>,
    /// The answer to the blocking request last sent.
    answer: Option<Answer>,
    /// A poll of the cells the kernel tested last, sent without a request (see
    /// [`Request::Retest`]): its issue time and condition. It is the kernel's blocking
    /// request, so it follows everything in `outbox`.
    retest: Option<(SimTime, i32, WaitCmp)>,
}

thread_local! {
    /// The mailbox of the future this thread is polling. The driver polls one future at a
    /// time, holding the engine's lock, and empties the mailbox before the next poll, so one
    /// per host thread serves every polled kernel, with no lock of its own.
    static MAIL: RefCell<MailState> = const {
        RefCell::new(MailState { outbox: Vec::new(), answer: None, retest: None })
    };
}

/// A mailbox's contents, set aside while a nested run uses the mailbox.
pub(crate) struct Stash {
    outbox: Vec<(SimTime, SimTime, Request)>,
    answer: Option<Answer>,
    retest: Option<(SimTime, i32, WaitCmp)>,
}

/// The driver's side of the mailbox of polled kernels (this thread's).
pub(crate) struct Mailbox;

impl Mailbox {
    /// Leaves `answer` for the kernel about to be polled.
    pub(crate) fn answer(answer: Answer) {
        MAIL.with_borrow_mut(|m| m.answer = Some(answer));
    }

    /// Leaves a posted request in the outbox (the core continues at `resume`), as a polled
    /// kernel does; a coroutine kernel's transport posts through this too.
    pub(crate) fn post(at: SimTime, resume: SimTime, req: Request) {
        MAIL.with_borrow_mut(|m| m.outbox.push((at, at.max(resume), req)));
    }

    /// Leaves a blocking request in the outbox and forgets any earlier answer: the kernel
    /// then waits for [`Mailbox::answer`] (polled) or its resumption (coroutine).
    pub(crate) fn send(at: SimTime, req: Request) {
        MAIL.with_borrow_mut(|m| {
            m.answer = None;
            m.outbox.push((at, at, req));
        });
    }

    /// Leaves a poll of the cells the kernel tested last as its blocking request, without
    /// building a [`Request::Retest`] (the driver builds it when it drains the mailbox).
    pub(crate) fn send_retest(at: SimTime, expected: i32, cmp: WaitCmp) {
        MAIL.with_borrow_mut(|m| {
            m.answer = None;
            m.retest = Some((at, expected, cmp));
        });
    }

    /// Takes what this thread's mailbox holds, leaving it empty: a run started from inside a
    /// kernel (a nested `World::run`) must not take the outer kernel's requests.
    pub(crate) fn stash() -> Stash {
        MAIL.with_borrow_mut(|m| Stash {
            outbox: std::mem::take(&mut m.outbox),
            answer: m.answer.take(),
            retest: m.retest.take(),
        })
    }

    /// Puts back what [`Mailbox::stash`] took (the nested run has drained the mailbox).
    pub(crate) fn unstash(s: Stash) {
        MAIL.with_borrow_mut(|m| {
            m.outbox = s.outbox;
            m.answer = s.answer;
            m.retest = s.retest;
        });
    }

    /// Hands every request the kernel just polled made to `submit`, in program order, and
    /// drops an answer it did not take, so the next kernel polled starts from an empty box.
    /// `submit` must not send requests itself (the driver's goes to the engine).
    pub(crate) fn drain(mut submit: impl FnMut(SimTime, SimTime, Request)) {
        MAIL.with_borrow_mut(|m| {
            for (at, resume, req) in m.outbox.drain(..) {
                submit(at, resume, req);
            }
            if let Some((at, expected, cmp)) = m.retest.take() {
                submit(at, at, Request::Retest { expected, cmp });
            }
            m.answer = None;
        });
    }
}

/// How a synchronous kernel reaches the scheduler (the driver implements it for one actor):
/// on its own host thread, or as a coroutine that suspends until the answer is there.
pub(crate) trait Transport: Send + Sync {
    /// Hands a posted request to the scheduler; the core continues at `resume`.
    fn post(&self, at: SimTime, resume: SimTime, req: Request);
    /// Hands a blocking request to the scheduler and returns its answer (blocking the thread,
    /// or suspending the coroutine, until then).
    fn call(&self, at: SimTime, req: Request) -> Answer;

    /// [`Transport::call`] of a [`Request::Retest`]: a polling loop's most frequent request,
    /// which a transport may hand over without building a request.
    fn retest(&self, at: SimTime, expected: i32, cmp: WaitCmp) -> Answer {
        self.call(at, Request::Retest { expected, cmp })
    }
}

/// A core's connection to the scheduler.
pub(crate) enum Uplink {
    /// A synchronous kernel (on its own host thread or a coroutine): answers come back
    /// through the transport's call, so every future is ready at once.
    Thread(Box<dyn Transport>),
    /// A kernel polled by the driver: its requests go to the polling thread's [`Mailbox`].
    Mail,
}

impl Uplink {
    /// Sends a posted request; the core continues at `resume`.
    pub(crate) fn post(&self, at: SimTime, resume: SimTime, req: Request) {
        match self {
            Uplink::Thread(t) => t.post(at, resume, req),
            Uplink::Mail => Mailbox::post(at, resume, req),
        }
    }

    /// Sends a blocking request on a synchronous link (a thread or a coroutine) and returns its
    /// answer: the request [`Uplink::call`] sends, answered without building a future. A
    /// mailbox link cannot answer at once: it sends nothing and says so.
    pub(crate) fn call_now(&self, at: SimTime, req: Request) -> Answer {
        match self {
            Uplink::Thread(t) => t.call(at, req),
            Uplink::Mail => Err(Box::new(not_synchronous())),
        }
    }

    /// [`Uplink::call_now`] of a [`Request::Retest`], through the transport's short way.
    pub(crate) fn retest_now(&self, at: SimTime, expected: i32, cmp: WaitCmp) -> Answer {
        match self {
            Uplink::Thread(t) => t.retest(at, expected, cmp),
            Uplink::Mail => Err(Box::new(not_synchronous())),
        }
    }

    /// [`Uplink::call`] of a [`Request::Retest`]: a mailbox link leaves the poll in the
    /// mailbox's retest slot instead of building the request.
    pub(crate) fn retest(&self, at: SimTime, expected: i32, cmp: WaitCmp) -> CallFuture {
        match self {
            Uplink::Thread(t) => CallFuture::Done(Some(t.retest(at, expected, cmp))),
            Uplink::Mail => {
                Mailbox::send_retest(at, expected, cmp);
                CallFuture::Mail { sent: true }
            }
        }
    }

    /// Sends a blocking request; the future resolves with its answer. A mailbox link leaves
    /// the request in the outbox at once, so the future only waits for the answer (and a
    /// request never moves through the kernel's future state); the driver drains the outbox
    /// when the kernel yields at the future's first poll.
    pub(crate) fn call(&self, at: SimTime, req: Request) -> CallFuture {
        match self {
            Uplink::Thread(t) => CallFuture::Done(Some(t.call(at, req))),
            Uplink::Mail => {
                Mailbox::send(at, req);
                CallFuture::Mail { sent: true }
            }
        }
    }
}

/// The answer to a blocking request, now (thread link) or once the driver has it (mailbox).
pub(crate) enum CallFuture {
    Done(Option<Answer>),
    /// `sent`: the request is in the outbox and the future not polled yet, so there is no
    /// answer to look for (the kernel yields to let the driver take the request).
    Mail {
        sent: bool,
    },
}

impl Future for CallFuture {
    type Output = Answer;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Answer> {
        match self.get_mut() {
            CallFuture::Done(a) => Poll::Ready(a.take().unwrap_or_else(|| Err(Box::new(SimError::Aborted)))),
            CallFuture::Mail { sent } if *sent => {
                *sent = false;
                Poll::Pending
            }
            CallFuture::Mail { .. } => match MAIL.with_borrow_mut(|m| m.answer.take()) {
                Some(a) => Poll::Ready(a),
                None => Poll::Pending,
            },
        }
    }
}

/// The error of a blocking `Core` operation on a core that is not a synchronous kernel's.
pub(crate) fn not_synchronous() -> SimError {
    SimError::invalid(
        "a blocking operation was not answered at once; Core methods need a synchronous kernel (use Ops with .await in an async kernel)",
    )
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::Mutex as StdMutex;

    fn t(ns: u64) -> SimTime {
        SimTime::from_ps(ns * 1000)
    }

    fn fence() -> Request {
        Request::Fence
    }

    /// Records what a thread link hands over, and answers every call with `Done` 5 ns later.
    #[derive(Default)]
    struct Recorder(StdMutex<Vec<(SimTime, SimTime, &'static str)>>);

    impl Transport for Arc<Recorder> {
        fn post(&self, at: SimTime, resume: SimTime, req: Request) {
            self.0.lock().expect("not poisoned").push((at, resume, req.name()));
        }

        fn call(&self, at: SimTime, req: Request) -> Answer {
            self.0.lock().expect("not poisoned").push((at, at, req.name()));
            Ok((at + crate::base::time::SimDuration::from_ns(5), Reply::Done))
        }
    }

    /// What the mailbox holds, drained: `(issue, resume, request name)`.
    fn drained() -> Vec<(SimTime, SimTime, &'static str)> {
        let mut out = Vec::new();
        Mailbox::drain(|at, resume, r| out.push((at, resume, r.name())));
        out
    }

    #[test]
    fn a_mailbox_link_queues_posts_and_resolves_a_call_once_answered() {
        let link = Uplink::Mail;
        // A posted request never resumes before it was issued.
        link.post(t(4), t(2), Request::Note { name: "vadd", start: t(4), end: t(6) });
        let mut call = std::pin::pin!(link.call(t(7), fence()));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(call.as_mut().poll(&mut cx).is_pending(), "sent, not yet answered");
        assert_eq!(drained(), vec![(t(4), t(4), "vadd"), (t(7), t(7), "fence")]);
        assert!(call.as_mut().poll(&mut cx).is_pending(), "still no answer");
        Mailbox::answer(Ok((t(9), Reply::Done)));
        match call.as_mut().poll(&mut cx) {
            Poll::Ready(Ok((at, Reply::Done))) => assert_eq!(at, t(9)),
            other => panic!("expected the answer, got {:?}", other.map(|a| a.map(|(at, _)| at))),
        }
        assert!(drained().is_empty(), "the call was sent once");
    }

    #[test]
    fn a_mailbox_retest_is_drained_as_a_request_after_the_posts() {
        let link = Uplink::Mail;
        link.post(t(2), t(3), Request::Note { name: "vadd", start: t(2), end: t(3) });
        let mut call = std::pin::pin!(link.retest(t(3), 7, WaitCmp::Ge));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(call.as_mut().poll(&mut cx).is_pending(), "sent, not yet answered");
        let mut out = Vec::new();
        Mailbox::drain(|at, resume, r| {
            let cond = match r {
                Request::Retest { expected, cmp } => Some((expected, cmp)),
                _ => None,
            };
            out.push((at, resume, cond));
        });
        assert_eq!(out, vec![(t(2), t(3), None), (t(3), t(3), Some((7, WaitCmp::Ge)))]);
        assert!(drained().is_empty(), "the retest was sent once");
    }

    #[test]
    fn a_drained_mailbox_keeps_no_answer_for_the_next_kernel() {
        // An answer the polled kernel did not take (it had ended) is not left for the next
        // kernel this thread polls.
        Mailbox::answer(Ok((t(3), Reply::Done)));
        assert!(drained().is_empty());
        // The next kernel polled is waiting for the answer to a call it sent earlier.
        let mut waiting = std::pin::pin!(CallFuture::Mail { sent: false });
        let mut cx = Context::from_waker(Waker::noop());
        assert!(waiting.as_mut().poll(&mut cx).is_pending(), "another kernel's answer was taken");
    }

    #[test]
    fn a_thread_link_goes_through_its_transport_and_is_ready_at_once() {
        let rec = Arc::new(Recorder::default());
        let link = Uplink::Thread(Box::new(rec.clone()));
        link.post(t(1), t(3), fence());
        let answer = block_on(link.call(t(3), fence())).expect("a thread link answers at once");
        assert!(matches!(answer, Ok((at, Reply::Done)) if at == t(8)));
        assert_eq!(*rec.0.lock().expect("not poisoned"), vec![(t(1), t(3), "fence"), (t(3), t(3), "fence")]);
    }
}
