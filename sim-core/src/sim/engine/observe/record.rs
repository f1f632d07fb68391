//! The facts of a split run's partition, kept to be replayed in one engine's order.
//!
//! The checker and the tracer are one state for the whole run (shadow memory, the timeline),
//! and a user's observer is one object, so a partition of a split run feeds none of them: it
//! records every fact, owned, stamped
//! with the key of the event whose application emitted it. The merge interleaves the
//! partitions' recordings as one engine applies events (always the smallest key among the
//! partitions' next events, see [`interleave`]), numbers the ids again by first appearance,
//! and replays the result into one checker, one tracer and the user's observers, which then
//! see exactly what one engine would have shown them (after the run, not as it goes).
//!
//! Each partition numbers its ids from its own base (the partition in the high bits), so an
//! id that travels with an event to another partition (a write landing there) stays
//! distinct from that partition's own. Over processes a recording travels as bytes with the
//! partition's result (serde, the parts as crossings carry them: `wire.rs`).

use super::{Observers, OpAt};
use crate::base::addr::{CellRef, Place};
use crate::base::signal::{Cond, NotifyOp};
use crate::base::time::SimTime;
use crate::results::stats::DispatchRecord;
use crate::results::trace::LinkBusy;
use crate::sim::observe::{
    BlockStart, CoreId, EqWaiters, MemRegion, Observe, OpId, OpInfo, SdmaId, SignalCell, SignalCells, WriteId,
};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::Arc;

/// Where a fact sits in one engine's order: the key of the event that emitted it, as
/// `(time, actor, seq)` packed and `sub`.
pub(crate) type Stamp = (u128, u64);

/// One fact of the [`Observe`] trait, owning what the trait lends.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) enum Fact {
    DispatchStarted {
        rank: usize,
        tasks: usize,
        instance: usize,
    },
    TaskPlaced {
        rank: usize,
        task: usize,
        deps: Vec<usize>,
    },
    BlockStarted(OwnedBlock),
    BlockEnded {
        actor: usize,
        task: usize,
    },
    DeferredReady {
        rank: usize,
        task: usize,
        #[serde(with = "crate::sim::engine::wire::facts::cell")]
        cell: CellRef,
    },
    DispatchEnded {
        rank: usize,
    },
    OpStarted(#[serde(with = "crate::sim::engine::wire::facts::op_info")] OpInfo),
    OpSpan(#[serde(with = "crate::sim::engine::wire::facts::op_info")] OpInfo, SimTime),
    CopyStarted(#[serde(with = "crate::sim::engine::wire::facts::op_info")] OpInfo),
    Resumed {
        actor: usize,
        at: SimTime,
    },
    LoadIssued {
        actor: usize,
        from: usize,
        bytes: u64,
    },
    StorePosted {
        actor: usize,
        op: OpId,
        to: usize,
        bytes: u64,
    },
    ChunkRead {
        actor: usize,
        from: usize,
        bytes: u64,
    },
    ChunkStored {
        actor: usize,
        to: usize,
        bytes: u64,
    },
    Read {
        actor: usize,
        #[serde(with = "crate::sim::engine::wire::facts::place")]
        src: Place,
        #[serde(with = "crate::sim::engine::wire::facts::op_at")]
        at: OpAt,
    },
    WriteIssued {
        actor: usize,
        id: WriteId,
        #[serde(with = "crate::sim::engine::wire::facts::place")]
        dst: Place,
        atomic: bool,
        #[serde(with = "crate::sim::engine::wire::facts::op_at")]
        at: OpAt,
    },
    WriteLanded(WriteId),
    NotifyPosted {
        actor: usize,
        op: OpId,
        to: usize,
    },
    NotifyIssued {
        actor: usize,
        id: WriteId,
        #[serde(with = "crate::sim::engine::wire::facts::cell")]
        cell: CellRef,
        op: NotifyOp,
        value: i32,
        #[serde(with = "crate::sim::engine::wire::facts::op_at")]
        at: OpAt,
    },
    NotifyLanded {
        id: WriteId,
        #[serde(with = "crate::sim::engine::wire::facts::cell")]
        cell: CellRef,
        old_new: (i32, i32),
        eq: Vec<(i32, usize)>,
    },
    WaitStarted {
        actor: usize,
        op: OpId,
        #[serde(with = "crate::sim::engine::wire::facts::cells")]
        cells: Vec<CellRef>,
        cond: Cond,
        at: SimTime,
    },
    WaitHeldAtOnce {
        actor: usize,
        #[serde(with = "crate::sim::engine::wire::facts::cells")]
        cells: Vec<CellRef>,
        cond: Cond,
        at: SimTime,
    },
    WaitReleased {
        actor: usize,
        op: OpId,
        #[serde(with = "crate::sim::engine::wire::facts::cells")]
        cells: Vec<CellRef>,
        cond: Cond,
        at: SimTime,
        by: Option<OpId>,
    },
    TestPolled {
        actor: usize,
        op: OpId,
        #[serde(with = "crate::sim::engine::wire::facts::cells")]
        cells: Vec<CellRef>,
        cond: Cond,
        holds: bool,
        at: SimTime,
    },
    ExpectClear(#[serde(with = "crate::sim::engine::wire::facts::cells")] Vec<CellRef>),
    SdmaPosted {
        actor: usize,
        id: SdmaId,
        op: OpId,
        get: bool,
        peer: Option<usize>,
        bytes: u64,
    },
    SdmaMoved {
        id: SdmaId,
        write: WriteId,
        #[serde(with = "crate::sim::engine::wire::facts::place")]
        src: Place,
        #[serde(with = "crate::sim::engine::wire::facts::place")]
        dst: Place,
        atomic: bool,
        #[serde(with = "crate::sim::engine::wire::facts::op_at")]
        at: OpAt,
    },
    SdmaCompleted {
        actor: usize,
        id: SdmaId,
        retired: bool,
    },
    LinkBusy(LinkBusy),
}

/// A [`BlockStart`], owned.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct OwnedBlock {
    pub(crate) actor: usize,
    pub(crate) task: usize,
    #[serde(with = "crate::sim::engine::wire::facts::name")]
    pub(crate) name: Arc<str>,
    pub(crate) block: usize,
    pub(crate) lane: usize,
    pub(crate) lanes: usize,
    #[serde(with = "crate::sim::engine::wire::facts::dispatch")]
    pub(crate) dispatch: Option<(Arc<str>, usize)>,
}

/// What one partition recorded.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Recording {
    /// Cores per chip.
    pub(crate) cores: usize,
    /// The facts, each with the stamp of the event that emitted it, in the order emitted.
    pub(crate) facts: Vec<(Stamp, Fact)>,
    /// Facts emitted while no event was being applied (none is expected): their place in
    /// one engine's order is unknown, so the merge refuses the recording.
    pub(crate) stray: usize,
}

/// A partition's observer: keeps every fact with the key of the event being applied.
#[derive(Debug)]
pub(crate) struct Recorder {
    /// The event being applied, if any.
    at: Option<Stamp>,
    /// Whether the run is traced (kernels then report their local work).
    pub(super) traced: bool,
    rec: Recording,
}

impl Recorder {
    pub(super) fn new(traced: bool) -> Recorder {
        Recorder { at: None, traced, rec: Recording::default() }
    }

    /// Facts from now on are emitted by the event stamped `at` (none: between events).
    #[inline]
    pub(super) fn applying(&mut self, at: Option<Stamp>) {
        self.at = at;
    }

    /// What was recorded.
    pub(super) fn finish(self, cores: usize) -> Recording {
        Recording { cores, ..self.rec }
    }

    fn push(&mut self, f: Fact) {
        match self.at {
            Some(s) => self.rec.facts.push((s, f)),
            None => self.rec.stray += 1,
        }
    }

    pub(super) fn link(&mut self, busy: &LinkBusy) {
        self.push(Fact::LinkBusy(busy.clone()));
    }
}

impl Observe for Recorder {
    fn dispatch_started(&mut self, rank: usize, tasks: usize, instance: usize) {
        self.push(Fact::DispatchStarted { rank, tasks, instance });
    }
    fn task_placed(&mut self, rank: usize, task: usize, deps: &[usize]) {
        self.push(Fact::TaskPlaced { rank, task, deps: deps.to_vec() });
    }
    fn block_started(&mut self, b: &BlockStart<'_>) {
        self.push(Fact::BlockStarted(OwnedBlock {
            actor: b.core.actor,
            task: b.task,
            name: b.name.clone(),
            block: b.block,
            lane: b.lane,
            lanes: b.lanes,
            dispatch: b.dispatch.map(|(n, i)| (n.clone(), i)),
        }));
    }
    fn block_ended(&mut self, core: CoreId, task: usize) {
        self.push(Fact::BlockEnded { actor: core.actor, task });
    }
    fn deferred_ready(&mut self, rank: usize, task: usize, cell: SignalCell<'_>) {
        self.push(Fact::DeferredReady { rank, task, cell: cell.0.clone() });
    }
    fn dispatch_ended(&mut self, rank: usize) {
        self.push(Fact::DispatchEnded { rank });
    }
    fn op_started(&mut self, op: &OpInfo) {
        self.push(Fact::OpStarted(op.clone()));
    }
    fn op_span(&mut self, op: &OpInfo, end: SimTime) {
        self.push(Fact::OpSpan(op.clone(), end));
    }
    fn resumed(&mut self, core: CoreId, at: SimTime) {
        self.push(Fact::Resumed { actor: core.actor, at });
    }
    fn load_issued(&mut self, core: CoreId, from: usize, bytes: u64) {
        self.push(Fact::LoadIssued { actor: core.actor, from, bytes });
    }
    fn store_posted(&mut self, core: CoreId, op: OpId, to: usize, bytes: u64) {
        self.push(Fact::StorePosted { actor: core.actor, op, to, bytes });
    }
    fn copy_started(&mut self, op: &OpInfo) {
        self.push(Fact::CopyStarted(op.clone()));
    }
    fn chunk_read(&mut self, core: CoreId, from: usize, bytes: u64) {
        self.push(Fact::ChunkRead { actor: core.actor, from, bytes });
    }
    fn chunk_stored(&mut self, core: CoreId, to: usize, bytes: u64) {
        self.push(Fact::ChunkStored { actor: core.actor, to, bytes });
    }
    fn read(&mut self, core: CoreId, src: MemRegion<'_>, at: OpAt) {
        self.push(Fact::Read { actor: core.actor, src: src.0.clone(), at });
    }
    fn write_issued(&mut self, core: CoreId, id: WriteId, dst: MemRegion<'_>, atomic: bool, at: OpAt) {
        self.push(Fact::WriteIssued { actor: core.actor, id, dst: dst.0.clone(), atomic, at });
    }
    fn write_landed(&mut self, id: WriteId) {
        self.push(Fact::WriteLanded(id));
    }
    fn notify_posted(&mut self, core: CoreId, op: OpId, to: usize) {
        self.push(Fact::NotifyPosted { actor: core.actor, op, to });
    }
    fn notify_issued(&mut self, core: CoreId, id: WriteId, cell: SignalCell<'_>, op: NotifyOp, value: i32, at: OpAt) {
        self.push(Fact::NotifyIssued { actor: core.actor, id, cell: cell.0.clone(), op, value, at });
    }
    fn notify_landed(&mut self, id: WriteId, cell: SignalCell<'_>, old_new: (i32, i32), eq: EqWaiters<'_>) {
        let eq = (eq.list)();
        self.push(Fact::NotifyLanded { id, cell: cell.0.clone(), old_new, eq });
    }
    fn wait_started(&mut self, core: CoreId, op: OpId, cells: SignalCells<'_>, cond: Cond, at: SimTime) {
        self.push(Fact::WaitStarted { actor: core.actor, op, cells: cells.0.to_vec(), cond, at });
    }
    fn wait_held_at_once(&mut self, core: CoreId, cells: SignalCells<'_>, cond: Cond, at: SimTime) {
        self.push(Fact::WaitHeldAtOnce { actor: core.actor, cells: cells.0.to_vec(), cond, at });
    }
    fn wait_released(
        &mut self,
        core: CoreId,
        op: OpId,
        (cells, cond): (SignalCells<'_>, Cond),
        at: SimTime,
        by: Option<OpId>,
    ) {
        self.push(Fact::WaitReleased { actor: core.actor, op, cells: cells.0.to_vec(), cond, at, by });
    }
    fn test_polled(
        &mut self,
        core: CoreId,
        op: OpId,
        (cells, cond): (SignalCells<'_>, Cond),
        holds: bool,
        at: SimTime,
    ) {
        self.push(Fact::TestPolled { actor: core.actor, op, cells: cells.0.to_vec(), cond, holds, at });
    }
    fn expect_clear(&mut self, cells: SignalCells<'_>) {
        self.push(Fact::ExpectClear(cells.0.to_vec()));
    }
    fn sdma_posted(&mut self, core: CoreId, (id, op): (SdmaId, OpId), get: bool, peer: Option<usize>, bytes: u64) {
        self.push(Fact::SdmaPosted { actor: core.actor, id, op, get, peer, bytes });
    }
    fn sdma_moved(
        &mut self,
        (id, write): (SdmaId, WriteId),
        (src, dst): (MemRegion<'_>, MemRegion<'_>),
        atomic: bool,
        at: OpAt,
    ) {
        self.push(Fact::SdmaMoved { id, write, src: src.0.clone(), dst: dst.0.clone(), atomic, at });
    }
    fn sdma_completed(&mut self, core: CoreId, id: SdmaId, retired: bool) {
        self.push(Fact::SdmaCompleted { actor: core.actor, id, retired });
    }
}

/// The partitions' facts in one engine's order.
///
/// Each recording is in its partition's order of application. One engine applies, at every
/// step, the smallest key it holds; a partition's next event is either held then, or is
/// caused later (by a running core's request, never before that core's bound; or by another
/// partition's event, at least the lookahead later), so it is no smaller. One engine's order
/// is therefore the merge that always takes the smallest next key among the partitions
/// (keys are unique, so there is no tie; a tie means the recordings are not one run's).
pub(crate) fn interleave(parts: Vec<Recording>) -> Result<Vec<Fact>, String> {
    if let Some((p, r)) = parts.iter().enumerate().find(|(_, r)| r.stray > 0) {
        return Err(format!("partition {p} reported {} facts outside any event", r.stray));
    }
    let total = parts.iter().map(|r| r.facts.len()).sum();
    let mut queues: Vec<VecDeque<(Stamp, Fact)>> = parts.into_iter().map(|r| r.facts.into()).collect();
    let mut out = Vec::with_capacity(total);
    loop {
        let mut best: Option<(usize, Stamp)> = None;
        for (p, q) in queues.iter().enumerate() {
            let Some(&(s, _)) = q.front() else { continue };
            match best {
                Some((_, b)) if s == b => {
                    return Err(format!("two partitions applied an event with one key ({s:?}): not one run"));
                }
                Some((_, b)) if s > b => {}
                _ => best = Some((p, s)),
            }
        }
        let Some((p, s)) = best else { return Ok(out) };
        let q = &mut queues[p];
        while q.front().is_some_and(|&(t, _)| t == s) {
            if let Some((_, f)) = q.pop_front() {
                out.push(f);
            }
        }
    }
}

/// The run's dispatch records in the order one engine kept them: the order their
/// dispatches ended in `facts` (each chip's records are in order already).
pub(crate) fn order_records(records: Vec<DispatchRecord>, facts: &[Fact], chips: usize) -> Vec<DispatchRecord> {
    let mut by_chip: Vec<VecDeque<DispatchRecord>> = (0..chips).map(|_| VecDeque::new()).collect();
    let mut rest = Vec::new();
    for r in records {
        match by_chip.get_mut(r.chip) {
            Some(q) => q.push_back(r),
            None => rest.push(r),
        }
    }
    let mut out = Vec::with_capacity(rest.len());
    for f in facts {
        if let Fact::DispatchEnded { rank } = f
            && let Some(r) = by_chip.get_mut(*rank).and_then(VecDeque::pop_front)
        {
            out.push(r);
        }
    }
    out.extend(by_chip.into_iter().flatten());
    out.append(&mut rest);
    out
}

/// Ids as one engine would have numbered them: in order of first appearance.
#[derive(Default)]
struct Renumber {
    op: FxHashMap<OpId, OpId>,
    write: FxHashMap<WriteId, WriteId>,
    sdma: FxHashMap<SdmaId, SdmaId>,
}

impl Observers {
    fn op_id(&mut self, map: &mut Renumber, id: OpId) -> OpId {
        *map.op.entry(id).or_insert_with(|| self.ids.op())
    }

    fn write_id(&mut self, map: &mut Renumber, id: WriteId) -> WriteId {
        *map.write.entry(id).or_insert_with(|| self.ids.write())
    }

    fn sdma_id(&mut self, map: &mut Renumber, id: SdmaId) -> SdmaId {
        *map.sdma.entry(id).or_insert_with(|| self.ids.sdma())
    }

    fn op_info(&mut self, map: &mut Renumber, op: OpInfo) -> OpInfo {
        OpInfo { id: self.op_id(map, op.id), ..op }
    }

    /// Feeds `facts` (in one engine's order) to these observers, numbering ids again.
    pub(crate) fn replay(&mut self, facts: Vec<Fact>) {
        let mut map = Renumber::default();
        for f in facts {
            self.replay_one(&mut map, f);
        }
    }

    fn replay_one(&mut self, map: &mut Renumber, f: Fact) {
        let cores = self.cores;
        let core = move |actor| CoreId::new(actor, cores);
        match f {
            Fact::DispatchStarted { rank, tasks, instance } => fan!(self.dispatch_started(rank, tasks, instance)),
            Fact::TaskPlaced { rank, task, deps } => fan!(self.task_placed(rank, task, &deps)),
            Fact::BlockStarted(b) => {
                let start = BlockStart {
                    core: core(b.actor),
                    task: b.task,
                    name: &b.name,
                    block: b.block,
                    lane: b.lane,
                    lanes: b.lanes,
                    dispatch: b.dispatch.as_ref().map(|(n, i)| (n, *i)),
                };
                fan!(self.block_started(&start));
            }
            Fact::BlockEnded { actor, task } => fan!(self.block_ended(core(actor), task)),
            Fact::DeferredReady { rank, task, cell } => fan!(self.deferred_ready(rank, task, SignalCell(&cell))),
            Fact::DispatchEnded { rank } => fan!(self.dispatch_ended(rank)),
            Fact::OpStarted(op) => {
                let op = self.op_info(map, op);
                fan!(self.op_started(&op));
            }
            Fact::OpSpan(op, end) => {
                let op = self.op_info(map, op);
                fan!(self.op_span(&op, end));
            }
            Fact::CopyStarted(op) => {
                let op = self.op_info(map, op);
                fan!(self.copy_started(&op));
            }
            Fact::Resumed { actor, at } => fan!(self.resumed(core(actor), at)),
            Fact::LoadIssued { actor, from, bytes } => fan!(self.load_issued(core(actor), from, bytes)),
            Fact::StorePosted { actor, op, to, bytes } => {
                let op = self.op_id(map, op);
                fan!(self.store_posted(core(actor), op, to, bytes));
            }
            Fact::ChunkRead { actor, from, bytes } => fan!(self.chunk_read(core(actor), from, bytes)),
            Fact::ChunkStored { actor, to, bytes } => fan!(self.chunk_stored(core(actor), to, bytes)),
            Fact::Read { actor, src, at } => fan!(self.read(core(actor), MemRegion(&src), at)),
            Fact::WriteIssued { actor, id, dst, atomic, at } => {
                let id = self.write_id(map, id);
                fan!(self.write_issued(core(actor), id, MemRegion(&dst), atomic, at));
            }
            Fact::WriteLanded(id) => {
                let id = self.write_id(map, id);
                fan!(self.write_landed(id));
            }
            Fact::NotifyPosted { actor, op, to } => {
                let op = self.op_id(map, op);
                fan!(self.notify_posted(core(actor), op, to));
            }
            Fact::NotifyIssued { actor, id, cell, op, value, at } => {
                let id = self.write_id(map, id);
                fan!(self.notify_issued(core(actor), id, SignalCell(&cell), op, value, at));
            }
            Fact::NotifyLanded { id, cell, old_new, eq } => {
                let id = self.write_id(map, id);
                let list = || eq.clone();
                let eq = EqWaiters { list: &list, cores: self.cores };
                fan!(self.notify_landed(id, SignalCell(&cell), old_new, eq));
            }
            Fact::WaitStarted { actor, op, cells, cond, at } => {
                let op = self.op_id(map, op);
                fan!(self.wait_started(core(actor), op, SignalCells(&cells), cond, at));
            }
            Fact::WaitHeldAtOnce { actor, cells, cond, at } => {
                fan!(self.wait_held_at_once(core(actor), SignalCells(&cells), cond, at));
            }
            Fact::WaitReleased { actor, op, cells, cond, at, by } => {
                let op = self.op_id(map, op);
                let by = by.map(|b| self.op_id(map, b));
                fan!(self.wait_released(core(actor), op, (SignalCells(&cells), cond), at, by));
            }
            Fact::TestPolled { actor, op, cells, cond, holds, at } => {
                let op = self.op_id(map, op);
                fan!(self.test_polled(core(actor), op, (SignalCells(&cells), cond), holds, at));
            }
            Fact::ExpectClear(cells) => fan!(self.expect_clear(SignalCells(&cells))),
            Fact::SdmaPosted { actor, id, op, get, peer, bytes } => {
                let op = self.op_id(map, op);
                let id = self.sdma_id(map, id);
                fan!(self.sdma_posted(core(actor), (id, op), get, peer, bytes));
            }
            Fact::SdmaMoved { id, write, src, dst, atomic, at } => {
                let id = self.sdma_id(map, id);
                let write = self.write_id(map, write);
                fan!(self.sdma_moved((id, write), (MemRegion(&src), MemRegion(&dst)), atomic, at));
            }
            Fact::SdmaCompleted { actor, id, retired } => {
                let id = self.sdma_id(map, id);
                fan!(self.sdma_completed(core(actor), id, retired));
            }
            Fact::LinkBusy(busy) => self.link_busy(busy),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recording of facts `(stamp, rank)`, each a `DispatchEnded` of that rank (a label).
    fn rec(facts: &[(u128, usize)]) -> Recording {
        let facts = facts.iter().map(|&(s, rank)| ((s, 0), Fact::DispatchEnded { rank })).collect();
        Recording { cores: 1, facts, stray: 0 }
    }

    fn labels(facts: &[Fact]) -> Vec<usize> {
        facts.iter().map(|f| if let Fact::DispatchEnded { rank } = f { *rank } else { usize::MAX }).collect()
    }

    /// The smallest next key goes first; a partition's own order is kept even where its keys
    /// go down (an event caused at the same time on a chip numbered lower), and the facts of
    /// one event stay together.
    #[test]
    fn partitions_interleave_by_their_smallest_next_key_keeping_their_own_order() {
        let p0 = rec(&[(2, 0), (2, 1), (5, 2), (3, 3)]);
        let p1 = rec(&[(4, 10), (6, 11)]);
        let got = interleave(vec![p0, p1]).unwrap();
        assert_eq!(labels(&got), [0, 1, 10, 2, 3, 11]);
    }

    #[test]
    fn recordings_that_are_not_one_runs_are_refused() {
        let tie = interleave(vec![rec(&[(1, 0)]), rec(&[(1, 1)])]).unwrap_err();
        assert!(tie.contains("one key"), "{tie}");
        let stray = interleave(vec![rec(&[(1, 0)]), Recording { stray: 2, ..rec(&[]) }]).unwrap_err();
        assert!(stray.contains("partition 1 reported 2 facts outside any event"), "{stray}");
    }

    /// Records of each chip are taken in the order their dispatches ended in the facts.
    #[test]
    fn dispatch_records_follow_the_order_their_dispatches_ended() {
        let record = |chip, index| DispatchRecord {
            chip,
            index,
            name: String::new(),
            start: SimTime::ZERO,
            end: SimTime::ZERO,
            tasks: Vec::new(),
        };
        let records = vec![record(0, 0), record(0, 1), record(1, 0)];
        let ended = [1, 0, 0].map(|rank| Fact::DispatchEnded { rank });
        let got: Vec<(usize, usize)> = order_records(records, &ended, 2).iter().map(|r| (r.chip, r.index)).collect();
        assert_eq!(got, [(1, 0), (0, 0), (0, 1)]);
    }
}
