//! The engine's observers, seen through one interface. The engine reports what it applies as
//! typed facts (a block starts, a write is issued or lands, a wait is satisfied, an SDMA
//! transfer completes, a link is busy, ...) to [`Observers`], which numbers them and fans
//! them out, as the public [`Observe`] trait's facts, to the per-rank traffic counters
//! (`observe/traffic.rs`), the timeline recorder of a traced run (`observe/tracer.rs`), the
//! protocol checker of a checked run, and the observers a user attached
//! ([`World::observe`](crate::World::observe)).
//!
//! Observing never steers: no fact returns anything the engine can branch on (only whether
//! the run is traced, so kernels report their local work, and whether link occupancy is
//! wanted). Where an observer must recognise a later fact as the end of an earlier one (a
//! write issued, then landed), the layer assigns an id ([`OpId`], [`WriteId`], [`SdmaId`]:
//! sequential, in issue order) that the engine stores and gives back. The three built-in
//! observers are called statically; one that is off costs one `Option` test per fact, and
//! the user observers one emptiness test.

mod tracer;
mod traffic;

use super::wake::Assignment;
use crate::api::request::{CopySpec, OpKind, SdmaSpec};
use crate::base::addr::{CellRef, MemKey, Place};
use crate::base::divider::Divider;
use crate::base::signal::{Cond, NotifyOp};
use crate::base::time::SimTime;
use crate::results::stats::{DispatchRecord, Traffic};
use crate::results::trace::{DispatchSpan, LinkBusy, Trace};
use crate::sim::check::{self, Checker};
pub(crate) use crate::sim::observe::OpAt;
use crate::sim::observe::{
    BlockStart, CoreId, EqList, EqWaiters, Ids, MemRegion, Observe, OpId, OpInfo, SdmaId, SignalCell, SignalCells,
    WriteId,
};
use std::sync::Arc;
use tracer::Tracer;
use traffic::Counters;

/// A write or notify in flight as the engine keeps it: the id its landing reports (none only
/// for an SDMA descriptor whose transfer was forgotten).
pub(crate) type WriteToken = Option<WriteId>;

/// An operation a later fact links to: a notify (to the waits it releases) or a wait (none:
/// a data write releasing a wait).
pub(crate) type TraceId = Option<OpId>;

/// An SDMA transfer as the engine keeps it, given back at its reads and its completion.
pub(crate) type SdmaToken = SdmaId;

/// A user's observer.
pub(crate) type UserObserver = Box<dyn Observe + Send>;

/// Calls the fact `$m` on every observer that is on: the built-ins statically, the user's
/// through their vtables. Arguments are evaluated once per observer, so they are cheap
/// copies (ids, views, times).
macro_rules! fan {
    ($self:ident . $m:ident ( $($arg:expr),* $(,)? )) => {{
        Observe::$m(&mut $self.traffic, $($arg),*);
        if let Some(o) = $self.tracer.as_mut() {
            Observe::$m(o, $($arg),*);
        }
        if let Some(o) = $self.checker.as_mut() {
            Observe::$m(o, $($arg),*);
        }
        if let Some(o) = $self.record.as_deref_mut() {
            Observe::$m(o, $($arg),*);
        }
        if !$self.users.is_empty() {
            for o in $self.users.iter_mut() {
                o.$m($($arg),*);
            }
        }
    }};
}

pub(super) mod keep;
mod record;
mod replay;

pub(crate) use record::{Recording, interleave, order_records};

/// Everything that watches a run: the traffic counters (always on), the timeline recorder
/// (traced runs), the protocol checker (checked runs) and the user's observers.
pub(crate) struct Observers {
    /// Actors per chip (an actor's chip is `actor / cores`), and that division's reciprocal.
    cores: usize,
    per_chip: Divider,
    ids: Ids,
    traffic: Counters,
    tracer: Option<Tracer>,
    checker: Option<Checker>,
    /// In a split run's partition, what the tracer, the checker and the user's observers
    /// would have seen, kept for the merge to replay (see `record.rs`).
    record: Option<Box<record::Recorder>>,
    users: Vec<UserObserver>,
    /// Whether some observer wants link occupancy.
    links: bool,
}

impl Observers {
    /// Observers of a run of `world` chips with `cores` actors each.
    pub(crate) fn new(world: usize, cores: usize, trace: bool, check: bool) -> Observers {
        Observers {
            cores,
            per_chip: Divider::new(cores),
            ids: Ids::default(),
            traffic: Counters::new(world),
            tracer: trace.then(|| Tracer::new(world * cores)),
            checker: check.then(|| Checker::new(world * cores, world)),
            record: None,
            users: Vec::new(),
            links: trace,
        }
    }

    /// Adds the user's observers for this run (before its first event).
    pub(crate) fn attach(&mut self, users: Vec<UserObserver>) {
        let world = self.traffic.get().len();
        for mut o in users {
            o.run_started(world, self.cores);
            self.links |= o.wants_links();
            self.users.push(o);
        }
    }

    /// Hands the user's observers back, once each has seen the run end at `end`.
    pub(crate) fn detach(&mut self, end: SimTime) -> Vec<UserObserver> {
        let mut users = std::mem::take(&mut self.users);
        for o in &mut users {
            o.run_ended(end);
        }
        self.links = self.tracer.is_some();
        users
    }

    fn core(&self, actor: usize) -> CoreId {
        CoreId { actor, cores: self.cores, rank: self.per_chip.div(actor) }
    }

    /// Makes these the observers of partition `part` of a split run: a checked or traced run
    /// records its facts for the merge instead of checking or tracing them here, and numbers
    /// its ids from the partition's own base.
    pub(crate) fn record_partition(&mut self, part: usize) {
        self.ids = Ids::of_partition(part);
        let traced = self.tracer.take().is_some();
        let checked = self.checker.take().is_some();
        if traced || checked {
            self.record = Some(Box::new(record::Recorder::new(traced)));
        }
    }

    /// Makes a partition record its facts for the user's observers too (which see the split
    /// run replayed, after it); `links` when one of them wants link occupancy.
    pub(crate) fn record_for_users(&mut self, links: bool) {
        if self.record.is_none() {
            self.record = Some(Box::new(record::Recorder::new(false)));
        }
        self.links |= links;
    }

    /// Facts from now on belong to the event with key `at` being applied (none: between
    /// events). Only a recording partition keeps it.
    #[inline]
    pub(crate) fn applying(&mut self, at: Option<record::Stamp>) {
        if let Some(r) = self.record.as_deref_mut() {
            r.applying(at);
        }
    }

    /// What this partition recorded, if it records.
    pub(crate) fn take_recording(&mut self) -> Option<Recording> {
        self.record.take().map(|r| r.finish(self.cores))
    }

    /// Whether an observer that reads operations' sizes and peers is on.
    fn spans(&self) -> bool {
        self.tracer.is_some() || !self.users.is_empty() || self.record.is_some()
    }

    /// Whether the run records a timeline (kernels then report their local work).
    pub(crate) fn traced(&self) -> bool {
        self.tracer.is_some() || self.record.as_ref().is_some_and(|r| r.traced)
    }

    /// What each chip moved so far.
    pub(crate) fn traffic(&self) -> &[Traffic] {
        self.traffic.get()
    }

    /// The recorded timeline of a traced run, with the run's dispatches; ends the recording.
    pub(crate) fn take_trace(&mut self, dispatches: &[DispatchRecord]) -> Option<Trace> {
        let mut trace = self.tracer.take()?.finish();
        trace.dispatches = dispatches
            .iter()
            .map(|d| DispatchSpan { chip: d.chip, name: d.name.clone(), start: d.start, end: d.end })
            .collect();
        Some(trace)
    }

    /// The findings and timeline of a checked, traced or observed split run of `world` chips, from
    /// its partitions' recordings, as one engine would have given them; `records` are the
    /// run's dispatches (put in one engine's order) and `value` reads a signal cell at the
    /// run's end, `now`. The user's observers `users` see the run too, from its start to
    /// its end at `now`.
    pub(crate) fn replay_split(
        (world, trace, check): (usize, bool, bool),
        parts: Vec<Recording>,
        (records, users): (&mut Vec<DispatchRecord>, &mut Vec<UserObserver>),
        now: SimTime,
        value: impl Fn(MemKey, usize) -> i32,
    ) -> Result<(Vec<check::Finding>, Option<Trace>), String> {
        let cores = parts.first().map_or(1, |r| r.cores);
        let facts = interleave(parts)?;
        *records = order_records(std::mem::take(records), &facts, world);
        let mut obs = Observers::new(world, cores, trace, check);
        obs.attach(std::mem::take(users));
        obs.replay(facts);
        *users = obs.detach(now);
        let trace = obs.take_trace(records);
        Ok((obs.take_findings(now, value), trace))
    }

    /// The checker's findings (empty when the run was not checked); ends the checking.
    /// `value` reads a signal cell at the end of the run.
    pub(crate) fn take_findings(&mut self, now: SimTime, value: impl Fn(MemKey, usize) -> i32) -> Vec<check::Finding> {
        match self.checker.take() {
            Some(ck) => ck.finish(now, value),
            None => Vec::new(),
        }
    }

    // ---- the run's structure ---------------------------------------------------------------

    /// `chip` starts its dispatch number `instance`, of `tasks` tasks.
    pub(crate) fn dispatch_started(&mut self, chip: usize, tasks: usize, instance: usize) {
        fan!(self.dispatch_started(chip, tasks, instance));
    }

    /// Task `ti` of `chip`'s dispatch is placed; it depends on tasks `deps`.
    pub(crate) fn task_placed(&mut self, chip: usize, ti: usize, deps: impl Iterator<Item = usize>) {
        if self.checker.is_none() && self.users.is_empty() && self.record.is_none() {
            return;
        }
        let deps: Vec<usize> = deps.collect();
        fan!(self.task_placed(chip, ti, &deps));
    }

    /// A block of task `ti` starts on `actor`; `dispatch` is the chip's active dispatch (its
    /// name and instance number).
    pub(crate) fn block_started(
        &mut self,
        actor: usize,
        ti: usize,
        a: &Assignment,
        dispatch: Option<(&Arc<str>, usize)>,
    ) {
        let b = BlockStart {
            core: self.core(actor),
            task: ti,
            name: &a.ctx.task,
            block: a.block,
            lane: a.lane,
            lanes: a.ctx.lanes,
            dispatch,
        };
        fan!(self.block_started(&b));
    }

    /// The block of task `ti` on `actor` ended (its writes have landed).
    pub(crate) fn block_ended(&mut self, actor: usize, ti: usize) {
        let core = self.core(actor);
        fan!(self.block_ended(core, ti));
    }

    /// A deferred condition of task `ti` of `chip` holds on `cell`.
    pub(crate) fn deferred_ready(&mut self, chip: usize, ti: usize, cell: &CellRef) {
        fan!(self.deferred_ready(chip, ti, SignalCell(cell)));
    }

    /// `chip`'s active dispatch completed.
    pub(crate) fn dispatch_ended(&mut self, chip: usize) {
        fan!(self.dispatch_ended(chip));
    }

    // ---- operations of a core --------------------------------------------------------------

    /// An operation of `actor` issued at `t`, numbered now.
    fn op(&mut self, actor: usize, name: &'static str, t: SimTime, bytes: usize, peer: Option<usize>) -> OpInfo {
        OpInfo { id: self.ids.op(), core: self.core(actor), name, start: t, bytes: bytes as u64, peer }
    }

    /// `actor` starts a blocking operation at `t` that ends at its reply; returns its id.
    pub(crate) fn op_started(
        &mut self,
        actor: usize,
        op: OpKind,
        t: SimTime,
        bytes: usize,
        peer: Option<usize>,
    ) -> TraceId {
        let op = self.op(actor, op.name(), t, bytes, peer);
        fan!(self.op_started(&op));
        Some(op.id)
    }

    /// `actor` is released at `at`: its blocking operation ends.
    pub(crate) fn replied(&mut self, actor: usize, at: SimTime) {
        let core = self.core(actor);
        fan!(self.resumed(core, at));
    }

    /// `actor` did local work `name` (compute, vector math) over `[start, end]`.
    pub(crate) fn local_work(&mut self, actor: usize, name: &'static str, start: SimTime, end: SimTime) {
        let op = self.op(actor, name, start, 0, None);
        fan!(self.op_span(&op, end));
    }

    /// `actor` issues a load (`load` / `remote_load`, from `src_chip`) of `bytes` at `t`;
    /// `blocking` unless its bytes are collected later.
    pub(crate) fn load_issued(&mut self, actor: usize, src_chip: usize, bytes: usize, t: SimTime, blocking: bool) {
        let core = self.core(actor);
        fan!(self.load_issued(core, src_chip, bytes as u64));
        if blocking {
            let remote = src_chip != core.rank();
            let op = if remote { OpKind::RemoteLoad } else { OpKind::Load };
            self.op_started(actor, op, t, bytes, remote.then_some(src_chip));
        }
    }

    /// The bytes of an asynchronous load of `actor` issued at `issued` (from `peer`, if
    /// remote) reached UB at `t`.
    pub(crate) fn load_arrived(
        &mut self,
        actor: usize,
        peer: Option<usize>,
        issued: SimTime,
        t: SimTime,
        bytes: usize,
    ) {
        let kind = if peer.is_some() { OpKind::RemoteLoad } else { OpKind::Load };
        let op = self.op(actor, kind.name(), issued, bytes, peer);
        fan!(self.op_span(&op, t));
    }

    /// `actor` posts a store of `bytes` to `dst_chip` at `t`; the core is free again at
    /// `resume`.
    pub(crate) fn store_posted(
        &mut self,
        actor: usize,
        op: OpKind,
        dst_chip: usize,
        bytes: usize,
        (t, resume): (SimTime, SimTime),
    ) {
        let remote = dst_chip != actor / self.cores;
        let op = self.op(actor, op.name(), t, bytes, remote.then_some(dst_chip));
        fan!(self.op_span(&op, resume));
        fan!(self.store_posted(op.core, op.id, dst_chip, bytes as u64));
    }

    /// `actor` starts a put or get at `t` (it blocks until the last chunk is stored).
    pub(crate) fn copy_started(&mut self, actor: usize, spec: &CopySpec, t: SimTime) {
        let me = actor / self.cores;
        let (bytes, peer) = match self.spans() {
            true => (
                spec.chunks.iter().map(|c| c.0.region.bytes()).sum(),
                spec.chunks
                    .first()
                    .map(|c| if c.0.chip() != me { c.0.chip() } else { c.1.chip() })
                    .filter(|&p| p != me),
            ),
            false => (0, None),
        };
        let op = self.op(actor, spec.op.name(), t, bytes, peer);
        fan!(self.op_started(&op));
        fan!(self.copy_started(&op));
    }

    /// A chunk of a put/get of `actor`: `bytes` read from `src_chip`.
    pub(crate) fn chunk_read(&mut self, actor: usize, src_chip: usize, bytes: usize) {
        let core = self.core(actor);
        fan!(self.chunk_read(core, src_chip, bytes as u64));
    }

    /// A chunk of a put/get of `actor`: `bytes` stored to `dst_chip`.
    pub(crate) fn chunk_stored(&mut self, actor: usize, dst_chip: usize, bytes: usize) {
        let core = self.core(actor);
        fan!(self.chunk_stored(core, dst_chip, bytes as u64));
    }

    /// `actor` reads `src` now (the bytes are taken from memory).
    pub(crate) fn read(&mut self, actor: usize, src: &Place, at: OpAt) {
        let core = self.core(actor);
        fan!(self.read(core, MemRegion(src), at));
    }

    /// `actor` issues a write to `dst` (an atomic add if `atomic`); its id names it when it
    /// lands.
    pub(crate) fn write_issued(&mut self, actor: usize, dst: &Place, atomic: bool, at: OpAt) -> WriteToken {
        let (core, id) = (self.core(actor), self.ids.write());
        fan!(self.write_issued(core, id, MemRegion(dst), atomic, at));
        Some(id)
    }

    /// The write `w` has landed.
    pub(crate) fn write_landed(&mut self, w: WriteToken) {
        if let Some(id) = w {
            fan!(self.write_landed(id));
        }
    }

    // ---- signals ---------------------------------------------------------------------------

    /// `actor` posts a notify to a cell of `cell_chip` at `t` (free again at `resume`);
    /// returns its id, which the waits it releases link to.
    pub(crate) fn notify_posted(&mut self, actor: usize, cell_chip: usize, t: SimTime, resume: SimTime) -> TraceId {
        let remote = cell_chip != actor / self.cores;
        let op = self.op(actor, OpKind::Notify.name(), t, 0, remote.then_some(cell_chip));
        fan!(self.op_span(&op, resume));
        fan!(self.notify_posted(op.core, op.id, cell_chip));
        Some(op.id)
    }

    /// `actor` issues the notify `op value` to `cell`; its id names it when it lands.
    pub(crate) fn notify_issued(
        &mut self,
        actor: usize,
        cell: &CellRef,
        op: NotifyOp,
        value: i32,
        at: OpAt,
    ) -> WriteToken {
        let (core, id) = (self.core(actor), self.ids.write());
        fan!(self.notify_issued(core, id, SignalCell(cell), op, value, at));
        Some(id)
    }

    /// The notify `w` changed `cell` from `old` to `new`; `eq_waiters` gives the values `Eq`
    /// waits on the cell expect, with the waiting actor (asked only by an observer that
    /// needs them: the checker).
    pub(crate) fn notify_landed(
        &mut self,
        w: WriteToken,
        cell: &CellRef,
        old_new: (i32, i32),
        eq_waiters: impl Fn() -> Vec<(i32, usize)>,
    ) {
        let Some(id) = w else { return };
        let eq = EqWaiters { list: EqList::Ask(&eq_waiters), cores: self.cores };
        fan!(self.notify_landed(id, SignalCell(cell), old_new, eq));
    }

    /// `actor` starts a blocking wait at `t` for `cells` to satisfy `cond`; returns its id.
    pub(crate) fn wait_started(&mut self, actor: usize, cells: &[CellRef], cond: Cond, t: SimTime) -> TraceId {
        let op = self.op(actor, OpKind::Wait.name(), t, 0, None);
        fan!(self.op_started(&op));
        fan!(self.wait_started(op.core, op.id, SignalCells(cells), cond, t));
        Some(op.id)
    }

    /// The wait of `actor` held as soon as it was made, at `t`.
    pub(crate) fn wait_held_at_once(&mut self, actor: usize, cells: &[CellRef], cond: Cond, t: SimTime) {
        let core = self.core(actor);
        fan!(self.wait_held_at_once(core, SignalCells(cells), cond, t));
    }

    /// The notify `from` (or a data write: none) satisfied the wait `wait` of `actor` at `t`.
    pub(crate) fn wait_released(
        &mut self,
        actor: usize,
        (cells, cond): (&[CellRef], Cond),
        t: SimTime,
        from: TraceId,
        wait: TraceId,
    ) {
        // A blocking wait has the id `wait_started` gave it (only tests make one without).
        debug_assert!(wait.is_some(), "a released wait without its id");
        let Some(wait) = wait else { return };
        let core = self.core(actor);
        fan!(self.wait_released(core, wait, (SignalCells(cells), cond), t, from));
    }

    /// `actor` polled `cells` for `cond` once at `t` (TTEST); `holds` is the answer.
    pub(crate) fn test_polled(&mut self, actor: usize, cells: &[CellRef], cond: Cond, holds: bool, t: SimTime) {
        let op = self.op(actor, OpKind::Test.name(), t, 0, None);
        fan!(self.test_polled(op.core, op.id, (SignalCells(cells), cond), holds, t));
        fan!(self.op_started(&op));
    }

    /// These cells of a self-clearing signal must read zero when the run ends.
    pub(crate) fn expect_clear(&mut self, cells: &[CellRef]) {
        fan!(self.expect_clear(SignalCells(cells)));
    }

    // ---- SDMA ------------------------------------------------------------------------------

    /// `actor` posts an SDMA transfer at `t` (the core is free again at `resume`); its id
    /// follows the transfer to its reads and its completion.
    pub(crate) fn sdma_posted(&mut self, actor: usize, spec: &SdmaSpec, t: SimTime, resume: SimTime) -> SdmaToken {
        let me = actor / self.cores;
        let bytes: usize = spec.descs.iter().map(|d| d.0.region.bytes()).sum();
        let peer = spec.descs.first().map(|d| if spec.get { d.0.chip() } else { d.1.chip() });
        let remote = peer.is_some_and(|p| p != me);
        let op = self.op(actor, spec.op.name(), t, bytes, peer.filter(|_| remote));
        let id = self.ids.sdma();
        fan!(self.op_span(&op, resume));
        fan!(self.sdma_posted(op.core, (id, op.id), spec.get, peer, bytes as u64));
        id
    }

    /// A descriptor of transfer `x` reads `src` now and issues its write to `dst`; the id
    /// names the write when it lands.
    pub(crate) fn sdma_moved(
        &mut self,
        x: &SdmaToken,
        (src, dst): (&Place, &Place),
        atomic: bool,
        at: OpAt,
    ) -> WriteToken {
        let id = self.ids.write();
        fan!(self.sdma_moved((*x, id), (MemRegion(src), MemRegion(dst)), atomic, at));
        Some(id)
    }

    /// `actor` observed transfer `x` complete (`wait_async`, or a `test_async` answering
    /// true); `retired` when it was waited (the engine forgets it).
    pub(crate) fn sdma_completed(&mut self, actor: usize, x: &SdmaToken, retired: bool) {
        let core = self.core(actor);
        fan!(self.sdma_completed(core, *x, retired));
    }

    // ---- the fabric ------------------------------------------------------------------------

    /// Whether link occupancy is recorded (only then does the engine collect it).
    pub(crate) fn wants_links(&self) -> bool {
        self.links
    }

    /// A resource was busy with one packet. The user's observers see it first; the tracer
    /// then keeps the record itself.
    pub(crate) fn link_busy(&mut self, busy: LinkBusy) {
        for o in self.users.iter_mut() {
            o.link_busy(&busy);
        }
        if let Some(r) = self.record.as_deref_mut() {
            r.link_busy(&busy);
        }
        if let Some(tr) = self.tracer.as_mut() {
            tr.link(busy);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{cell, ns, window};
    use super::*;
    use crate::base::signal::WaitCmp;
    use crate::results::trace::{Flow, FlowKind, OpSpan};

    /// Observers of two chips with one actor each (actor = chip).
    fn observers(trace: bool, check: bool) -> Observers {
        Observers::new(2, 1, trace, check)
    }

    fn at(op: OpKind, t: SimTime) -> OpAt {
        OpAt { op, time: t, caller: None }
    }

    #[test]
    fn traffic_is_counted_per_chip_as_local_or_remote() {
        let mut obs = observers(false, false);
        obs.load_issued(0, 1, 64, ns(1), true);
        obs.load_issued(0, 0, 8, ns(1), false);
        obs.store_posted(1, OpKind::Store, 1, 32, (ns(2), ns(3)));
        obs.store_posted(1, OpKind::RemoteStore, 0, 16, (ns(2), ns(3)));
        obs.chunk_read(1, 0, 4);
        obs.chunk_stored(0, 1, 128);
        obs.notify_posted(0, 1, ns(4), ns(5));
        obs.notify_posted(0, 0, ns(4), ns(5));
        obs.notify_posted(0, 0, ns(4), ns(5));
        let sig = [cell(0, 0)];
        let cond = Cond::Signed(WaitCmp::Ge, 1);
        obs.wait_started(1, &sig, cond, ns(6));
        obs.test_polled(1, &sig, cond, false, ns(7));
        let t = obs.traffic();
        let want0 = Traffic {
            remote_read_bytes: 64,
            remote_write_bytes: 128,
            local_read_bytes: 8,
            local_write_bytes: 0,
            remote_notifies: 1,
            local_notifies: 2,
            waits: 0,
        };
        let want1 = Traffic {
            remote_read_bytes: 4,
            remote_write_bytes: 16,
            local_read_bytes: 0,
            local_write_bytes: 32,
            remote_notifies: 0,
            local_notifies: 0,
            waits: 2,
        };
        assert_eq!(t, [want0, want1]);
    }

    #[test]
    fn an_unobserved_run_numbers_its_facts_and_records_nothing() {
        let mut obs = observers(false, false);
        assert!(!obs.traced());
        assert!(!obs.wants_links());
        let w = obs.write_issued(0, &window(1, 0, 16), false, at(OpKind::Put, ns(1)));
        let n = obs.notify_issued(0, &cell(1, 32), NotifyOp::Set, 1, at(OpKind::Notify, ns(2)));
        assert_eq!((w.map(WriteId::get), n.map(WriteId::get)), (Some(1), Some(2)), "one sequence, in issue order");
        assert_eq!(obs.notify_posted(0, 1, ns(2), ns(3)).map(OpId::get), Some(1));
        assert_eq!(obs.op_started(0, OpKind::Fence, ns(3), 0, None).map(OpId::get), Some(2));
        assert!(obs.take_trace(&[]).is_none());
        assert!(obs.take_findings(ns(9), |_, _| 0).is_empty());
    }

    #[test]
    fn a_trace_links_a_remote_store_to_the_next_notify_and_the_notify_to_the_wait_it_released() {
        let mut obs = observers(true, false);
        assert!(obs.traced() && obs.wants_links());
        obs.store_posted(0, OpKind::RemoteStore, 1, 16, (ns(1), ns(2)));
        let notify = obs.notify_posted(0, 1, ns(3), ns(4));
        let sig = [cell(1, 32)];
        let cond = Cond::Signed(WaitCmp::Ge, 1);
        let wait = obs.wait_started(1, &sig, cond, ns(2));
        obs.wait_released(1, (&sig, cond), ns(6), notify, wait);
        obs.replied(1, ns(8));
        let Some(trace) = obs.take_trace(&[]) else { panic!("a traced run has a trace") };
        let span = |id, chip, name, start, end, bytes, peer| OpSpan {
            id,
            chip,
            core: 0,
            name,
            start: ns(start),
            end: ns(end),
            bytes,
            peer,
        };
        assert_eq!(
            trace.ops,
            vec![
                span(1, 0, "remote_store", 1, 2, 16, Some(1)),
                span(3, 1, "wait", 2, 8, 0, None),
                span(2, 0, "notify", 3, 4, 0, Some(1)),
            ]
        );
        assert_eq!(
            trace.flows,
            vec![
                Flow { from: 1, to: 2, kind: FlowKind::WriteThenNotify },
                Flow { from: 2, to: 3, kind: FlowKind::NotifyToWait },
            ]
        );
    }

    #[test]
    fn a_data_write_releasing_a_wait_draws_no_flow() {
        let mut obs = observers(true, false);
        let sig = [cell(0, 0)];
        let cond = Cond::Signed(WaitCmp::Eq, 3);
        let wait = obs.wait_started(0, &sig, cond, ns(1));
        obs.wait_released(0, (&sig, cond), ns(4), None, wait);
        obs.replied(0, ns(5));
        let Some(trace) = obs.take_trace(&[]) else { panic!("a traced run has a trace") };
        assert!(trace.flows.is_empty());
        assert_eq!(trace.ops.len(), 1);
        assert_eq!((trace.ops[0].name, trace.ops[0].start, trace.ops[0].end), ("wait", ns(1), ns(5)));
    }

    /// What a user observer saw, by fact.
    #[derive(Debug, Default)]
    struct Seen {
        started: Option<(usize, usize)>,
        writes: Vec<(&'static str, u64)>,
        waits: Vec<(u64, Option<u64>)>,
        links: usize,
        ended: Option<SimTime>,
    }

    struct Recorder(std::sync::Arc<std::sync::Mutex<Seen>>, bool);

    impl Observe for Recorder {
        fn wants_links(&self) -> bool {
            self.1
        }
        fn run_started(&mut self, ranks: usize, cores: usize) {
            self.0.lock().unwrap().started = Some((ranks, cores));
        }
        fn run_ended(&mut self, end: SimTime) {
            self.0.lock().unwrap().ended = Some(end);
        }
        fn write_issued(&mut self, _: CoreId, id: WriteId, _: MemRegion<'_>, _: bool, _: OpAt) {
            self.0.lock().unwrap().writes.push(("issued", id.get()));
        }
        fn write_landed(&mut self, id: WriteId) {
            self.0.lock().unwrap().writes.push(("landed", id.get()));
        }
        fn notify_issued(&mut self, _: CoreId, id: WriteId, _: SignalCell<'_>, _: NotifyOp, _: i32, _: OpAt) {
            self.0.lock().unwrap().writes.push(("notify", id.get()));
        }
        fn notify_landed(&mut self, id: WriteId, _: SignalCell<'_>, _: (i32, i32), _: EqWaiters<'_>) {
            self.0.lock().unwrap().writes.push(("notified", id.get()));
        }
        fn wait_released(&mut self, _: CoreId, op: OpId, _: (SignalCells<'_>, Cond), _: SimTime, by: Option<OpId>) {
            self.0.lock().unwrap().waits.push((op.get(), by.map(OpId::get)));
        }
        fn link_busy(&mut self, _: &LinkBusy) {
            self.0.lock().unwrap().links += 1;
        }
    }

    fn recorded(links: bool) -> (Observers, std::sync::Arc<std::sync::Mutex<Seen>>) {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Seen::default()));
        let mut obs = observers(false, true);
        obs.attach(vec![Box::new(Recorder(seen.clone(), links))]);
        (obs, seen)
    }

    #[test]
    fn a_write_lands_with_the_id_it_was_issued_with() {
        let (mut obs, seen) = recorded(false);
        let a = obs.write_issued(0, &window(1, 0, 16), false, at(OpKind::Put, ns(1)));
        let b = obs.write_issued(1, &window(0, 0, 16), true, at(OpKind::RemoteStore, ns(1)));
        obs.write_landed(b);
        obs.write_landed(a);
        let got = std::mem::take(&mut seen.lock().unwrap().writes);
        assert_eq!(got, [("issued", 1), ("issued", 2), ("landed", 2), ("landed", 1)]);
    }

    #[test]
    fn a_notify_lands_with_the_id_it_was_issued_with_in_the_writes_sequence() {
        let (mut obs, seen) = recorded(false);
        let w = obs.write_issued(0, &window(1, 0, 16), false, at(OpKind::Put, ns(1)));
        let sig = cell(1, 32);
        let n = obs.notify_issued(0, &sig, NotifyOp::AtomicAdd, 1, at(OpKind::Notify, ns(2)));
        obs.notify_landed(n, &sig, (0, 1), Vec::new);
        obs.write_landed(w);
        let got = std::mem::take(&mut seen.lock().unwrap().writes);
        assert_eq!(got, [("issued", 1), ("notify", 2), ("notified", 2), ("landed", 1)]);
    }

    #[test]
    fn a_released_wait_names_its_own_id_and_the_notify_that_released_it() {
        let (mut obs, seen) = recorded(false);
        let notify = obs.notify_posted(0, 1, ns(1), ns(2));
        let sig = [cell(1, 32)];
        let cond = Cond::Signed(WaitCmp::Ge, 1);
        let wait = obs.wait_started(1, &sig, cond, ns(1));
        obs.wait_released(1, (&sig, cond), ns(3), notify, wait);
        obs.wait_released(1, (&sig, cond), ns(4), None, wait);
        assert_eq!((notify.map(OpId::get), wait.map(OpId::get)), (Some(1), Some(2)));
        assert_eq!(seen.lock().unwrap().waits, [(2, Some(1)), (2, None)]);
    }

    /// What a user observer saw of SDMA transfers: posted, moved (with the write's id),
    /// completed.
    #[derive(Debug, Default)]
    struct SdmaSeen(Vec<(&'static str, u64, Option<u64>)>);

    struct SdmaRecorder(std::sync::Arc<std::sync::Mutex<SdmaSeen>>);

    impl Observe for SdmaRecorder {
        fn sdma_posted(&mut self, _: CoreId, (x, _): (SdmaId, OpId), _: bool, _: Option<usize>, _: u64) {
            self.0.lock().unwrap().0.push(("posted", x.get(), None));
        }
        fn sdma_moved(&mut self, (x, w): (SdmaId, WriteId), _: (MemRegion<'_>, MemRegion<'_>), _: bool, _: OpAt) {
            self.0.lock().unwrap().0.push(("moved", x.get(), Some(w.get())));
        }
        fn write_landed(&mut self, w: WriteId) {
            self.0.lock().unwrap().0.push(("landed", 0, Some(w.get())));
        }
        fn sdma_completed(&mut self, _: CoreId, x: SdmaId, retired: bool) {
            self.0.lock().unwrap().0.push((if retired { "retired" } else { "completed" }, x.get(), None));
        }
    }

    #[test]
    fn an_sdma_transfer_moves_and_completes_with_the_id_it_was_posted_with() {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(SdmaSeen::default()));
        let mut obs = observers(false, true);
        obs.attach(vec![Box::new(SdmaRecorder(seen.clone()))]);
        let spec = |id| SdmaSpec {
            id,
            channel: 0,
            queues: 1,
            descs: vec![(window(0, 0, 16), window(1, 0, 16))],
            get: false,
            atomic: None,
            op: OpKind::PutAsync,
            caller: None,
        };
        let a = obs.sdma_posted(0, &spec(1), ns(1), ns(2));
        let b = obs.sdma_posted(0, &spec(2), ns(2), ns(3));
        let (src, dst) = (window(0, 0, 16), window(1, 0, 16));
        let wb = obs.sdma_moved(&b, (&src, &dst), false, at(OpKind::PutAsync, ns(4)));
        let wa = obs.sdma_moved(&a, (&src, &dst), false, at(OpKind::PutAsync, ns(5)));
        obs.write_landed(wa);
        obs.write_landed(wb);
        obs.sdma_completed(0, &b, false);
        obs.sdma_completed(0, &b, true);
        obs.sdma_completed(0, &a, true);
        let got = std::mem::take(&mut seen.lock().unwrap().0);
        assert_eq!(
            got,
            [
                ("posted", 1, None),
                ("posted", 2, None),
                ("moved", 2, Some(1)),
                ("moved", 1, Some(2)),
                ("landed", 0, Some(2)),
                ("landed", 0, Some(1)),
                ("completed", 2, None),
                ("retired", 2, None),
                ("retired", 1, None),
            ]
        );
    }

    #[test]
    fn a_user_observer_sees_the_run_start_and_end_and_asks_for_links() {
        let (mut obs, seen) = recorded(false);
        assert!(!obs.wants_links(), "an observer that does not ask for links leaves them off");
        let (mut linked, linked_seen) = recorded(true);
        assert!(linked.wants_links(), "an observer that asks for links gets them in an untraced run");
        let busy = LinkBusy { resource: "link 0->1".into(), chip: 0, start: ns(1), end: ns(2), bytes: 64 };
        linked.link_busy(busy);
        assert_eq!(linked_seen.lock().unwrap().links, 1);
        assert_eq!(obs.detach(ns(7)).len(), 1);
        assert!(!linked.detach(ns(8)).is_empty() && !linked.wants_links(), "links stop with their observer");
        let s = seen.lock().unwrap();
        assert_eq!((s.started, s.ended), (Some((2, 1)), Some(ns(7))));
    }
}
