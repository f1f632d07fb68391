//! Events and their total order. Every event carries a key `(time, actor, seq, sub)`: requests
//! use the sending actor and its sequence number with `sub = 0`; events derived from a request
//! inherit its actor and seq and take a fresh `sub`. Host events use actor `HOST`.

use super::request::{CellRef, Place, Request};
use crate::dtype::DType;
use crate::payload::Payload;
use crate::signal::NotifyOp;
use crate::time::SimTime;

/// The actor id of events the host or the chip schedulers originate.
pub(crate) const HOST: usize = usize::MAX;

/// Total order of events; the engine never looks at arrival order.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Key {
    pub(crate) time: SimTime,
    pub(crate) actor: usize,
    pub(crate) seq: u64,
    pub(crate) sub: u64,
}

/// Something the engine does at a point in simulated time.
#[derive(Debug)]
pub(crate) enum Event {
    /// An actor's request, applied at its issue time.
    Request { actor: usize, req: Request, resume: SimTime },
    /// The request of a remote read reached the owner: read there and send the data back.
    RemoteRead { actor: usize, src: Place, caller: super::request::Caller, ticket: Option<u64>, issued: SimTime },
    /// The bytes of an asynchronous load (`ticket`) have arrived in UB.
    Loaded { actor: usize, ticket: u64, data: Payload, issued: SimTime, peer: Option<usize> },
    /// Payload bytes land in memory.
    Land { dst: Place, data: Payload, atomic: Option<DType>, writer: usize, op: &'static str, ids: WriteIds },
    /// A notify lands in its cell.
    Signal(SignalLand),
    /// The next packet of a flow enters its path.
    FlowStep { flow: usize },
    /// The read request of a get's chunk reached the owner.
    CopyRemoteRead { job: usize, chunk: usize },
    /// A chunk of a put/get is in UB.
    CopyLoaded { job: usize, chunk: usize, data: Payload },
    /// The store of a put/get chunk has cleared MTE3.
    CopyStored { job: usize },
    /// A chip starts its next queued dispatch.
    DispatchStart { chip: usize },
    /// A deferred condition of a task became true (after the scheduler's poll).
    DeferredReady { chip: usize, task: usize },
    /// A step of an SDMA transfer (see `sdma.rs`).
    Sdma(super::sdma::SdmaEvent),
}

/// How a write in flight is known: its place in its writer's issue order, and the checker's
/// id for it (0 when not checking).
#[derive(Copy, Clone, Debug)]
pub(crate) struct WriteIds {
    pub(crate) seq: u64,
    pub(crate) check: u64,
}

/// A notify arriving at its cell.
#[derive(Clone, Debug)]
pub(crate) struct SignalLand {
    pub(crate) cell: CellRef,
    pub(crate) value: i32,
    pub(crate) op: NotifyOp,
    pub(crate) writer: usize,
    pub(crate) trace_id: u64,
    pub(crate) ids: WriteIds,
}

/// A queue entry: an event's key and what it stands for, ordered by key only.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) key: Key,
    pub(crate) what: Pending,
}

/// What a queue entry stands for: an event kept in [`Slots`], or the next packet of a flow,
/// carried in the entry itself. Packets are the most frequent events, so they never move
/// through a slot.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Pending {
    Slot(u32),
    FlowStep(u32),
}

/// Storage for pending events, so the priority queue only moves small entries.
#[derive(Debug, Default)]
pub(crate) struct Slots {
    events: Vec<Option<Event>>,
    free: Vec<u32>,
}

impl Slots {
    /// Stores `ev`; returns its slot.
    pub(crate) fn put(&mut self, ev: Event) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.events[i as usize] = Some(ev);
                i
            }
            None => {
                self.events.push(Some(ev));
                (self.events.len() - 1) as u32
            }
        }
    }

    /// Removes and returns the event in `slot`.
    pub(crate) fn take(&mut self, slot: u32) -> Event {
        self.free.push(slot);
        match self.events[slot as usize].take() {
            Some(ev) => ev,
            None => unreachable!("event slot {slot} taken twice"),
        }
    }
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.key.cmp(&o.key)
    }
}
