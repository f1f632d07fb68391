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
    /// The smallest live bound as last found, while it is still live: the event loop asks
    /// for it once per event, and it changes far less often.
    first: Option<u128>,
}

impl Bounds {
    pub(super) fn new(actors: usize) -> Bounds {
        Bounds { heap: BinaryHeap::new(), live: vec![None; actors], count: 0, first: None }
    }

    /// Sets `actor`'s bound (it has none).
    pub(super) fn insert(&mut self, (t, actor, seq): Bound) {
        debug_assert!(self.live[actor].is_none(), "actor {actor} has two bounds");
        self.live[actor] = Some((t, seq));
        self.count += 1;
        let b = Key::bound(t, actor, seq);
        self.heap.push(Reverse(b));
        if self.first.is_some_and(|f| b < f) {
            self.first = Some(b);
        }
    }

    /// Clears `actor`'s bound if it is `(t, seq)`.
    pub(super) fn remove(&mut self, &(t, actor, seq): &Bound) {
        if self.live[actor] == Some((t, seq)) {
            self.live[actor] = None;
            self.count -= 1;
            if self.first == Some(Key::bound(t, actor, seq)) {
                self.first = None;
            }
        }
    }

    /// The smallest live bound, as [`Key::bound`] packs it.
    #[inline]
    pub(super) fn first_packed(&mut self) -> Option<u128> {
        if self.first.is_none() {
            self.first = self.find_first();
        }
        self.first
    }

    /// The smallest live bound, found in the heap (stale bounds above it dropped).
    fn find_first(&mut self) -> Option<u128> {
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

    /// The kept smallest bound stays right through any mix of inserts and removals (checked
    /// against a sorted set, on a fixed pseudo-random sequence).
    #[test]
    fn the_kept_first_bound_matches_a_sorted_set() {
        use std::collections::BTreeSet;
        let actors = 6;
        let mut b = Bounds::new(actors);
        let mut model: BTreeSet<u128> = BTreeSet::new();
        let mut live: Vec<Option<Bound>> = vec![None; actors];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for step in 0..4000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let a = (x >> 33) as usize % actors;
            match live[a].take() {
                Some(old) if (x >> 20) & 1 == 0 => {
                    b.remove(&old);
                    model.remove(&Key::bound(old.0, old.1, old.2));
                }
                Some(old) => live[a] = Some(old),
                None => {
                    let bound = (t((x >> 40) % 50), a, step);
                    b.insert(bound);
                    model.insert(Key::bound(bound.0, bound.1, bound.2));
                    live[a] = Some(bound);
                }
            }
            assert_eq!(b.first_packed(), model.first().copied(), "step {step}");
        }
    }
}
