//! The lower bounds `(time, actor, seq)` of the running actors' next requests: the event loop
//! may apply an event only below the smallest. Each running actor has exactly one bound (its
//! `ActorState::Running`), replaced on every request.
//!
//! The running actors sit in a list, and the smallest bound is kept as it is inserted. Under
//! the coroutine driver that is all it takes: bounds are only inserted while the event loop
//! runs (each release of an actor) and only ended while it does not (each actor sends its
//! next request before the loop goes on), so the kept smallest is always there when the loop
//! asks. Only when the smallest has been ended while others run (kernels on OS threads) must
//! it be found again: by a scan of a list of at most [`SMALL`], or in a min-heap with lazy
//! deletion (a replaced bound stays in the heap, marked stale, until it reaches the top),
//! built then and kept from then until no actor runs. Bounds are compared as event keys'
//! leading words ([`Key::bound`]): one 128-bit number each, compared without branches.

use super::event::Key;
use super::state::per_actor::PerActor;
use crate::base::time::SimTime;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

type Bound = (SimTime, usize, u64);

/// Running actors up to which the smallest bound is found by a scan of the list.
const SMALL: usize = 16;

#[derive(Debug, Default)]
pub(super) struct Bounds {
    /// Each actor's live bound (time, seq), if it is running.
    live: PerActor<Option<(SimTime, u64)>>,
    /// The running actors, in no order, and each actor's place in it.
    list: Vec<usize>,
    place: PerActor<u32>,
    /// Every live bound (and stale ones) while `heaped`: the smallest had to be found among
    /// more than [`SMALL`] since the set was last empty. Cleared, not freed, when the set
    /// empties, as it does between the waves of a run.
    heap: BinaryHeap<Reverse<u128>>,
    heaped: bool,
    /// The smallest live bound as last found, while it is still live: the event loop asks
    /// for it once per event, and it changes far less often.
    first: Option<u128>,
}

impl Bounds {
    /// The bounds of the actors of `span` (none running).
    pub(super) fn new(span: std::ops::Range<usize>) -> Bounds {
        Bounds {
            live: PerActor::filled(span.clone(), None),
            list: Vec::new(),
            place: PerActor::filled(span, 0),
            heap: BinaryHeap::new(),
            heaped: false,
            first: None,
        }
    }

    /// Sets `actor`'s bound (it has none).
    pub(super) fn insert(&mut self, (t, actor, seq): Bound) {
        debug_assert!(self.live[actor].is_none(), "actor {actor} has two bounds");
        self.live[actor] = Some((t, seq));
        self.place[actor] = self.list.len() as u32;
        self.list.push(actor);
        let b = Key::bound(t, actor, seq);
        if self.heaped {
            self.heap.push(Reverse(b));
        }
        if self.first.is_some_and(|f| b < f) || self.list.len() == 1 {
            self.first = Some(b);
        }
    }

    /// Clears `actor`'s bound if it is `(t, seq)`.
    pub(super) fn remove(&mut self, &(t, actor, seq): &Bound) {
        if self.live[actor] != Some((t, seq)) {
            return;
        }
        self.live[actor] = None;
        let i = self.place[actor] as usize;
        self.list.swap_remove(i);
        if let Some(&moved) = self.list.get(i) {
            self.place[moved] = i as u32;
        }
        if self.list.is_empty() {
            self.heap.clear();
            self.heaped = false;
        }
        if self.first == Some(Key::bound(t, actor, seq)) {
            self.first = None;
        }
    }

    /// The live bound of running `actor`, packed.
    fn bound(&self, actor: usize) -> u128 {
        let (t, seq) = self.live[actor].unwrap_or((SimTime::NEVER, 0));
        Key::bound(t, actor, seq)
    }

    /// The smallest live bound, as [`Key::bound`] packs it.
    #[inline]
    pub(super) fn first_packed(&mut self) -> Option<u128> {
        if self.first.is_none() && !self.list.is_empty() {
            self.first = self.find_first();
        }
        self.first
    }

    /// The smallest live bound: by a scan of the list, or found in the heap (stale bounds
    /// above it dropped).
    fn find_first(&mut self) -> Option<u128> {
        if !self.heaped {
            if self.list.len() <= SMALL {
                return self.list.iter().map(|&a| self.bound(a)).min();
            }
            for i in 0..self.list.len() {
                let b = self.bound(self.list[i]);
                self.heap.push(Reverse(b));
            }
            self.heaped = true;
        }
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
        self.list.is_empty()
    }

    /// The actors whose bounds it can hold.
    #[cfg(test)]
    pub(super) fn live_span(&self) -> std::ops::Range<usize> {
        self.live.span()
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
        let mut b = Bounds::new(0..3);
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

    /// The coroutine driver's pattern: many actors released while the loop runs (inserts
    /// only, the smallest asked for after each), then all of them ending their bounds while it
    /// does not. The kept smallest answers every time, so no heap is ever built.
    #[test]
    fn released_waves_keep_their_smallest_without_a_heap() {
        let n = 4 * SMALL;
        let mut b = Bounds::new(0..n);
        for wave in 0..3u64 {
            let mut least = u128::MAX;
            for a in 0..n {
                let bound = (t((a as u64 * 7919 + wave) % 97), a, wave);
                b.insert(bound);
                least = least.min(Key::bound(bound.0, bound.1, bound.2));
                assert_eq!(b.first_packed(), Some(least), "wave {wave}, actor {a}");
            }
            assert!(!b.heaped, "wave {wave}: a heap was built for inserts alone");
            for a in (0..n).rev() {
                b.remove(&(t((a as u64 * 7919 + wave) % 97), a, wave));
            }
            assert!(b.is_empty() && !b.heaped && b.heap.is_empty(), "wave {wave}");
        }
    }

    /// The kept smallest bound stays right through any mix of inserts and removals (checked
    /// against a sorted set, on a fixed pseudo-random sequence), with few actors (the list
    /// alone) and with more than [`SMALL`] running at once (the heap too), every actor's bound
    /// ended now and then (back to the list).
    #[test]
    fn the_kept_first_bound_matches_a_sorted_set() {
        use std::collections::BTreeSet;
        for actors in [6, 3 * SMALL] {
            let mut b = Bounds::new(0..actors);
            let mut model: BTreeSet<u128> = BTreeSet::new();
            let mut live: Vec<Option<Bound>> = vec![None; actors];
            let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
            let mut heaped = 0;
            for step in 0..8000u64 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let a = (x >> 33) as usize % actors;
                match live[a].take() {
                    Some(old) if (x >> 20) & 3 == 0 => {
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
                if step % 1000 == 999 {
                    for old in live.iter_mut().filter_map(Option::take) {
                        b.remove(&old);
                        model.remove(&Key::bound(old.0, old.1, old.2));
                    }
                    assert!(b.is_empty() && !b.heaped && b.heap.is_empty(), "step {step}");
                }
                heaped += usize::from(b.heaped);
                assert_eq!(b.first_packed(), model.first().copied(), "{actors} actors, step {step}");
            }
            assert_eq!(heaped > 0, actors > SMALL, "{actors} actors: the heap is kept only past SMALL");
        }
    }
}
