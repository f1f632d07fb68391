//! Who waits on which signal cells, and the recent writers of every signal cell (for reports).

use super::observe::TraceId;
use crate::addr::{CellRef, MemKey};
use crate::memory::Memory;
use crate::report::CellWrite;
use crate::signal::{Cond, WaitCmp};
use crate::time::SimTime;
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, VecDeque};

/// How many writes per cell a report shows.
const HISTORY: usize = 4;

/// Who is released when a waiter's condition holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum WaiterKind {
    /// A core blocked in `wait`.
    Blocking { actor: usize },
    /// One condition of a deferred task (its block has already retired).
    Deferred { actor: usize, chip: usize, task: usize, block: usize },
}

/// A registered wait.
#[derive(Clone, Debug)]
pub(crate) struct Waiter {
    pub(crate) kind: WaiterKind,
    pub(crate) cells: Vec<CellRef>,
    pub(crate) cond: Cond,
    pub(crate) since: SimTime,
    /// The traced wait operation (none when not tracing).
    pub(crate) trace_id: TraceId,
}

/// The registry of waiters and the write history of cells.
#[derive(Default, Debug)]
pub(crate) struct Signals {
    waiters: Vec<Option<Waiter>>,
    free: Vec<usize>,
    by_cell: BTreeMap<(MemKey, usize), Vec<usize>>,
    /// Looked up by cell, never iterated.
    history: FxHashMap<(MemKey, usize), VecDeque<CellWrite>>,
}

impl Signals {
    /// Whether every cell of `w` satisfies its condition now.
    pub(crate) fn satisfied(mem: &Memory, cells: &[CellRef], cond: Cond) -> bool {
        cells.iter().all(|c| cond.holds(mem.cell(c)))
    }

    /// Adds a waiter; it stays until a write makes it true.
    pub(crate) fn register(&mut self, w: Waiter) {
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.waiters.push(None);
                self.waiters.len() - 1
            }
        };
        for c in &w.cells {
            self.by_cell.entry((c.mem, c.offset)).or_default().push(id);
        }
        self.waiters[id] = Some(w);
    }

    /// Whether anyone waits on a cell inside bytes `[lo, hi)` of `mem`.
    pub(crate) fn watched(&self, mem: MemKey, lo: usize, hi: usize) -> bool {
        self.by_cell.range((mem, lo)..(mem, hi)).next().is_some()
    }

    /// Watched cell offsets inside `[lo, hi)`.
    pub(crate) fn watched_cells(&self, mem: MemKey, lo: usize, hi: usize) -> Vec<usize> {
        self.by_cell.range((mem, lo)..(mem, hi)).map(|(k, _)| k.1).collect()
    }

    /// Removes and returns, in registration-slot order, the waiters on cells in `[lo, hi)` of
    /// `mem` whose conditions now hold, except those `hold` keeps waiting.
    pub(crate) fn take_satisfied(
        &mut self,
        memory: &Memory,
        (mem, lo, hi): (MemKey, usize, usize),
        hold: impl Fn(&Waiter) -> bool,
    ) -> Vec<Waiter> {
        let mut ids: Vec<usize> =
            self.by_cell.range((mem, lo)..(mem, hi)).flat_map(|(_, v)| v.iter().copied()).collect();
        ids.sort_unstable();
        ids.dedup();
        let mut out = Vec::new();
        for id in ids {
            let ok = self.waiters[id].as_ref().is_some_and(|w| Self::satisfied(memory, &w.cells, w.cond) && !hold(w));
            if !ok {
                continue;
            }
            let Some(w) = self.waiters[id].take() else {
                continue;
            };
            for c in &w.cells {
                let k = (c.mem, c.offset);
                if let Some(v) = self.by_cell.get_mut(&k) {
                    v.retain(|&x| x != id);
                    if v.is_empty() {
                        self.by_cell.remove(&k);
                    }
                }
            }
            self.free.push(id);
            out.push(w);
        }
        out
    }

    /// The values `Eq` waits on the cell at `offset` of `mem` expect, with the waiting actor.
    pub(crate) fn eq_waiters(&self, mem: MemKey, offset: usize) -> Vec<(i32, usize)> {
        let Some(ids) = self.by_cell.get(&(mem, offset)) else { return Vec::new() };
        ids.iter()
            .filter_map(|&id| self.waiters[id].as_ref())
            .filter_map(|w| match (w.cond, w.kind) {
                (Cond::Signed(WaitCmp::Eq, e), WaiterKind::Blocking { actor }) => Some((e, actor)),
                _ => None,
            })
            .collect()
    }

    /// Every waiter still registered, in slot order.
    pub(crate) fn pending(&self) -> impl Iterator<Item = &Waiter> {
        self.waiters.iter().flatten()
    }

    /// Remembers a write to a cell.
    pub(crate) fn record(&mut self, mem: MemKey, offset: usize, w: CellWrite) {
        let h = self.history.entry((mem, offset)).or_default();
        if h.len() == HISTORY {
            h.pop_front();
        }
        h.push_back(w);
    }

    /// The most recent writes to a cell, oldest first.
    pub(crate) fn last_writers(&self, mem: MemKey, offset: usize) -> Vec<CellWrite> {
        self.history.get(&(mem, offset)).map(|h| h.iter().cloned().collect()).unwrap_or_default()
    }
}
