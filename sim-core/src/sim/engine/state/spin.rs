//! How long each core has been polling without a change, for the livelock check
//! (`livelock.rs` counts and reports).

use crate::base::addr::{Caller, MemKey, Place};
use crate::base::time::SimTime;

/// What a core polls since the last change, and how often it did.
#[derive(Clone, Debug)]
pub(in crate::sim::engine) struct Spin {
    /// The count of changes when it started counting (`u64::MAX`: never).
    pub(in crate::sim::engine) epoch: u64,
    pub(in crate::sim::engine) polls: u64,
    pub(in crate::sim::engine) since: SimTime,
    /// Its last poll was a scalar read of the element at this address (else a test of its
    /// polled cells), kept whole once the count nears the threshold, for the report.
    pub(in crate::sim::engine) read_at: Option<(MemKey, usize)>,
    pub(in crate::sim::engine) read: Option<Box<(Place, Caller)>>,
}

impl Default for Spin {
    fn default() -> Spin {
        Spin { epoch: u64::MAX, polls: 0, since: SimTime::ZERO, read_at: None, read: None }
    }
}
