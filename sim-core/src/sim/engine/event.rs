//! Events and their total order. Every event carries a key `(time, actor, seq, sub)`: requests
//! use the sending actor and its sequence number with `sub = 0`; events derived from a request
//! inherit its actor and seq and take a fresh `sub`. Host events use actor `HOST`.

use super::desc::Desc;
use super::observe::{TraceId, WriteToken};
use crate::api::request::{OpKind, Reply, Request};
use crate::base::addr::{CellRef, Place};
use crate::base::call_site::CallSite;
use crate::base::dtype::DType;
use crate::base::payload::Payload;
use crate::base::signal::NotifyOp;
use crate::base::time::SimTime;
use crate::model::{Onward, PathId};

/// The actor id of events the host or the chip schedulers originate.
pub(crate) const HOST: usize = usize::MAX;

/// Bits of a key's order word that hold the actor; the rest hold its seq.
const ACTOR_BITS: u32 = 24;
const SEQ_BITS: u32 = 64 - ACTOR_BITS;
/// The actor field of [`HOST`], above every core's.
const HOST_FIELD: u64 = (1 << ACTOR_BITS) - 1;

/// Total order of events `(time, actor, seq, sub)`; the engine never looks at arrival order.
/// The actor and seq are packed into one word (actor above seq), so a key is three words:
/// keys are compared in every step of the event heap.
#[derive(Copy, Clone, PartialEq, Eq)]
pub(crate) struct Key {
    pub(crate) time: SimTime,
    order: u64,
    pub(crate) sub: u64,
}

impl Key {
    /// Actors below this are keyed exactly ([`HOST`] aside).
    pub(crate) const MAX_ACTORS: usize = HOST_FIELD as usize;
    /// Seqs below this are keyed exactly.
    pub(crate) const MAX_SEQ: u64 = 1 << SEQ_BITS;

    /// The key of an event of `actor` (below [`Key::MAX_ACTORS`], or [`HOST`]) with `seq`
    /// (below [`Key::MAX_SEQ`]; the engine checks both before keying).
    pub(crate) fn new(time: SimTime, actor: usize, seq: u64, sub: u64) -> Key {
        debug_assert!(actor == HOST || actor < Key::MAX_ACTORS, "actor {actor} out of key range");
        debug_assert!(seq < Key::MAX_SEQ, "seq {seq} out of key range");
        let a = if actor == HOST { HOST_FIELD } else { actor as u64 };
        Key { time, order: (a << SEQ_BITS) | (seq & (Key::MAX_SEQ - 1)), sub }
    }

    /// The packed actor and seq (see [`Key::from_parts`]).
    pub(crate) fn order(&self) -> u64 {
        self.order
    }

    /// The key of `time`, packed actor and seq `order` ([`Key::order`]) and `sub`.
    pub(crate) fn from_parts(time: SimTime, order: u64, sub: u64) -> Key {
        Key { time, order, sub }
    }

    /// The actor whose request this event is, or derives from ([`HOST`] for the host's).
    pub(crate) fn actor(&self) -> usize {
        match self.order >> SEQ_BITS {
            HOST_FIELD => HOST,
            a => a as usize,
        }
    }

    /// The actor's sequence number of the request.
    pub(crate) fn seq(&self) -> u64 {
        self.order & (Key::MAX_SEQ - 1)
    }

    /// The key with `time` instead.
    pub(crate) fn at(self, time: SimTime) -> Key {
        Key { time, ..self }
    }

    /// The key of an event this one's request causes at `time`: same actor and seq, `sub`.
    pub(crate) fn derived(self, time: SimTime, sub: u64) -> Key {
        Key { time, order: self.order, sub }
    }

    /// Whether this key orders before `o`. Times mostly differ, so that test is a branch
    /// the processor predicts, and the result itself is a value, not a branch: the heap's
    /// choices between keys are unpredictable.
    #[inline]
    pub(crate) fn lt(&self, o: &Key) -> bool {
        if self.time != o.time {
            return self.time < o.time;
        }
        (self.order < o.order) | ((self.order == o.order) & (self.sub < o.sub))
    }

    /// `(time, actor, seq)` as one number ordered as keys are: the bound of a running
    /// actor's next request (whose sub is 0), and a key's leading part.
    pub(crate) fn bound(t: SimTime, actor: usize, seq: u64) -> u128 {
        Key::new(t, actor, seq, 0).head()
    }

    /// The `(time, actor, seq)` of a [`Key::bound`].
    pub(crate) fn unbound(b: u128) -> (SimTime, usize, u64) {
        let k = Key { time: SimTime::from_ps((b >> 64) as u64), order: b as u64, sub: 0 };
        (k.time, k.actor(), k.seq())
    }

    /// The key as one sortable pair, `(time, actor, seq)` packed and `sub`: where the facts
    /// its event emits sit in one engine's order.
    pub(crate) fn stamp(&self) -> (u128, u64) {
        (self.head(), self.sub)
    }

    fn head(&self) -> u128 {
        (u128::from(self.time.as_ps()) << 64) | u128::from(self.order)
    }

    /// Whether this key orders at or after the bound `b` (a [`Key::bound`]).
    pub(crate) fn at_or_after(&self, b: u128) -> bool {
        self.head() >= b
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Key {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.time, self.order, self.sub).cmp(&(o.time, o.order, o.sub))
    }
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Key")
            .field("time", &self.time)
            .field("actor", &self.actor())
            .field("seq", &self.seq())
            .field("sub", &self.sub)
            .finish()
    }
}

/// Something the engine does at a point in simulated time.
#[derive(Debug)]
pub(crate) enum Event {
    /// An actor's request, applied at its issue time.
    Request { actor: usize, req: Request, resume: SimTime },
    /// The request of a remote read reached the owner: read there and send the data back.
    RemoteRead { actor: usize, src: Place, caller: Option<CallSite>, ticket: Option<u64>, issued: SimTime },
    /// The bytes of an asynchronous load (`ticket`) have arrived in UB.
    Loaded { actor: usize, ticket: u64, data: Payload, issued: SimTime, peer: Option<usize> },
    /// Payload bytes land in memory.
    Land { dst: Place, data: Payload, atomic: Option<DType>, writer: u32, op: OpKind, ids: WriteIds },
    /// A notify lands in its cell.
    Signal(SignalLand),
    /// The next packet of a flow enters its path.
    FlowStep { flow: usize },
    /// A packet of `bytes` reached the switch on its path: the rest of the path is booked
    /// now. `end` is the slot of its flow's end event, for the flow's last packet, and
    /// `cleared` that of its flow's cleared event when that belongs to the receiver's side (a
    /// get's channel): it is applied when the packet has cleared that side.
    Onward { path: PathId, bytes: u64, from: Onward, end: Option<u32>, cleared: Option<u32> },
    /// The writer of write `seq` learns, across a switch, that it has landed.
    Acked { writer: usize, seq: u64 },
    /// The release of `writer`'s notify `seq` reaches `chip`, the notify's: the writer's
    /// earlier writes elsewhere have landed.
    Release { writer: usize, seq: u64, chip: usize },
    /// The read request of a get's chunk reached the owner.
    /// It carries what the owner needs (the reading core, the source, the op and its caller),
    /// so the owner's side reads nothing of the job, which stays with its core.
    CopyRemoteRead { job: usize, chunk: usize, actor: usize, src: Place, op: OpKind, caller: Option<CallSite> },
    /// A chunk of a put/get is in UB.
    CopyLoaded { job: usize, chunk: usize, data: Payload },
    /// The store of a put/get chunk has cleared MTE3.
    CopyStored { job: usize },
    /// A chip starts its next queued dispatch.
    DispatchStart { chip: usize },
    /// A deferred condition of a task became true (after the scheduler's poll).
    DeferredReady { chip: usize, task: usize },
    /// A step of an SDMA transfer (see `sdma.rs`).
    Sdma(SdmaEvent),
    /// Release a blocked actor with `reply`: how a blocking read's flow ends (applied at the
    /// flow's arrival, never queued).
    Reply { actor: usize, reply: Reply },
}

/// A step of an SDMA transfer (`sdma.rs` applies it).
#[derive(Debug)]
pub(crate) enum SdmaEvent {
    /// Channel `ch` (global index) starts its front descriptor: the first byte moves now.
    Start { ch: usize },
    /// The request of a get's descriptor reached the source's chip. A descriptor in flight
    /// travels with its events, so the chip where each happens reads nothing of another's.
    RemoteRead { desc: Box<Desc> },
    /// The descriptor in progress on channel `ch` has cleared it.
    Cleared { ch: usize },
    /// A descriptor's bytes land (`check` is the observers' token of the write).
    Land { desc: Box<Desc>, data: Payload, check: WriteToken },
    /// The news that a descriptor of `actor`'s transfer `id` on channel `ch` landed across a
    /// switch reaches the channel's chip.
    Done { actor: usize, id: u64, ch: usize },
}

/// How a write in flight is known: its place in its writer's issue order, and the observers'
/// token for it.
#[derive(Copy, Clone, Debug)]
pub(crate) struct WriteIds {
    pub(crate) seq: u64,
    pub(crate) check: WriteToken,
    /// What the destination's island needs to know of it, when that is not the writer's own.
    pub(crate) away: Option<Away>,
}

/// A write or notify to another island than its writer's, as that island sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Away {
    /// Its number among its writer's writes to that island (see `Landings`).
    pub(crate) nth: u32,
    /// A notify that must wait there for its writer's release (the writer had data writes
    /// to other islands in flight when it issued it).
    pub(crate) held: bool,
}

/// A notify arriving at its cell.
#[derive(Clone, Debug)]
pub(crate) struct SignalLand {
    pub(crate) cell: CellRef,
    pub(crate) value: i32,
    pub(crate) op: NotifyOp,
    pub(crate) writer: usize,
    pub(crate) trace_id: TraceId,
    pub(crate) ids: WriteIds,
}

/// A queue entry: an event's key and what it stands for, ordered by key only.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) key: Key,
    pub(crate) what: Pending,
}

/// What a queue entry stands for: an event kept in [`Slots`], the next packet of a flow
/// carried in the entry itself, or the key's actor polling its cells again
/// ([`Request::Retest`], whose cells and condition the actor keeps). Packets and polls are the
/// most frequent events, so they never move through a slot.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Pending {
    Slot(u32),
    FlowStep(u32),
    Poll,
}

/// Storage for pending events, so the priority queue only moves small entries.
#[derive(Debug, Default)]
pub(crate) struct Slots {
    events: Vec<Option<Event>>,
    free: Vec<u32>,
}

impl Slots {
    /// Slots whose events a processor's caches hold (about 2 MiB of events).
    const CACHED: usize = 1 << 14;

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

    /// Whether the store has grown past what the caches hold (a run with more than
    /// [`Slots::CACHED`] events pending at once): only then does [`Slots::prefetch`] pay.
    #[inline]
    pub(crate) fn outgrows_caches(&self) -> bool {
        self.events.len() > Slots::CACHED
    }

    /// Asks the processor to bring the event in `slot` into the cache, ahead of its use: the
    /// event loop names the next event's slot while it applies the current one. In a large
    /// run (a 1024-rank all_to_all keeps hundreds of thousands of events pending) the slot
    /// was written long ago, and reading it missed the cache on most events.
    #[inline]
    pub(crate) fn prefetch(&self, slot: u32) {
        #[cfg(target_arch = "x86_64")]
        if let Some(ev) = self.events.get(slot as usize) {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            let p = (ev as *const Option<Event>).cast::<i8>();
            // SAFETY: a prefetch is only a hint: it cannot fault, changes no memory and
            // makes nothing visible to the program, for any address; SSE, which it needs, is
            // part of every x86_64 processor. An event spans two cache lines.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(p);
                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(64));
            }
        }
    }

    /// The event in `slot`, if any.
    pub(crate) fn peek(&self, slot: u32) -> Option<&Event> {
        self.events.get(slot as usize).and_then(Option::as_ref)
    }

    /// Whether the event in `slot` releases an actor ([`Event::Reply`]).
    pub(crate) fn is_reply(&self, slot: u32) -> bool {
        matches!(self.events.get(slot as usize), Some(Some(Event::Reply { .. })))
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    fn key(ns: u64, actor: usize, seq: u64, sub: u64) -> Key {
        Key::new(SimTime::from_ps(ns * 1000), actor, seq, sub)
    }

    #[test]
    fn keys_order_by_time_then_actor_then_seq_then_sub() {
        // Time decides first, whatever the other fields say.
        assert!(key(1, 9, 9, 9) < key(2, 0, 0, 0));
        // At one time, the lower actor first; the host (`HOST`) after every core.
        assert!(key(5, 0, 9, 9) < key(5, 1, 0, 0));
        assert!(key(5, 7, 0, 0) < key(5, HOST, 0, 0));
        // One actor's requests in issue order; an event a request caused after it.
        assert!(key(5, 3, 1, 9) < key(5, 3, 2, 0));
        assert!(key(5, 3, 2, 0) < key(5, 3, 2, 1));
        assert_eq!(key(5, 3, 2, 1), key(5, 3, 2, 1));
    }

    /// Requests and events move several times each (outbox, slots, dispatch); up to 128
    /// bytes a move is a few vector copies, above it a call to memcpy. A field added to a
    /// request or an address that crosses the line shows here.
    #[test]
    fn requests_and_events_stay_small_enough_to_move_inline() {
        use std::mem::size_of;
        assert!(size_of::<Place>() <= 64, "Place is {} bytes", size_of::<Place>());
        assert!(size_of::<Request>() <= 112, "Request is {} bytes", size_of::<Request>());
        assert!(size_of::<(SimTime, SimTime, Request)>() <= 128, "an outbox entry is larger than 128 bytes");
        assert!(size_of::<Event>() <= 128, "Event is {} bytes", size_of::<Event>());
        assert!(size_of::<Entry>() <= 32, "a queue entry is {} bytes", size_of::<Entry>());
    }

    #[test]
    fn a_packed_key_orders_as_its_fields_and_gives_them_back() {
        // Actors (the host's included), seqs and subs near their field limits, times with ties.
        let actors = [0, 1, 7, Key::MAX_ACTORS - 1, HOST];
        let seqs = [0, 1, 5, Key::MAX_SEQ - 1];
        let mut keys = Vec::new();
        for t in [0, 3, u64::MAX - 1] {
            for &a in &actors {
                for &s in &seqs {
                    for sub in [0, 2, u64::MAX] {
                        keys.push(((t, a, s, sub), Key::new(SimTime::from_ps(t), a, s, sub)));
                    }
                }
            }
        }
        for &(f, k) in &keys {
            assert_eq!((k.time.as_ps(), k.actor(), k.seq(), k.sub), f);
            for &(g, j) in &keys {
                assert_eq!(k.cmp(&j), f.cmp(&g), "{f:?} vs {g:?}");
                assert_eq!(k.lt(&j), f < g, "{f:?} < {g:?}");
            }
        }
        let k = Key::new(SimTime::from_ps(9), 4, 6, 0);
        assert_eq!(k.derived(SimTime::from_ps(12), 3), Key::new(SimTime::from_ps(12), 4, 6, 3));
        let b = |t, a, s| Key::bound(SimTime::from_ps(t), a, s);
        assert!(k.at_or_after(b(9, 4, 6)) && !k.at_or_after(b(9, 4, 7)) && !k.at_or_after(b(10, 0, 0)));
        assert!(k.at_or_after(b(9, 3, Key::MAX_SEQ - 1)) && k.at_or_after(b(8, HOST, 0)));
        for (t, a, s) in [(0, 0, 0), (9, HOST, 3), (u64::MAX, Key::MAX_ACTORS - 1, Key::MAX_SEQ - 1)] {
            assert_eq!(Key::unbound(b(t, a, s)), (SimTime::from_ps(t), a, s));
        }
    }

    #[test]
    fn the_queue_pops_the_smallest_key_whatever_the_push_order() {
        let keys = [key(4, 0, 0, 0), key(2, 1, 0, 3), key(2, 1, 0, 1), key(2, 0, 5, 0), key(3, HOST, 0, 0)];
        let mut q = BinaryHeap::new();
        for (i, &k) in keys.iter().enumerate() {
            q.push(Reverse(Entry { key: k, what: Pending::Slot(i as u32) }));
        }
        let popped: Vec<(Key, Pending)> = std::iter::from_fn(|| q.pop().map(|Reverse(e)| (e.key, e.what))).collect();
        assert_eq!(
            popped,
            vec![
                (key(2, 0, 5, 0), Pending::Slot(3)),
                (key(2, 1, 0, 1), Pending::Slot(2)),
                (key(2, 1, 0, 3), Pending::Slot(1)),
                (key(3, HOST, 0, 0), Pending::Slot(4)),
                (key(4, 0, 0, 0), Pending::Slot(0)),
            ]
        );
    }

    #[test]
    fn entries_compare_by_key_alone() {
        let a = Entry { key: key(1, 0, 0, 0), what: Pending::Slot(7) };
        let b = Entry { key: key(1, 0, 0, 0), what: Pending::FlowStep(2) };
        assert_eq!(a, b);
        assert_eq!(a.cmp(&b), std::cmp::Ordering::Equal);
    }

    #[test]
    fn slots_hand_back_their_event_and_reuse_freed_slots() {
        let mut s = Slots::default();
        let a = s.put(Event::FlowStep { flow: 10 });
        let b = s.put(Event::DispatchStart { chip: 1 });
        assert_eq!((a, b), (0, 1));
        assert!(matches!(s.take(a), Event::FlowStep { flow: 10 }));
        // The freed slot is taken again before the store grows.
        let c = s.put(Event::CopyStored { job: 4 });
        assert_eq!(c, 0);
        assert_eq!(s.put(Event::DispatchStart { chip: 2 }), 2);
        assert!(matches!(s.take(b), Event::DispatchStart { chip: 1 }));
        assert!(matches!(s.take(c), Event::CopyStored { job: 4 }));
    }

    #[test]
    #[should_panic(expected = "taken twice")]
    fn a_slot_cannot_be_taken_twice() {
        let mut s = Slots::default();
        let a = s.put(Event::FlowStep { flow: 0 });
        s.take(a);
        s.take(a);
    }
}
