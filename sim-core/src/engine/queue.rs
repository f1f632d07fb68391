//! The event queue: a 4-ary min-heap by key, and a FIFO per actor for its requests.
//!
//! Keys are unique, so any correct priority queue pops the same sequence; this one keeps the
//! heap small and shallow, which is what counts when hundreds of thousands of events are in
//! flight (every rank of a 1024-rank barrier posting a notify to every other). An actor's
//! requests arrive in key order (its clock never goes back and its `seq` grows), so they wait
//! in the actor's own FIFO and only its head sits in the heap. A 4-ary heap has half the levels
//! of a binary one, and a node's four children share a cache line or two.

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
    heap: Vec<Item>,
    /// Per actor, its requests behind the one in the heap: `(key, slot)` in key order.
    lanes: Vec<VecDeque<(Key, u32)>>,
}

impl EventQueue {
    /// Adds `e`.
    pub(super) fn push(&mut self, e: Entry) {
        self.push_item(Item { key: e.key, held: Held::Entry(e.what) });
    }

    /// Adds the request of `key.actor` kept in `slot`. Behind an earlier request of the same
    /// actor it waits in the actor's FIFO; out of order (never expected) it goes to the heap.
    pub(super) fn push_request(&mut self, key: Key, slot: u32) {
        let Ok(lane) = u32::try_from(key.actor) else {
            return self.push(Entry { key, what: Pending::Slot(slot) });
        };
        if self.lanes.len() <= key.actor {
            self.lanes.resize_with(key.actor + 1, VecDeque::new);
        }
        let fifo = &mut self.lanes[key.actor];
        match fifo.back() {
            None => {
                fifo.push_back((key, slot));
                self.push_item(Item { key, held: Held::Lane(lane) });
            }
            Some(&(last, _)) if last < key => fifo.push_back((key, slot)),
            Some(_) => self.push(Entry { key, what: Pending::Slot(slot) }),
        }
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
                let (key, slot) = fifo.pop_front()?;
                debug_assert_eq!(key, top.key, "a lane's head is its heap item");
                if let Some(&(next, _)) = fifo.front() {
                    self.push_item(Item { key: next, held: Held::Lane(lane) });
                }
                Some(Entry { key, what: Pending::Slot(slot) })
            }
        }
    }

    /// Whether no event is pending.
    pub(super) fn is_empty(&self) -> bool {
        self.front.is_none() && self.heap.is_empty()
    }

    /// Adds `e`: as the front when it is smaller than everything pending, else to the heap.
    fn push_item(&mut self, e: Item) {
        match self.front {
            Some(f) if e.key < f.key => {
                self.front = Some(e);
                self.heap_push(f);
            }
            Some(_) => self.heap_push(e),
            None if self.heap.first().is_none_or(|top| e.key < top.key) => self.front = Some(e),
            None => self.heap_push(e),
        }
    }

    fn heap_push(&mut self, e: Item) {
        let mut i = self.heap.len();
        self.heap.push(e);
        while i > 0 {
            let parent = (i - 1) / D;
            if self.heap[parent].key <= e.key {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = e;
    }

    fn pop_item(&mut self) -> Option<Item> {
        let last = self.heap.pop()?;
        let Some(&top) = self.heap.first() else { return Some(last) };
        let n = self.heap.len();
        let mut i = 0;
        loop {
            let first = D * i + 1;
            if first >= n {
                break;
            }
            let mut least = first;
            for c in first + 1..(first + D).min(n) {
                if self.heap[c].key < self.heap[least].key {
                    least = c;
                }
            }
            if self.heap[least].key >= last.key {
                break;
            }
            self.heap[i] = self.heap[least];
            i = least;
        }
        self.heap[i] = last;
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
        let key = Key { time: SimTime::from_ps(x % 97), actor: (x % 5) as usize, seq: x % 13, sub: u64::from(i) };
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
                let key = Key { time: SimTime::from_ps(clock[actor]), actor, seq: u64::from(i), sub: 0 };
                q.push_request(key, i);
                Entry { key, what: Pending::Slot(i) }
            } else {
                let e = entry(r, i);
                q.push(e);
                e
            };
            reference.push(Reverse(e));
        }
        let late = Key { time: SimTime::ZERO, actor: 1, seq: 0, sub: 0 };
        q.push_request(late, 99_999);
        reference.push(Reverse(Entry { key: late, what: Pending::Slot(99_999) }));
        while let Some(Reverse(want)) = reference.pop() {
            assert_eq!(q.pop().map(|e| (e.key, e.what)), Some((want.key, want.what)));
        }
        assert!(q.is_empty());
    }
}
