//! The event queue: a 4-ary min-heap by key that turns into a radix heap by time when it
//! grows large, and a FIFO per actor for its requests.
//!
//! Keys are unique, so any correct priority queue pops the same sequence. A small queue (a
//! ring's few packets in flight) is a 4-ary heap: half the levels of a binary one, and a
//! node's four children share a cache line or two. A large one (a many-block kernel posting
//! remote stores keeps thousands of packets in flight) past [`SPREAD`] items exploits that
//! simulated time only moves forward, as a radix heap does: an item later than the reference
//! time `last` waits unordered in the bucket of the highest bit in which its time differs
//! from `last`, and only the items at or before `last` are in the heap. When the heap runs
//! empty, the lowest non-empty bucket moves into it whole and its latest time becomes `last`;
//! so an item far in the future costs no heap work until its time comes near, and moves
//! once. Below [`GATHER`] bucketed items they all go back to the heap. An actor's requests
//! arrive in key order (its clock never goes back and its `seq` grows), so they wait in the
//! actor's own FIFO and only its head sits in the queue.

use super::event::{Entry, Key, Pending};
use std::collections::VecDeque;

/// Children per node of the near heap.
const D: usize = 4;

/// Items in the heap at which the queue spreads the later ones into buckets.
const SPREAD: usize = 512;

/// Bucketed items below which the queue, when its heap runs empty, is one heap again.
const GATHER: usize = 32;

/// `last` of a queue that is one heap (every item is at or before it).
const ALL: u64 = u64::MAX;

/// Buckets of the radix heap: bucket `b` (1..=64) holds items whose time first differs from
/// `last` in bit `b - 1`; bucket 0 is never used (those items are in the near heap).
const BUCKETS: usize = 65;

/// What a queue item stands for: a queued entry, or the head of an actor's request FIFO.
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
    /// The smallest item, when it arrived smaller than everything pending: an event pushed
    /// just before it is the next to pop (a packet's next step, a reply) is never sorted.
    front: Option<Item>,
    /// The items later than `front`, by time.
    radix: Radix,
    /// Per actor, its requests behind the one in the queue: `(key, slot)` in key order.
    lanes: Vec<VecDeque<(Key, u32)>>,
}

impl EventQueue {
    /// Adds `e`.
    pub(super) fn push(&mut self, e: Entry) {
        self.push_item(Item { key: e.key, held: Held::Entry(e.what) });
    }

    /// Adds the request of `key.actor` kept in `slot`. Behind an earlier request of the same
    /// actor it waits in the actor's FIFO; out of order (never expected) it is queued alone.
    pub(super) fn push_request(&mut self, key: Key, slot: u32) {
        let actor = key.actor();
        let Ok(lane) = u32::try_from(actor) else {
            return self.push(Entry { key, what: Pending::Slot(slot) });
        };
        if self.lanes.len() <= actor {
            self.lanes.resize_with(actor + 1, VecDeque::new);
        }
        let fifo = &mut self.lanes[actor];
        match fifo.back() {
            None => {
                fifo.push_back((key, slot));
                self.push_item(Item { key, held: Held::Lane(lane) });
            }
            Some(&(last, _)) if last.lt(&key) => fifo.push_back((key, slot)),
            Some(_) => self.push(Entry { key, what: Pending::Slot(slot) }),
        }
    }

    /// The smallest key pending, if any. It may sort the earliest bucket (hence `&mut`).
    pub(super) fn peek_key(&mut self) -> Option<Key> {
        match self.front {
            Some(f) => Some(f.key),
            None => self.radix.first().map(|i| i.key),
        }
    }

    /// Removes and returns the entry with the smallest key.
    pub(super) fn pop(&mut self) -> Option<Entry> {
        let top = match self.front.take() {
            Some(item) => item,
            None => self.radix.pop()?,
        };
        match top.held {
            Held::Entry(what) => Some(Entry { key: top.key, what }),
            Held::Lane(lane) => {
                let fifo = &mut self.lanes[lane as usize];
                let (key, slot) = fifo.pop_front()?;
                debug_assert_eq!(key, top.key, "a lane's head is its queue item");
                if let Some(&(next, _)) = fifo.front() {
                    self.push_item(Item { key: next, held: Held::Lane(lane) });
                }
                Some(Entry { key, what: Pending::Slot(slot) })
            }
        }
    }

    /// Whether no event is pending.
    pub(super) fn is_empty(&self) -> bool {
        self.front.is_none() && self.radix.is_empty()
    }

    /// Adds `e`: as the front when it is known to be smaller than everything pending, else
    /// to the radix heap.
    fn push_item(&mut self, e: Item) {
        match self.front {
            Some(f) if e.key.lt(&f.key) => {
                self.front = Some(e);
                self.radix.push(f);
            }
            Some(_) => self.radix.push(e),
            None if self.radix.precedes_all(&e.key) => self.front = Some(e),
            None => self.radix.push(e),
        }
    }
}

/// A radix heap by time whose items at or before `last` sit in a 4-ary heap by key; with
/// `last` at [`ALL`], just that heap.
#[derive(Debug)]
struct Radix {
    /// Every item at or before `last`, by key.
    near: NearHeap,
    /// Items after `last`, by the highest bit in which their time differs from it.
    buckets: [Vec<Item>; BUCKETS],
    /// Bit `b` set: `buckets[b]` is not empty.
    full: u128,
    /// The reference time (ps): the earliest time of the last bucket sorted, or [`ALL`].
    last: u64,
    /// Items in the buckets.
    far: usize,
}

impl Default for Radix {
    fn default() -> Radix {
        Radix { near: NearHeap::default(), buckets: std::array::from_fn(|_| Vec::new()), full: 0, last: ALL, far: 0 }
    }
}

impl Radix {
    fn is_empty(&self) -> bool {
        self.near.is_empty() && self.far == 0
    }

    /// Whether `key` orders before every item held: before the near heap's top, or, with
    /// that heap empty, at or before `last` (every bucketed item is later).
    fn precedes_all(&self, key: &Key) -> bool {
        match self.near.first() {
            Some(top) => key.lt(&top.key),
            None => key.time.as_ps() <= self.last,
        }
    }

    fn push(&mut self, e: Item) {
        let t = e.key.time.as_ps();
        if t > self.last {
            return self.file(e, t);
        }
        self.near.push(e);
        if self.last == ALL && self.near.len() > SPREAD {
            self.spread();
        }
    }

    /// Files `e`, later than `last` (at `t`), in its bucket.
    fn file(&mut self, e: Item, t: u64) {
        let b = bucket(t, self.last);
        self.buckets[b].push(e);
        self.full |= 1 << b;
        self.far += 1;
    }

    /// The smallest item, after sorting the earliest bucket if the near heap is empty.
    fn first(&mut self) -> Option<Item> {
        if self.near.is_empty() {
            self.refill();
        }
        self.near.first()
    }

    fn pop(&mut self) -> Option<Item> {
        if self.near.is_empty() {
            self.refill();
        }
        self.near.pop()
    }

    /// Turns the heap into a radix heap: its earliest time becomes `last`, and only the items
    /// at that time stay in the heap (items at the end of time, [`ALL`], cannot spread).
    fn spread(&mut self) {
        let Some(top) = self.near.first().filter(|top| top.key.time.as_ps() < ALL) else { return };
        self.last = top.key.time.as_ps();
        for e in self.near.take() {
            self.push(e);
        }
    }

    /// Turns a radix heap whose heap is empty into one heap of every bucketed item.
    fn gather(&mut self) {
        self.last = ALL;
        while self.full != 0 {
            let b = self.full.trailing_zeros() as usize;
            self.full &= !(1 << b);
            for e in self.buckets[b].drain(..) {
                self.near.push(e);
            }
        }
        self.far = 0;
    }

    /// Moves the lowest non-empty bucket into the near heap and makes its latest time the new
    /// `last`. The other buckets' items keep their bucket: the new `last` shares every bit
    /// above that bucket's with the old one, so their times still first differ from it in
    /// the same bit, and are later.
    fn refill(&mut self) {
        if self.far < GATHER {
            return self.gather();
        }
        let b = self.full.trailing_zeros() as usize;
        self.full &= !(1 << b);
        let items = &mut self.buckets[b];
        self.far -= items.len();
        self.last = items.iter().map(|i| i.key.time.as_ps()).max().unwrap_or(self.last);
        // The emptied vector keeps its capacity for the bucket's next items.
        for e in items.drain(..) {
            self.near.push(e);
        }
    }
}

/// The bucket of time `t` after `last`: one plus the highest bit in which they differ.
fn bucket(t: u64, last: u64) -> usize {
    (u64::BITS - (t ^ last).leading_zeros()) as usize
}

/// A 4-ary min-heap of items by key: half the levels of a binary heap, and a node's four
/// children share a cache line or two.
#[derive(Debug, Default)]
struct NearHeap(Vec<Item>);

impl NearHeap {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn first(&self) -> Option<Item> {
        self.0.first().copied()
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    /// Empties the heap, handing back its items in no particular order.
    fn take(&mut self) -> Vec<Item> {
        std::mem::take(&mut self.0)
    }

    fn push(&mut self, e: Item) {
        let i = self.0.len();
        self.0.push(e);
        self.sift_up(i, e);
    }

    /// Moves `e`, to be stored at `i`, up past the parents that order after it, and stores it.
    fn sift_up(&mut self, mut i: usize, e: Item) {
        while i > 0 {
            let parent = (i - 1) / D;
            if !e.key.lt(&self.0[parent].key) {
                break;
            }
            self.0[i] = self.0[parent];
            i = parent;
        }
        self.0[i] = e;
    }

    /// The index of the smallest of the children that start at `first` (at most [`D`], those
    /// below `n`). A full set is decided as a tournament of selects, not branches.
    fn least_child(&self, first: usize, n: usize) -> usize {
        let h = &self.0;
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
    fn pop(&mut self) -> Option<Item> {
        let last = self.0.pop()?;
        let Some(&top) = self.0.first() else { return Some(last) };
        let n = self.0.len();
        let mut i = 0;
        loop {
            let first = D * i + 1;
            if first >= n {
                break;
            }
            let least = self.least_child(first, n);
            self.0[i] = self.0[least];
            i = least;
        }
        self.sift_up(i, last);
        Some(top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimTime;
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
    /// pending time after a peek (a resumed actor's request), a few at the far end of time.
    /// The queue grows past [`SPREAD`] and shrinks below [`GATHER`] in turns, so it changes
    /// from one heap to a radix heap and back many times.
    #[test]
    fn it_pops_what_a_binary_heap_pops_as_time_moves_on_over_every_bucket() {
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
                q.push_request(key, i);
                Entry { key, what: Pending::Slot(i) }
            } else {
                let e = entry(r, i);
                q.push(e);
                e
            };
            reference.push(Reverse(e));
        }
        let late = Key::new(SimTime::ZERO, 1, 0, 0);
        q.push_request(late, 99_999);
        reference.push(Reverse(Entry { key: late, what: Pending::Slot(99_999) }));
        while let Some(Reverse(want)) = reference.pop() {
            assert_eq!(q.pop().map(|e| (e.key, e.what)), Some((want.key, want.what)));
        }
        assert!(q.is_empty());
    }
}
