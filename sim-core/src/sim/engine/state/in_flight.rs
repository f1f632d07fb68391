//! Every core's writes and notifies in flight, by issue number, and what waits on them.
//! `visibility.rs` decides when writes become visible.

use super::super::event::{Key, SignalLand};
use crate::api::request::Request;
use crate::base::addr::{CellRef, MemKey, Place};
use crate::base::error::SimError;
use crate::base::tensor::Runs;
use rustc_hash::FxHashMap;

/// The memory and byte runs a write covers.
pub(in crate::sim::engine) type Covered = (MemKey, Runs);

/// Issue numbers of one actor's writes in flight, ascending. Numbers are issued in increasing
/// order and few are in flight at once, so a sorted vector beats a tree.
#[derive(Clone, Debug, Default)]
pub(in crate::sim::engine) struct InFlight(pub(in crate::sim::engine) Vec<u64>);

impl InFlight {
    pub(in crate::sim::engine) fn insert(&mut self, seq: u64) {
        debug_assert!(self.0.last().is_none_or(|&l| l < seq));
        self.0.push(seq);
    }

    pub(in crate::sim::engine) fn remove(&mut self, seq: &u64) {
        if let Ok(i) = self.0.binary_search(seq) {
            self.0.remove(i);
        }
    }

    pub(in crate::sim::engine) fn first(&self) -> Option<&u64> {
        self.0.first()
    }

    pub(in crate::sim::engine) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Per-actor state of writes in flight.
#[derive(Debug)]
pub(in crate::sim::engine) struct Visibility {
    pub(in crate::sim::engine) relaxed: bool,
    /// Issue numbers of writes and notifies not landed yet.
    pub(in crate::sim::engine) inflight: Vec<InFlight>,
    /// Per actor, the bytes each data write in flight covers, by issue number (ascending).
    pub(in crate::sim::engine) regions: Vec<Vec<(u64, Covered)>>,
    /// Reads (a blocking one, or asynchronous loads) that wait for the same core's writes to
    /// overlapping bytes, in issue order.
    pub(in crate::sim::engine) held_reads: Vec<Vec<(Key, Request)>>,
    pub(in crate::sim::engine) next: Vec<u64>,
    /// Notifies that arrived before an earlier write of their core had landed.
    pub(in crate::sim::engine) held: Vec<Vec<SignalLand>>,
    /// Cells with a notify of the actor in flight: (actor, memory, offset) -> count.
    pub(in crate::sim::engine) notifying: FxHashMap<(usize, MemKey, usize), u32>,
    /// Actors blocked in `fence`.
    pub(in crate::sim::engine) fencing: Vec<bool>,
    /// Blocks that ended while their writes were in flight.
    pub(in crate::sim::engine) finishing: Vec<Option<Result<(), SimError>>>,
}

impl Visibility {
    pub(in crate::sim::engine) fn new(actors: usize, relaxed: bool) -> Visibility {
        Visibility {
            relaxed,
            inflight: vec![InFlight::default(); actors],
            regions: vec![Vec::new(); actors],
            held_reads: (0..actors).map(|_| Vec::new()).collect(),
            next: vec![0; actors],
            held: vec![Vec::new(); actors],
            notifying: FxHashMap::default(),
            fencing: vec![false; actors],
            finishing: (0..actors).map(|_| None).collect(),
        }
    }

    /// Whether notifies travel on their own path and may overtake payload.
    pub(in crate::sim::engine) fn relaxed(&self) -> bool {
        self.relaxed
    }

    /// Whether `actor` has a notify in flight to any of `cells`.
    pub(in crate::sim::engine) fn notifying(&self, actor: usize, cells: &[CellRef]) -> bool {
        !self.notifying.is_empty() && cells.iter().any(|c| self.notifying.contains_key(&(actor, c.mem, c.offset)))
    }

    /// Whether a data write of `actor` in flight overlaps `p`.
    pub(in crate::sim::engine) fn overlaps(&self, actor: usize, p: &Place) -> bool {
        self.regions[actor].iter().any(|(_, (mem, runs))| {
            *mem == p.mem && runs.iter().any(|&(a, al)| p.region.runs.iter().any(|&(b, bl)| a < b + bl && b < a + al))
        })
    }

    pub(in crate::sim::engine) fn issue(&mut self, actor: usize) -> u64 {
        let seq = self.next[actor];
        self.next[actor] += 1;
        self.inflight[actor].insert(seq);
        seq
    }
}
