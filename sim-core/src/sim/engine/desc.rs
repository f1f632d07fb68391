//! An SDMA descriptor: one copy of a transfer, as a chip's channel queues it and as the
//! events that read its source and land it carry it (`sdma.rs` runs it).

use super::observe::SdmaToken;
use crate::api::request::OpKind;
use crate::base::addr::Place;
use crate::base::call_site::CallSite;
use crate::base::dtype::DType;
use crate::base::time::SimTime;

/// One descriptor of an SDMA transfer: which core posted it, its channel, the places it
/// copies between, and what observers and reports name it by.
#[derive(Debug)]
pub(in crate::sim::engine) struct Desc {
    pub(in crate::sim::engine) actor: usize,
    pub(in crate::sim::engine) id: u64,
    pub(in crate::sim::engine) ch: usize,
    pub(in crate::sim::engine) src: Place,
    pub(in crate::sim::engine) dst: Place,
    pub(in crate::sim::engine) get: bool,
    /// `Some(dtype)`: an inline-reduce put.
    pub(in crate::sim::engine) atomic: Option<DType>,
    /// When the channel may start it (the transfer was posted).
    pub(in crate::sim::engine) ready: SimTime,
    /// When its bytes may start to move: its descriptor cost after the channel started it (a
    /// get's request is on its way meanwhile; set when the channel starts it).
    pub(in crate::sim::engine) data_from: SimTime,
    pub(in crate::sim::engine) op: OpKind,
    pub(in crate::sim::engine) caller: Option<CallSite>,
    /// The observers' token of its transfer (so the chip that reads its source needs
    /// nothing of the transfer's state, which stays with its core).
    pub(in crate::sim::engine) clock: SdmaToken,
}
