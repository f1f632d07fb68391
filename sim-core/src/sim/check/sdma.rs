//! SDMA transfers in the happens-before order. A transfer runs on a copy engine, not on the
//! core that posted it, so it gets a clock of its own: it starts with everything its issuer
//! had seen, the issuer ticks (its later accesses are not ordered before the transfer), and
//! the issuer joins the transfer's clock when `wait_async` (or a `test_async` that answers
//! true) observes its completion. A notify issued between `put_async` and `wait_async`
//! therefore does not order the transfer's bytes for the receiver: the checker reports the
//! race, whether or not the bytes happened to land first.

use super::Checker;
use super::access::Op;
use super::shadow::Who;
use super::vclock::{Epoch, VClock};
use crate::base::addr::Place;
use std::sync::Arc;

/// The clock of one SDMA transfer.
#[derive(Clone, Debug)]
pub(super) struct SdmaClock {
    epoch: Epoch,
    vc: Arc<VClock>,
    who: Who,
}

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
