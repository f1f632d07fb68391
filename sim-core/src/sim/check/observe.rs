//! The checker as an [`Observe`]r: each fact the engine reports becomes one of its hooks,
//! with the addresses the public views wrap.

use super::Checker;
use super::access::Op;
use super::shadow::Who;
use crate::base::signal::{Cond, NotifyOp};
use crate::base::time::SimTime;
use crate::sim::observe::{
    BlockStart, CoreId, EqWaiters, MemRegion, Observe, OpAt, OpId, SdmaId, SignalCell, SignalCells, WriteId,
};
use std::sync::Arc;

/// What a data access is, for the checker's findings.
fn op(at: OpAt) -> Op {
    Op { name: at.op.name(), time: at.time, location: at.caller }
}

impl Observe for Checker {
    fn dispatch_started(&mut self, rank: usize, tasks: usize, instance: usize) {
        self.dispatch_start(rank, tasks, instance);
    }

    fn task_placed(&mut self, rank: usize, task: usize, deps: &[usize]) {
        self.task_start(rank, task, deps.iter().copied());
    }

    fn block_started(&mut self, b: &BlockStart<'_>) {
        let rank = b.core.rank();
        let (dispatch, instance) = b.dispatch.map_or((Arc::from("?"), 0), |(n, i)| (n.clone(), i));
        let who = Who { rank, block: b.block, task: b.name.clone(), dispatch, instance };
        self.block_start(b.core.actor, rank, b.task, who, (b.lane, b.lanes));
    }

    fn block_ended(&mut self, core: CoreId, task: usize) {
        self.block_end(core.actor, core.rank(), task);
    }

    fn deferred_ready(&mut self, rank: usize, task: usize, cell: SignalCell<'_>) {
        Checker::deferred_ready(self, rank, task, cell.0);
    }

    fn dispatch_ended(&mut self, rank: usize) {
        self.dispatch_end(rank);
    }

    fn read(&mut self, core: CoreId, src: MemRegion<'_>, at: OpAt) {
        Checker::read(self, core.actor, src.0, op(at));
    }

    fn write_issued(&mut self, core: CoreId, id: WriteId, dst: MemRegion<'_>, atomic: bool, at: OpAt) {
        self.write_issue(core.actor, id.get(), dst.0, atomic, op(at));
    }

    fn write_landed(&mut self, id: WriteId) {
        self.write_land(id.get());
    }

    fn notify_issued(&mut self, core: CoreId, id: WriteId, cell: SignalCell<'_>, nop: NotifyOp, value: i32, at: OpAt) {
        self.notify_issue((core.actor, id.get()), cell.0, nop, value, op(at));
    }

    fn notify_landed(&mut self, id: WriteId, cell: SignalCell<'_>, old_new: (i32, i32), eq: EqWaiters<'_>) {
        self.notify_land(id.get(), cell.0, old_new, &eq.raw());
    }

    fn wait_started(&mut self, core: CoreId, _op: OpId, cells: SignalCells<'_>, cond: Cond, at: SimTime) {
        self.wait_begin(core.actor, cells.0, cond, at);
    }

    fn wait_held_at_once(&mut self, core: CoreId, cells: SignalCells<'_>, cond: Cond, at: SimTime) {
        self.wait_done(core.actor, cells.0, cond, true, at);
    }

    fn wait_released(
        &mut self,
        core: CoreId,
        _op: OpId,
        (cells, cond): (SignalCells<'_>, Cond),
        at: SimTime,
        _by: Option<OpId>,
    ) {
        self.wait_done(core.actor, cells.0, cond, false, at);
    }

    fn test_polled(
        &mut self,
        core: CoreId,
        _op: OpId,
        (cells, cond): (SignalCells<'_>, Cond),
        holds: bool,
        at: SimTime,
    ) {
        if holds {
            self.wait_begin(core.actor, cells.0, cond, at);
            self.wait_done(core.actor, cells.0, cond, false, at);
        }
    }

    fn expect_clear(&mut self, cells: SignalCells<'_>) {
        Checker::expect_clear(self, cells.0);
    }

    fn sdma_posted(&mut self, core: CoreId, (id, _op): (SdmaId, OpId), _get: bool, _peer: Option<usize>, _bytes: u64) {
        self.sdma_issue(core.actor, id.get());
    }

    fn sdma_moved(
        &mut self,
        (id, w): (SdmaId, WriteId),
        (src, dst): (MemRegion<'_>, MemRegion<'_>),
        atomic: bool,
        at: OpAt,
    ) {
        self.sdma_move((id.get(), w.get()), (src.0, dst.0), atomic, op(at));
    }

    fn sdma_completed(&mut self, core: CoreId, id: SdmaId, retired: bool) {
        self.sdma_complete(core.actor, id.get(), retired);
    }
}
