//! The lower bounds `(time, actor, seq)` of the running actors' next requests: the event loop
//! may apply an event only below the smallest. Each running actor has exactly one bound (its
//! `ActorState::Running`), replaced on every request, so the set is a min-heap with lazy
//! deletion: a replaced bound stays in the heap, marked stale, until it reaches the top.
//! Bounds sit in the heap as event keys' leading words ([`Key::bound`]): one 128-bit number
//! each, compared without branches.

use super::event::Key;
use crate::base::time::SimTime;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

type Bound = (SimTime, usize, u64);

#[derive(Debug, Default)]
pub(super) struct Bounds {
    heap: BinaryHeap<Reverse<u128>>,
    /// Each actor's live bound (time, seq), if it is running.
    live: Vec<Option<(SimTime, u64)>>,
    count: usize,
}

impl Bounds {
    pub(super) fn new(actors: usize) -> Bounds {
        Bounds { heap: BinaryHeap::new(), live: vec![None; actors], count: 0 }
    }

    /// Sets `actor`'s bound (it has none).
    pub(super) fn insert(&mut self, (t, actor, seq): Bound) {
        debug_assert!(self.live[actor].is_none(), "actor {actor} has two bounds");
        self.live[actor] = Some((t, seq));
        self.count += 1;
        self.heap.push(Reverse(Key::bound(t, actor, seq)));
    }

    /// Clears `actor`'s bound if it is `(t, seq)`.
    pub(super) fn remove(&mut self, &(t, actor, seq): &Bound) {
        if self.live[actor] == Some((t, seq)) {
            self.live[actor] = None;
            self.count -= 1;
        }
    }

    /// The smallest live bound, as [`Key::bound`] packs it.
    pub(super) fn first_packed(&mut self) -> Option<u128> {
        while let Some(&Reverse(b)) = self.heap.peek() {
            let (t, a, s) = Key::unbound(b);
            if self.live[a] == Some((t, s)) {
                return Some(b);
            }
            self.heap.pop();
        }
        None
    }

    /// The smallest live bound.
    #[cfg(test)]
    pub(super) fn first(&mut self) -> Option<Bound> {
        self.first_packed().map(Key::unbound)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.count == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ns: u64) -> SimTime {
        SimTime::from_ps(ns * 1000)
    }

    #[test]
    fn the_smallest_live_bound_comes_first_and_replaced_ones_are_skipped() {
        let mut b = Bounds::new(3);
        assert_eq!(b.first(), None);
        b.insert((t(5), 0, 1));
        b.insert((t(3), 1, 7));
        b.insert((t(3), 2, 2));
        assert_eq!(b.first(), Some((t(3), 1, 7)));
        b.remove(&(t(3), 1, 7));
        b.insert((t(9), 1, 8));
        assert_eq!(b.first(), Some((t(3), 2, 2)));
        b.remove(&(t(3), 2, 2));
        assert_eq!(b.first(), Some((t(5), 0, 1)));
        // Removing a bound that is not the actor's live one changes nothing.
        b.remove(&(t(4), 0, 0));
        assert_eq!(b.first(), Some((t(5), 0, 1)));
        b.remove(&(t(5), 0, 1));
        b.remove(&(t(9), 1, 8));
        assert!(b.is_empty());
        assert_eq!(b.first(), None);
    }
}
