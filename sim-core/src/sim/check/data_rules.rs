//! The data rules: a read is checked when it reads memory, a write when it lands (races and
//! stale reads against the writes in flight that `access.rs` keeps).

use super::Checker;
use super::access::*;
use super::finding::Finding;
use super::shadow::{Access, Kind, Who};
use super::vclock::{Epoch, VClock};
use crate::base::addr::Place;
use std::sync::Arc;

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
