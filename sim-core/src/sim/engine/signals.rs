//! Who waits on which signal cells, and the recent writers of every signal cell (for reports).

use super::observe::TraceId;
use crate::api::request::OpKind;
use crate::base::addr::{Caller, CellRef, Cells, MemKey, narrow};
use crate::base::deadlock::{CellWrite, CellWriteOp};
use crate::base::signal::{Cond, NotifyOp, WaitCmp};
use crate::base::time::SimTime;
use crate::sim::memory::{CellPages, Memory};
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
    /// Where the kernel called the wait, for the deadlock report.
    pub(crate) caller: Caller,
}

/// How many recently seen task-name allocations [`Names`] remembers by address.
const RECENT: usize = 16;

/// A task name interned in [`Names`] (an index into its table), or [`NameId::NONE`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct NameId(u32);

impl NameId {
    /// A writer without a task (reports show `?`).
    pub(crate) const NONE: NameId = NameId(u32::MAX);
}

/// Task names by content, so that a history entry names its writer with a 4-byte index instead
/// of an `Arc<str>` (no reference count touched per write, and a smaller entry). The table
/// grows only with distinct names, not with blocks. A small cache by allocation address makes
/// a repeated name (the common case: every block of a task shares one `Arc`) a pointer compare;
/// each cached entry holds its `Arc`, so its address cannot be reused by another name.
#[derive(Debug, Default)]
struct Names {
    names: Vec<Arc<str>>,
    by_name: FxHashMap<Arc<str>, u32>,
    recent: [Option<(Arc<str>, NameId)>; RECENT],
}

impl Names {
    /// The id of `task`'s name, added on first sight.
    fn intern(&mut self, task: &Arc<str>) -> NameId {
        let slot = ((Arc::as_ptr(task).cast::<u8>() as usize) >> 4) % RECENT;
        if let Some((cached, id)) = &self.recent[slot]
            && Arc::ptr_eq(cached, task)
        {
            return *id;
        }
        let id = match self.by_name.get(&**task) {
            Some(&i) => NameId(i),
            None => {
                let i = narrow(self.names.len());
                self.names.push(task.clone());
                self.by_name.insert(task.clone(), i);
                NameId(i)
            }
        };
        self.recent[slot] = Some((task.clone(), id));
        id
    }

    /// The name `id` stands for (`?` for [`NameId::NONE`]).
    fn get(&self, id: NameId) -> &str {
        self.names.get(id.0 as usize).map_or("?", |n| n)
    }
}

/// The operation that wrote a signal cell: a data write landing over it, or a notify.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum WriteOp {
    /// A data write (`store`, `put`, ...) whose bytes cover the cell.
    Data(OpKind),
    /// A notify.
    Notify(NotifyOp),
}

impl WriteOp {
    /// The operation as reports keep it.
    fn report(self) -> CellWriteOp {
        match self {
            WriteOp::Data(op) => CellWriteOp::Data(op.name()),
            WriteOp::Notify(op) => CellWriteOp::Notify(op),
        }
    }
}

/// One write to a signal cell as the history keeps it: 32 bytes of plain data (the task's name
/// interned, the operation a small enum), so that recording a write copies no name and touches
/// no reference count.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Written {
    time: SimTime,
    chip: u32,
    block: u32,
    /// The writing task ([`NameId::NONE`]: the writer had no task, shown as `?`).
    task: NameId,
    value: i32,
    op: WriteOp,
}

impl Written {
    /// A write of `value` at `time` by block `block` of chip `chip`, running task `task`.
    pub(crate) fn new(chip: usize, block: usize, task: NameId, op: WriteOp, value: i32, time: SimTime) -> Written {
        Written { time, chip: narrow(chip), block: narrow(block), task, value, op }
    }

    /// The report's form of this write.
    fn report(&self, names: &Names) -> CellWrite {
        CellWrite {
            chip: self.chip as usize,
            block: self.block as usize,
            task: names.get(self.task).to_string(),
            op: self.op.report(),
            value: i64::from(self.value),
            time: self.time,
        }
    }
}

/// The last [`HISTORY`] writes to one cell, in a ring stored in place (in its page of the
/// history, no allocation of its own).
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

/// Bytes of one cell's write history (for the memory estimate, `footprint.rs`).
pub(super) const HISTORY_BYTES: usize = std::mem::size_of::<History>();

/// The registry of waiters and the write history of cells.
#[derive(Default, Debug)]
pub(crate) struct Signals {
    waiters: Vec<Option<Waiter>>,
    free: Vec<usize>,
    by_cell: BTreeMap<(MemKey, usize), Vec<usize>>,
    /// How many keys of `by_cell` each memory has (memories without any are absent): a hash
    /// probe that rejects most writes before the ordered map is searched.
    watched_mems: FxHashMap<MemKey, usize>,
    /// Looked up by cell, never iterated.
    history: CellPages<History>,
    /// The task names `history` refers to.
    names: Names,
    /// Scratch for the waiter ids a release looks at (kept to reuse its allocation).
    ids: Vec<usize>,
    /// How many registered waiters are cores blocked in `wait` (not deferred conditions).
    blocking: usize,
    /// The buffer [`Signals::take_satisfied`] returns, handed back by [`Signals::recycle`] so
    /// that releasing waiters allocates nothing once warm.
    woken: Vec<Waiter>,
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
            let ids = self.by_cell.entry((c.mem, c.offset)).or_default();
            if ids.is_empty() {
                *self.watched_mems.entry(c.mem).or_default() += 1;
            }
            ids.push(id);
        }
        self.blocking += usize::from(matches!(w.kind, WaiterKind::Blocking { .. }));
        self.waiters[id] = Some(w);
    }

    /// Whether anyone waits on a cell inside bytes `[lo, hi)` of `mem`.
    pub(crate) fn watched(&self, mem: MemKey, lo: usize, hi: usize) -> bool {
        self.watched_mems.contains_key(&mem) && self.by_cell.range((mem, lo)..(mem, hi)).next().is_some()
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
        let mut ids = std::mem::take(&mut self.ids);
        ids.clear();
        if !self.watched_mems.contains_key(&mem) {
            self.ids = ids;
            return std::mem::take(&mut self.woken);
        }
        ids.extend(self.by_cell.range((mem, lo)..(mem, hi)).flat_map(|(_, v)| v.iter().copied()));
        let mut out = std::mem::take(&mut self.woken);
        out.clear();
        if ids.len() > 1 {
            ids.sort_unstable();
            ids.dedup();
        }
        for &id in &ids {
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
                        self.unwatch(c.mem);
                    }
                }
            }
            self.free.push(id);
            self.blocking -= usize::from(matches!(w.kind, WaiterKind::Blocking { .. }));
            out.push(w);
        }
        self.ids = ids;
        out
    }

    /// Counts one watched cell of `mem` less.
    fn unwatch(&mut self, mem: MemKey) {
        if let Some(n) = self.watched_mems.get_mut(&mem) {
            *n -= 1;
            if *n == 0 {
                self.watched_mems.remove(&mem);
            }
        }
    }

    /// Takes back the (drained) buffer [`Signals::take_satisfied`] returned, for reuse.
    pub(crate) fn recycle(&mut self, mut woken: Vec<Waiter>) {
        woken.clear();
        self.woken = woken;
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

    /// How many cores are blocked in `wait`.
    pub(crate) fn blocking_waiters(&self) -> usize {
        self.blocking
    }

    /// Every waiter still registered, in slot order.
    pub(crate) fn pending(&self) -> impl Iterator<Item = &Waiter> {
        self.waiters.iter().flatten()
    }

    /// The id under which histories name `task`.
    pub(crate) fn intern(&mut self, task: &Arc<str>) -> NameId {
        self.names.intern(task)
    }

    /// Remembers a write to a cell.
    pub(crate) fn record(&mut self, mem: MemKey, offset: usize, w: Written) {
        self.history.entry(mem, offset).push(w);
    }

    /// The most recent writes to a cell, oldest first.
    pub(crate) fn last_writers(&self, mem: MemKey, offset: usize) -> Vec<CellWrite> {
        let Some(h) = self.history.get(mem, offset) else { return Vec::new() };
        h.iter().map(|w| w.report(&self.names)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(s: &mut Signals, value: i32) -> Written {
        let task = s.intern(&Arc::from("t"));
        Written::new(1, 0, task, WriteOp::Notify(NotifyOp::AtomicAdd), value, SimTime::from_ps(value as u64))
    }

    #[test]
    fn a_cell_keeps_its_last_four_writes_oldest_first() {
        let mut s = Signals::default();
        let mem = MemKey::win(0, 1, 1);
        assert!(s.last_writers(mem, 8).is_empty());
        for v in 1..=6 {
            let w = write(&mut s, v);
            s.record(mem, 8, w);
        }
        let w = Written { task: NameId::NONE, ..write(&mut s, 9) };
        s.record(mem, 12, w);
        let values: Vec<i64> = s.last_writers(mem, 8).iter().map(|w| w.value).collect();
        assert_eq!(values, vec![3, 4, 5, 6]);
        let last = &s.last_writers(mem, 8)[3];
        assert_eq!((last.chip, last.block, last.task.as_str(), last.time), (1, 0, "t", SimTime::from_ps(6)));
        let other = s.last_writers(mem, 12);
        assert_eq!(
            (other.len(), other[0].task.as_str(), other[0].op.to_string().as_str()),
            (1, "?", "notify AtomicAdd")
        );
    }

    #[test]
    fn names_are_interned_by_content_not_by_allocation() {
        let mut n = Names::default();
        let (a1, a2, b): (Arc<str>, Arc<str>, Arc<str>) = (Arc::from("reduce"), Arc::from("reduce"), Arc::from("copy"));
        let (ia, ib) = (n.intern(&a1), n.intern(&b));
        assert_ne!(ia, ib);
        assert_eq!((n.intern(&a2), n.intern(&a1), n.intern(&b)), (ia, ia, ib));
        assert_eq!((n.get(ia), n.get(ib), n.get(NameId::NONE)), ("reduce", "copy", "?"));
        assert_eq!(n.names.len(), 2);
        // Many short-lived allocations of one name (addresses reused) keep one entry.
        for i in 0..100 {
            let name: Arc<str> = Arc::from(if i % 2 == 0 { "reduce" } else { "copy" });
            assert_eq!(n.intern(&name), if i % 2 == 0 { ia } else { ib });
        }
        assert_eq!(n.names.len(), 2);
    }

    #[test]
    fn write_ops_print_their_api_names() {
        assert_eq!(WriteOp::Data(OpKind::Put).report().to_string(), "put");
        assert_eq!(WriteOp::Notify(NotifyOp::AtomicAdd).report().to_string(), "notify AtomicAdd");
        assert_eq!(WriteOp::Notify(NotifyOp::Set).report().to_string(), "notify Set");
    }

    fn waiter(actor: usize, mem: MemKey, offsets: &[usize], expected: i32) -> Waiter {
        let mut cells = Cells::default();
        for &offset in offsets {
            cells.push(CellRef { mem, offset, buffer: Arc::from("sig"), coords: Default::default() });
        }
        let cond = Cond::Signed(WaitCmp::Ge, expected);
        Waiter {
            kind: WaiterKind::Blocking { actor },
            cells,
            cond,
            since: SimTime::ZERO,
            trace_id: TraceId::default(),
            caller: None,
        }
    }

    #[test]
    fn a_release_takes_satisfied_waiters_in_slot_order_and_reuses_its_buffer() {
        let mem = MemKey::win(0, 1, 1);
        let mut m = Memory::new(false);
        let mut s = Signals::default();
        s.register(waiter(0, mem, &[8], 1));
        s.register(waiter(1, mem, &[8, 12], 1));
        s.register(waiter(2, mem, &[12], 2));
        let cell = |offset| CellRef { mem, offset, buffer: Arc::from("sig"), coords: Default::default() };
        m.set_cell(&cell(8), 1);
        m.set_cell(&cell(12), 1);
        let woken = s.take_satisfied(&m, (mem, 8, 16), |_| false);
        let actors: Vec<WaiterKind> = woken.iter().map(|w| w.kind).collect();
        assert_eq!(actors, vec![WaiterKind::Blocking { actor: 0 }, WaiterKind::Blocking { actor: 1 }]);
        let cap = woken.capacity();
        s.recycle(woken);
        assert!(!s.watched(mem, 8, 12) && s.watched(mem, 12, 16));
        assert_eq!(s.watched_mems.get(&mem), Some(&1));
        // A held waiter stays; the buffer handed back is the one reused.
        m.set_cell(&cell(12), 2);
        let held = s.take_satisfied(&m, (mem, 12, 16), |_| true);
        assert!(held.is_empty());
        s.recycle(held);
        let woken = s.take_satisfied(&m, (mem, 12, 16), |_| false);
        assert_eq!((woken.len(), woken.capacity()), (1, cap));
        assert_eq!(s.pending().count(), 0);
        assert!(s.watched_mems.is_empty() && !s.watched(mem, 0, 64));
    }

    #[test]
    fn a_history_entry_is_small() {
        assert_eq!(std::mem::size_of::<Option<Written>>(), 32);
    }
}
