//! Recording a run's timeline: operation spans, causal flows, link occupancy. The tracer is
//! an [`Observe`]r; its span ids are the [`OpId`]s the observer layer assigns.

use crate::api::request::OpKind;
use crate::base::signal::Cond;
use crate::base::time::SimTime;
use crate::results::trace::{Flow, FlowKind, LinkBusy, OpSpan, Trace};
use crate::sim::observe::{CoreId, Observe, OpId, OpInfo, SignalCells};

/// An operation that has started and will end at its reply.
#[derive(Clone, Debug)]
struct Open {
    id: u64,
    name: &'static str,
    start: SimTime,
    bytes: u64,
    peer: Option<usize>,
}

/// The recorder of one traced run.
pub(crate) struct Tracer {
    trace: Trace,
    /// Per actor: the blocking operation waiting for its reply.
    open: Vec<Option<Open>>,
    /// Per actor: its last remote write not yet followed by a notify.
    last_write: Vec<Option<u64>>,
}

impl Tracer {
    pub(crate) fn new(actors: usize) -> Tracer {
        Tracer { trace: Trace::default(), open: vec![None; actors], last_write: vec![None; actors] }
    }

    /// Keeps a link's busy interval (moved: the observer layer hands the record over once
    /// every other observer has seen it).
    pub(crate) fn link(&mut self, busy: LinkBusy) {
        self.trace.links.push(busy);
    }

    /// The finished timeline (operations in start order).
    pub(crate) fn finish(mut self) -> Trace {
        self.trace.ops.sort_by_key(|o| (o.start, o.chip, o.core, o.id));
        self.trace
    }
}

impl Observe for Tracer {
    fn op_started(&mut self, op: &OpInfo) {
        let o = Open { id: op.id.get(), name: op.name, start: op.start, bytes: op.bytes, peer: op.peer };
        self.open[op.core.actor] = Some(o);
    }

    fn op_span(&mut self, op: &OpInfo, end: SimTime) {
        let (chip, core) = (op.core.rank(), op.core.core());
        let (start, bytes, peer) = (op.start, op.bytes, op.peer);
        self.trace.ops.push(OpSpan {
            id: op.id.get(),
            chip,
            core,
            name: op.name,
            start,
            end: end.max(start),
            bytes,
            peer,
        });
    }

    fn resumed(&mut self, core: CoreId, end: SimTime) {
        if let Some(o) = self.open[core.actor].take() {
            let span = OpSpan {
                id: o.id,
                chip: core.rank(),
                core: core.core(),
                name: o.name,
                start: o.start,
                end: end.max(o.start),
                bytes: o.bytes,
                peer: o.peer,
            };
            self.trace.ops.push(span);
        }
    }

    fn store_posted(&mut self, core: CoreId, op: OpId, to: usize, _bytes: u64) {
        if to != core.rank() {
            self.last_write[core.actor] = Some(op.get());
        }
    }

    fn copy_started(&mut self, op: &OpInfo) {
        if op.peer.is_some() && op.name == OpKind::Put.name() {
            self.last_write[op.core.actor] = Some(op.id.get());
        }
    }

    /// Links the notify to the remote write before it.
    fn notify_posted(&mut self, core: CoreId, op: OpId, _to: usize) {
        if let Some(w) = self.last_write[core.actor].take() {
            self.trace.flows.push(Flow { from: w, to: op.get(), kind: FlowKind::WriteThenNotify });
        }
    }

    /// Links the notify that released the wait to it.
    fn wait_released(&mut self, _core: CoreId, op: OpId, _: (SignalCells<'_>, Cond), _at: SimTime, by: Option<OpId>) {
        if let Some(from) = by {
            self.trace.flows.push(Flow { from: from.get(), to: op.get(), kind: FlowKind::NotifyToWait });
        }
    }

    fn link_busy(&mut self, busy: &LinkBusy) {
        self.link(busy.clone());
    }
}
