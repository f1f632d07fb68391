//! The signal-cell rules as notifies land and waits begin and end (the cell state is
//! `cells.rs`'s): Sets that race, Set mixed with AtomicAdd, Eq values skipped, notifies that
//! change nothing, credits consumed twice.

use super::Checker;
use super::cells::*;
use super::finding::{Finding, FindingKind, FindingSite};
use super::shadow::Access;
use crate::base::addr::CellRef;
use crate::base::signal::Cond;
use crate::base::signal::NotifyOp;
use crate::base::time::SimTime;
use std::sync::Arc;

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
