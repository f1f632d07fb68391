//! Signal cells: the clock each cell releases to its waiters, and the misuse rules — Sets that
//! race, Set mixed with AtomicAdd, Eq values skipped, notifies that change nothing, credits
//! consumed twice, credits left behind.

use super::shadow::Access;
use super::vclock::{Epoch, VClock};
use super::{Checker, Finding, FindingKind, FindingSite};
use crate::base::addr::{CellRef, MemKey};
use crate::base::signal::Cond;
use crate::base::signal::NotifyOp;
use crate::base::time::SimTime;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

/// How many value changes per cell are remembered (for skipped Eq values and reports).
const TRANSITIONS: usize = 16;

/// A wait that consumed a cell's value.
#[derive(Debug)]
struct Consumed {
    cond: Cond,
    epoch: Epoch,
    by: Arc<Access>,
}

/// What the checker knows of one cell.
#[derive(Debug)]
struct CellState {
    chip: usize,
    name: String,
    /// The clock a wait satisfied by this cell acquires.
    vc: VClock,
    last_set: Option<Arc<Access>>,
    /// AtomicAdds since the last Set (those not ordered before a later one).
    adds: Vec<Arc<Access>>,
    /// Recent `(old, new, writer)` value changes.
    changes: VecDeque<(i32, i32, Arc<Access>)>,
    consumed: Option<Consumed>,
    expect_clear: bool,
}

/// Every signal cell used in the run.
#[derive(Debug, Default)]
pub(super) struct Cells {
    map: BTreeMap<(MemKey, usize), CellState>,
    /// Notifies in flight: the sender's access and clock, the op and the value.
    inflight: BTreeMap<u64, (Arc<Access>, Arc<VClock>, NotifyOp, i32)>,
}

fn cell_name(c: &CellRef) -> String {
    let coords: Vec<String> = c.coords.iter().map(|x| x.to_string()).collect();
    format!("{}[{}]", c.buffer, coords.join(", "))
}

/// A finding site for an operation on a cell.
fn cell_site(a: &Access, cell: &str) -> FindingSite {
    super::site_on(a, cell.to_string())
}

fn who(a: &Access) -> String {
    format!("rank {} (task `{}`)", a.who.rank, a.who.task)
}

impl Cells {
    fn state(&mut self, c: &CellRef) -> &mut CellState {
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

impl Checker {
    /// `actor` issues the notify `id` to `cell`; its clock then ticks (a release).
    pub(crate) fn notify_issue(
        &mut self,
        (actor, id): (usize, NotifyId),
        cell: &CellRef,
        op: NotifyOp,
        value: i32,
        at: super::access::Op,
    ) {
        let Some(s) = self.running.get_mut(actor).and_then(Option::as_mut) else { return };
        let name = match op {
            NotifyOp::AtomicAdd => "notify AtomicAdd",
            NotifyOp::Set => "notify Set",
        };
        let acc = Arc::new(Access {
            epoch: s.epoch(),
            vc: s.vc.clone(),
            kind: super::shadow::Kind::Write,
            who: s.who.clone(),
            op: name,
            view: super::shadow::View { buffer: cell.buffer.clone(), base: 0, esize: 4 },
            time: at.time,
            location: at.location,
        });
        let vc = s.vc.clone();
        let (lane, lanes) = (s.lane, s.lanes);
        s.tick();
        if lanes > 1
            && let Some(f) = self.lanes.notify(&acc, lane, cell, op, value)
        {
            self.report(f);
        }
        self.cells.state(cell);
        self.cells.inflight.insert(id, (acc, vc, op, value));
    }

    /// Notify `id` changed `cell` from `old` to `new`. `eq_waiters` are the values `Eq` waits
    /// on the cell expect, with the actor waiting.
    pub(crate) fn notify_land(
        &mut self,
        id: NotifyId,
        cell: &CellRef,
        (old, new): (i32, i32),
        eq_waiters: &[(i32, usize)],
    ) {
        let Some((acc, vc, op, value)) = self.cells.inflight.remove(&id) else { return };
        let mut found = Vec::new();
        let st = self.cells.state(cell);
        let name = st.name.clone();
        let rank = st.chip;
        let finding = |kind, message: String, sites: Vec<FindingSite>| Finding {
            kind,
            time: acc.time,
            rank,
            message,
            sites,
            count: 1,
            seed: None,
        };
        match op {
            NotifyOp::Set => {
                if let Some(prev) = st.last_set.as_ref().filter(|p| !vc.covers(p.epoch)) {
                    found.push(finding(
                        FindingKind::ConcurrentSet,
                        format!(
                            "`{}` by {} and `{}` by {} write `{name}` on rank {rank} with nothing ordering them: the last one \
                             wins and the other's signal is lost; give each writer its own cell, or use AtomicAdd",
                            prev.op,
                            who(prev),
                            acc.op,
                            who(&acc)
                        ),
                        vec![cell_site(prev, &name), cell_site(&acc, &name)],
                    ));
                }
                for add in st.adds.iter().filter(|a| !vc.covers(a.epoch)) {
                    found.push(mixed(add, &acc, &name, rank));
                }
                st.vc = (*vc).clone();
                st.last_set = Some(acc.clone());
                st.adds.clear();
                st.consumed = None;
            }
            NotifyOp::AtomicAdd => {
                if let Some(set) = st.last_set.as_ref().filter(|p| !vc.covers(p.epoch)) {
                    found.push(mixed(set, &acc, &name, rank));
                }
                if value == 0 {
                    found.push(finding(
                        FindingKind::UselessNotify,
                        format!(
                            "`notify AtomicAdd 0` by {} cannot change `{name}` on rank {rank}, so it can never satisfy a wait \
                             (PyPTO: `tag=0` with Ge(1)); notify a non-zero value",
                            who(&acc)
                        ),
                        vec![cell_site(&acc, &name)],
                    ));
                }
                if value < 0 {
                    st.consumed = None;
                }
                st.vc.join(&vc);
                st.adds.retain(|a| !vc.covers(a.epoch));
                st.adds.push(acc.clone());
            }
        }
        for &(e, waiter) in eq_waiters {
            if (old < e && e < new) || (new < e && e < old) {
                let w = self
                    .running
                    .get(waiter)
                    .and_then(Option::as_ref)
                    .map(|s| format!("rank {} (task `{}`)", s.who.rank, s.who.task));
                found.push(finding(
                    FindingKind::EqSkipped,
                    format!(
                        "`{name}` on rank {rank} went from {old} to {new}, skipping the value {e} that an Eq wait by {} \
                         expects: the wait can never be satisfied; wait with Ge, or notify one step at a time",
                        w.unwrap_or_else(|| "a deferred task".to_string())
                    ),
                    vec![cell_site(&acc, &name)],
                ));
            }
        }
        let st = self.cells.state(cell);
        if st.changes.len() == TRANSITIONS {
            st.changes.pop_front();
        }
        st.changes.push_back((old, new, acc));
        for f in found {
            self.report(f);
        }
    }

    /// `actor` starts waiting for `cells` to satisfy `cond`: an Eq value the cell already
    /// jumped over is reported now.
    pub(crate) fn wait_begin(&mut self, actor: usize, cells: &[CellRef], cond: Cond, t: SimTime) {
        let Some(s) = self.strand(actor) else { return };
        let waiter = format!("rank {} (task `{}`)", s.who.rank, s.who.task);
        let mut found = Vec::new();
        for c in cells {
            let st = self.cells.state(c);
            let Cond::Signed(crate::base::signal::WaitCmp::Eq, e) = cond else { continue };
            if let Some((old, new, by)) = st.changes.iter().find(|(o, n, _)| (*o < e && e < *n) || (*n < e && e < *o)) {
                found.push(Finding {
                    kind: FindingKind::EqSkipped,
                    time: t,
                    rank: st.chip,
                    message: format!(
                        "an Eq wait by {waiter} expects {e} in `{}` on rank {}, but the cell already went from {old} to {new} \
                         past it: the wait can never be satisfied; wait with Ge, or notify one step at a time",
                        st.name, st.chip
                    ),
                    sites: vec![cell_site(by, &st.name)],
                    count: 1,
                    seed: None,
                });
            }
        }
        for f in found {
            self.report(f);
        }
    }

    /// `actor`'s wait on `cells` is satisfied; `at_once` when it held as soon as it was made.
    /// The strand acquires the cells' clocks.
    pub(crate) fn wait_done(&mut self, actor: usize, cells: &[CellRef], cond: Cond, at_once: bool, t: SimTime) {
        let Some(s) = self.running.get_mut(actor).and_then(Option::as_mut) else { return };
        let me = Arc::new(Access {
            epoch: s.epoch(),
            vc: s.vc.clone(),
            kind: super::shadow::Kind::Read,
            who: s.who.clone(),
            op: "wait",
            view: super::shadow::View { buffer: Arc::from(""), base: 0, esize: 4 },
            time: t,
            location: None,
        });
        let mut found = Vec::new();
        for c in cells {
            let st = self.cells.state(c);
            if at_once && let Some(prev) = st.consumed.as_ref().filter(|p| p.cond == cond && s.vc.covers(p.epoch)) {
                found.push(Finding {
                    kind: FindingKind::StaleCredit,
                    time: t,
                    rank: st.chip,
                    message: format!(
                        "a wait by {} on `{}` of rank {} held at once, on credits an earlier wait by {} had already consumed: \
                         the signal was reused without a reset; clear it after consuming (AtomicAdd of minus the credits, or \
                         Set 0), or wait for the next generation's value",
                        who(&me),
                        st.name,
                        st.chip,
                        who(&prev.by)
                    ),
                    sites: vec![cell_site(&prev.by, &st.name), cell_site(&me, &st.name)],
                    count: 1,
                    seed: None,
                });
            }
            Arc::make_mut(&mut s.vc).join(&st.vc);
            st.consumed = Some(Consumed { cond, epoch: me.epoch, by: me.clone() });
        }
        for f in found {
            self.report(f);
        }
    }

    /// The cells of a self-clearing signal, which must read zero when the run ends.
    pub(crate) fn expect_clear(&mut self, cells: &[CellRef]) {
        for c in cells {
            self.cells.state(c).expect_clear = true;
        }
    }
}

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
fn mixed(first: &Arc<Access>, second: &Arc<Access>, name: &str, rank: usize) -> Finding {
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
