//! The event queue: a 4-ary min-heap by key over the events due soonest, radix buckets by time
//! for the later ones, and a FIFO per actor for its requests.
//!
//! Keys are unique, so any correct priority queue pops the same sequence; this one keeps the
//! heap small and shallow, which is what counts when hundreds of thousands of events are in
//! flight (every rank of a 1024-rank barrier posting a notify to every other). An actor's
//! requests arrive in key order (its clock never goes back and its `seq` grows), so they wait
//! in the actor's own FIFO and only its head sits in the heap. A 4-ary heap has half the levels
//! of a binary one, and a node's four children share a cache line or two.
//!
//! Only events at or before a time `base` sit in the heap; a later one waits unordered in
//! the radix bucket of the highest bit in which its time differs from `base` (a radix heap:
//! simulated time only moves forward, so events are mostly pushed after the last one popped).
//! When the heap runs empty, `base` moves to the earliest time of the lowest non-empty bucket,
//! whose events go to the heap (those at `base`) or to lower buckets: each event moves down a
//! few buckets at most, instead of sifting through a heap of every pending event.

use super::event::{Entry, Key, Pending};
use std::collections::VecDeque;

/// Children per node.
const D: usize = 4;

/// What a heap item stands for: a queued entry, or the head of an actor's request FIFO.
#[derive(Copy, Clone, Debug)]
enum Held {
    Entry(Pending),
    Lane(u32),
}

#[derive(Copy, Clone, Debug)]
struct Item {
    key: Key,
    held: Held,
}

/// Pending events, smallest key first.
#[derive(Debug, Default)]
pub(super) struct EventQueue {
    /// The smallest item, when it arrived smaller than everything in the heap: an event
    /// pushed just before it is the next to pop (a packet's next step, a reply) never enters
    /// the heap.
    front: Option<Item>,
    /// The events at or before `base` (all of them while the buckets are empty), a 4-ary heap;
    /// empty only when nothing is pending outside `front`.
    heap: Vec<Item>,
    /// The time, in ps, that splits the heap from the buckets.
    base: u64,
    /// Bucket `b`: events whose time is after `base` and differs from it first in bit `b`.
    far: Vec<Vec<Item>>,
    /// Bit `b` set when bucket `b` holds an event.
    far_mask: u64,
    /// Per actor, its requests behind the one in the heap, in key order: lane `actor -
    /// lane_base` (a split run's partition numbers from its first actor's).
    lanes: Vec<VecDeque<(Key, Pending)>>,
    lane_base: usize,
}

impl EventQueue {
    /// Lanes start at actor `first` (the first actor a split run's partition runs; 0 by
    /// default): a partition holds no lanes for the actors before its own.
    pub(super) fn lanes_from(&mut self, first: usize) {
        debug_assert!(self.lanes.is_empty(), "lanes renumbered with requests pending");
        self.lane_base = first;
    }

    /// Adds `e`.
    pub(super) fn push(&mut self, e: Entry) {
        self.push_item(Item { key: e.key, held: Held::Entry(e.what) });
    }

    /// Adds the request of `key.actor` (`what`: kept in a slot, or a poll). Behind an earlier
    /// request of the same actor it waits in the actor's FIFO; out of order (never expected)
    /// it goes to the heap.
    pub(super) fn push_request(&mut self, key: Key, what: Pending) {
        let Ok(lane) = u32::try_from(key.actor().wrapping_sub(self.lane_base)) else {
            return self.push(Entry { key, what });
        };
        let i = lane as usize;
        if self.lanes.len() <= i {
            self.lanes.resize_with(i + 1, VecDeque::new);
        }
        let fifo = &mut self.lanes[i];
        match fifo.back() {
            None => {
                fifo.push_back((key, what));
                self.push_item(Item { key, held: Held::Lane(lane) });
            }
            Some(&(last, _)) if last.lt(&key) => fifo.push_back((key, what)),
            Some(_) => self.push(Entry { key, what }),
        }
    }

    /// Adds a poll of `key.actor` (its blocking request, so the last it sends for now). Behind
    /// requests of the actor still waiting it joins them; with none, it goes to the heap as
    /// an entry of its own, without a trip through the actor's FIFO.
    pub(super) fn push_poll(&mut self, key: Key) {
        match self.lanes.get(key.actor().wrapping_sub(self.lane_base)) {
            Some(fifo) if !fifo.is_empty() => self.push_request(key, Pending::Poll),
            _ => self.push(Entry { key, what: Pending::Poll }),
        }
    }

    /// Every pending entry, in no particular order (for reports: a scan of the whole queue).
    pub(super) fn entries(&self) -> impl Iterator<Item = Pending> + '_ {
        let held = self.front.iter().chain(&self.heap).chain(self.far.iter().flatten()).filter_map(|i| match i.held {
            Held::Entry(what) => Some(what),
            Held::Lane(_) => None,
        });
        held.chain(self.lanes.iter().flatten().map(|&(_, what)| what))
    }

    /// The smallest key pending, if any.
    pub(super) fn peek_key(&self) -> Option<Key> {
        self.front.or_else(|| self.heap.first().copied()).map(|i| i.key)
    }

    /// Removes and returns the entry with the smallest key.
    pub(super) fn pop(&mut self) -> Option<Entry> {
        let top = match self.front.take() {
            Some(item) => item,
            None => self.pop_item()?,
        };
        match top.held {
            Held::Entry(what) => Some(Entry { key: top.key, what }),
            Held::Lane(lane) => {
                let fifo = &mut self.lanes[lane as usize];
                let (key, what) = fifo.pop_front()?;
                debug_assert_eq!(key, top.key, "a lane's head is its heap item");
                if let Some(&(next, _)) = fifo.front() {
                    self.push_item(Item { key: next, held: Held::Lane(lane) });
                }
                Some(Entry { key, what })
            }
        }
    }

    /// The slot of the event that would pop next, if it is kept in one.
    pub(super) fn next_slot(&self) -> Option<u32> {
        let top = self.front.or_else(|| self.heap.first().copied())?;
        let what = match top.held {
            Held::Entry(what) => what,
            Held::Lane(lane) => self.lanes[lane as usize].front()?.1,
        };
        match what {
            Pending::Slot(slot) => Some(slot),
            Pending::FlowStep(_) | Pending::Poll => None,
        }
    }

    /// Whether no event is pending.
    pub(super) fn is_empty(&self) -> bool {
        self.front.is_none() && self.heap.is_empty()
    }

    /// Adds `e`: as the front when it is smaller than everything pending, else to the heap.
    fn push_item(&mut self, e: Item) {
        match self.front {
            Some(f) if e.key.lt(&f.key) => {
                self.front = Some(e);
                self.heap_push(f);
            }
            Some(_) => self.heap_push(e),
            None if self.heap.first().is_none_or(|top| e.key.lt(&top.key)) => self.front = Some(e),
            None => self.heap_push(e),
        }
    }

    /// Adds `e` to the heap, or to its bucket when it is after `base`. An empty queue starts
    /// over at `e`'s time.
    fn heap_push(&mut self, e: Item) {
        let t = e.key.time.as_ps();
        if self.heap.is_empty() {
            debug_assert_eq!(self.far_mask, 0, "the buckets hold events while the heap is empty");
            self.base = t;
        } else if t > self.base {
            let b = 63 - (t ^ self.base).leading_zeros();
            if self.far.is_empty() {
                self.far.resize_with(64, Vec::new);
            }
            self.far[b as usize].push(e);
            self.far_mask |= 1 << b;
            return;
        }
        self.near_push(e);
    }

    fn near_push(&mut self, e: Item) {
        let i = self.heap.len();
        self.heap.push(e);
        self.sift_up(i, e);
    }

    /// Refills the empty heap from the lowest non-empty bucket: `base` moves to its earliest
    /// time, whose events go to the heap; the others go to lower buckets (they share every
    /// bit above the bucket's with the new `base`, so none goes higher).
    fn refill(&mut self) {
        if self.far_mask == 0 {
            return;
        }
        let b = self.far_mask.trailing_zeros() as usize;
        self.far_mask &= !(1 << b);
        let items = std::mem::take(&mut self.far[b]);
        let base = items.iter().map(|i| i.key.time.as_ps()).min().unwrap_or(self.base);
        self.base = base;
        for &e in &items {
            let t = e.key.time.as_ps();
            if t == base {
                self.near_push(e);
            } else {
                let lower = 63 - (t ^ base).leading_zeros();
                self.far[lower as usize].push(e);
                self.far_mask |= 1 << lower;
            }
        }
        // Keep the bucket's storage for its next events.
        let mut items = items;
        items.clear();
        self.far[b] = items;
    }

    /// Moves `e`, to be stored at `i`, up past the parents that order after it, and stores it.
    fn sift_up(&mut self, mut i: usize, e: Item) {
        while i > 0 {
            let parent = (i - 1) / D;
            if !e.key.lt(&self.heap[parent].key) {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = e;
    }

    /// The index of the smallest of the children that start at `first` (at most [`D`], those
    /// below `n`). A full set is decided as a tournament of selects, not branches.
    fn least_child(&self, first: usize, n: usize) -> usize {
        let h = &self.heap;
        if first + D <= n {
            let pick = |x: usize, y: usize| if h[y].key.lt(&h[x].key) { y } else { x };
            return pick(pick(first, first + 1), pick(first + 2, first + 3));
        }
        let mut least = first;
        for c in first + 1..n {
            if h[c].key.lt(&h[least].key) {
                least = c;
            }
        }
        least
    }

    /// Removes the top. Bottom-up: the hole left at the root follows the smallest children
    /// down to a leaf, and the last item, which belongs near the bottom, is sifted up from
    /// there; that takes one comparison fewer per level than testing it at every level.
    fn pop_item(&mut self) -> Option<Item> {
        let last = self.heap.pop()?;
        let Some(&top) = self.heap.first() else {
            self.refill();
            return Some(last);
        };
        let n = self.heap.len();
        let mut i = 0;
        loop {
            let first = D * i + 1;
            if first >= n {
                break;
            }
            let least = self.least_child(first, n);
            self.heap[i] = self.heap[least];
            i = least;
        }
        self.sift_up(i, last);
        Some(top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::time::SimTime;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    fn entry(x: u64, i: u32) -> Entry {
        // Few distinct times and actors, so ties on the leading fields are common.
        let key = Key::new(SimTime::from_ps(x % 97), (x % 5) as usize, x % 13, u64::from(i));
        Entry { key, what: Pending::Slot(i) }
    }

    /// A deterministic stream of pseudo-random numbers (xorshift).
    fn stream(mut s: u64) -> impl FnMut() -> u64 {
        move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        }
    }

    #[test]
    fn it_pops_what_a_binary_heap_pops_under_any_interleaving() {
        let mut next = stream(0x9e37_79b9_7f4a_7c15);
        let (mut q, mut reference) = (EventQueue::default(), BinaryHeap::new());
        let mut popped = 0;
        for i in 0..20_000u32 {
            let r = next();
            // Two pushes for each pop on average, so the heap grows to thousands deep.
            if r.is_multiple_of(3) {
                let got = q.pop().map(|e| (e.key, e.what));
                let want = reference.pop().map(|Reverse(e): Reverse<Entry>| (e.key, e.what));
                assert_eq!(got, want, "pop {popped}");
                popped += 1;
            } else {
                q.push(entry(r, i));
                reference.push(Reverse(entry(r, i)));
            }
            assert_eq!(q.peek_key(), reference.peek().map(|Reverse(e)| e.key));
        }
        while let Some(Reverse(want)) = reference.pop() {
            assert_eq!(q.pop().map(|e| e.key), Some(want.key));
        }
        assert!(q.is_empty() && q.pop().is_none());
    }

    /// As a simulation runs: events are pushed at the time of the last pop plus delays of
    /// every magnitude (nothing, picoseconds, up to about 2^60), some below the smallest
    /// pending time after a peek (a resumed actor's request), a few at the far end of time;
    /// the queue grows to thousands and shrinks to a few in turns.
    #[test]
    fn it_pops_what_a_binary_heap_pops_as_time_moves_on() {
        let mut next = stream(0x853c_49e6_748f_ea9b);
        let (mut q, mut reference) = (EventQueue::default(), BinaryHeap::new());
        let mut now = 0u64;
        for i in 0..60_000u32 {
            let r = next();
            // Growing phases pop 1 in 4, shrinking ones 3 in 4.
            let pops = if (i / 3000).is_multiple_of(2) { 1 } else { 3 };
            if r % 4 < pops {
                let got = q.pop().map(|e| (e.key, e.what));
                let want = reference.pop().map(|Reverse(e): Reverse<Entry>| (e.key, e.what));
                assert_eq!(got, want, "pop at step {i}");
                if let Some((k, _)) = got {
                    now = k.time.as_ps();
                }
                continue;
            }
            let delay = match r % 11 {
                0 => 0,
                1 => u64::MAX - now,
                n => (r >> 8) & ((1u64 << (n * 6)) - 1),
            };
            let key = Key::new(SimTime::from_ps(now.saturating_add(delay)), (r % 7) as usize, r % 3, u64::from(i));
            q.push(Entry { key, what: Pending::Slot(i) });
            reference.push(Reverse(Entry { key, what: Pending::Slot(i) }));
            assert_eq!(q.peek_key(), reference.peek().map(|Reverse(e)| e.key));
        }
        while let Some(Reverse(want)) = reference.pop() {
            assert_eq!(q.pop().map(|e| e.key), Some(want.key));
        }
        assert!(q.is_empty() && q.pop().is_none());
    }

    #[test]
    fn requests_in_their_actors_fifos_interleave_with_other_events_by_key() {
        let mut next = stream(0x2545_f491_4f6c_dd1d);
        let (mut q, mut reference) = (EventQueue::default(), BinaryHeap::new());
        // Each actor's clock and seq only grow, as a core's requests do; one request arrives
        // out of order and must still come out in its place.
        let mut clock = [0u64; 4];
        for i in 0..5_000u32 {
            let r = next();
            let actor = (r % 4) as usize;
            if r.is_multiple_of(5) {
                assert_eq!(
                    q.pop().map(|e| (e.key, e.what)),
                    reference.pop().map(|Reverse(e): Reverse<Entry>| (e.key, e.what))
                );
                continue;
            }
            let e = if r % 7 < 4 {
                clock[actor] += r % 3;
                let key = Key::new(SimTime::from_ps(clock[actor]), actor, u64::from(i), 0);
                // Every third request is a poll, without a slot: behind the actor's waiting
                // requests in its lane, or an entry of its own.
                if i % 3 == 0 {
                    q.push_poll(key);
                    Entry { key, what: Pending::Poll }
                } else {
                    q.push_request(key, Pending::Slot(i));
                    Entry { key, what: Pending::Slot(i) }
                }
            } else {
                let e = entry(r, i);
                q.push(e);
                e
            };
            reference.push(Reverse(e));
        }
        let late = Key::new(SimTime::ZERO, 1, 0, 0);
        q.push_request(late, Pending::Slot(99_999));
        reference.push(Reverse(Entry { key: late, what: Pending::Slot(99_999) }));
        while let Some(Reverse(want)) = reference.pop() {
            assert_eq!(q.pop().map(|e| (e.key, e.what)), Some((want.key, want.what)));
        }
        assert!(q.is_empty());
    }
}
