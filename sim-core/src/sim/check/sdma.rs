//! The clock of one SDMA transfer in the happens-before order (`sdma_rules.rs` applies it).
//! A transfer runs on a copy engine, not on the core that posted it, so it gets a clock of its own: it starts with everything its issuer
//! had seen, the issuer ticks (its later accesses are not ordered before the transfer), and
//! the issuer joins the transfer's clock when `wait_async` (or a `test_async` that answers
//! true) observes its completion. A notify issued between `put_async` and `wait_async`
//! therefore does not order the transfer's bytes for the receiver: the checker reports the
//! race, whether or not the bytes happened to land first.

use super::shadow::Who;
use super::vclock::{Epoch, VClock};
use std::sync::Arc;

/// The clock of one SDMA transfer.
#[derive(Clone, Debug)]
pub(super) struct SdmaClock {
    pub(super) epoch: Epoch,
    pub(super) vc: Arc<VClock>,
    pub(super) who: Who,
}
