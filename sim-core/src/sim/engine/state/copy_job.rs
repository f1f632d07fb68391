//! A put or get in progress: its chunks and where each stands. `copy.rs` drives it.

use crate::api::request::CopySpec;
use crate::base::payload::Payload;

/// The progress of one put/get.
#[derive(Debug)]
pub(crate) struct CopyJob {
    pub(in crate::sim::engine) actor: usize,
    pub(in crate::sim::engine) spec: CopySpec,
    /// Next chunk to load.
    pub(in crate::sim::engine) next_load: usize,
    /// Chunks whose store has cleared.
    pub(in crate::sim::engine) stored: usize,
    /// A loaded chunk waiting for MTE3: (index, bytes).
    pub(in crate::sim::engine) staged: Option<(usize, Payload)>,
    /// A store is in flight (MTE3 busy).
    pub(in crate::sim::engine) storing: bool,
}
