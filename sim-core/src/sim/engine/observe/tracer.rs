//! Recording a run's timeline: operation spans, causal flows, link occupancy.

use crate::base::time::SimTime;
use crate::results::trace::{Flow, FlowKind, LinkBusy, OpSpan, Trace};

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
    next_id: u64,
    cores: usize,
    /// Per actor: the blocking operation waiting for its reply.
    open: Vec<Option<Open>>,
    /// Per actor: its last remote write not yet followed by a notify.
    last_write: Vec<Option<u64>>,
}

impl Tracer {
    pub(crate) fn new(actors: usize, cores: usize) -> Tracer {
        Tracer { trace: Trace::default(), next_id: 1, cores, open: vec![None; actors], last_write: vec![None; actors] }
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id - 1
    }

    /// A posted operation of `actor` over `[start, end]`; returns its id.
    pub(crate) fn span(
        &mut self,
        actor: usize,
        name: &'static str,
        start: SimTime,
        end: SimTime,
        bytes: u64,
        peer: Option<usize>,
    ) -> u64 {
        let id = self.id();
        let (chip, core) = (actor / self.cores, actor % self.cores);
        self.trace.ops.push(OpSpan { id, chip, core, name, start, end: end.max(start), bytes, peer });
        id
    }

    /// A blocking operation of `actor` starts; it is closed by [`Tracer::close`].
    pub(crate) fn open(
        &mut self,
        actor: usize,
        name: &'static str,
        start: SimTime,
        bytes: u64,
        peer: Option<usize>,
    ) -> u64 {
        let id = self.id();
        self.open[actor] = Some(Open { id, name, start, bytes, peer });
        id
    }

    /// The blocking operation of `actor` ends at `end`.
    pub(crate) fn close(&mut self, actor: usize, end: SimTime) {
        if let Some(o) = self.open[actor].take() {
            let (chip, core) = (actor / self.cores, actor % self.cores);
            let span = OpSpan {
                id: o.id,
                chip,
                core,
                name: o.name,
                start: o.start,
                end: end.max(o.start),
                bytes: o.bytes,
                peer: o.peer,
            };
            self.trace.ops.push(span);
        }
    }

    /// `actor` wrote to a peer with operation `id`.
    pub(crate) fn remote_write(&mut self, actor: usize, id: u64) {
        self.last_write[actor] = Some(id);
    }

    /// `actor` notified with operation `id`: link it to the remote write before it.
    pub(crate) fn notified(&mut self, actor: usize, id: u64) {
        if let Some(w) = self.last_write[actor].take() {
            self.trace.flows.push(Flow { from: w, to: id, kind: FlowKind::WriteThenNotify });
        }
    }

    /// The notify `from` released the wait `to`.
    pub(crate) fn released(&mut self, from: u64, to: u64) {
        if from != 0 && to != 0 {
            self.trace.flows.push(Flow { from, to, kind: FlowKind::NotifyToWait });
        }
    }

    /// A link was busy with one transfer.
    pub(crate) fn link(&mut self, busy: LinkBusy) {
        self.trace.links.push(busy);
    }

    /// The finished timeline (operations in start order).
    pub(crate) fn finish(mut self) -> Trace {
        self.trace.ops.sort_by_key(|o| (o.start, o.chip, o.core, o.id));
        self.trace
    }
}
