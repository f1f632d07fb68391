//! What the checker knows of each signal cell: the clock it releases to its waiters, its recent
//! value changes and writers, the notifies in flight, and the findings its rules make (Set mixed
//! with AtomicAdd, credits left behind). `signal_rules.rs` applies notifies and waits to it.

use super::finding::{Finding, FindingKind, FindingSite, site_on};
use super::shadow::Access;
use super::vclock::{Epoch, VClock};
use crate::base::addr::{CellRef, MemKey};
use crate::base::signal::Cond;
use crate::base::signal::NotifyOp;
use crate::base::time::SimTime;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

/// How many value changes per cell are remembered (for skipped Eq values and reports).
pub(super) const TRANSITIONS: usize = 16;

/// A wait that consumed a cell's value.
#[derive(Debug)]
pub(super) struct Consumed {
    pub(super) cond: Cond,
    pub(super) epoch: Epoch,
    pub(super) by: Arc<Access>,
}

/// What the checker knows of one cell.
#[derive(Debug)]
pub(super) struct CellState {
    pub(super) chip: usize,
    pub(super) name: String,
    /// The clock a wait satisfied by this cell acquires.
    pub(super) vc: VClock,
    pub(super) last_set: Option<Arc<Access>>,
    /// AtomicAdds since the last Set (those not ordered before a later one).
    pub(super) adds: Vec<Arc<Access>>,
    /// Recent `(old, new, writer)` value changes.
    pub(super) changes: VecDeque<(i32, i32, Arc<Access>)>,
    pub(super) consumed: Option<Consumed>,
    pub(super) expect_clear: bool,
}

/// Every signal cell used in the run.
#[derive(Debug, Default)]
pub(super) struct Cells {
    pub(super) map: BTreeMap<(MemKey, usize), CellState>,
    /// Notifies in flight: the sender's access and clock, the op and the value.
    pub(super) inflight: BTreeMap<u64, (Arc<Access>, Arc<VClock>, NotifyOp, i32)>,
}

pub(super) fn cell_name(c: &CellRef) -> String {
    let coords: Vec<String> = c.coords.iter().map(|x| x.to_string()).collect();
    format!("{}[{}]", c.buffer, coords.join(", "))
}

/// A finding site for an operation on a cell.
pub(super) fn cell_site(a: &Access, cell: &str) -> FindingSite {
    site_on(a, cell.to_string())
}

pub(super) fn who(a: &Access) -> String {
    format!("rank {} (task `{}`)", a.who.rank, a.who.task)
}

impl Cells {
    pub(super) fn state(&mut self, c: &CellRef) -> &mut CellState {
        self.map.entry((c.mem, c.offset)).or_insert_with(|| CellState {
            chip: c.chip(),
            name: cell_name(c),
            vc: VClock::default(),
            last_set: None,
            adds: Vec::new(),
            changes: VecDeque::new(),
            consumed: None,
            expect_clear: false,
        })
    }

    /// Whether any byte of `runs` in `mem` is a known signal cell.
    pub(super) fn any_known(&self, mem: MemKey, runs: &[(usize, usize)]) -> bool {
        runs.iter().any(|&(off, len)| self.map.range((mem, off.saturating_sub(3))..(mem, off + len)).next().is_some())
    }

    /// The clock a wait on the cell at `offset` of `mem` acquires.
    pub(super) fn release_clock(&self, mem: MemKey, offset: usize) -> Option<VClock> {
        self.map.get(&(mem, offset)).map(|s| s.vc.clone())
    }

    /// A plain data store over known cells: a Set for ordering, and mixed with any add it is
    /// not ordered with.
    pub(super) fn data_store(
        &mut self,
        mem: MemKey,
        runs: &[(usize, usize)],
        acc: &Arc<Access>,
        vc: &VClock,
    ) -> Vec<Finding> {
        let keys: Vec<(MemKey, usize)> = runs
            .iter()
            .flat_map(|&(off, len)| self.map.range((mem, off)..(mem, off + len)).map(|(k, _)| *k).collect::<Vec<_>>())
            .collect();
        let mut found = Vec::new();
        for k in keys {
            if let Some(s) = self.map.get_mut(&k) {
                found.extend(s.adds.iter().filter(|a| !vc.covers(a.epoch)).map(|a| mixed(a, acc, &s.name, s.chip)));
                s.vc = vc.clone();
                s.last_set = Some(acc.clone());
                s.adds.clear();
                s.consumed = None;
            }
        }
        found
    }
}

/// A notify in flight, as [`Checker::notify_issue`] is given it.
pub(crate) type NotifyId = u64;

impl Cells {
    /// Findings for self-clearing cells that are not zero.
    pub(super) fn leftover_credits(&self, now: SimTime, value: impl Fn(MemKey, usize) -> i32) -> Vec<Finding> {
        let mut out = Vec::new();
        for (&(mem, off), st) in &self.map {
            let v = value(mem, off);
            if !st.expect_clear || v == 0 {
                continue;
            }
            out.push(Finding {
                kind: FindingKind::CreditsLeft,
                time: now,
                rank: st.chip,
                message: format!(
                    "self-clearing signal `{}` on rank {} holds {v} when the run ends: credits were deposited that no wait \
                     consumed and cleared (an aborted call, or a count that does not match the waits)",
                    st.name, st.chip
                ),
                sites: st.changes.iter().rev().take(4).rev().map(|(_, _, a)| cell_site(a, &st.name)).collect(),
                count: 1,
                seed: None,
            });
        }
        out
    }
}

/// A Set and an AtomicAdd (or store) on one cell that nothing orders.
pub(super) fn mixed(first: &Arc<Access>, second: &Arc<Access>, name: &str, rank: usize) -> Finding {
    Finding {
        kind: FindingKind::SetMixedWithAdd,
        time: second.time,
        rank,
        message: format!(
            "`{}` by {} and `{}` by {} change `{name}` on rank {rank} with nothing ordering them: the Set can erase the \
             add or be counted on top of it; use one kind of notify per cell, or order the reset after the adds",
            first.op,
            who(first),
            second.op,
            who(second)
        ),
        sites: vec![cell_site(first, name), cell_site(second, name)],
        count: 1,
        seed: None,
    }
}
