//! Every core's writes and notifies in flight, by issue number, and what waits on them.
//! `visibility.rs` decides when writes become visible.

use super::super::event::{Key, SignalLand};
use super::per_actor::PerActor;
use crate::api::request::Request;
use crate::base::addr::{CellRef, MemKey, Place};
use crate::base::error::SimError;
use crate::base::tensor::Runs;
use rustc_hash::FxHashMap;
use std::ops::Range;

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

/// The landings, on one island, of one writer's writes to that island, numbered in the order
/// it issued them: all below `below` have landed, and those in `above` too.
#[derive(Clone, Debug, Default)]
pub(in crate::sim::engine) struct Landings {
    pub(in crate::sim::engine) below: u32,
    above: std::collections::BTreeSet<u32>,
}

impl Landings {
    /// Write `n` landed.
    pub(in crate::sim::engine) fn mark(&mut self, n: u32) {
        if n != self.below {
            self.above.insert(n);
            return;
        }
        self.below += 1;
        while self.above.remove(&self.below) {
            self.below += 1;
        }
    }
}

/// A notify to another island than its writer's, as its island knows it, until it is applied.
/// It is applied once it has arrived, the writer's earlier writes and notifies to the cell's
/// island have landed there (as that island sees them: as many as its `nth`), and, if the
/// writer had earlier data writes to other islands in flight (it says so: `Away::held`),
/// once the writer's release (sent when it learnt they had landed) has come. The release may
/// come first.
#[derive(Debug, Default)]
pub(in crate::sim::engine) struct CrossNotify {
    /// The writer has released it (or never had to).
    pub(in crate::sim::engine) released: bool,
    /// It has arrived at its cell.
    pub(in crate::sim::engine) arrived: Option<SignalLand>,
}

/// Per-actor state of writes in flight.
#[derive(Debug)]
pub(in crate::sim::engine) struct Visibility {
    pub(in crate::sim::engine) relaxed: bool,
    /// Issue numbers of writes and notifies not landed yet.
    pub(in crate::sim::engine) inflight: PerActor<InFlight>,
    /// Per actor, the bytes each data write in flight covers, by issue number (ascending).
    pub(in crate::sim::engine) regions: PerActor<Vec<(u64, Covered)>>,
    /// Reads (a blocking one, or asynchronous loads) that wait for the same core's writes to
    /// overlapping bytes, in issue order.
    pub(in crate::sim::engine) held_reads: PerActor<Vec<(Key, Request)>>,
    pub(in crate::sim::engine) next: PerActor<u64>,
    /// Notifies that arrived before an earlier write of their core had landed.
    pub(in crate::sim::engine) held: PerActor<Vec<SignalLand>>,
    /// Cells with a notify of the actor in flight: (actor, memory, offset) -> count.
    pub(in crate::sim::engine) notifying: FxHashMap<(usize, MemKey, usize), u32>,
    /// Actors blocked in `fence`.
    pub(in crate::sim::engine) fencing: PerActor<bool>,
    /// Blocks that ended while their writes were in flight.
    pub(in crate::sim::engine) finishing: PerActor<Option<Result<(), SimError>>>,
    /// Each chip's island (see `Network::island`); all 0 on a machine without switches.
    pub(in crate::sim::engine) islands: Vec<u32>,
    /// The machine is one island: every landing is known at once (the common case, checked
    /// before any per-chip lookup).
    pub(in crate::sim::engine) one_island: bool,
    /// Per (writer, island) other than the writer's own, the writes issued to it so far.
    pub(in crate::sim::engine) issued_to: FxHashMap<(usize, u32), u32>,
    /// Per (writer, island), the landings there of the writer's writes to it.
    pub(in crate::sim::engine) landings: FxHashMap<(usize, u32), Landings>,
    /// Notifies to another island than their writer's, by (writer, issue number).
    pub(in crate::sim::engine) cross: FxHashMap<(usize, u64), CrossNotify>,
    /// Per writer, its cross-island notifies not released yet, in issue order, with the chip
    /// of each one's cell.
    pub(in crate::sim::engine) unreleased: PerActor<Vec<(u64, usize)>>,
    /// Per (writer, island), its cross-island notifies there that have arrived and been
    /// released and wait for earlier writes to land there, in issue order.
    pub(in crate::sim::engine) waiting: FxHashMap<(usize, u32), Vec<u64>>,
}

impl Visibility {
    /// The state of the actors of `span`, none with anything in flight.
    pub(in crate::sim::engine) fn new(span: Range<usize>, relaxed: bool, islands: Vec<u32>) -> Visibility {
        Visibility {
            relaxed,
            inflight: PerActor::new(span.clone(), InFlight::default),
            regions: PerActor::new(span.clone(), Vec::new),
            held_reads: PerActor::new(span.clone(), Vec::new),
            next: PerActor::filled(span.clone(), 0),
            held: PerActor::new(span.clone(), Vec::new),
            notifying: FxHashMap::default(),
            fencing: PerActor::filled(span.clone(), false),
            finishing: PerActor::new(span.clone(), || None),
            one_island: islands.windows(2).all(|w| w[0] == w[1]),
            islands,
            issued_to: FxHashMap::default(),
            landings: FxHashMap::default(),
            cross: FxHashMap::default(),
            unreleased: PerActor::new(span, Vec::new),
            waiting: FxHashMap::default(),
        }
    }

    /// The island of `chip` (0 past the machine).
    pub(in crate::sim::engine) fn island(&self, chip: usize) -> u32 {
        self.islands.get(chip).copied().unwrap_or(0)
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

    /// Numbers a write of `actor` and counts it in flight.
    pub(in crate::sim::engine) fn issue(&mut self, actor: usize) -> u64 {
        let seq = self.next[actor];
        self.next[actor] += 1;
        self.inflight[actor].insert(seq);
        seq
    }

    /// The first data write of `actor` in flight (as the actor knows) with its island, and the
    /// first one in flight to another island than that one (issue numbers; `u64::MAX` for
    /// none).
    pub(in crate::sim::engine) fn data_fronts(&self, actor: usize) -> (u64, u32, u64) {
        let regions = &self.regions[actor];
        let Some((first, (mem, _))) = regions.first() else { return (u64::MAX, 0, u64::MAX) };
        let island = self.island(mem.chip());
        let other = regions.iter().find(|(_, (m, _))| self.island(m.chip()) != island).map_or(u64::MAX, |r| r.0);
        (*first, island, other)
    }

    /// Whether `actor` has a data write in flight (as it knows) to another island than
    /// `island`: all of them were issued before anything it issues now.
    pub(in crate::sim::engine) fn data_elsewhere(&self, actor: usize, island: u32) -> bool {
        self.regions[actor].iter().any(|(_, (m, _))| self.island(m.chip()) != island)
    }

    /// Numbers a write of `writer` (on island `home`) among its writes to `island`, if that
    /// is another island.
    pub(in crate::sim::engine) fn nth_to(&mut self, writer: usize, home: u32, island: u32) -> Option<u32> {
        if island == home {
            return None;
        }
        let n = self.issued_to.entry((writer, island)).or_default();
        *n += 1;
        Some(*n - 1)
    }
}
