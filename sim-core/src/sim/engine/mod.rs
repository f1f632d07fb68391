//! The deterministic scheduler. It owns simulated memory, the event queue and every actor's
//! state, and applies requests and the events they cause in key order `(time, actor, seq,
//! sub)`. An event is applied only when no running actor can still send one with a smaller
//! key, so results and timing never depend on how the OS interleaves threads.
//!
//! The engine is a plain single-threaded state machine: [`Engine::submit`] takes a request,
//! [`Engine::pump`] applies every event that is safe to apply, and the releases it produced
//! are collected with [`Engine::swap_wakes`]. The threaded driver (`crate::sim::driver`) wraps it.

mod bounds;
mod copy;
mod deadlock;
mod desc;
mod event;
mod flow;
pub(crate) mod footprint;
mod limits;
mod livelock;
mod loads;
mod observe;
mod partition;
mod queue;
mod scalar;
mod sched;
mod sdma;
mod signals;
mod state;
#[cfg(test)]
pub(crate) mod testkit;
mod visibility;
pub(crate) mod wake;
mod wire;

pub(crate) use observe::{Observers, Recording, UserObserver};
pub(crate) use state::part::{Crossing, own_chips};
pub(crate) use state::per_actor::PerActor;

use crate::api::program::Dispatch;
use crate::api::request::{OpKind, Reply, Request};
use crate::base::addr::{Caller, MemKey, Place, narrow};
use crate::base::call_site::CallSite;
use crate::base::divider::Divider;
use crate::base::dtype::DType;
use crate::base::error::SimError;
use crate::base::payload::Payload;
use crate::base::signal::{Cond, WaitCmp, apply_notify};
use crate::base::time::{SimDuration, SimTime};
use crate::model::{ChipTiming, DmaDir, Network, PathKind, Route};
use crate::results::stats::{DispatchRecord, EngineStats, Traffic};
use crate::results::trace::Trace;
use crate::sim::check;
use crate::sim::memory::Memory;
use crate::sim::options::{Jitter, Progress, RunOptions};
use event::{Entry, Event, HOST, Key, Pending, SignalLand, Slots};
use observe::{OpAt, TraceId};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use signals::{NameId, Signals, Waiter, WaiterKind, WriteOp, Written};
use state::copy_job::CopyJob;
use state::tasks::ChipSched;
use std::sync::Arc;
use wake::{Assignment, Wake};

/// What an actor (one AIV or AIC core of one chip) is doing, as far as the engine knows.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum ActorState {
    /// No block assigned.
    Idle,
    /// Running; its next request will have a key at least `(at, id, seq)`.
    Running { at: SimTime, seq: u64 },
    /// Waiting for a reply.
    Blocked,
}

#[derive(Clone)]
struct Actor {
    state: ActorState,
    next_seq: u64,
    /// The block it runs: (task index in the chip's active dispatch, assignment).
    job: Option<(usize, Assignment)>,
    /// When it last blocked (for reports).
    since: SimTime,
    /// What it tests when it polls the same cells again ([`Request::Retest`]).
    polled: state::polled::Polled,
    /// Its polls since the last change in the machine (see `livelock.rs`).
    spin: state::spin::Spin,
    /// The last operation it asked for and where, for a budget's report.
    last: (&'static str, Caller),
}

/// The scheduler state of one run.
pub(crate) struct Engine {
    chip: Arc<dyn ChipTiming>,
    net: Box<dyn Network>,
    flows: state::flows::Flows,
    /// Actors per chip: the AIV cores `0..aiv`, then the AIC cores (`[chip.cube]`) `aiv..cores`;
    /// actor `chip * cores + core`.
    cores: usize,
    /// Divides by `cores` (an actor's chip) without a hardware division.
    per_chip: Divider,
    aiv: usize,
    world: usize,
    pub(crate) mem: Memory,
    /// Keys of pending events, smallest first; the events themselves sit in `slots`.
    queue: queue::EventQueue,
    slots: Slots,
    /// Per chip, the next `sub` of an event derived on it (see [`Engine::derived_key`]).
    subs: Vec<u64>,
    /// Where the event being applied happens (see [`Here`]).
    here: Here,
    now: SimTime,
    actors: PerActor<Actor>,
    /// Lower bounds `(time, actor, seq)` of every running actor's next request.
    running: bounds::Bounds,
    /// Actors with a block assigned (running or blocked).
    busy: usize,
    chips: Vec<ChipSched>,
    signals: Signals,
    copies: Vec<Option<CopyJob>>,
    wakes: Vec<Wake>,
    outcome: Option<Result<(), SimError>>,
    pub(crate) stats: EngineStats,
    pub(crate) records: Vec<DispatchRecord>,
    /// Who watches the run: traffic counters, timeline, protocol checking (see `observe/mod.rs`).
    obs: Observers,
    /// The seeded RNGs (one per chip, so what one chip draws never depends on another's
    /// draws) and magnitudes of a jittered run.
    jitter: Option<(Vec<Xoshiro256PlusPlus>, Jitter)>,
    /// Write and notify ordering per actor (see `visibility.rs`).
    vis: state::in_flight::Visibility,
    /// Asynchronous loads whose bytes are not collected yet (see `loads.rs`).
    loads: state::pending_loads::Loads,
    /// SDMA channels and transfers in progress (see `sdma.rs`).
    sdma: state::channels::Sdma,
    /// Where the run's progress is published, and the event count at the last publication.
    progress: Option<(Progress, u64)>,
    /// Events at or after this time wait: the end of the window of a split run's partition
    /// ([`SimTime::NEVER`] in a run that is not split).
    horizon: SimTime,
    /// The partition this engine runs, in a split run (see `partition.rs`).
    part: Option<Box<state::part::Part>>,
    /// In a split run, the block and task of each writer of another partition whose writes
    /// landed here, as its crossings said (for cells' write histories).
    foreign_jobs: rustc_hash::FxHashMap<usize, (usize, Arc<str>)>,
    /// Events applied that changed nothing (polls, scalar reads, notes; see `livelock.rs`).
    quiet: u64,
    /// Polls per spinning core that make a livelock (`RunOptions::livelock_polls`; 0: off).
    livelock_polls: u64,
    /// The count of changes and how many cores have spun `livelock_polls` times since it.
    saturated: (u64, usize),
    /// The budgets (`RunOptions::max_sim_time`, `max_events`) and the host's stop flag.
    limits: state::limits::Limits,
}

impl Engine {
    /// Adds the user's observers to this run (before it starts).
    pub(crate) fn attach_observers(&mut self, users: Vec<UserObserver>) {
        self.obs.attach(users);
    }

    /// Makes this partition of a split run record its facts for the user's observers, which
    /// the merge replays them to; `links` when one of them wants link occupancy.
    pub(crate) fn record_for_users(&mut self, links: bool) {
        self.obs.record_for_users(links);
    }

    /// Hands the user's observers back at the end of the run.
    pub(crate) fn detach_observers(&mut self) -> Vec<UserObserver> {
        self.obs.detach(self.now)
    }
}

impl Engine {
    /// An engine over `mem` that will run `queues[chip]` in order on each chip; with `part`,
    /// `(id, owner)`, partition `id` of a split run whose chips' partitions `owner` gives (see
    /// [`Engine::partition`]), which holds its actors' state only for its own chips.
    pub(crate) fn new(
        chip: Arc<dyn ChipTiming>,
        mut net: Box<dyn Network>,
        mem: Memory,
        queues: Vec<Vec<Dispatch>>,
        options: &RunOptions,
        part: Option<(usize, Arc<[u32]>)>,
    ) -> Engine {
        let net_relaxed = net.relaxed_ordering();
        let islands: Vec<u32> = (0..queues.len()).map(|c| u32::try_from(net.island(c)).unwrap_or(u32::MAX)).collect();
        let aiv = chip.aiv_cores();
        let cores = aiv + chip.cube().map_or(0, |c| c.cores);
        let world = queues.len();
        let own_chips = part.as_ref().map_or(0..world, |(id, owner)| own_chips(owner, *id));
        let span = own_chips.start * cores..own_chips.end * cores;
        net.reset_for(own_chips.clone());
        let idle = Actor {
            state: ActorState::Idle,
            next_seq: 0,
            job: None,
            since: SimTime::ZERO,
            polled: state::polled::Polled::default(),
            spin: state::spin::Spin::default(),
            last: ("", None),
        };
        let mut eng = Engine {
            net,
            flows: state::flows::Flows::default(),
            cores,
            per_chip: Divider::new(cores),
            aiv,
            world,
            mem,
            queue: queue::EventQueue::default(),
            slots: Slots::default(),
            subs: vec![1; queues.len().max(1)],
            here: Here::Chip(0),
            now: SimTime::ZERO,
            actors: PerActor::filled(span.clone(), idle),
            running: bounds::Bounds::new(span.clone()),
            busy: 0,
            chips: queues.into_iter().map(|q| ChipSched::new(q, cores)).collect(),
            signals: Signals::default(),
            copies: Vec::new(),
            wakes: Vec::new(),
            outcome: None,
            stats: EngineStats::default(),
            records: Vec::new(),
            obs: Observers::new(world, cores, options.trace, options.check),
            jitter: options.jitter.map(|j| ((0..world).map(|c| chip_rng(j.seed, c)).collect(), j)),
            vis: state::in_flight::Visibility::new(span, net_relaxed || options.relaxed_ordering, islands),
            loads: state::pending_loads::Loads::default(),
            sdma: state::channels::Sdma::new(own_chips, chip.sdma()),
            progress: options.progress.clone().map(|p| (p, 0)),
            horizon: SimTime::NEVER,
            part: None,
            foreign_jobs: rustc_hash::FxHashMap::default(),
            quiet: 0,
            livelock_polls: options.livelock_polls,
            saturated: (u64::MAX, 0),
            limits: state::limits::Limits::new(options),
            chip,
        };
        if let Some((id, owner)) = part {
            eng.queue.lanes_from(eng.actors.span().start);
            eng.partition(id, owner);
        }
        eng
    }

    /// Schedules every chip's first dispatch (a run with no dispatches ends at the first pump).
    pub(crate) fn start(&mut self) {
        if self.world * self.cores >= Key::MAX_ACTORS {
            let n = self.world * self.cores;
            let max = Key::MAX_ACTORS - 1;
            return self.fail(SimError::invalid(format!(
                "{} chips x {} cores = {n} cores; the scheduler keys events of at most {max} cores",
                self.world, self.cores
            )));
        }
        let first = SimTime::ZERO + self.chip.dispatch_launch();
        for c in 0..self.world {
            if self.chips[c].has_queued() {
                let at = first + self.dispatch_jitter(c);
                self.push_host(at, c as u64, Event::DispatchStart { chip: c });
            }
        }
    }

    /// The actors this engine runs: every core of every chip, or a partition's own chips'.
    pub(crate) fn actor_span(&self) -> std::ops::Range<usize> {
        self.actors.span()
    }

    /// Number of actors that have a block assigned (running or blocked).
    pub(crate) fn busy_actors(&self) -> usize {
        self.busy
    }

    /// Whether the run has ended (finished or failed).
    pub(crate) fn is_over(&self) -> bool {
        self.outcome.is_some()
    }

    /// The run's outcome, once over.
    pub(crate) fn outcome(&self) -> Option<&Result<(), SimError>> {
        self.outcome.as_ref()
    }

    /// The earliest time `actor` may still send a request at: its clock when it last sent or
    /// was resumed, if it runs, and never before the last event applied (for a driver that
    /// ends a block whose kernel can no longer say its own clock).
    pub(crate) fn actor_floor(&self, actor: usize) -> SimTime {
        match self.actors[actor].state {
            ActorState::Running { at, .. } => at.max(self.now),
            _ => self.now,
        }
    }

    /// Simulated time of the last event applied.
    pub(crate) fn now(&self) -> SimTime {
        self.now
    }

    /// Releases produced since the last call.
    #[cfg(test)]
    pub(crate) fn take_wakes(&mut self) -> Vec<Wake> {
        std::mem::take(&mut self.wakes)
    }

    /// Hands over the releases produced since the last call in `buf` (which must be empty),
    /// and keeps `buf`'s old storage for the next ones.
    pub(crate) fn swap_wakes(&mut self, buf: &mut Vec<Wake>) {
        debug_assert!(buf.is_empty(), "releases not delivered");
        std::mem::swap(&mut self.wakes, buf);
    }

    /// Whether local work is to be reported (the run is traced).
    pub(crate) fn traced(&self) -> bool {
        self.obs.traced()
    }

    /// What each chip moved.
    pub(crate) fn traffic(&self) -> &[Traffic] {
        self.obs.traffic()
    }

    /// The recorded timeline of a traced run.
    pub(crate) fn take_trace(&mut self) -> Option<Trace> {
        self.obs.take_trace(&self.records)
    }

    /// What this partition of a checked, traced or observed split run recorded for the merge.
    pub(crate) fn take_recording(&mut self) -> Option<observe::Recording> {
        self.obs.take_recording()
    }

    /// The findings of a checked run (empty otherwise); ends the checking.
    pub(crate) fn take_findings(&mut self) -> Vec<check::Finding> {
        let mem = &self.mem;
        self.obs.take_findings(self.now, |m, off| mem.cell_at(m, off))
    }

    /// Returns the network model (for reuse by the next run).
    pub(crate) fn into_parts(mut self) -> (Memory, Box<dyn Network>) {
        self.publish_progress();
        (self.mem, self.net)
    }

    /// Takes a request from `actor`, issued at its local time `at`. `resume` is the actor's
    /// clock after a posted request (ignored for blocking ones).
    pub(crate) fn submit(&mut self, actor: usize, at: SimTime, resume: SimTime, mut req: Request) {
        if let Request::Retest { expected, cmp } = req {
            // Nothing to drop in a retest: forgetting it skips the drop glue's variant check.
            std::mem::forget(req);
            return self.submit_retest(actor, at, expected, cmp);
        }
        // An asynchronous load belongs to the block issuing it, even if it is applied later
        // (held behind the core's own writes) when the block has ended.
        if let Request::Read { ticket: Some(k), .. } = &mut req {
            *k = self.loads.stamp(actor, *k);
        }
        let blocking = req.is_blocking();
        let Some(seq) = self.next_request(actor, at, blocking) else { return };
        let a = &mut self.actors[actor];
        a.last = (req.name(), req.caller());
        a.state = match &req {
            Request::Finish { .. } => ActorState::Idle,
            _ if blocking => {
                a.since = at;
                ActorState::Blocked
            }
            _ => ActorState::Running { at: resume.max(at), seq: a.next_seq },
        };
        if let ActorState::Running { at, seq } = a.state {
            self.running.insert((at, actor, seq));
        }
        self.push(Key::new(at, actor, seq, 0), Event::Request { actor, req, resume })
    }

    /// Takes a [`Request::Retest`] from `actor` at `at`, built by no one: a poll of the cells
    /// the actor keeps is queued as a [`Pending::Poll`], with no event or slot behind it.
    pub(crate) fn submit_retest(&mut self, actor: usize, at: SimTime, expected: i32, cmp: WaitCmp) {
        let Some(seq) = self.next_request(actor, at, true) else { return };
        let a = &mut self.actors[actor];
        a.since = at;
        a.state = ActorState::Blocked;
        a.last = ("test", a.polled.caller);
        let key = Key::new(at, actor, seq, 0);
        if key.time.is_overflowed() {
            // The general way, which ends the run saying so.
            let req = Request::Retest { expected, cmp };
            return self.push(key, Event::Request { actor, req, resume: at });
        }
        a.polled.cond = Cond::Signed(cmp, expected);
        debug_assert!(!(self.part.is_some() && self.foreign(self.chip_of(actor))), "a request of another partition");
        self.queue.push_poll(key);
    }

    /// Counts a request of `actor` at `at` and gives it the actor's next seq, its running
    /// bound ended; `None` when the run is over (a `blocking` request's actor is told so).
    fn next_request(&mut self, actor: usize, at: SimTime, blocking: bool) -> Option<u64> {
        self.stats.requests += 1;
        // The seq after this one is a running actor's bound, keyed too.
        if self.actors[actor].next_seq >= Key::MAX_SEQ - 1 {
            let (chip, core) = (self.chip_of(actor), self.core_of(actor));
            self.fail(SimError::invalid(format!(
                "chip {chip} core {core} sent more requests than one core may send in one run ({})",
                Key::MAX_SEQ
            )));
        }
        if self.outcome.is_some() {
            if blocking {
                self.wakes.push(Wake::Abort { actor });
            }
            return None;
        }
        let a = &mut self.actors[actor];
        if let ActorState::Running { at: t, seq } = a.state {
            self.running.remove(&(t, actor, seq));
            debug_assert!(at >= t, "actor {actor} went back in time: {at:?} < {t:?}");
        }
        let seq = a.next_seq;
        a.next_seq += 1;
        Some(seq)
    }

    /// Applies every event that no running actor can still precede; ends the run with a
    /// deadlock report when nothing can make progress.
    pub(crate) fn pump(&mut self) {
        while self.outcome.is_none() {
            let Some(top) = self.queue.peek_key() else {
                break;
            };
            if top.time >= self.horizon {
                return;
            }
            if let Some(bound) = self.running.first_packed()
                && top.at_or_after(bound)
            {
                return;
            }
            if top.time > self.limits.max_time || self.stats.events >= self.limits.next_check {
                self.checkpoint(top.time);
                if self.outcome.is_some() {
                    break;
                }
            }
            let Some(Entry { key, what }) = self.queue.pop() else {
                break;
            };
            self.now = key.time;
            self.stats.events += 1;
            if self.slots.outgrows_caches()
                && let Some(next) = self.queue.next_slot()
            {
                self.slots.prefetch(next);
            }
            self.obs.applying(Some(key.stamp()));
            match what {
                Pending::Slot(slot) => {
                    let ev = self.slots.take(slot);
                    if matches!(&ev, Event::Request { req, .. } if req.is_quiet()) {
                        self.quiet += 1;
                    }
                    self.apply(key, ev);
                }
                Pending::FlowStep(flow) => {
                    self.here = Here::Chip(self.flow_place(flow as usize));
                    self.flow_step(key, flow as usize)
                }
                Pending::Poll => {
                    self.quiet += 1;
                    let actor = key.actor();
                    self.here = Here::Actor(actor);
                    self.poll(key.time, actor)
                }
            }
            self.obs.applying(None);
        }
        if self.outcome.is_none() && self.running.is_empty() && self.queue.is_empty() && self.part.is_none() {
            if self.chips.iter().all(ChipSched::is_idle) {
                // Every dispatch has ended and every in-flight write has landed.
                self.outcome = Some(Ok(()));
            } else {
                let report = self.deadlock_report();
                self.fail(SimError::Deadlock(Box::new(report)));
            }
        }
    }

    /// Publishes the events applied since the last publication, and the current time.
    fn publish_progress(&mut self) {
        if let Some((p, published)) = self.progress.as_mut() {
            p.publish(self.stats.events - *published, self.now);
            *published = self.stats.events;
        }
    }

    /// Applies `ev`, noting first where it happens (`here`: the chip whose state it reads and
    /// changes, which numbers the events it causes) in the same match, so the dispatch on the
    /// event's kind is one jump.
    fn apply(&mut self, key: Key, ev: Event) {
        match ev {
            Event::Request { actor, req, resume } => {
                self.here = Here::Actor(actor);
                self.apply_request(key, actor, req, resume)
            }
            Event::RemoteRead { actor, src, caller, ticket, issued } => {
                self.here = Here::Chip(src.chip());
                self.obs.read(actor, &src, OpAt { op: OpKind::RemoteLoad, time: key.time, caller });
                let data = self.mem.read(&src);
                let route = self.route_from(actor, PathKind::RemoteRead, src.chip());
                let bytes = data.len() as u64;
                let end = self.read_end(actor, data, ticket, issued, Some(src.chip()));
                let at = key.time + self.net.read_turnaround();
                self.start_flow(key, route, bytes, at, None, end);
            }
            Event::Loaded { actor, ticket, data, issued, peer } => {
                self.here = Here::Actor(actor);
                self.loaded(key.time, actor, ticket, data, issued, peer)
            }
            Event::Land { dst, data, atomic, writer, op, ids } => {
                self.here = Here::Chip(dst.chip());
                let writer = writer as usize;
                self.land(key.time, &dst, data, atomic, writer, op);
                self.obs.write_landed(ids.check);
                self.write_landed(key, dst.chip(), writer, ids);
            }
            Event::Signal(s) => {
                self.here = Here::Chip(s.cell.chip());
                self.signal_arrived(key, s)
            }
            Event::Acked { writer, seq } => {
                self.here = Here::Actor(writer);
                self.landed(key, writer, seq)
            }
            Event::Release { writer, seq, chip } => {
                self.here = Here::Chip(chip);
                self.released(key, writer, seq)
            }
            Event::FlowStep { flow } => {
                self.here = Here::Chip(self.flow_place(flow));
                self.flow_step(key, flow)
            }
            Event::Onward { path, bytes, from, end, cleared } => {
                self.here = Here::Chip(from.chip as usize);
                self.onward(key, path, bytes, from, [end, cleared])
            }
            Event::CopyRemoteRead { job, chunk, actor, src, op, caller } => {
                self.here = Here::Chip(src.chip());
                self.copy_remote_read(key, (job, chunk), actor, src, op, caller)
            }
            Event::CopyLoaded { job, chunk, data } => {
                self.here = self.copy_place(job);
                self.copy_loaded(key, job, chunk, data)
            }
            Event::CopyStored { job } => {
                self.here = self.copy_place(job);
                self.copy_stored(key, job)
            }
            Event::DispatchStart { chip } => {
                self.here = Here::Chip(chip);
                self.start_dispatch(chip, key.time)
            }
            Event::DeferredReady { chip, task } => {
                self.here = Here::Chip(chip);
                self.deferred_ready(chip, task, key.time)
            }
            Event::Sdma(e) => {
                self.here = Here::Chip(self.sdma_place(&e));
                self.sdma_event(key, e)
            }
            Event::Reply { actor, reply } => {
                self.here = Here::Actor(actor);
                self.reply(actor, key.time, reply)
            }
        }
    }

    /// Where a put/get's own steps happen: its core's chip.
    fn copy_place(&self, job: usize) -> Here {
        self.copies[job].as_ref().map_or(Here::Chip(0), |j| Here::Actor(j.actor))
    }

    fn apply_request(&mut self, key: Key, actor: usize, req: Request, resume: SimTime) {
        if self.reads_own_write(actor, &req) {
            return self.hold_read(key, actor, req);
        }
        let t = key.time;
        let me = self.chip_of(actor);
        match req {
            Request::Read { src, caller, start, ticket } => {
                self.obs.load_issued(actor, src.chip(), src.region.bytes(), t, ticket.is_none());
                let core = self.core_of(actor);
                let issue = match (self.is_cube(actor), self.chip.cube()) {
                    (true, Some(c)) => c.gm_to_l1.issue,
                    _ => self.chip.dma_issue(DmaDir::GmToUb),
                };
                let at = start.max(t) + issue;
                if src.chip() == me {
                    self.obs.read(actor, &src, OpAt::new(OpKind::Load, t, caller));
                    let data = self.mem.read(&src);
                    let route = Route { kind: PathKind::Load, chip: me, core, peer: me };
                    let bytes = data.len() as u64;
                    let end = self.read_end(actor, data, ticket, t, None);
                    self.start_flow(key, route, bytes, at, None, end);
                } else {
                    let route = Route { kind: PathKind::ReadRequest, chip: me, core, peer: src.chip() };
                    let ev = Event::RemoteRead { actor, src, caller: caller.map(CallSite::from), ticket, issued: t };
                    self.start_flow(key, route, 0, at, None, ev);
                }
            }
            Request::Collect { ticket } => self.collect(t, actor, ticket),
            Request::ScalarRead { src, caller } => self.scalar_read(t, actor, src, caller),
            Request::ScalarWrite { dst, data, caller } => self.scalar_write(key, actor, dst, data, caller),
            Request::Test { cells, expected, cmp, caller } => {
                self.actors[actor].polled = state::polled::Polled::new(cells, Cond::Signed(cmp, expected), caller);
                self.poll(t, actor)
            }
            Request::Retest { expected, cmp } => {
                self.actors[actor].polled.cond = Cond::Signed(cmp, expected);
                self.poll(t, actor)
            }
            Request::Write { dst, data, atomic, op, caller, start } => {
                let remote = dst.chip() != me;
                self.obs.store_posted(actor, op, dst.chip(), data.len(), (t, resume));
                let kind = if remote { PathKind::RemoteWrite } else { PathKind::Store };
                let route = Route { kind, chip: me, core: self.core_of(actor), peer: dst.chip() };
                let issue = match (self.is_cube(actor), self.chip.cube()) {
                    (true, Some(c)) => c.l0c_to_gm.issue,
                    _ => self.chip.dma_issue(DmaDir::UbToGm),
                };
                let (bytes, at) = (data.len() as u64, start.max(t) + issue);
                let ids = self.issue_write(actor, &dst, atomic.is_some(), OpAt::new(op, t, caller));
                let land = Event::Land { dst, data, atomic, writer: narrow(actor), op, ids };
                self.start_flow(key, route, bytes, at, None, land);
            }
            Request::Copy(spec) => {
                self.obs.copy_started(actor, &spec, t);
                self.start_copy(key, actor, spec)
            }
            Request::Notify { cell, value, op, caller } => {
                let remote = cell.chip() != me;
                let trace_id = self.obs.notify_posted(actor, cell.chip(), t, resume);
                let at = t + self.chip.notify_issue();
                let kind = match (remote, self.vis.relaxed()) {
                    (false, _) => PathKind::Store,
                    (true, false) => PathKind::OrderedNotify,
                    (true, true) => PathKind::Signal,
                };
                let route = Route { kind, chip: me, core: self.core_of(actor), peer: cell.chip() };
                let ids = self.issue_notify(actor, &cell, op, value, OpAt::new(OpKind::Notify, t, caller));
                let land = Event::Signal(SignalLand { cell, value, op, writer: actor, trace_id, ids });
                self.start_flow(key, route, 4, at, None, land);
            }
            Request::Wait { cells, expected, cmp, caller } => {
                let cond = Cond::Signed(cmp, expected);
                let trace_id = self.obs.wait_started(actor, &cells, cond, t);
                // A core sees its own notifies to a cell before it reads the cell again.
                if !self.vis.notifying(actor, &cells) && Signals::satisfied(&self.mem, &cells, cond) {
                    self.obs.wait_held_at_once(actor, &cells, cond, t);
                    self.reply(actor, t + self.chip.wait_poll(), Reply::Done);
                } else {
                    let w = Waiter { kind: WaiterKind::Blocking { actor }, cells, cond, since: t, trace_id, caller };
                    self.signals.register(w);
                }
            }
            Request::DeferWait { conds, caller } => {
                self.obs.op_started(actor, OpKind::DeferWait, t, 0, None);
                self.defer_wait(t, actor, conds, caller)
            }
            Request::Fence => {
                self.obs.op_started(actor, OpKind::Fence, t, 0, None);
                self.fence(actor, t);
            }
            Request::ExpectClear { cells } => {
                self.obs.expect_clear(&cells);
            }
            Request::Note { name, start, end } => {
                self.obs.local_work(actor, name, start.max(t), end);
            }
            Request::Finish { result } => {
                self.loads.end_block(actor);
                self.finish_when_landed(t, actor, result)
            }
            Request::Sdma(spec) => self.sdma_submit(key, actor, spec, resume),
            Request::SdmaTest { id } => self.sdma_test(key, actor, id),
            Request::SdmaWait { id } => self.sdma_wait(key, actor, id),
        }
    }

    /// A random extra delay for one operation of a jittered run, drawn on the chip where the
    /// event being applied happens.
    fn op_jitter(&mut self) -> SimDuration {
        let chip = self.here_chip();
        match self.jitter.as_mut() {
            Some((rngs, j)) if j.op.as_ps() > 0 => match rngs.get_mut(chip) {
                Some(rng) => SimDuration::from_ps(rng.random_range(0..=j.op.as_ps())),
                None => SimDuration::ZERO,
            },
            _ => SimDuration::ZERO,
        }
    }

    /// A random delay of a dispatch start on `chip` in a jittered run.
    fn dispatch_jitter(&mut self, chip: usize) -> SimDuration {
        match self.jitter.as_mut() {
            Some((rngs, j)) if j.dispatch.as_ps() > 0 => match rngs.get_mut(chip) {
                Some(rng) => SimDuration::from_ps(rng.random_range(0..=j.dispatch.as_ps())),
                None => SimDuration::ZERO,
            },
            _ => SimDuration::ZERO,
        }
    }

    /// The chip where the event being applied happens.
    fn here_chip(&self) -> usize {
        match self.here {
            Here::Chip(c) => c,
            Here::Actor(a) => self.chip_of(a),
        }
    }

    /// Applies payload bytes and releases waiters on any signal cell they overwrote.
    fn land(&mut self, t: SimTime, dst: &Place, data: Payload, atomic: Option<DType>, writer: usize, op: OpKind) {
        self.mem.write(dst, &data, atomic);
        self.mem.recycle(data);
        let (lo, hi) = dst.region.span();
        if self.signals.watched(dst.mem, lo, hi) {
            for off in self.signals.watched_cells(dst.mem, lo, hi) {
                let value = self.mem.cell_at(dst.mem, off);
                self.cell_write(dst.mem, off, writer, WriteOp::Data(op), value, t);
            }
            self.release(t, dst.mem, lo, hi, TraceId::default());
        }
    }

    /// Applies a notify to its cell and releases the waiters it satisfies.
    fn signal(&mut self, t: SimTime, s: &SignalLand) {
        let (cell, value, op, writer, trace_id) = (&s.cell, s.value, s.op, s.writer, s.trace_id);
        let (old, new) = self.mem.update_cell(cell, |old| apply_notify(old, op, value));
        let signals = &self.signals;
        self.obs.notify_landed(s.ids.check, cell, (old, new), || signals.eq_waiters(cell.mem, cell.offset));
        self.cell_write(cell.mem, cell.offset, writer, WriteOp::Notify(op), value, t);
        self.release(t, cell.mem, cell.offset, cell.offset + 4, trace_id);
    }

    /// Releases the waiters on cells in `[lo, hi)` of `mem` whose conditions now hold; `from`
    /// is the traced notify that wrote (none for data writes or untraced runs).
    fn release(&mut self, t: SimTime, mem: MemKey, lo: usize, hi: usize, from: TraceId) {
        // A core's wait does not read a cell its own notify in flight is about to change.
        let vis = &self.vis;
        let own = |w: &Waiter| matches!(w.kind, WaiterKind::Blocking { actor } if vis.notifying(actor, &w.cells));
        let mut woken = self.signals.take_satisfied(&self.mem, (mem, lo, hi), own);
        if woken.is_empty() {
            self.signals.recycle(woken);
            return;
        }
        let at = t + self.chip.wait_poll();
        for w in woken.drain(..) {
            match w.kind {
                WaiterKind::Blocking { actor } => {
                    self.obs.wait_released(actor, (&w.cells, w.cond), t, from, w.trace_id);
                    self.reply(actor, at, Reply::Done)
                }
                WaiterKind::Deferred { chip, task, .. } => {
                    if let Some(c) = w.cells.first() {
                        self.obs.deferred_ready(chip, task, c);
                    }
                    self.push_host(at, chip as u64, Event::DeferredReady { chip, task });
                }
            }
        }
        self.signals.recycle(woken);
    }

    /// Adds a write of `value` by `writer` to the history of the cell at `offset` of `mem`.
    fn cell_write(&mut self, mem: MemKey, offset: usize, writer: usize, op: WriteOp, value: i32, time: SimTime) {
        let chip = self.chip_of(writer);
        // A writer of another partition of a split run is known by what its crossings said.
        let (block, task) = match self.actors.get(writer).and_then(|a| a.job.as_ref()) {
            Some((_, a)) => (a.block, self.signals.intern(&a.ctx.task)),
            None => match self.foreign_jobs.get(&writer) {
                Some((block, task)) => (*block, self.signals.intern(task)),
                None => (writer % self.cores, NameId::NONE),
            },
        };
        self.signals.record(mem, offset, Written::new(chip, block, task, op, value, time));
    }

    /// Releases a blocked actor at `at` with `reply`.
    fn reply(&mut self, actor: usize, at: SimTime, reply: Reply) {
        self.obs.replied(actor, at);
        let a = &mut self.actors[actor];
        a.state = ActorState::Running { at, seq: a.next_seq };
        self.running.insert((at, actor, a.next_seq));
        self.wakes.push(Wake::Reply { actor, at, reply });
    }

    /// Starts a block on an idle actor at `at`.
    fn start_actor(&mut self, actor: usize, at: SimTime, task: usize, assignment: Assignment) {
        let dispatch = self.chips[self.chip_of(actor)].active.as_ref().map(|a| (&a.name, a.index));
        self.obs.block_started(actor, task, &assignment, dispatch);
        let a = &mut self.actors[actor];
        debug_assert_eq!(a.state, ActorState::Idle);
        a.state = ActorState::Running { at, seq: a.next_seq };
        a.job = Some((task, assignment.clone()));
        self.busy += 1;
        self.running.insert((at, actor, a.next_seq));
        self.wakes.push(Wake::Start { actor, at, assignment });
    }

    /// Ends the run with `err` from outside the model (the driver could not continue).
    pub(crate) fn abort(&mut self, err: SimError) {
        self.fail(err);
    }

    /// Ends the run with `err` and aborts every blocked actor.
    fn fail(&mut self, err: SimError) {
        if self.outcome.is_some() {
            return;
        }
        self.outcome = Some(Err(err));
        for (i, a) in self.actors.iter() {
            if a.state == ActorState::Blocked {
                self.wakes.push(Wake::Abort { actor: i });
            }
        }
    }

    fn chip_of(&self, actor: usize) -> usize {
        self.per_chip.div(actor)
    }

    fn core_of(&self, actor: usize) -> usize {
        self.per_chip.div_rem(actor).1
    }

    /// The path of `kind` from `actor`'s core to chip `peer`.
    fn route_from(&self, actor: usize, kind: PathKind, peer: usize) -> Route {
        Route { kind, chip: self.chip_of(actor), core: self.core_of(actor), peer }
    }

    /// Whether `actor` is an AIC (cube) core: its loads fill L1, its stores leave L0C.
    fn is_cube(&self, actor: usize) -> bool {
        self.core_of(actor) >= self.aiv
    }

    /// The key of an event `origin` causes at `time`: its actor and seq, and a fresh `sub`.
    /// The key of an event caused now, at `time`, by the request `origin` (its actor and
    /// seq): its `sub` numbers it among the events caused on this chip (`here`), chip first,
    /// so the order of ties never depends on what other chips did meanwhile.
    fn derived_key(&mut self, time: SimTime, origin: Key) -> Key {
        let chip = self.here_chip();
        origin.derived(time, self.next_sub(chip))
    }

    /// The next `sub` of `chip`: the chip in the high 24 bits, its count in the low 40
    /// (never 0, a request's own).
    fn next_sub(&mut self, chip: usize) -> u64 {
        let Some(n) = self.subs.get_mut(chip) else { return u64::MAX };
        let sub = ((chip as u64) << 40) | (*n & ((1 << 40) - 1));
        *n += 1;
        sub
    }

    /// The chip where flow `id` sends from.
    fn flow_place(&self, id: usize) -> usize {
        self.flows.slots.get(id).and_then(Option::as_ref).map_or(0, |f| f.chip as usize)
    }

    fn push_derived(&mut self, time: SimTime, origin: Key, ev: Event) {
        let key = self.derived_key(time, origin);
        self.push(key, ev);
    }

    /// [`Engine::push_derived`] for an event already kept in `slot`.
    fn push_derived_slot(&mut self, time: SimTime, origin: Key, slot: u32) {
        let key = self.derived_key(time, origin);
        if key.time.is_overflowed() {
            let ev = self.slots.take(slot);
            return self.push(key, ev);
        }
        if self.part.is_some() && self.slots.peek(slot).is_some_and(|ev| self.foreign(self.place_of(ev))) {
            return self.slot_across(key, slot);
        }
        self.queue.push(Entry { key, what: Pending::Slot(slot) });
    }

    /// Queues a host event about chip `seq`.
    fn push_host(&mut self, time: SimTime, seq: u64, ev: Event) {
        let key = Key::new(time, HOST, seq, self.next_sub(seq as usize));
        self.push(key, ev);
    }

    /// Queues `ev` under `key`: the heap moves small keys, the event stays put. An event at
    /// [`SimTime::NEVER`] (a sum of times that overflowed the u64-picosecond clock) is not
    /// queued: the run ends with an error naming who and what overflowed.
    fn push(&mut self, key: Key, ev: Event) {
        if key.time.is_overflowed() {
            let who = if key.actor() == HOST {
                "the host scheduler".to_string()
            } else {
                format!("chip {} core {}", self.chip_of(key.actor()), self.core_of(key.actor()))
            };
            self.fail(SimError::invalid(format!(
                "simulated time overflowed u64 picoseconds (about 213 days) when {who} scheduled {} after {}; \
                 a configured cost, a kernel's cycle count or the number of calls is too large",
                event_name(&ev),
                self.now
            )));
            return;
        }
        if self.part.is_some() && self.foreign(self.place_of(&ev)) {
            return self.send_across(key, ev);
        }
        let what = match ev {
            Event::FlowStep { flow } if u32::try_from(flow).is_ok() => Pending::FlowStep(flow as u32),
            ev @ Event::Request { .. } if key.sub == 0 && key.actor() != HOST => {
                return self.queue.push_request(key, Pending::Slot(self.slots.put(ev)));
            }
            ev => Pending::Slot(self.slots.put(ev)),
        };
        self.queue.push(Entry { key, what });
    }
}

/// What an event is, for the overflow error.
fn event_name(ev: &Event) -> String {
    match ev {
        Event::Request { req, .. } => format!("a request ({})", req.name()),
        Event::RemoteRead { .. } => "a remote read".into(),
        Event::Loaded { .. } => "the end of a load".into(),
        Event::Land { op, .. } => format!("the landing of a write ({op})"),
        Event::Signal(_) => "the landing of a notify".into(),
        Event::FlowStep { .. } => "a packet of a transfer".into(),
        Event::Onward { .. } => "a packet of a transfer past a switch".into(),
        Event::Acked { .. } => "the news that a write landed".into(),
        Event::Release { .. } => "the release of a notify".into(),
        Event::CopyRemoteRead { .. } | Event::CopyLoaded { .. } | Event::CopyStored { .. } => {
            "a chunk of a put/get".into()
        }
        Event::DispatchStart { chip } => format!("the start of a dispatch on chip {chip}"),
        Event::DeferredReady { chip, .. } => format!("a deferred task on chip {chip}"),
        Event::Sdma(_) => "an SDMA descriptor".into(),
        Event::Reply { .. } => "the end of a read".into(),
    }
}

/// Chip `chip`'s jitter generator for a run seeded `seed`: one stream per chip, each from
/// the seed and the chip through SplitMix64 (what `seed_from_u64` expands a seed with).
fn chip_rng(seed: u64, chip: usize) -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(seed ^ (chip as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Where the event being applied happens: a chip, or an actor's chip (worked out only if the
/// event causes another, as most of an actor's requests cause none).
#[derive(Copy, Clone, Debug)]
enum Here {
    Chip(usize),
    Actor(usize),
}

#[cfg(test)]
mod tests {
    use super::testkit::{engine, ns};
    use super::*;

    /// A derived event's `sub` counts the events caused on the chip where it was caused, chip
    /// first: what chip 1 causes is numbered the same whatever chip 0 did in between, so the
    /// order of ties does not depend on how the run interleaves chips.
    #[test]
    fn derived_subs_are_counted_per_chip() {
        let origin = Key::new(ns(1), 0, 5, 0);
        let subs = |steps: &[usize]| {
            let mut eng = engine(2, false);
            let mut on_1 = Vec::new();
            for &chip in steps {
                eng.here = Here::Chip(chip);
                let k = eng.derived_key(ns(2), origin);
                if chip == 1 {
                    on_1.push(k);
                }
            }
            on_1
        };
        let alone = subs(&[1, 1]);
        assert_eq!(alone, subs(&[0, 1, 0, 0, 1]));
        assert_eq!(alone.iter().map(|k| k.sub).collect::<Vec<_>>(), [(1 << 40) | 1, (1 << 40) | 2]);
        assert!(alone.iter().all(|k| k.actor() == 0 && k.time == ns(2)), "same actor and seq as the origin");
    }
}
