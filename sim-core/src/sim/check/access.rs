//! Data accesses: reads are checked when they read memory, writes when they land; writes in
//! flight are remembered so a read ordered after one that has not landed yet is caught.

use super::shadow::{Access, Kind, View, Who};
use super::vclock::{Epoch, VClock};
use super::{Checker, Finding, FindingKind, site};
use crate::base::addr::{MemKey, Place};
use crate::base::tensor::Runs;
use crate::base::time::SimTime;
use std::collections::BTreeMap;
use std::panic::Location;
use std::sync::Arc;

/// A write issued but not landed.
#[derive(Debug)]
struct InFlight {
    mem: MemKey,
    chip: usize,
    runs: Runs,
    acc: Arc<Access>,
    vc: Arc<VClock>,
}

/// Writes in flight, by memory and id.
#[derive(Debug, Default)]
pub(super) struct Pending {
    writes: BTreeMap<MemKey, BTreeMap<u64, InFlight>>,
    /// The memory of each write in flight.
    mem_of: BTreeMap<u64, MemKey>,
}

/// What a data access is, for [`Checker::read`] and [`Checker::write_issue`].
#[derive(Copy, Clone, Debug)]
pub(crate) struct Op {
    pub(crate) name: &'static str,
    pub(crate) time: SimTime,
    pub(crate) location: Option<&'static Location<'static>>,
}

fn view(p: &Place) -> View {
    View { buffer: p.buffer().clone(), base: p.base(), esize: p.esize() }
}

impl Checker {
    /// `actor` reads `src` now.
    pub(crate) fn read(&mut self, actor: usize, src: &Place, op: Op) {
        let Some(s) = self.strand(actor) else { return };
        let (epoch, vc, who) = (s.epoch(), s.vc.clone(), s.who.clone());
        self.read_as(epoch, vc, who, src, op);
    }

    /// A read of `src` now by the access `epoch` with clock `vc` (a strand, or an SDMA
    /// transfer's own clock).
    pub(super) fn read_as(&mut self, epoch: Epoch, vc: Arc<VClock>, who: Who, src: &Place, op: Op) {
        if self.cells.any_known(src.mem, &src.region.runs) {
            return;
        }
        let acc = Arc::new(Access {
            epoch,
            vc: vc.clone(),
            kind: Kind::Read,
            who,
            op: op.name,
            view: view(src),
            time: op.time,
            location: op.location,
        });
        let stale: Vec<Finding> = self.access.overtaken(src, &vc).map(|w| stale_read(&acc, w, src)).collect();
        for f in stale {
            self.report(f);
        }
        for &(off, len) in &src.region.runs {
            for c in self.shadow.access(src.mem, off, off + len, &acc, &vc) {
                let f = race(&c.prev, &acc, c.lo, c.hi, src.chip());
                self.report(f);
            }
        }
    }

    /// `actor` issues the write `id` to `dst` (ids increase in issue order; a write outside
    /// a block is not tracked).
    pub(crate) fn write_issue(&mut self, actor: usize, id: u64, dst: &Place, atomic: bool, op: Op) {
        let Some(s) = self.strand(actor) else { return };
        let (epoch, vc, who) = (s.epoch(), s.vc.clone(), s.who.clone());
        self.write_as(id, (epoch, vc, who), dst, atomic, op);
    }

    /// The write `id` to `dst` issued now by the access `epoch` with clock `vc`.
    pub(super) fn write_as(
        &mut self,
        id: u64,
        (epoch, vc, who): (Epoch, Arc<VClock>, Who),
        dst: &Place,
        atomic: bool,
        op: Op,
    ) {
        let acc = Arc::new(Access {
            epoch,
            vc: vc.clone(),
            kind: if atomic { Kind::Atomic } else { Kind::Write },
            who,
            op: op.name,
            view: view(dst),
            time: op.time,
            location: op.location,
        });
        let w = InFlight { mem: dst.mem, chip: dst.chip(), runs: dst.region.runs.clone(), acc, vc };
        self.access.mem_of.insert(id, dst.mem);
        self.access.writes.entry(dst.mem).or_default().insert(id, w);
    }

    /// Write `id` landed.
    pub(crate) fn write_land(&mut self, id: u64) {
        let Some(w) = self.access.take(id) else { return };
        if self.cells.any_known(w.mem, &w.runs) {
            for f in self.cells.data_store(w.mem, &w.runs, &w.acc, &w.vc) {
                self.report(f);
            }
            return;
        }
        for &(off, len) in &w.runs {
            for c in self.shadow.access(w.mem, off, off + len, &w.acc, &w.vc) {
                let f = race(&c.prev, &w.acc, c.lo, c.hi, w.chip);
                self.report(f);
            }
        }
    }
}

impl Pending {
    /// Removes write `id`.
    fn take(&mut self, id: u64) -> Option<InFlight> {
        let mem = self.mem_of.remove(&id)?;
        let by_id = self.writes.get_mut(&mem)?;
        let w = by_id.remove(&id);
        if by_id.is_empty() {
            self.writes.remove(&mem);
        }
        w
    }

    /// Writes in flight over any byte of `p` that happened before an access with clock `vc`.
    fn overtaken<'a>(&'a self, p: &'a Place, vc: &'a VClock) -> impl Iterator<Item = &'a InFlight> + 'a {
        self.writes.get(&p.mem).into_iter().flat_map(|m| m.values()).filter(move |w| {
            vc.covers(w.acc.epoch)
                && w.runs.iter().any(|&(a, al)| p.region.runs.iter().any(|&(b, bl)| a < b + bl && b < a + al))
        })
    }
}

/// The span of bytes `w` and `p_runs` share.
fn overlap(w: &InFlight, p_runs: &[(usize, usize)]) -> (usize, usize) {
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

fn stale_read(read: &Arc<Access>, w: &InFlight, src: &Place) -> Finding {
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

fn race(prev: &Arc<Access>, new: &Arc<Access>, lo: usize, hi: usize, rank: usize) -> Finding {
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
