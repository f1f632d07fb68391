//! The driver: runs each placed block of a synchronous kernel as a coroutine on the calling
//! thread (the default, `coro.rs`) or on a host thread of its own ([`KernelExec::Threads`]),
//! and each block of an async kernel as a future polled here; all share one engine.
//!
//! With threads, the engine sits behind a mutex. A thread that sends a request applies
//! whatever events are safe right away, so a request nobody else can precede costs no
//! hand-off; it parks on its own condition variable only when it must wait for another actor.
//! Async kernels are polled by whichever thread applies the event that answers them, so they
//! never cost a hand-off at all; coroutines are resumed the same way.

mod block;
mod coro;
mod futures;
mod guard;
mod stacks;

use crate::api::kernel::{Answer, Mailbox, Transport};
use crate::api::program::Body;
use crate::api::request::{Reply, Request};
use crate::base::error::SimError;
use crate::base::time::{SimDuration, SimTime};
use crate::model::ChipTiming;
use crate::results::stats::HostStats;
use crate::sim::engine::Engine;
use crate::sim::engine::wake::{Assignment, Wake};
use crate::sim::fibers::Fibers;
use crate::sim::options::KernelExec;
use crate::sim::split::Windows;
use block::run_block;
pub(crate) use futures::panic_message as panic_text;
use futures::{Virtual, poll_virtual, start_virtual};
use parking_lot::{Condvar, Mutex, MutexGuard};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

/// Busy-wait iterations before a blocked thread parks, when host cores are idle: an answer
/// that comes within a few microseconds then costs no futex sleep and wake-up.
const SPINS: u32 = 4000;

/// What is waiting for a thread actor.
enum Slot {
    Empty,
    Start(SimTime, Assignment),
    Reply(SimTime, Reply),
    Abort,
}

struct State {
    eng: Engine,
    host: HostStats,
    /// Storage for releases being delivered, swapped with the engine's (no allocation).
    wake_buf: Vec<Wake>,
    slots: Vec<Slot>,
    virtuals: Vec<Option<Virtual>>,
    threads: Vec<Option<JoinHandle<()>>>,
    /// `parked[actor]`: its thread sleeps on its condition variable.
    parked: Vec<bool>,
    /// Core threads that are not parked (running, runnable or spinning).
    active: usize,
    exit: bool,
}

/// Everything the core threads share.
struct Shared {
    state: Mutex<State>,
    cvs: Vec<Condvar>,
    /// `ready[actor]`: its slot was filled (read without the lock while spinning).
    ready: Vec<AtomicBool>,
    /// Host cores this process may use. A blocked thread spins only when every simulated core
    /// with work could have a host core of its own (and no more threads are active than host
    /// cores), so spinning never steals a core another thread needs.
    host_cores: usize,
    done: Condvar,
    chip: Arc<dyn ChipTiming>,
}

/// Runs the engine's dispatches to completion, running synchronous kernels as `exec` says
/// (coroutines as the host's `fibers` when given), and returns the engine with the host-side counters.
pub(crate) fn run(
    eng: Engine,
    chip: Arc<dyn ChipTiming>,
    exec: KernelExec,
    fibers: Option<Fibers>,
) -> (Engine, HostStats) {
    // A run started from inside a kernel uses this thread's mailbox: the outer kernel's
    // requests wait aside until it returns.
    let outer = Mailbox::stash();
    let r = match exec {
        KernelExec::Coroutines { stack_bytes } => coro::run(eng, chip, stack_bytes, fibers, None),
        KernelExec::Threads => run_threads(eng, chip),
    };
    Mailbox::unstash(outer);
    r
}

/// Runs one partition of a split run on this thread, its synchronous kernels as coroutines
/// of `stack_bytes`, meeting the other partitions through `windows` between windows; the
/// first window ends at `lookahead` (every partition starts at time 0).
pub(crate) fn run_partition(
    mut eng: Engine,
    chip: Arc<dyn ChipTiming>,
    stack_bytes: usize,
    windows: &mut dyn Windows,
    lookahead: SimDuration,
) -> (Engine, HostStats) {
    let outer = Mailbox::stash();
    eng.open_window(SimTime::ZERO + lookahead);
    let r = coro::run(eng, chip, stack_bytes, None, Some(windows));
    Mailbox::unstash(outer);
    r
}

/// [`run`] with a host thread per simulated core that runs a synchronous kernel.
fn run_threads(eng: Engine, chip: Arc<dyn ChipTiming>) -> (Engine, HostStats) {
    // Indexed by actor number; a run on threads is never split, so its span starts at 0.
    let n = eng.actor_span().end;
    let state = State {
        eng,
        host: HostStats::default(),
        wake_buf: Vec::new(),
        slots: (0..n).map(|_| Slot::Empty).collect(),
        virtuals: (0..n).map(|_| None).collect(),
        threads: (0..n).map(|_| None).collect(),
        parked: vec![false; n],
        active: 0,
        exit: false,
    };
    let shared = Arc::new(Shared {
        state: Mutex::new(state),
        cvs: (0..n).map(|_| Condvar::new()).collect(),
        ready: (0..n).map(|_| AtomicBool::new(false)).collect(),
        host_cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        done: Condvar::new(),
        chip,
    });
    let handles: Vec<JoinHandle<()>> = {
        let mut g = shared.state.lock();
        g.eng.start();
        deliver(&shared, &mut g);
        while !g.eng.is_over() {
            shared.done.wait(&mut g);
        }
        g.exit = true;
        for cv in &shared.cvs {
            cv.notify_one();
        }
        g.virtuals.iter_mut().for_each(|v| *v = None);
        g.threads.iter_mut().filter_map(Option::take).collect()
    };
    for h in handles {
        // A thread only ends by returning from its loop; kernel panics are caught inside it.
        let _ = h.join();
    }
    match Arc::try_unwrap(shared) {
        Ok(s) => {
            let st = s.state.into_inner();
            (st.eng, st.host)
        }
        Err(_) => unreachable!("every core thread has been joined"),
    }
}

/// Applies safe events and hands their releases to the threads or futures they concern,
/// until nothing more can happen without a kernel thread's next request.
fn deliver(shared: &Arc<Shared>, g: &mut MutexGuard<'_, State>) {
    // The buffer goes back and forth with the engine's, so releases cost no allocation.
    let mut wakes = std::mem::take(&mut g.wake_buf);
    loop {
        g.eng.pump();
        g.eng.swap_wakes(&mut wakes);
        if wakes.is_empty() {
            break;
        }
        for w in wakes.drain(..) {
            match w {
                Wake::Start { actor, at, assignment } => match &assignment.body {
                    Body::Async(k) => {
                        let k = k.clone();
                        let g = &mut **g;
                        g.virtuals[actor] = Some(start_virtual(&shared.chip, at, assignment, k));
                        poll_virtual(&mut g.eng, &mut g.virtuals[actor], actor);
                    }
                    Body::Thread(_) => wake_thread(shared, g, actor, Slot::Start(at, assignment)),
                },
                Wake::Reply { actor, at, reply } => match g.virtuals[actor].as_ref() {
                    Some(_) => {
                        Mailbox::answer(Ok((at, reply)));
                        let g = &mut **g;
                        poll_virtual(&mut g.eng, &mut g.virtuals[actor], actor);
                    }
                    None => wake_thread(shared, g, actor, Slot::Reply(at, reply)),
                },
                Wake::Abort { actor } => match g.virtuals[actor].as_ref() {
                    Some(_) => {
                        Mailbox::answer(Err(Box::new(SimError::Aborted)));
                        let g = &mut **g;
                        poll_virtual(&mut g.eng, &mut g.virtuals[actor], actor);
                    }
                    None => wake_thread(shared, g, actor, Slot::Abort),
                },
            }
        }
    }
    g.wake_buf = wakes;
    if g.eng.is_over() {
        shared.done.notify_all();
    }
}

/// Hands `slot` to a thread actor, starting its thread if it has none yet.
fn wake_thread(shared: &Arc<Shared>, g: &mut MutexGuard<'_, State>, actor: usize, slot: Slot) {
    if g.exit && matches!(slot, Slot::Start(..)) {
        // The run is over and its threads are being joined: a kernel thread still finishing
        // (after a failure) must not start a block, let alone a thread nobody would join.
        return;
    }
    g.slots[actor] = slot;
    shared.ready[actor].store(true, Ordering::Release);
    // Once the run is over the joined threads' handles are gone: a late answer (an abort for
    // a kernel still running its code) goes to the slot its own thread reads, never to a new
    // thread that nobody would join.
    if g.threads[actor].is_some() || g.exit {
        if g.parked[actor] {
            g.parked[actor] = false;
            g.active += 1;
            shared.cvs[actor].notify_one();
        }
        return;
    }
    let s = shared.clone();
    match std::thread::Builder::new().name(format!("ranksim-core{actor}")).spawn(move || core_thread(s, actor)) {
        Ok(h) => {
            g.threads[actor] = Some(h);
            g.host.threads += 1;
            g.active += 1;
        }
        Err(e) => {
            g.eng.abort(SimError::invalid(format!("could not start a host thread for simulated core {actor}: {e}")))
        }
    }
}

/// The life of one core thread: run each block assigned to it until told to exit.
fn core_thread(shared: Arc<Shared>, actor: usize) {
    loop {
        let (at, assignment) = {
            let mut g = shared.state.lock();
            loop {
                match std::mem::replace(&mut g.slots[actor], Slot::Empty) {
                    Slot::Start(at, a) => break (at, a),
                    Slot::Empty if g.exit => return,
                    Slot::Empty => park(&shared, &mut g, actor),
                    Slot::Reply(..) | Slot::Abort => {}
                }
            }
        };
        let Body::Thread(kernel) = &assignment.body else { continue };
        let port = Box::new(ThreadPort { shared: shared.clone(), actor });
        run_block(kernel, port, shared.chip.clone(), at, &assignment);
    }
}

/// One kernel thread's way into the engine: its [`Uplink`](crate::api::kernel::Uplink) calls [`post`] and [`call`] through
/// this.
struct ThreadPort {
    shared: Arc<Shared>,
    actor: usize,
}

impl Transport for ThreadPort {
    fn post(&self, at: SimTime, resume: SimTime, req: Request) {
        post(&self.shared, self.actor, at, resume, req);
    }

    fn call(&self, at: SimTime, req: Request) -> Answer {
        call(&self.shared, self.actor, at, req).map_err(Box::new)
    }
}

/// Sends a posted request; the caller continues at `resume`.
fn post(shared: &Arc<Shared>, actor: usize, at: SimTime, resume: SimTime, req: Request) {
    let mut g = shared.state.lock();
    g.eng.submit(actor, at, resume, req);
    deliver(shared, &mut g);
}

/// Sends a blocking request and waits for its reply: `(resume time, reply)`.
fn call(shared: &Arc<Shared>, actor: usize, at: SimTime, req: Request) -> Result<(SimTime, Reply), SimError> {
    let mut g = shared.state.lock();
    g.eng.submit(actor, at, at, req);
    deliver(shared, &mut g);
    let (mut waited, mut spun) = (false, false);
    loop {
        match std::mem::replace(&mut g.slots[actor], Slot::Empty) {
            Slot::Reply(t, r) => {
                if waited {
                    g.host.handoffs += 1;
                }
                return Ok((t, r));
            }
            Slot::Abort => return Err(SimError::Aborted),
            Slot::Start(..) => unreachable!("a running core was assigned a second block"),
            Slot::Empty => {
                waited = true;
                if !spun && g.active <= shared.host_cores && g.eng.busy_actors() <= shared.host_cores {
                    spun = true;
                    shared.ready[actor].store(false, Ordering::Relaxed);
                    MutexGuard::unlocked(&mut g, || spin_until(&shared.ready[actor]));
                } else {
                    park(shared, &mut g, actor);
                }
            }
        }
    }
}

/// Sleeps until another thread fills this actor's slot (or the run ends).
fn park(shared: &Shared, g: &mut MutexGuard<'_, State>, actor: usize) {
    g.parked[actor] = true;
    g.active -= 1;
    shared.cvs[actor].wait(g);
    if g.parked[actor] {
        // Woken without a wake-up being counted (the run is ending).
        g.parked[actor] = false;
        g.active += 1;
    }
}

/// Busy-waits up to [`SPINS`] iterations for `flag`.
fn spin_until(flag: &AtomicBool) {
    for _ in 0..SPINS {
        if flag.load(Ordering::Acquire) {
            return;
        }
        std::hint::spin_loop();
    }
}
