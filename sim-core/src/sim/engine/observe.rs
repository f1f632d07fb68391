//! The engine's observers, seen through one interface. The engine reports what it applies as
//! typed facts (a block starts, a write is issued or lands, a wait is satisfied, an SDMA
//! transfer completes, a link is busy, ...) to [`Observers`], which fans them out to the
//! per-rank traffic counters, the timeline recorder of a traced run and the protocol checker
//! of a checked run.
//!
//! Observing never steers: no fact returns anything the engine can branch on (only whether
//! the run is traced, so kernels and the fabric report what the timeline needs). Where an
//! observer must recognise a later fact as the end of an earlier one (a write issued, then
//! landed), it hands the engine an opaque token ([`WriteToken`], [`TraceId`], [`SdmaToken`])
//! that the engine stores and gives back. An observer that is off costs one `Option` test
//! per fact: nothing is built for it.

mod tracer;

use super::wake::Assignment;
use crate::api::request::{CopySpec, OpKind, SdmaSpec};
use crate::base::addr::{Caller, CellRef, MemKey, Place};
use crate::base::signal::{Cond, NotifyOp};
use crate::base::time::SimTime;
use crate::results::stats::{DispatchRecord, Traffic};
use crate::results::trace::{DispatchSpan, LinkBusy, Trace};
use crate::sim::check::{self, Checker, SdmaClock};
use std::sync::Arc;
use tracer::Tracer;

/// The checker's name for a write or notify in flight, given back when it lands. Tokens
/// compare only in tests: the engine cannot look inside them.
#[derive(Copy, Clone, Debug, Default)]
#[cfg_attr(test, derive(PartialEq, Eq))]
pub(crate) struct WriteToken(u64);

/// A traced operation, named so a later fact can link to it (the default: none).
#[derive(Copy, Clone, Debug, Default)]
#[cfg_attr(test, derive(PartialEq, Eq))]
pub(crate) struct TraceId(u64);

/// The checker's clock of one SDMA transfer, given back at its reads and its completion.
#[derive(Clone, Debug, Default)]
pub(crate) struct SdmaToken(Option<SdmaClock>);

/// One access of a core's operation: what it is, when it was applied, and the kernel's source
/// location.
#[derive(Copy, Clone, Debug)]
pub(crate) struct OpAt {
    pub(crate) op: OpKind,
    pub(crate) time: SimTime,
    pub(crate) caller: Caller,
}

impl OpAt {
    fn check(self) -> check::Op {
        check::Op { name: self.op.name(), time: self.time, location: self.caller }
    }
}

/// Everything that watches a run: the traffic counters (always on), the timeline recorder
/// (traced runs) and the protocol checker (checked runs).
pub(crate) struct Observers {
    /// Actors per chip (an actor's chip is `actor / cores`).
    cores: usize,
    /// What each chip moved.
    traffic: Vec<Traffic>,
    tracer: Option<Tracer>,
    checker: Option<Checker>,
}

impl Observers {
    /// Observers of a run of `world` chips with `cores` actors each.
    pub(crate) fn new(world: usize, cores: usize, trace: bool, check: bool) -> Observers {
        Observers {
            cores,
            traffic: vec![Traffic::default(); world],
            tracer: trace.then(|| Tracer::new(world * cores, cores)),
            checker: check.then(|| Checker::new(world * cores, world)),
        }
    }

    /// Whether the run records a timeline (kernels then report their local work).
    pub(crate) fn traced(&self) -> bool {
        self.tracer.is_some()
    }

    /// What each chip moved so far.
    pub(crate) fn traffic(&self) -> &[Traffic] {
        &self.traffic
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
        if let Some(ck) = self.checker.as_mut() {
            ck.dispatch_start(chip, tasks, instance);
        }
    }

    /// Task `ti` of `chip`'s dispatch is placed; it depends on tasks `deps`.
    pub(crate) fn task_placed(&mut self, chip: usize, ti: usize, deps: impl Iterator<Item = usize>) {
        if let Some(ck) = self.checker.as_mut() {
            ck.task_start(chip, ti, deps);
        }
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
        let Some(ck) = self.checker.as_mut() else { return };
        let chip = actor / self.cores;
        let (dispatch, instance) = dispatch.map_or((Arc::from("?"), 0), |(n, i)| (n.clone(), i));
        let who = check::Who { rank: chip, block: a.block, task: a.ctx.task.clone(), dispatch, instance };
        ck.block_start(actor, chip, ti, who, (a.lane, a.ctx.lanes));
    }

    /// The block of task `ti` on `actor` ended (its writes have landed).
    pub(crate) fn block_ended(&mut self, actor: usize, ti: usize) {
        if let Some(ck) = self.checker.as_mut() {
            ck.block_end(actor, actor / self.cores, ti);
        }
    }

    /// A deferred condition of task `ti` of `chip` holds on `cell`.
    pub(crate) fn deferred_ready(&mut self, chip: usize, ti: usize, cell: &CellRef) {
        if let Some(ck) = self.checker.as_mut() {
            ck.deferred_ready(chip, ti, cell);
        }
    }

    /// `chip`'s active dispatch completed.
    pub(crate) fn dispatch_ended(&mut self, chip: usize) {
        if let Some(ck) = self.checker.as_mut() {
            ck.dispatch_end(chip);
        }
    }

    // ---- operations of a core --------------------------------------------------------------

    /// `actor` starts a blocking operation at `t` that ends at its reply; returns its trace id.
    pub(crate) fn op_started(
        &mut self,
        actor: usize,
        op: OpKind,
        t: SimTime,
        bytes: usize,
        peer: Option<usize>,
    ) -> TraceId {
        TraceId(self.tracer.as_mut().map_or(0, |tr| tr.open(actor, op.name(), t, bytes as u64, peer)))
    }

    /// `actor` is released at `at`: its blocking operation ends.
    pub(crate) fn replied(&mut self, actor: usize, at: SimTime) {
        if let Some(tr) = self.tracer.as_mut() {
            tr.close(actor, at);
        }
    }

    /// `actor` did local work `name` (compute, vector math) over `[start, end]`.
    pub(crate) fn local_work(&mut self, actor: usize, name: &'static str, start: SimTime, end: SimTime) {
        if let Some(tr) = self.tracer.as_mut() {
            tr.span(actor, name, start, end, 0, None);
        }
    }

    /// `actor` issues a load (`load` / `remote_load`, from `src_chip`) of `bytes` at `t`;
    /// `blocking` unless its bytes are collected later.
    pub(crate) fn load_issued(&mut self, actor: usize, src_chip: usize, bytes: usize, t: SimTime, blocking: bool) {
        let me = actor / self.cores;
        let remote = src_chip != me;
        self.traffic[me].read(remote, bytes);
        if blocking {
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
        if let Some(tr) = self.tracer.as_mut() {
            let op = if peer.is_some() { OpKind::RemoteLoad } else { OpKind::Load };
            tr.span(actor, op.name(), issued, t, bytes as u64, peer);
        }
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
        let me = actor / self.cores;
        let remote = dst_chip != me;
        self.traffic[me].write(remote, bytes);
        if let Some(tr) = self.tracer.as_mut() {
            let id = tr.span(actor, op.name(), t, resume, bytes as u64, remote.then_some(dst_chip));
            if remote {
                tr.remote_write(actor, id);
            }
        }
    }

    /// `actor` starts a put or get at `t` (it blocks until the last chunk is stored).
    pub(crate) fn copy_started(&mut self, actor: usize, spec: &CopySpec, t: SimTime) {
        let Some(tr) = self.tracer.as_mut() else { return };
        let me = actor / self.cores;
        let bytes: usize = spec.chunks.iter().map(|c| c.0.region.bytes()).sum();
        let peer =
            spec.chunks.first().map(|c| if c.0.chip() != me { c.0.chip() } else { c.1.chip() }).filter(|&p| p != me);
        let id = tr.open(actor, spec.op.name(), t, bytes as u64, peer);
        if peer.is_some() && spec.op == OpKind::Put {
            tr.remote_write(actor, id);
        }
    }

    /// A chunk of a put/get of `actor`: `bytes` read from `src_chip`.
    pub(crate) fn chunk_read(&mut self, actor: usize, src_chip: usize, bytes: usize) {
        let me = actor / self.cores;
        self.traffic[me].read(src_chip != me, bytes);
    }

    /// A chunk of a put/get of `actor`: `bytes` stored to `dst_chip`.
    pub(crate) fn chunk_stored(&mut self, actor: usize, dst_chip: usize, bytes: usize) {
        let me = actor / self.cores;
        self.traffic[me].write(dst_chip != me, bytes);
    }

    /// `actor` reads `src` now (the bytes are taken from memory).
    pub(crate) fn read(&mut self, actor: usize, src: &Place, at: OpAt) {
        if let Some(ck) = self.checker.as_mut() {
            ck.read(actor, src, at.check());
        }
    }

    /// `actor` issues a write to `dst` (an atomic add if `atomic`); the token names it when
    /// it lands.
    pub(crate) fn write_issued(&mut self, actor: usize, dst: &Place, atomic: bool, at: OpAt) -> WriteToken {
        WriteToken(self.checker.as_mut().map_or(0, |ck| ck.write_issue(actor, dst, atomic, at.check())))
    }

    /// The write `w` has landed.
    pub(crate) fn write_landed(&mut self, w: WriteToken) {
        if let Some(ck) = self.checker.as_mut() {
            ck.write_land(w.0);
        }
    }

    // ---- signals ---------------------------------------------------------------------------

    /// `actor` posts a notify to a cell of `cell_chip` at `t` (free again at `resume`);
    /// returns its trace id, which the waits it releases link to.
    pub(crate) fn notify_posted(&mut self, actor: usize, cell_chip: usize, t: SimTime, resume: SimTime) -> TraceId {
        let me = actor / self.cores;
        let remote = cell_chip != me;
        if remote {
            self.traffic[me].remote_notifies += 1;
        } else {
            self.traffic[me].local_notifies += 1;
        }
        let Some(tr) = self.tracer.as_mut() else { return TraceId::default() };
        let id = tr.span(actor, OpKind::Notify.name(), t, resume, 0, remote.then_some(cell_chip));
        tr.notified(actor, id);
        TraceId(id)
    }

    /// `actor` issues the notify `op value` to `cell`; the token names it when it lands.
    pub(crate) fn notify_issued(
        &mut self,
        actor: usize,
        cell: &CellRef,
        op: NotifyOp,
        value: i32,
        at: OpAt,
    ) -> WriteToken {
        WriteToken(self.checker.as_mut().map_or(0, |ck| ck.notify_issue(actor, cell, op, value, at.check())))
    }

    /// The notify `w` changed `cell` from `old` to `new`; `eq_waiters` gives the values `Eq`
    /// waits on the cell expect, with the waiting actor (asked only when checking).
    pub(crate) fn notify_landed(
        &mut self,
        w: WriteToken,
        cell: &CellRef,
        old_new: (i32, i32),
        eq_waiters: impl FnOnce() -> Vec<(i32, usize)>,
    ) {
        if let Some(ck) = self.checker.as_mut() {
            ck.notify_land(w.0, cell, old_new, &eq_waiters());
        }
    }

    /// `actor` starts a blocking wait at `t` for `cells` to satisfy `cond`; returns its trace
    /// id.
    pub(crate) fn wait_started(&mut self, actor: usize, cells: &[CellRef], cond: Cond, t: SimTime) -> TraceId {
        self.traffic[actor / self.cores].waits += 1;
        let id = self.op_started(actor, OpKind::Wait, t, 0, None);
        if let Some(ck) = self.checker.as_mut() {
            ck.wait_begin(actor, cells, cond, t);
        }
        id
    }

    /// The wait of `actor` held as soon as it was made, at `t`.
    pub(crate) fn wait_held_at_once(&mut self, actor: usize, cells: &[CellRef], cond: Cond, t: SimTime) {
        if let Some(ck) = self.checker.as_mut() {
            ck.wait_done(actor, cells, cond, true, t);
        }
    }

    /// The notify `from` (or a data write: the default id) satisfied the wait `wait` of
    /// `actor` at `t`.
    pub(crate) fn wait_released(
        &mut self,
        actor: usize,
        (cells, cond): (&[CellRef], Cond),
        t: SimTime,
        from: TraceId,
        wait: TraceId,
    ) {
        if let Some(tr) = self.tracer.as_mut() {
            tr.released(from.0, wait.0);
        }
        if let Some(ck) = self.checker.as_mut() {
            ck.wait_done(actor, cells, cond, false, t);
        }
    }

    /// `actor` polled `cells` for `cond` once at `t` (TTEST); `holds` is the answer.
    pub(crate) fn test_polled(&mut self, actor: usize, cells: &[CellRef], cond: Cond, holds: bool, t: SimTime) {
        self.traffic[actor / self.cores].waits += 1;
        if holds && let Some(ck) = self.checker.as_mut() {
            ck.wait_begin(actor, cells, cond, t);
            ck.wait_done(actor, cells, cond, false, t);
        }
        self.op_started(actor, OpKind::Test, t, 0, None);
    }

    /// These cells of a self-clearing signal must read zero when the run ends.
    pub(crate) fn expect_clear(&mut self, cells: &[CellRef]) {
        if let Some(ck) = self.checker.as_mut() {
            ck.expect_clear(cells);
        }
    }

    // ---- SDMA ------------------------------------------------------------------------------

    /// `actor` posts an SDMA transfer at `t` (the core is free again at `resume`); the token
    /// follows the transfer to its reads and its completion.
    pub(crate) fn sdma_posted(&mut self, actor: usize, spec: &SdmaSpec, t: SimTime, resume: SimTime) -> SdmaToken {
        let me = actor / self.cores;
        let bytes: usize = spec.descs.iter().map(|d| d.0.region.bytes()).sum();
        let peer = spec.descs.first().map(|d| if spec.get { d.0.chip() } else { d.1.chip() });
        let remote = peer.is_some_and(|p| p != me);
        if spec.get {
            self.traffic[me].read(remote, bytes);
        } else {
            self.traffic[me].write(remote, bytes);
        }
        if let Some(tr) = self.tracer.as_mut() {
            tr.span(actor, spec.op.name(), t, resume, bytes as u64, peer.filter(|_| remote));
        }
        SdmaToken(self.checker.as_mut().and_then(|ck| ck.sdma_issue(actor)))
    }

    /// A descriptor of transfer `x` reads `src` now and issues its write to `dst`; the token
    /// names the write when it lands.
    pub(crate) fn sdma_moved(
        &mut self,
        x: &SdmaToken,
        (src, dst): (&Place, &Place),
        atomic: bool,
        at: OpAt,
    ) -> WriteToken {
        match (self.checker.as_mut(), x.0.as_ref()) {
            (Some(ck), Some(c)) => {
                ck.sdma_read(c, src, at.check());
                WriteToken(ck.sdma_write(c, dst, atomic, at.check()))
            }
            _ => WriteToken::default(),
        }
    }

    /// `actor` observed transfer `x` complete (`wait_async`, or a `test_async` answering true).
    pub(crate) fn sdma_completed(&mut self, actor: usize, x: &SdmaToken) {
        if let (Some(ck), Some(c)) = (self.checker.as_mut(), x.0.as_ref()) {
            ck.sdma_complete(actor, c);
        }
    }

    // ---- the fabric ------------------------------------------------------------------------

    /// Whether link occupancy is recorded (only then does the engine collect it).
    pub(crate) fn wants_links(&self) -> bool {
        self.tracer.is_some()
    }

    /// A resource was busy with one packet.
    pub(crate) fn link_busy(&mut self, busy: LinkBusy) {
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
    fn an_unobserved_run_hands_back_empty_tokens_and_records_nothing() {
        let mut obs = observers(false, false);
        assert!(!obs.traced());
        assert!(!obs.wants_links());
        let w = obs.write_issued(0, &window(1, 0, 16), false, at(OpKind::Put, ns(1)));
        let n = obs.notify_issued(0, &cell(1, 32), NotifyOp::Set, 1, at(OpKind::Notify, ns(2)));
        assert_eq!((w, n), (WriteToken::default(), WriteToken::default()));
        assert_eq!(obs.notify_posted(0, 1, ns(2), ns(3)), TraceId::default());
        assert_eq!(obs.op_started(0, OpKind::Fence, ns(3), 0, None), TraceId::default());
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
        obs.wait_released(0, (&sig, cond), ns(4), TraceId::default(), wait);
        obs.replied(0, ns(5));
        let Some(trace) = obs.take_trace(&[]) else { panic!("a traced run has a trace") };
        assert!(trace.flows.is_empty());
        assert_eq!(trace.ops.len(), 1);
        assert_eq!((trace.ops[0].name, trace.ops[0].start, trace.ops[0].end), ("wait", ns(1), ns(5)));
    }
}
