//! Who waits on which signal cells, and the recent writers of every signal cell (for reports).

use super::observe::TraceId;
use crate::addr::{CellRef, Cells, MemKey};
use crate::memory::Memory;
use crate::report::CellWrite;
use crate::signal::{Cond, WaitCmp};
use crate::time::SimTime;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::sync::Arc;

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
    pub(crate) cells: Cells,
    pub(crate) cond: Cond,
    pub(crate) since: SimTime,
    /// The traced wait operation (none when not tracing).
    pub(crate) trace_id: TraceId,
}

/// One write to a signal cell as the history keeps it: what a report needs, without copying
/// names (the task's name is shared, the operation's is static).
#[derive(Clone, Debug)]
pub(crate) struct Written {
    pub(crate) chip: usize,
    pub(crate) block: usize,
    /// The writing task (`None`: the writer had no task, shown as `?`).
    pub(crate) task: Option<Arc<str>>,
    pub(crate) op: &'static str,
    pub(crate) value: i64,
    pub(crate) time: SimTime,
}

impl Written {
    /// The report's form of this write.
    fn report(&self) -> CellWrite {
        let task = self.task.as_deref().unwrap_or("?").to_string();
        let (chip, block, op, value, time) = (self.chip, self.block, self.op.to_string(), self.value, self.time);
        CellWrite { chip, block, task, op, value, time }
    }
}

/// The last [`HISTORY`] writes to one cell, in a ring stored in place (one map entry per
/// cell, no allocation of its own).
#[derive(Debug, Default)]
struct History {
    ring: [Option<Written>; HISTORY],
    /// Writes recorded so far (the next goes to `count % HISTORY`).
    count: usize,
}

impl History {
    fn push(&mut self, w: Written) {
        self.ring[self.count % HISTORY] = Some(w);
        self.count += 1;
    }

    /// Oldest first.
    fn iter(&self) -> impl Iterator<Item = &Written> {
        let start = self.count.saturating_sub(HISTORY);
        (start..self.count).filter_map(|i| self.ring[i % HISTORY].as_ref())
    }
}

/// The registry of waiters and the write history of cells.
#[derive(Default, Debug)]
pub(crate) struct Signals {
    waiters: Vec<Option<Waiter>>,
    free: Vec<usize>,
    by_cell: BTreeMap<(MemKey, usize), Vec<usize>>,
    /// Looked up by cell, never iterated.
    history: FxHashMap<(MemKey, usize), History>,
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
    pub(crate) fn record(&mut self, mem: MemKey, offset: usize, w: Written) {
        self.history.entry((mem, offset)).or_default().push(w);
    }

    /// The most recent writes to a cell, oldest first.
    pub(crate) fn last_writers(&self, mem: MemKey, offset: usize) -> Vec<CellWrite> {
        self.history.get(&(mem, offset)).map(|h| h.iter().map(Written::report).collect()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(value: i64) -> Written {
        let task = Some(Arc::from("t"));
        Written { chip: 1, block: 0, task, op: "notify AtomicAdd", value, time: SimTime::from_ps(value as u64) }
    }

    #[test]
    fn a_cell_keeps_its_last_four_writes_oldest_first() {
        let mut s = Signals::default();
        let mem = MemKey::win(0, 1, 1);
        assert!(s.last_writers(mem, 8).is_empty());
        for v in 1..=6 {
            s.record(mem, 8, write(v));
        }
        s.record(mem, 12, Written { task: None, ..write(9) });
        let values: Vec<i64> = s.last_writers(mem, 8).iter().map(|w| w.value).collect();
        assert_eq!(values, vec![3, 4, 5, 6]);
        let other = s.last_writers(mem, 12);
        assert_eq!((other.len(), other[0].task.as_str(), other[0].op.as_str()), (1, "?", "notify AtomicAdd"));
    }
}
