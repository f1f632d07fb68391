//! The facts of a split run's partition, kept to be replayed in one engine's order.
//!
//! The checker and the tracer are one state for the whole run (shadow memory, the timeline),
//! and a user's observer is one object, so a partition of a split run feeds none of them: it
//! records every fact, owned, stamped
//! with the key of the event whose application emitted it. The merge interleaves the
//! partitions' recordings as one engine applies events (always the smallest key among the
//! partitions' next events, see [`interleave`]), numbers the ids again by first appearance,
//! and replays the result into one checker, one tracer and the user's observers, which then
//! see exactly what one engine would have shown them (after the run, not as it goes).
//!
//! Each partition numbers its ids from its own base (the partition in the high bits), so an
//! id that travels with an event to another partition (a write landing there) stays
//! distinct from that partition's own. Over processes a recording travels as bytes with the
//! partition's result (serde, the parts as crossings carry them: `wire.rs`).

use super::keep::Keep;
use crate::base::signal::{Cond, NotifyOp};
use crate::base::time::SimTime;
use crate::results::stats::DispatchRecord;
use crate::results::trace::LinkBusy;
// The types the list of facts names, which the generated code spells.
use crate::sim::observe::{
    BlockStart, CoreId, EqWaiters, MemRegion, Observe, OpAt, OpId, OpInfo, SdmaId, SignalCell, SignalCells, WriteId,
    for_each_fact,
};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Where a fact sits in one engine's order: the key of the event that emitted it, as
/// `(time, actor, seq)` packed and `sub`.
pub(crate) type Stamp = (u128, u64);

/// What one partition recorded.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Recording {
    /// Cores per chip.
    pub(crate) cores: usize,
    /// The facts, each with the stamp of the event that emitted it, in the order emitted.
    pub(crate) facts: Vec<(Stamp, Fact)>,
    /// Facts emitted while no event was being applied (none is expected): their place in
    /// one engine's order is unknown, so the merge refuses the recording.
    pub(crate) stray: usize,
}

/// A partition's observer: keeps every fact with the key of the event being applied.
#[derive(Debug)]
pub(crate) struct Recorder {
    /// The event being applied, if any.
    at: Option<Stamp>,
    /// Whether the run is traced (kernels then report their local work).
    pub(super) traced: bool,
    rec: Recording,
}

impl Recorder {
    pub(super) fn new(traced: bool) -> Recorder {
        Recorder { at: None, traced, rec: Recording::default() }
    }

    /// Facts from now on are emitted by the event stamped `at` (none: between events).
    #[inline]
    pub(super) fn applying(&mut self, at: Option<Stamp>) {
        self.at = at;
    }

    /// What was recorded.
    pub(super) fn finish(self, cores: usize) -> Recording {
        Recording { cores, ..self.rec }
    }

    fn push(&mut self, f: Fact) {
        match self.at {
            Some(s) => self.rec.facts.push((s, f)),
            None => self.rec.stray += 1,
        }
    }
}

/// The partitions' facts in one engine's order.
///
/// Each recording is in its partition's order of application. One engine applies, at every
/// step, the smallest key it holds; a partition's next event is either held then, or is
/// caused later (by a running core's request, never before that core's bound; or by another
/// partition's event, at least the lookahead later), so it is no smaller. One engine's order
/// is therefore the merge that always takes the smallest next key among the partitions
/// (keys are unique, so there is no tie; a tie means the recordings are not one run's).
pub(crate) fn interleave(parts: Vec<Recording>) -> Result<Vec<Fact>, String> {
    if let Some((p, r)) = parts.iter().enumerate().find(|(_, r)| r.stray > 0) {
        return Err(format!("partition {p} reported {} facts outside any event", r.stray));
    }
    let total = parts.iter().map(|r| r.facts.len()).sum();
    let mut queues: Vec<VecDeque<(Stamp, Fact)>> = parts.into_iter().map(|r| r.facts.into()).collect();
    let mut out = Vec::with_capacity(total);
    loop {
        let mut best: Option<(usize, Stamp)> = None;
        for (p, q) in queues.iter().enumerate() {
            let Some(&(s, _)) = q.front() else { continue };
            match best {
                Some((_, b)) if s == b => {
                    return Err(format!("two partitions applied an event with one key ({s:?}): not one run"));
                }
                Some((_, b)) if s > b => {}
                _ => best = Some((p, s)),
            }
        }
        let Some((p, s)) = best else { return Ok(out) };
        let q = &mut queues[p];
        while q.front().is_some_and(|&(t, _)| t == s) {
            if let Some((_, f)) = q.pop_front() {
                out.push(f);
            }
        }
    }
}

/// The run's dispatch records in the order one engine kept them: the order their
/// dispatches ended in `facts` (each chip's records are in order already).
pub(crate) fn order_records(records: Vec<DispatchRecord>, facts: &[Fact], chips: usize) -> Vec<DispatchRecord> {
    let mut by_chip: Vec<VecDeque<DispatchRecord>> = (0..chips).map(|_| VecDeque::new()).collect();
    let mut rest = Vec::new();
    for r in records {
        match by_chip.get_mut(r.chip) {
            Some(q) => q.push_back(r),
            None => rest.push(r),
        }
    }
    let mut out = Vec::with_capacity(rest.len());
    for f in facts {
        if let Fact::DispatchEnded { rank } = f
            && let Some(r) = by_chip.get_mut(*rank).and_then(VecDeque::pop_front)
        {
            out.push(r);
        }
    }
    out.extend(by_chip.into_iter().flatten());
    out.append(&mut rest);
    out
}

/// The recorded [`Fact`] and the [`Recorder`] that keeps each fact as one, from the list of
/// facts: each argument kept by its [`Keep`] (`replay.rs` tells the facts again).
macro_rules! recorded_facts {
    ($($(#[$doc:meta])* $variant:ident $method:ident($($arg:ident: $ty:ty),*);)*) => {
        /// One fact of the [`Observe`] trait, owning what the trait lends (each argument as
        /// its [`Keep`] keeps it).
        #[derive(Clone, Debug, Serialize, Deserialize)]
        pub(crate) enum Fact {
            $($variant { $($arg: <fn($ty) as Keep>::Kept),* },)*
        }

        impl Observe for Recorder {
            $(
                fn $method(&mut self, $($arg: $ty),*) {
                    self.push(Fact::$variant { $($arg: <fn($ty) as Keep>::keep($arg)),* });
                }
            )*
        }
    };
}

for_each_fact!(recorded_facts);

#[cfg(test)]
mod tests {
    use super::*;

    /// A recording of facts `(stamp, rank)`, each a `DispatchEnded` of that rank (a label).
    fn rec(facts: &[(u128, usize)]) -> Recording {
        let facts = facts.iter().map(|&(s, rank)| ((s, 0), Fact::DispatchEnded { rank })).collect();
        Recording { cores: 1, facts, stray: 0 }
    }

    fn labels(facts: &[Fact]) -> Vec<usize> {
        facts.iter().map(|f| if let Fact::DispatchEnded { rank } = f { *rank } else { usize::MAX }).collect()
    }

    /// The smallest next key goes first; a partition's own order is kept even where its keys
    /// go down (an event caused at the same time on a chip numbered lower), and the facts of
    /// one event stay together.
    #[test]
    fn partitions_interleave_by_their_smallest_next_key_keeping_their_own_order() {
        let p0 = rec(&[(2, 0), (2, 1), (5, 2), (3, 3)]);
        let p1 = rec(&[(4, 10), (6, 11)]);
        let got = interleave(vec![p0, p1]).unwrap();
        assert_eq!(labels(&got), [0, 1, 10, 2, 3, 11]);
    }

    #[test]
    fn recordings_that_are_not_one_runs_are_refused() {
        let tie = interleave(vec![rec(&[(1, 0)]), rec(&[(1, 1)])]).unwrap_err();
        assert!(tie.contains("one key"), "{tie}");
        let stray = interleave(vec![rec(&[(1, 0)]), Recording { stray: 2, ..rec(&[]) }]).unwrap_err();
        assert!(stray.contains("partition 1 reported 2 facts outside any event"), "{stray}");
    }

    /// Records of each chip are taken in the order their dispatches ended in the facts.
    #[test]
    fn dispatch_records_follow_the_order_their_dispatches_ended() {
        let record = |chip, index| DispatchRecord {
            chip,
            index,
            name: String::new(),
            start: SimTime::ZERO,
            end: SimTime::ZERO,
            tasks: Vec::new(),
        };
        let records = vec![record(0, 0), record(0, 1), record(1, 0)];
        let ended = [1, 0, 0].map(|rank| Fact::DispatchEnded { rank });
        let got: Vec<(usize, usize)> = order_records(records, &ended, 2).iter().map(|r| (r.chip, r.index)).collect();
        assert_eq!(got, [(1, 0), (0, 0), (0, 1)]);
    }
}
