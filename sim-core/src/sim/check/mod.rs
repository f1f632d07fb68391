//! The protocol checker: happens-before race detection, stale reads, signal misuse and
//! deadlocks, turned into [`Finding`]s. It is off unless [`RunOptions::check`](crate::RunOptions::check)
//! (crate::RunOptions) is set; the engine's observers (`sim/engine/observe/mod.rs`) call its hooks as
//! the engine applies events.
//!
//! Happens-before: every block execution is a *strand* with a vector clock. A strand starts
//! with the clock of its task's start (the chip's earlier dispatches and the task's
//! dependencies), a notify carries its sender's clock to the cell and a satisfied wait joins
//! the clocks of its cells, a completed task passes its blocks' clocks (and its deferred
//! conditions' cells) to dependents, and a dispatch passes its tasks' clocks to the chip's next
//! dispatch. Host staging happens before the run and host reads after it.

mod access;
mod cells;
mod data_rules;
mod finding;
mod lanes;
mod observe;
mod sdma;
mod sdma_rules;
mod shadow;
mod signal_rules;
mod summary;
mod vclock;

pub use finding::{Finding, FindingKind, FindingSite};
use sdma::SdmaClock;
pub(crate) use shadow::Who;
pub use summary::{CheckOptions, CheckReport, deadlock_findings, livelock_findings};

use crate::base::addr::{CellRef, MemKey};
use crate::base::time::SimTime;
use shadow::Shadow;
use std::collections::BTreeMap;
use std::sync::Arc;
use vclock::{Epoch, VClock};

/// One block execution.
#[derive(Debug)]
struct Strand {
    id: u32,
    vc: Arc<VClock>,
    who: Who,
    /// Its lane, and the lanes per block of its task.
    lane: usize,
    lanes: usize,
}

impl Strand {
    fn epoch(&self) -> Epoch {
        Epoch { strand: self.id, clock: self.vc.get(self.id) }
    }

    /// A release: later accesses of this strand are not covered by what was sent.
    fn tick(&mut self) {
        let c = self.vc.get(self.id);
        Arc::make_mut(&mut self.vc).set(self.id, c + 1);
    }
}

/// Happens-before state of one task of a chip's active dispatch.
#[derive(Clone, Debug, Default)]
struct TaskHb {
    start: VClock,
    end: VClock,
}

/// Happens-before state of one chip.
#[derive(Debug, Default)]
struct ChipHb {
    /// Everything the chip's finished dispatches saw.
    done: VClock,
    /// Tasks of the active dispatch.
    tasks: Vec<TaskHb>,
    /// Instance number of the active dispatch on this chip.
    dispatch: usize,
}

/// The checker's state for one run.
#[derive(Debug)]
pub(crate) struct Checker {
    next_strand: u32,
    /// The strand each actor runs, by actor.
    running: Vec<Option<Strand>>,
    chips: Vec<ChipHb>,
    shadow: Shadow,
    access: access::Pending,
    cells: cells::Cells,
    lanes: lanes::Lanes,
    findings: Vec<Finding>,
    seen: BTreeMap<(FindingKind, usize, String), usize>,
    /// The clocks of SDMA transfers posted in a block and not yet waited, by transfer id.
    sdma: BTreeMap<u64, SdmaClock>,
}

impl Checker {
    pub(crate) fn new(actors: usize, chips: usize) -> Checker {
        Checker {
            next_strand: 0,
            running: (0..actors).map(|_| None).collect(),
            chips: (0..chips).map(|_| ChipHb::default()).collect(),
            shadow: Shadow::default(),
            access: access::Pending::default(),
            cells: cells::Cells::default(),
            lanes: lanes::Lanes::default(),
            findings: Vec::new(),
            seen: BTreeMap::new(),
            sdma: BTreeMap::new(),
        }
    }

    /// A dispatch of `tasks` tasks starts on `chip`.
    pub(crate) fn dispatch_start(&mut self, chip: usize, tasks: usize, instance: usize) {
        let c = &mut self.chips[chip];
        c.tasks = vec![TaskHb::default(); tasks];
        c.dispatch = instance;
    }

    /// Task `ti` of `chip`'s dispatch is placed; it starts after `deps`.
    pub(crate) fn task_start(&mut self, chip: usize, ti: usize, deps: impl IntoIterator<Item = usize>) {
        let c = &mut self.chips[chip];
        let mut vc = c.done.clone();
        for d in deps {
            if let Some(t) = c.tasks.get(d) {
                vc.join(&t.end);
            }
        }
        if let Some(t) = c.tasks.get_mut(ti) {
            t.start = vc;
        }
    }

    /// A block of task `ti` starts on `actor`, as lane `lane` of `lanes`.
    pub(crate) fn block_start(
        &mut self,
        actor: usize,
        chip: usize,
        ti: usize,
        who: Who,
        (lane, lanes): (usize, usize),
    ) {
        let id = self.next_strand;
        self.next_strand += 1;
        let mut vc = self.chips[chip].tasks.get(ti).map(|t| t.start.clone()).unwrap_or_default();
        vc.set(id, 1);
        self.running[actor] = Some(Strand { id, vc: Arc::new(vc), who, lane, lanes });
    }

    /// The block on `actor` (of task `ti`) ended.
    pub(crate) fn block_end(&mut self, actor: usize, chip: usize, ti: usize) {
        let Some(s) = self.running[actor].take() else { return };
        if let Some(t) = self.chips[chip].tasks.get_mut(ti) {
            t.end.join(&s.vc);
        }
    }

    /// A deferred condition of task `ti` held: its completion saw the cell's writers.
    pub(crate) fn deferred_ready(&mut self, chip: usize, ti: usize, cell: &CellRef) {
        let vc = self.cells.release_clock(cell.mem, cell.offset);
        if let (Some(t), Some(vc)) = (self.chips[chip].tasks.get_mut(ti), vc) {
            t.end.join(&vc);
        }
    }

    /// `chip`'s active dispatch completed.
    pub(crate) fn dispatch_end(&mut self, chip: usize) {
        let c = &mut self.chips[chip];
        for t in std::mem::take(&mut c.tasks) {
            c.done.join(&t.end);
        }
    }

    /// Who runs on `actor` and its epoch, for an access issued now.
    fn strand(&self, actor: usize) -> Option<&Strand> {
        self.running.get(actor).and_then(Option::as_ref)
    }

    /// Records a finding, or counts it again if the same one was already made.
    fn report(&mut self, f: Finding) {
        let key = (f.kind, f.rank, f.message.clone());
        match self.seen.get(&key) {
            Some(&i) => self.findings[i].count += 1,
            None => {
                self.seen.insert(key, self.findings.len());
                self.findings.push(f);
            }
        }
    }

    /// Ends the run: checks declared self-clearing cells (`value` reads a cell) and returns
    /// every finding.
    pub(crate) fn finish(mut self, now: SimTime, value: impl Fn(MemKey, usize) -> i32) -> Vec<Finding> {
        for f in self.cells.leftover_credits(now, value) {
            self.report(f);
        }
        self.findings
    }
}
