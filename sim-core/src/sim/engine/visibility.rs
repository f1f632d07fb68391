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
//!
//! Within an island (chips joined without a switch: a whole machine without switches) all of
//! this is one shared view: a landing is known everywhere at once. Across a switch news takes
//! the route's latency (`Network::news_delay`): a writer learns that its write landed on
//! another island one route latency later (the acknowledgement), and a notify to another
//! island waits there for the writer's earlier writes to that island (counted as that island
//! sees them land, `Landings`) and, if the writer had earlier writes elsewhere in flight, for
//! its release, which the writer sends once it has learnt they landed. So nothing on one
//! island depends on the other side's state at the same instant, and a notify after a put to
//! the same peer costs no round trip.

use super::Engine;
use super::event::{Away, Event, Key, SignalLand, WriteIds};
use super::observe::OpAt;
use super::state::in_flight::CrossNotify;
use crate::api::request::{Reply, Request};
use crate::base::addr::{CellRef, Place};
use crate::base::error::SimError;
use crate::base::signal::NotifyOp;
use crate::base::time::SimTime;

impl Engine {
    /// Numbers a write of `actor` to `dst` and tells the observers.
    pub(super) fn issue_write(&mut self, actor: usize, dst: &Place, atomic: bool, at: OpAt) -> WriteIds {
        let (seq, nth) = self.number_write(actor, dst.chip());
        self.vis.regions[actor].push((seq, (dst.mem, dst.region.runs.clone())));
        let check = self.obs.write_issued(actor, dst, atomic, at);
        WriteIds { seq, check, away: nth.map(|nth| Away { nth, held: false }) }
    }

    /// The issue number of a write of `actor` to `chip`, and its number among the writes to
    /// `chip`'s island when that is another island than the writer's.
    fn number_write(&mut self, actor: usize, chip: usize) -> (u64, Option<u32>) {
        if self.vis.one_island {
            return (self.vis.issue(actor), None);
        }
        let (home, to) = (self.vis.island(self.chip_of(actor)), self.vis.island(chip));
        (self.vis.issue(actor), self.vis.nth_to(actor, home, to))
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
        let (seq, nth) = self.number_write(actor, cell.chip());
        // Only a core's own cells are ever read with its notifies in flight (waits and tests
        // name this rank's cells).
        if cell.chip() == self.chip_of(actor) {
            *self.vis.notifying.entry((actor, cell.mem, cell.offset)).or_default() += 1;
        }
        let check = self.obs.notify_issued(actor, cell, op, value, at);
        // A notify to another island waits there for its writer's release if the writer has
        // data writes to other islands in flight: the notify carries that, so its island
        // needs nothing of the writer's state.
        let held = nth.is_some() && !self.vis.relaxed && self.vis.data_elsewhere(actor, self.vis.island(cell.chip()));
        if held {
            self.vis.unreleased[actor].push((seq, cell.chip()));
        }
        WriteIds { seq, check, away: nth.map(|nth| Away { nth, held }) }
    }

    /// A notify reached its cell: apply it, or hold it behind its core's earlier writes.
    pub(super) fn signal_arrived(&mut self, key: Key, s: SignalLand) {
        let (writer, seq) = (s.writer, s.ids.seq);
        if let Some(away) = s.ids.away.filter(|_| !self.vis.relaxed) {
            let c = self.vis.cross.entry((writer, seq)).or_default();
            c.released |= !away.held;
            c.arrived = Some(s);
            return self.try_cross(key, writer, seq);
        }
        if !self.vis.relaxed && self.vis.inflight[writer].first().is_some_and(|&o| o < seq) {
            self.vis.held[writer].push(s);
            return;
        }
        self.apply_signal(key.time, &s);
        self.write_landed(key, s.cell.chip(), writer, s.ids);
    }

    /// The release of `writer`'s cross-island notify `seq` has reached the notify's island.
    pub(super) fn released(&mut self, key: Key, writer: usize, seq: u64) {
        self.vis.cross.entry((writer, seq)).or_default().released = true;
        self.try_cross(key, writer, seq);
    }

    /// Applies `writer`'s cross-island notify `seq` if it has arrived, has been released and
    /// the writer's earlier writes to its island have landed there.
    fn try_cross(&mut self, key: Key, writer: usize, seq: u64) {
        let Some(CrossNotify { released: true, arrived: Some(s) }) = self.vis.cross.get(&(writer, seq)) else { return };
        let (chip, nth) = (s.cell.chip(), s.ids.away.map_or(0, |a| a.nth));
        let island = self.vis.island(chip);
        if self.vis.landings.get(&(writer, island)).map_or(0, |l| l.below) < nth {
            // Arrived and released: it waits for landings on its island.
            let waiting = self.vis.waiting.entry((writer, island)).or_default();
            if let Err(i) = waiting.binary_search(&seq) {
                waiting.insert(i, seq);
            }
            return;
        }
        let Some(CrossNotify { arrived: Some(s), .. }) = self.vis.cross.remove(&(writer, seq)) else { return };
        self.apply_signal(key.time, &s);
        self.write_landed(key, chip, writer, s.ids);
    }

    /// Write or notify `ids` of `writer` landed on `chip` now. Another island counts it among
    /// the writer's landings there (which may let the writer's notifies waiting there go on);
    /// the writer learns it at once within its island, one route latency later across a
    /// switch.
    pub(super) fn write_landed(&mut self, key: Key, chip: usize, writer: usize, ids: WriteIds) {
        let home = self.chip_of(writer);
        if self.vis.one_island || self.vis.island(chip) == self.vis.island(home) {
            return self.landed(key, writer, ids.seq);
        }
        let island = self.vis.island(chip);
        if let Some(Away { nth, .. }) = ids.away {
            self.vis.landings.entry((writer, island)).or_default().mark(nth);
            self.wake_cross(key, writer, island);
        }
        let at = key.time + self.net.news_delay(chip, home);
        self.push_derived(at, key, Event::Acked { writer, seq: ids.seq });
    }

    /// Applies, in issue order, `writer`'s notifies waiting on `island` that now may go on.
    fn wake_cross(&mut self, key: Key, writer: usize, island: u32) {
        let Some(waiting) = self.vis.waiting.remove(&(writer, island)) else { return };
        for seq in waiting {
            self.try_cross(key, writer, seq);
        }
    }

    /// Sends the releases of `writer`'s cross-island notifies whose earlier data writes to
    /// other islands the writer now knows to have landed; each reaches its island one route
    /// latency later. Data writes in flight before a notify to island J block it if they go
    /// elsewhere: with `e1` the first in flight (to island `i1`) and `e2` the first to another
    /// island than `i1`, a notify `n < e2` is free iff `n < e1` or J is `i1`, and every notify
    /// from `e2` on waits.
    fn release_cross(&mut self, key: Key, writer: usize) {
        if self.vis.unreleased[writer].is_empty() {
            return;
        }
        let (e1, i1, e2) = self.vis.data_fronts(writer);
        let home = self.chip_of(writer);
        let mut kept = Vec::new();
        for (seq, chip) in std::mem::take(&mut self.vis.unreleased[writer]) {
            if seq >= e2 || (seq > e1 && self.vis.island(chip) != i1) {
                kept.push((seq, chip));
                continue;
            }
            let at = key.time + self.net.news_delay(home, chip);
            self.push_derived(at, key, Event::Release { writer, seq, chip });
        }
        self.vis.unreleased[writer] = kept;
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

    /// `actor` knows now (`key`'s time) that its write or notify `seq` has landed: release
    /// what waited for it.
    pub(super) fn landed(&mut self, key: Key, actor: usize, seq: u64) {
        let t = key.time;
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
        self.release_cross(key, actor);
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
    use super::super::testkit::{cell, engine, islands_engine, ns, window};
    use super::super::wake::Wake;
    use super::*;
    use crate::api::request::OpKind;
    use crate::base::addr::MemKey;
    use crate::base::payload::Payload;

    fn op(op: OpKind, t: SimTime) -> OpAt {
        OpAt { op, time: t, caller: None }
    }

    /// The key of an event of actor 0 at `t`.
    fn at(t: SimTime) -> Key {
        Key::new(t, 0, 0, 0)
    }

    /// Actor 0 issues a 16-byte write into member 1's window, then a notify (AtomicAdd 1) of
    /// member 1's cell at offset 32; the notify reaches its cell first, at 5 ns.
    fn write_then_early_notify(relaxed: bool) -> (Engine, WriteIds) {
        let mut eng = engine(2, relaxed);
        let write = eng.issue_write(0, &window(1, 0, 16), false, op(OpKind::Put, ns(1)));
        let sig = cell(1, 32);
        let ids = eng.issue_notify(0, &sig, NotifyOp::AtomicAdd, 1, op(OpKind::Notify, ns(2)));
        assert_eq!((write.seq, ids.seq), (0, 1), "writes and notifies share one issue order");
        // Only a core's own cells are tracked: it waits and tests nothing else.
        assert!(!eng.vis.notifying(0, std::slice::from_ref(&sig)));
        eng.signal_arrived(
            at(ns(5)),
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
        eng.mem.write(&window(1, 0, 16), &Payload::of(vec![7u8; 16]), None);
        eng.landed(at(ns(9)), 0, write.seq);
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
        assert_eq!(eng.mem.read(&window(1, 0, 16)), Payload::of(vec![7u8; 16]));
    }

    #[test]
    fn relaxed_ordering_lets_a_notify_overtake_the_payload() {
        let (mut eng, write) = write_then_early_notify(true);
        let sig = cell(1, 32);
        assert_eq!(eng.mem.cell(&sig), 1, "applied on arrival");
        assert_eq!(eng.vis.inflight[0].0, vec![write.seq], "the write is still in flight");
        eng.landed(at(ns(9)), 0, write.seq);
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
        eng.landed(at(ns(6)), 0, b.seq);
        assert!(eng.take_wakes().is_empty(), "write `a` is still in flight");
        eng.landed(at(ns(8)), 0, a.seq);
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

    /// The times notifies of chip 0's actor were applied to cell 32 of member 1's window.
    fn applied(eng: &Engine) -> Vec<SimTime> {
        eng.signals.last_writers(MemKey::win(0, 1, 1), 32).iter().map(|w| w.time).collect()
    }

    fn notify_to_1(ids: WriteIds) -> SignalLand {
        SignalLand {
            cell: cell(1, 32),
            value: 1,
            op: NotifyOp::AtomicAdd,
            writer: 0,
            trace_id: TraceId::default(),
            ids,
        }
    }

    #[test]
    fn across_a_switch_a_writer_learns_of_its_landing_one_route_latency_later() {
        let mut eng = islands_engine(2);
        let w = eng.issue_write(0, &window(1, 0, 16), false, op(OpKind::Put, ns(1)));
        eng.fence(0, ns(2));
        eng.write_landed(at(ns(9)), 1, 0, w);
        assert!(eng.take_wakes().is_empty(), "landed on chip 1, not known on chip 0 yet");
        assert_eq!(eng.vis.inflight[0].0, vec![w.seq]);
        eng.pump();
        assert!(
            matches!(eng.take_wakes().as_slice(), [Wake::Reply { actor: 0, at, reply: Reply::Done }] if *at == ns(1009)),
            "the fence returns when the news is back"
        );
    }

    #[test]
    fn a_notify_after_a_put_to_the_same_island_waits_only_for_the_put_there() {
        let mut eng = islands_engine(2);
        let w = eng.issue_write(0, &window(1, 0, 16), false, op(OpKind::Put, ns(1)));
        let n = eng.issue_notify(0, &cell(1, 32), NotifyOp::AtomicAdd, 1, op(OpKind::Notify, ns(2)));
        assert_eq!((w.away.map(|a| a.nth), n.away.map(|a| a.nth)), (Some(0), Some(1)), "the second write to island 1");
        eng.signal_arrived(at(ns(5)), notify_to_1(n));
        assert_eq!(eng.mem.cell(&cell(1, 32)), 0, "held behind the put");
        eng.write_landed(at(ns(9)), 1, 0, w);
        assert_eq!(applied(&eng), vec![ns(9)], "applied as the put lands, no round trip");
    }

    #[test]
    fn a_notify_after_a_write_to_another_island_waits_for_the_writers_release() {
        let mut eng = islands_engine(3);
        let w = eng.issue_write(0, &window(2, 0, 16), false, op(OpKind::Put, ns(1)));
        let n = eng.issue_notify(0, &cell(1, 32), NotifyOp::AtomicAdd, 1, op(OpKind::Notify, ns(2)));
        eng.signal_arrived(at(ns(5)), notify_to_1(n));
        eng.write_landed(at(ns(9)), 2, 0, w);
        assert!(applied(&eng).is_empty(), "chip 1 cannot know yet");
        eng.pump();
        // Landed on chip 2 at 9 ns, known on chip 0 at 1009, the release on chip 1 at 2009.
        assert_eq!(applied(&eng), vec![ns(2009)]);
        assert!(eng.vis.inflight[0].is_empty(), "the notify's own landing is known on chip 0 at 3009");
        assert!(eng.vis.cross.is_empty() && eng.vis.waiting.is_empty());
    }

    /// Notifies wait for data, not for each other's news: two notifies to two islands with no
    /// write in flight are applied as they arrive, in either order.
    #[test]
    fn notifies_to_two_islands_do_not_wait_for_each_others_news() {
        let mut eng = islands_engine(3);
        let a = eng.issue_notify(0, &cell(1, 32), NotifyOp::AtomicAdd, 1, op(OpKind::Notify, ns(1)));
        let b = eng.issue_notify(0, &cell(2, 32), NotifyOp::AtomicAdd, 1, op(OpKind::Notify, ns(2)));
        let to_2 = SignalLand { cell: cell(2, 32), ..notify_to_1(b) };
        eng.signal_arrived(at(ns(5)), to_2);
        eng.signal_arrived(at(ns(6)), notify_to_1(a));
        let on_2: Vec<SimTime> = eng.signals.last_writers(MemKey::win(0, 2, 2), 32).iter().map(|w| w.time).collect();
        assert_eq!((on_2, applied(&eng)), (vec![ns(5)], vec![ns(6)]));
    }
}
