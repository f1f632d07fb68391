//! The event queue: a 4-ary min-heap of [`Entry`]s by key. Keys are unique, so any correct
//! priority queue pops the same sequence; this one is shallower than a binary heap (half the
//! levels, and a node's four children share a cache line or two), which is what counts when
//! hundreds of thousands of events are in flight (every rank of a 1024-rank barrier notifying
//! every other).

use super::event::Entry;

/// Children per node.
const D: usize = 4;

/// Pending events, smallest key first.
#[derive(Debug, Default)]
pub(super) struct EventQueue {
    heap: Vec<Entry>,
}

impl EventQueue {
    /// Adds `e`.
    pub(super) fn push(&mut self, e: Entry) {
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

    /// The entry with the smallest key, if any.
    pub(super) fn peek(&self) -> Option<&Entry> {
        self.heap.first()
    }

    /// Removes and returns the entry with the smallest key.
    pub(super) fn pop(&mut self) -> Option<Entry> {
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

    /// Whether no event is pending.
    pub(super) fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::super::event::{Key, Pending};
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
            assert_eq!(q.peek().map(|e| e.key), reference.peek().map(|Reverse(e)| e.key));
        }
        while let Some(Reverse(want)) = reference.pop() {
            assert_eq!(q.pop().map(|e| e.key), Some(want.key));
        }
        assert!(q.is_empty() && q.pop().is_none());
    }
}
