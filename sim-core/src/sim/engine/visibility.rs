//! When writes become visible: every core's writes and notifies in flight, by issue number.
//!
//! - With release ordering (the default, what PyPTO's `InsertCommFence` guarantees compiled
//!   kernels) a notify is applied only once every write its core issued before it has landed,
//!   whatever path each took. With relaxed ordering a notify lands when it arrives and can
//!   overtake payload; `fence` restores the order.
//! - `fence` returns when everything the core issued before it has landed.
//! - A block ends only when its writes have landed (kernel end drains the DMA queues).
//! - A core never reads bytes or a cell before its own writes and notifies to them have landed
//!   (a load, put or get after a store to the same bytes waits for the store).

use super::Engine;
use super::event::{Key, SignalLand, WriteIds};
use super::observe::OpAt;
use crate::api::request::{Reply, Request};
use crate::base::addr::{CellRef, Place};
use crate::base::error::SimError;
use crate::base::signal::NotifyOp;
use crate::base::time::SimTime;

impl Engine {
    /// Numbers a write of `actor` to `dst` and tells the observers.
    pub(super) fn issue_write(&mut self, actor: usize, dst: &Place, atomic: bool, at: OpAt) -> WriteIds {
        let seq = self.vis.issue(actor);
        self.vis.regions[actor].push((seq, (dst.mem, dst.region.runs.clone())));
        let check = self.obs.write_issued(actor, dst, atomic, at);
        WriteIds { seq, check }
    }

    /// Keeps a read of `actor` until its writes in flight have landed (see
    /// [`Engine::reads_own_write`]).
    pub(super) fn hold_read(&mut self, key: Key, actor: usize, req: Request) {
        self.vis.held_reads[actor].push((key, req));
    }

    /// Whether `req` of `actor` is a read (a load, or a put/get, whose chunks read their
    /// sources) that overlaps the actor's own writes in flight, so it must wait for them.
    pub(super) fn reads_own_write(&self, actor: usize, req: &Request) -> bool {
        match req {
            Request::Read { src, .. } | Request::ScalarRead { src, .. } => self.vis.overlaps(actor, src),
            Request::Copy(spec) => spec.chunks.iter().any(|(src, _)| self.vis.overlaps(actor, src)),
            _ => false,
        }
    }

    /// Numbers a notify of `actor` and tells the observers.
    pub(super) fn issue_notify(
        &mut self,
        actor: usize,
        cell: &CellRef,
        op: NotifyOp,
        value: i32,
        at: OpAt,
    ) -> WriteIds {
        let seq = self.vis.issue(actor);
        *self.vis.notifying.entry((actor, cell.mem, cell.offset)).or_default() += 1;
        let check = self.obs.notify_issued(actor, cell, op, value, at);
        WriteIds { seq, check }
    }

    /// A notify reached its cell: apply it, or hold it behind its core's earlier writes.
    pub(super) fn signal_arrived(&mut self, t: SimTime, s: SignalLand) {
        let earlier = self.vis.inflight[s.writer].first().is_some_and(|&o| o < s.ids.seq);
        if earlier && !self.vis.relaxed {
            self.vis.held[s.writer].push(s);
            return;
        }
        let (writer, seq) = (s.writer, s.ids.seq);
        self.apply_signal(t, &s);
        self.landed(writer, seq, t);
    }

    fn apply_signal(&mut self, t: SimTime, s: &SignalLand) {
        let key = (s.writer, s.cell.mem, s.cell.offset);
        if let Some(n) = self.vis.notifying.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                self.vis.notifying.remove(&key);
            }
        }
        self.signal(t, s);
    }

    /// Write or notify `seq` of `actor` has landed at `t`: release what waited for it.
    pub(super) fn landed(&mut self, actor: usize, seq: u64, t: SimTime) {
        self.vis.inflight[actor].remove(&seq);
        let regions = &mut self.vis.regions[actor];
        if let Ok(i) = regions.binary_search_by_key(&seq, |r| r.0) {
            regions.remove(i);
        }
        // Each held read is applied now, or held again behind a write still in flight.
        for (key, req) in std::mem::take(&mut self.vis.held_reads[actor]) {
            self.apply_request(key.at(t), actor, req, t);
        }
        loop {
            let oldest = self.vis.inflight[actor].first().copied();
            let Some(i) = self.vis.held[actor].iter().position(|s| Some(s.ids.seq) == oldest) else { break };
            let s = self.vis.held[actor].remove(i);
            self.apply_signal(t, &s);
            self.vis.inflight[actor].remove(&s.ids.seq);
        }
        if !self.vis.inflight[actor].is_empty() {
            return;
        }
        if std::mem::take(&mut self.vis.fencing[actor]) {
            self.reply(actor, t, Reply::Done);
        }
        if let Some(result) = self.vis.finishing[actor].take() {
            self.finish_block(t, actor, result);
        }
    }

    /// `fence`: resolves now, or when `actor`'s last write in flight lands.
    pub(super) fn fence(&mut self, actor: usize, t: SimTime) {
        if self.vis.inflight[actor].is_empty() {
            self.reply(actor, t, Reply::Done);
        } else {
            self.vis.fencing[actor] = true;
        }
    }

    /// A block ended: it completes once its writes have landed (a failure ends it at once).
    pub(super) fn finish_when_landed(&mut self, t: SimTime, actor: usize, result: Result<(), SimError>) {
        if result.is_ok() && !self.vis.inflight[actor].is_empty() {
            self.vis.finishing[actor] = Some(result);
        } else {
            self.finish_block(t, actor, result);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::observe::TraceId;
    use super::super::testkit::{cell, engine, ns, window};
    use super::super::wake::Wake;
    use super::*;
    use crate::api::request::OpKind;
    use crate::base::addr::MemKey;
    use crate::base::payload::Payload;

    fn op(op: OpKind, t: SimTime) -> OpAt {
        OpAt { op, time: t, caller: None }
    }

    /// Actor 0 issues a 16-byte write into member 1's window, then a notify (AtomicAdd 1) of
    /// member 1's cell at offset 32; the notify reaches its cell first, at 5 ns.
    fn write_then_early_notify(relaxed: bool) -> (Engine, WriteIds) {
        let mut eng = engine(2, relaxed);
        let write = eng.issue_write(0, &window(1, 0, 16), false, op(OpKind::Put, ns(1)));
        let sig = cell(1, 32);
        let ids = eng.issue_notify(0, &sig, NotifyOp::AtomicAdd, 1, op(OpKind::Notify, ns(2)));
        assert_eq!((write.seq, ids.seq), (0, 1), "writes and notifies share one issue order");
        assert!(eng.vis.notifying(0, std::slice::from_ref(&sig)));
        eng.signal_arrived(
            ns(5),
            SignalLand { cell: sig, value: 1, op: NotifyOp::AtomicAdd, writer: 0, trace_id: TraceId::default(), ids },
        );
        (eng, write)
    }

    #[test]
    fn a_notify_waits_behind_an_earlier_write_of_its_core() {
        let (mut eng, write) = write_then_early_notify(false);
        let sig = cell(1, 32);
        assert_eq!(eng.mem.cell(&sig), 0, "held while the write is in flight");
        assert_eq!(eng.vis.held[0].len(), 1);
        // The write lands at 9 ns: the notify is applied right behind it.
        eng.mem.write(&window(1, 0, 16), &Payload::Bytes(vec![7u8; 16]), None);
        eng.landed(0, write.seq, ns(9));
        assert_eq!(eng.mem.cell(&sig), 1);
        assert!(eng.vis.held[0].is_empty());
        assert!(eng.vis.inflight[0].is_empty());
        assert!(!eng.vis.notifying(0, &[sig]));
        let history = eng.signals.last_writers(MemKey::win(0, 1, 1), 32);
        let seen: Vec<_> = history.iter().map(|w| (w.chip, w.op, w.value, w.time)).collect();
        assert_eq!(
            seen,
            vec![(0, crate::base::deadlock::CellWriteOp::Notify(crate::base::signal::NotifyOp::AtomicAdd), 1, ns(9))],
            "recorded when it was applied"
        );
        assert_eq!(eng.mem.read(&window(1, 0, 16)), Payload::Bytes(vec![7u8; 16]));
    }

    #[test]
    fn relaxed_ordering_lets_a_notify_overtake_the_payload() {
        let (mut eng, write) = write_then_early_notify(true);
        let sig = cell(1, 32);
        assert_eq!(eng.mem.cell(&sig), 1, "applied on arrival");
        assert_eq!(eng.vis.inflight[0].0, vec![write.seq], "the write is still in flight");
        eng.landed(0, write.seq, ns(9));
        assert_eq!(eng.mem.cell(&sig), 1, "applied once only");
    }

    #[test]
    fn a_fence_answers_when_the_last_earlier_write_lands() {
        // Nothing in flight: answered at once.
        let mut idle = engine(1, false);
        idle.fence(0, ns(1));
        assert!(
            matches!(idle.take_wakes().as_slice(), [Wake::Reply { actor: 0, at, reply: Reply::Done }] if *at == ns(1))
        );
        let mut eng = engine(1, false);
        let a = eng.issue_write(0, &window(0, 0, 8), false, op(OpKind::Store, ns(2)));
        let b = eng.issue_write(0, &window(0, 8, 8), false, op(OpKind::Store, ns(3)));
        eng.fence(0, ns(4));
        assert!(eng.take_wakes().is_empty());
        eng.landed(0, b.seq, ns(6));
        assert!(eng.take_wakes().is_empty(), "write `a` is still in flight");
        eng.landed(0, a.seq, ns(8));
        assert!(
            matches!(eng.take_wakes().as_slice(), [Wake::Reply { actor: 0, at, reply: Reply::Done }] if *at == ns(8))
        );
    }

    #[test]
    fn a_read_of_bytes_the_core_is_still_writing_is_held() {
        let mut eng = engine(1, false);
        let w = eng.issue_write(0, &window(0, 16, 16), false, op(OpKind::Store, ns(1)));
        let read = |p: Place| Request::Read { src: p, caller: None, start: ns(2), ticket: None };
        // Disjoint bytes pass; overlapping ones wait for the write.
        assert!(!eng.reads_own_write(0, &read(window(0, 0, 16))));
        assert!(eng.reads_own_write(0, &read(window(0, 24, 4))));
        assert!(eng.vis.overlaps(0, &window(0, 31, 1)));
        eng.vis.inflight[0].remove(&w.seq);
        eng.vis.regions[0].clear();
        assert!(!eng.vis.overlaps(0, &window(0, 31, 1)));
    }
}
