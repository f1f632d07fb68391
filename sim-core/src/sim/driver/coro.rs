//! Synchronous kernels as stackful coroutines, all on the thread that runs the engine.
//!
//! A block's kernel runs on a stack of its own (taken from a pool when the block starts, given
//! back when it ends). Its posted requests go to the thread's [`Mailbox`] outbox; a blocking
//! request suspends the coroutine, which yields it to the driver (the engine takes it after
//! the posts), and the driver resumes the coroutine with the answer when the engine delivers
//! it, exactly as it polls an async kernel again. So a blocking
//! operation costs two stack switches, no lock and no OS thread, and the engine sees the same
//! requests at the same simulated times as with threads.

use super::block::run_block;
use super::futures::{Virtual, poll_virtual, start_virtual};
use super::guard::{self, Ended, GuardPage};
use super::stacks::{self, KernelStack, StackMaker};
use crate::api::kernel::{Answer, Mailbox, Transport};
use crate::api::program::Body;
use crate::api::request::Request;
use crate::base::error::{SimError, Site};
use crate::base::signal::WaitCmp;
use crate::base::time::SimTime;
use crate::model::ChipTiming;
use crate::results::stats::HostStats;
use crate::sim::engine::wake::{Assignment, Wake};
use crate::sim::engine::{Engine, PerActor};
use crate::sim::fibers::{Fiber, FiberBody, Fibers, Suspend};
use crate::sim::split::Windows;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

/// What a suspended coroutine is resumed with: nothing at its start, then the answer to the
/// blocking request it suspended on.
type Resume = Option<Answer>;

/// What a coroutine yields with: the issue time of the blocking request it suspends on, and
/// where that request is.
type Blocked = (SimTime, Call);

/// The blocking request a coroutine suspends on. Small, so that a suspension moves a few
/// words: a request is over a hundred bytes, and a polling loop suspends on every poll.
enum Call {
    /// The last request in the thread's mailbox outbox (after the posts before it).
    Outbox,
    /// A poll of the cells the core tested last ([`Request::Retest`]), built by no one.
    Retest { expected: i32, cmp: WaitCmp },
}

/// A block's coroutine: resumed with answers, it yields only when blocked, with the request
/// it waits on (its posts before it are in the mailbox).
type Coro = Coroutine<Resume, Blocked, Ended, KernelStack>;

thread_local! {
    /// `actor + 1` of the coroutine this thread is running, 0 outside any. A transport checks
    /// it, so a kernel that hands its core to another host thread gets a clear panic instead
    /// of suspending a coroutine from the wrong thread.
    static RUNNING: Cell<usize> = const { Cell::new(0) };
}

/// A block running as a coroutine (sim-core's, or a fiber of the host's).
struct Live {
    exec: Exec,
    /// Where the kernel runs, for an overflow's error.
    site: Site,
}

/// How a running block is switched.
enum Exec {
    /// sim-core's coroutine on a stack of its own, with the guard page below it.
    Coro { coro: Coro, guard: GuardPage },
    /// The host's fiber ([`crate::RunOptions::fibers`]), and where it and the driver leave
    /// each other what a coroutine passes when it yields and resumes.
    Fiber { fiber: Box<dyn Fiber>, mail: Rc<Mail> },
}

/// What a fiber and the driver pass each other: the answer it is resumed with, the request
/// it suspends on.
#[derive(Default)]
struct Mail {
    resume: Cell<Option<Resume>>,
    blocked: Cell<Option<Blocked>>,
}

/// How a resumed block stopped.
enum Step {
    Blocked(Blocked),
    Ended(Ended),
}

/// The coroutine driver's state, owned by the thread that runs the engine.
struct Driver {
    eng: Engine,
    chip: Arc<dyn ChipTiming>,
    host: HostStats,
    stack_bytes: usize,
    coros: Coros,
    virtuals: PerActor<Option<Virtual>>,
    /// Stacks of ended blocks, reused by the next blocks to start.
    pool: Vec<KernelStack>,
    /// Maps new stacks when the pool is empty.
    maker: StackMaker,
    /// The host's fibers, which run synchronous blocks instead of coroutines when set.
    fibers: Option<Fibers>,
}

/// Runs the engine's dispatches to completion with every synchronous kernel's block as a
/// coroutine of `stack_bytes` on this thread. In a split run, `windows` is where the driver
/// goes when the engine's window has nothing more to do.
pub(super) fn run(
    eng: Engine,
    chip: Arc<dyn ChipTiming>,
    stack_bytes: usize,
    fibers: Option<Fibers>,
    mut windows: Option<&mut dyn Windows>,
) -> (Engine, HostStats) {
    let span = eng.actor_span();
    let mut d = Driver {
        eng,
        chip,
        host: HostStats::default(),
        stack_bytes,
        coros: Coros(PerActor::new(span.clone(), || None)),
        virtuals: PerActor::new(span, || None),
        pool: Vec::new(),
        maker: StackMaker::new(stack_bytes, guard::page_size()),
        fibers,
    };
    let armed = guard::prepare();
    d.eng.start();
    let mut wakes = Vec::new();
    loop {
        d.settle(&mut wakes);
        let more = windows.as_deref_mut().is_some_and(|w| w.next(&mut d.eng));
        if !more {
            // The end of a split run may abort blocked kernels: they hear it here.
            d.settle(&mut wakes);
            break;
        }
    }
    drop(std::mem::take(&mut d.coros));
    drop(armed);
    (d.eng, d.host)
}

impl Driver {
    /// Applies events and runs the kernels they release until nothing more can happen
    /// without another window (or the run is over).
    fn settle(&mut self, wakes: &mut Vec<Wake>) {
        loop {
            self.eng.pump();
            self.eng.swap_wakes(wakes);
            if wakes.is_empty() {
                return;
            }
            for w in wakes.drain(..) {
                self.deliver(w);
            }
        }
    }

    /// Hands one release to the coroutine or future it concerns.
    fn deliver(&mut self, w: Wake) {
        match w {
            Wake::Start { actor, at, assignment } => match &assignment.body {
                Body::Async(k) => {
                    let k = k.clone();
                    self.virtuals[actor] = Some(start_virtual(&self.chip, at, assignment, k));
                    poll_virtual(&mut self.eng, &mut self.virtuals[actor], actor);
                }
                Body::Thread(_) => self.start(actor, at, assignment),
            },
            Wake::Reply { actor, at, reply } => self.answer(actor, Ok((at, reply))),
            Wake::Abort { actor } => self.answer(actor, Err(Box::new(SimError::Aborted))),
        }
    }

    /// Resumes the block on `actor` with `answer`.
    fn answer(&mut self, actor: usize, answer: Answer) {
        // The coroutine is looked at first: resuming it reads that entry anyway, and most
        // answers go to coroutines in a run that has any.
        if self.coros[actor].is_none() && self.virtuals[actor].is_some() {
            Mailbox::answer(answer);
            poll_virtual(&mut self.eng, &mut self.virtuals[actor], actor);
        } else {
            self.resume(actor, Some(answer));
        }
    }

    /// Starts a block of a synchronous kernel on a pooled (or new) stack and runs it until it
    /// blocks or ends.
    fn start(&mut self, actor: usize, at: SimTime, assignment: Assignment) {
        if self.eng.is_over() {
            // The run failed while this start was being delivered: the block would only be
            // told so at its first blocking request, and nothing it posts would be applied.
            return;
        }
        let site = assignment.ctx.site(assignment.block);
        if let Some(f) = &self.fibers {
            let mail = Rc::new(Mail::default());
            let fiber = f.0.spawn(fiber_body(self.chip.clone(), actor, at, assignment, mail.clone()));
            self.host.coroutines += 1;
            self.coros[actor] = Some(Live { exec: Exec::Fiber { fiber, mail }, site });
            return self.resume(actor, None);
        }
        let stack = match self.pool.pop() {
            Some(s) => s,
            None => match self.maker.make(self.host.stacks < stacks::GUARDED) {
                Ok(s) => {
                    self.host.stacks += 1;
                    s
                }
                Err(e) => {
                    let live = self.coros.iter().filter(|(_, c)| c.is_some()).count();
                    return self.eng.abort(SimError::invalid(format!(
                        "{site}: could not map a {}-byte coroutine stack ({e}) with {live} blocks running as coroutines: \
                         each stack takes a memory mapping (two for the first {}), so the process's \
                         mapping limit (vm.max_map_count on Linux) bounds the blocks that can run at once; \
                         run fewer blocks or raise that limit",
                        self.stack_bytes,
                        stacks::GUARDED
                    )));
                }
            },
        };
        self.host.coroutines += 1;
        let guard = GuardPage::of(&stack);
        let chip = self.chip.clone();
        let coro = Coro::with_stack(stack, move |yielder: &Yielder<Resume, Blocked>, _start: Resume| {
            let Body::Thread(kernel) = &assignment.body else { return Ended::Done };
            let port = Pinned { port: CoroPort { yielder: yielder as *const _ }, actor };
            run_block(kernel, Box::new(port), chip, at, &assignment);
            Ended::Done
        });
        self.coros[actor] = Some(Live { exec: Exec::Coro { coro, guard }, site });
        self.resume(actor, None);
    }

    /// Runs `actor`'s coroutine until it blocks or ends, then hands the requests it made to
    /// the engine (its posts, then the request it blocked on); an ended block's stack goes
    /// back to the pool.
    fn resume(&mut self, actor: usize, input: Resume) {
        let Some(live) = self.coros[actor].as_mut() else { return };
        // A run nested in a kernel (its `World::run` inside a coroutine) resumes its own
        // coroutines: the outer one's mark is restored after.
        let outer = RUNNING.replace(actor + 1);
        let step = match &mut live.exec {
            Exec::Coro { coro, guard } => match guard::armed(*guard, coro, |c| c.resume(input)) {
                CoroutineResult::Yield(b) => Step::Blocked(b),
                CoroutineResult::Return(ended) => Step::Ended(ended),
            },
            Exec::Fiber { fiber, mail } => {
                mail.resume.set(Some(input));
                match (fiber.resume(), mail.blocked.take()) {
                    (false, Some(b)) => Step::Blocked(b),
                    (true, _) => Step::Ended(Ended::Done),
                    // Suspended on nothing: the host's fiber switched away by itself.
                    (false, None) => Step::Ended(Ended::Stray),
                }
            }
        };
        RUNNING.set(outer);
        let eng = &mut self.eng;
        Mailbox::drain(|at, resume, req| eng.submit(actor, at, resume, req));
        let ended = match step {
            Step::Blocked((_, Call::Outbox)) => return,
            Step::Blocked((at, Call::Retest { expected, cmp })) => {
                return self.eng.submit_retest(actor, at, expected, cmp);
            }
            Step::Ended(ended) => ended,
        };
        let Some(live) = self.coros[actor].take() else { return };
        let err = match ended {
            Ended::Done => None,
            Ended::Overflow => Some(SimError::KernelStackOverflow { site: live.site, stack_bytes: self.stack_bytes }),
            Ended::Stray => Some(SimError::invalid(format!(
                "{}: the kernel's fiber switched back to the scheduler without an operation to wait for",
                live.site
            ))),
        };
        if let Some(err) = err {
            let now = self.eng.actor_floor(actor);
            self.eng.submit(actor, now, now, Request::Finish { result: Err(err) });
        }
        if let Exec::Coro { coro, .. } = live.exec {
            self.pool.push(coro.into_stack());
        }
    }
}

/// The blocks running as coroutines, by actor.
#[derive(Default)]
struct Coros(PerActor<Option<Live>>);

impl std::ops::Deref for Coros {
    type Target = PerActor<Option<Live>>;
    fn deref(&self) -> &PerActor<Option<Live>> {
        &self.0
    }
}

impl std::ops::DerefMut for Coros {
    fn deref_mut(&mut self) -> &mut PerActor<Option<Live>> {
        &mut self.0
    }
}

/// After the last event every block has ended (a failed run aborted the blocked ones, which
/// then returned), so nothing is left here unless a reply was lost or the driver itself
/// panicked: such a coroutine is unwound (its kernel's destructors run, on this thread) and
/// whatever it sent is dropped.
impl Drop for Coros {
    fn drop(&mut self) {
        for (actor, c) in self.0.iter_mut() {
            if let Some(live) = c.take() {
                let outer = RUNNING.replace(actor + 1);
                drop(live.exec);
                RUNNING.set(outer);
                Mailbox::drain(|_, _, _| {});
            }
        }
    }
}

/// A coroutine kernel's way into the engine: posts wait in the mailbox, a call suspends the
/// coroutine with its request until the driver resumes it with the answer.
struct CoroPort {
    /// The yielder of the coroutine this port belongs to; it lives on that coroutine's stack,
    /// which outlives the kernel's core (and so this port).
    yielder: *const Yielder<Resume, Blocked>,
}

impl Suspending for CoroPort {
    const MISUSE: &'static str = "a kernel run as a coroutine used its core from another host thread; run it with \
         RunOptions::kernel_exec = KernelExec::Threads";

    fn suspend(&self, at: SimTime, call: Call) -> Answer {
        // SAFETY: the yielder outlives this port (see the field) and this thread is running
        // its coroutine (checked by `Pinned` before every call).
        let answer = unsafe { &*self.yielder }.suspend((at, call));
        answer.unwrap_or_else(|| Err(Box::new(SimError::Aborted)))
    }
}

/// A kernel's port that suspends the kernel (its coroutine or its fiber) on every call that
/// waits for an answer; the [`Transport`] of both is written once, in [`Pinned`].
trait Suspending {
    /// The panic of a kernel that used its core from a thread or fiber not running it.
    const MISUSE: &'static str;
    /// Suspends the kernel on `call`, issued at `at`, until the driver resumes it with the
    /// answer. The caller has checked that this thread runs the kernel.
    fn suspend(&self, at: SimTime, call: Call) -> Answer;
}

/// A suspending port pinned to the kernel (the actor) it belongs to: every use first checks
/// that this thread is running that kernel and panics otherwise, which is what makes the
/// ports, which hold raw pointers and thread-local state, safe to hand out as `Send + Sync`.
struct Pinned<P> {
    port: P,
    actor: usize,
}

// SAFETY: a pinned port is only ever used on the thread running its kernel: `on_own_kernel`
// checks that before any use of the port or the thread's mailbox, and panics otherwise.
unsafe impl<P> Send for Pinned<P> {}
// SAFETY: as above; the check serialises every use on that one thread.
unsafe impl<P> Sync for Pinned<P> {}

impl<P: Suspending> Pinned<P> {
    fn on_own_kernel(&self) {
        if RUNNING.get() != self.actor + 1 {
            panic!("{}", P::MISUSE);
        }
    }
}

impl<P: Suspending> Transport for Pinned<P> {
    fn post(&self, at: SimTime, resume: SimTime, req: Request) {
        self.on_own_kernel();
        Mailbox::post(at, resume, req);
    }

    fn call(&self, at: SimTime, req: Request) -> Answer {
        self.on_own_kernel();
        Mailbox::send(at, req);
        self.port.suspend(at, Call::Outbox)
    }

    fn retest(&self, at: SimTime, expected: i32, cmp: WaitCmp) -> Answer {
        self.on_own_kernel();
        self.port.suspend(at, Call::Retest { expected, cmp })
    }
}

/// The body of a block's fiber: the kernel on a core whose transport suspends the fiber, as
/// a coroutine's does.
fn fiber_body(
    chip: Arc<dyn ChipTiming>,
    actor: usize,
    at: SimTime,
    assignment: Assignment,
    mail: Rc<Mail>,
) -> FiberBody {
    Box::new(move |suspend: &dyn Suspend| {
        let Body::Thread(kernel) = &assignment.body else { return };
        // SAFETY: the port lives inside this call, within which `suspend` is valid.
        let suspend: &'static dyn Suspend =
            unsafe { std::mem::transmute::<&dyn Suspend, &'static dyn Suspend>(suspend) };
        let port = Pinned { port: FiberPort { suspend, mail }, actor };
        run_block(kernel, Box::new(port), chip, at, &assignment);
    })
}

/// A fiber kernel's way into the engine: as [`CoroPort`], suspending the host's fiber.
struct FiberPort {
    /// The fiber's way back; valid while the kernel runs (the port is dropped before its body
    /// returns).
    suspend: &'static dyn Suspend,
    mail: Rc<Mail>,
}

impl Suspending for FiberPort {
    const MISUSE: &'static str =
        "a kernel run as a fiber used its core from another host thread or another kernel's fiber";

    fn suspend(&self, at: SimTime, call: Call) -> Answer {
        self.mail.blocked.set(Some((at, call)));
        self.suspend.suspend();
        self.mail.resume.take().flatten().unwrap_or_else(|| Err(Box::new(SimError::Aborted)))
    }
}
