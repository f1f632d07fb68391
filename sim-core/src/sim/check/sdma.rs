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
pub(crate) struct SdmaClock {
    epoch: Epoch,
    vc: Arc<VClock>,
    who: Who,
}

impl Checker {
    /// `actor` posts an SDMA transfer now: returns its clock (`None` outside a block).
    pub(crate) fn sdma_issue(&mut self, actor: usize) -> Option<SdmaClock> {
        let id = self.next_strand;
        let s = self.running.get_mut(actor).and_then(Option::as_mut)?;
        self.next_strand += 1;
        let mut vc = (*s.vc).clone();
        vc.set(id, 1);
        let who = s.who.clone();
        s.tick();
        Some(SdmaClock { epoch: Epoch { strand: id, clock: 1 }, vc: Arc::new(vc), who })
    }

    /// The transfer reads `src` now.
    pub(crate) fn sdma_read(&mut self, c: &SdmaClock, src: &Place, op: Op) {
        self.read_as(c.epoch, c.vc.clone(), c.who.clone(), src, op);
    }

    /// The transfer issues a write to `dst`; returns the id its landing reports.
    pub(crate) fn sdma_write(&mut self, c: &SdmaClock, dst: &Place, atomic: bool, op: Op) -> u64 {
        self.write_as(c.epoch, c.vc.clone(), c.who.clone(), dst, atomic, op)
    }

    /// `actor` observed the transfer's completion: what it did happens before what follows.
    pub(crate) fn sdma_complete(&mut self, actor: usize, c: &SdmaClock) {
        if let Some(s) = self.running.get_mut(actor).and_then(Option::as_mut) {
            Arc::make_mut(&mut s.vc).join(&c.vc);
        }
    }
}
