//! SDMA transfers in the happens-before order: a transfer gets a clock of its own when posted
//! (`sdma.rs`'s `SdmaClock`), reads and writes under it, and its issuer joins it when it
//! observes completion.

use super::Checker;
use super::access::Op;
use super::sdma::*;
use super::vclock::Epoch;
use crate::base::addr::Place;
use std::sync::Arc;

impl Checker {
    /// `actor` posts the SDMA transfer `x` now: it gets its clock (none outside a block).
    pub(crate) fn sdma_issue(&mut self, actor: usize, x: u64) {
        let id = self.next_strand;
        let Some(s) = self.running.get_mut(actor).and_then(Option::as_mut) else { return };
        self.next_strand += 1;
        let mut vc = (*s.vc).clone();
        vc.set(id, 1);
        let who = s.who.clone();
        s.tick();
        self.sdma.insert(x, SdmaClock { epoch: Epoch { strand: id, clock: 1 }, vc: Arc::new(vc), who });
    }

    /// A descriptor of transfer `x` reads `src` now and issues the write `w` to `dst`.
    pub(crate) fn sdma_move(&mut self, (x, w): (u64, u64), (src, dst): (&Place, &Place), atomic: bool, op: Op) {
        let Some(c) = self.sdma.get(&x) else { return };
        let (epoch, vc, who) = (c.epoch, c.vc.clone(), c.who.clone());
        self.read_as(epoch, vc.clone(), who.clone(), src, op);
        self.write_as(w, (epoch, vc, who), dst, atomic, op);
    }

    /// `actor` observed transfer `x` complete: what it did happens before what follows. Once
    /// `retired` (waited), the transfer is forgotten.
    pub(crate) fn sdma_complete(&mut self, actor: usize, x: u64, retired: bool) {
        let c = if retired { self.sdma.remove(&x) } else { self.sdma.get(&x).cloned() };
        if let (Some(c), Some(s)) = (c, self.running.get_mut(actor).and_then(Option::as_mut)) {
            Arc::make_mut(&mut s.vc).join(&c.vc);
        }
    }
}
