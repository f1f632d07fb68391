//! The state of data accesses: writes issued and not landed yet, by memory and id (so a read
//! ordered after one that has not landed is caught), and the findings a data access makes
//! (races, stale reads). `data_rules.rs` applies reads and writes to them.

use super::finding::{Finding, FindingKind, site};
use super::shadow::{Access, View};
use super::vclock::VClock;
use crate::base::addr::{MemKey, Place};
use crate::base::call_site::CallSite;
use crate::base::tensor::Runs;
use crate::base::time::SimTime;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A write issued but not landed.
#[derive(Debug)]
pub(super) struct InFlight {
    pub(super) mem: MemKey,
    pub(super) chip: usize,
    pub(super) runs: Runs,
    pub(super) acc: Arc<Access>,
    pub(super) vc: Arc<VClock>,
}

/// Writes in flight, by memory and id.
#[derive(Debug, Default)]
pub(super) struct Pending {
    pub(super) writes: BTreeMap<MemKey, BTreeMap<u64, InFlight>>,
    /// The memory of each write in flight.
    pub(super) mem_of: BTreeMap<u64, MemKey>,
}

/// What a data access is, for [`Checker::read`] and [`Checker::write_issue`].
#[derive(Copy, Clone, Debug)]
pub(crate) struct Op {
    pub(crate) name: &'static str,
    pub(crate) time: SimTime,
    pub(crate) location: Option<CallSite>,
}

pub(super) fn view(p: &Place) -> View {
    View { buffer: p.buffer().clone(), base: p.base(), esize: p.esize() }
}

impl Pending {
    /// Removes write `id`.
    pub(super) fn take(&mut self, id: u64) -> Option<InFlight> {
        let mem = self.mem_of.remove(&id)?;
        let by_id = self.writes.get_mut(&mem)?;
        let w = by_id.remove(&id);
        if by_id.is_empty() {
            self.writes.remove(&mem);
        }
        w
    }

    /// Writes in flight over any byte of `p` that happened before an access with clock `vc`.
    pub(super) fn overtaken<'a>(&'a self, p: &'a Place, vc: &'a VClock) -> impl Iterator<Item = &'a InFlight> + 'a {
        self.writes.get(&p.mem).into_iter().flat_map(|m| m.values()).filter(move |w| {
            vc.covers(w.acc.epoch)
                && w.runs.iter().any(|&(a, al)| p.region.runs.iter().any(|&(b, bl)| a < b + bl && b < a + al))
        })
    }
}

/// The span of bytes `w` and `p_runs` share.
pub(super) fn overlap(w: &InFlight, p_runs: &[(usize, usize)]) -> (usize, usize) {
    let mut lo = usize::MAX;
    let mut hi = 0;
    for &(a, al) in &w.runs {
        for &(b, bl) in p_runs {
            let (l, h) = (a.max(b), (a + al).min(b + bl));
            if l < h {
                (lo, hi) = (lo.min(l), hi.max(h));
            }
        }
    }
    (lo, hi)
}

pub(super) fn stale_read(read: &Arc<Access>, w: &InFlight, src: &Place) -> Finding {
    let (lo, hi) = overlap(w, &src.region.runs);
    let rank = src.chip();
    Finding {
        kind: FindingKind::StaleRead,
        time: read.time,
        rank,
        message: format!(
            "`{}` by rank {} (task `{}`) read `{}` on rank {rank} before `{}` by rank {} (task `{}`) had landed, though \
             the read is ordered after that write: the notify that ordered them overtook its payload; call fence() \
             between the write and the notify",
            read.op, read.who.rank, read.who.task, read.view.buffer, w.acc.op, w.acc.who.rank, w.acc.who.task
        ),
        sites: vec![site(&w.acc, lo, hi), site(read, lo, hi)],
        count: 1,
        seed: None,
    }
}

pub(super) fn race(prev: &Arc<Access>, new: &Arc<Access>, lo: usize, hi: usize, rank: usize) -> Finding {
    Finding {
        kind: FindingKind::DataRace,
        time: new.time,
        rank,
        message: format!(
            "`{}` by rank {} (task `{}`) and `{}` by rank {} (task `{}`) touch `{}` on rank {rank} with nothing ordering \
             them (no notify->wait, task dependency or dispatch boundary): order them with a signal",
            prev.op, prev.who.rank, prev.who.task, new.op, new.who.rank, new.who.task, new.view.buffer
        ),
        sites: vec![site(prev, lo, hi), site(new, lo, hi)],
        count: 1,
        seed: None,
    }
}
