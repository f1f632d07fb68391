//! Each chip's SDMA channels: their descriptor queues and the transfers in progress. `sdma.rs`
//! runs them.

use super::super::desc::Desc;
use super::super::observe::SdmaToken;
use crate::model::SdmaParams;
use std::collections::{BTreeMap, VecDeque};

#[derive(Debug, Default)]
pub(in crate::sim::engine) struct Channel {
    pub(in crate::sim::engine) warm: bool,
    pub(in crate::sim::engine) busy: bool,
    pub(in crate::sim::engine) queue: VecDeque<usize>,
    /// Descriptors submitted and not landed.
    pub(in crate::sim::engine) held: usize,
}

#[derive(Debug)]
pub(in crate::sim::engine) struct Transfer {
    pub(in crate::sim::engine) left: usize,
    pub(in crate::sim::engine) waiting: bool,
    /// The observers' token of the transfer.
    pub(in crate::sim::engine) clock: SdmaToken,
}

/// The SDMA state of a run.
#[derive(Debug)]
pub(crate) struct Sdma {
    pub(in crate::sim::engine) params: Option<SdmaParams>,
    pub(in crate::sim::engine) channels: Vec<Channel>,
    pub(in crate::sim::engine) descs: Vec<Option<Desc>>,
    pub(in crate::sim::engine) free: Vec<usize>,
    /// Transfers not yet waited, by (actor, id).
    pub(in crate::sim::engine) transfers: BTreeMap<(usize, u64), Transfer>,
}

impl Sdma {
    pub(crate) fn new(world: usize, params: Option<&SdmaParams>) -> Sdma {
        let n = params.map_or(0, |p| p.channels) * world;
        Sdma {
            params: params.cloned(),
            channels: (0..n).map(|_| Channel::default()).collect(),
            descs: Vec::new(),
            free: Vec::new(),
            transfers: BTreeMap::new(),
        }
    }

    /// The chip of global channel `ch`.
    pub(in crate::sim::engine) fn chip_of_channel(&self, ch: usize) -> usize {
        ch / self.params.as_ref().map_or(1, |p| p.channels.max(1))
    }

    pub(in crate::sim::engine) fn put(&mut self, d: Desc) -> usize {
        match self.free.pop() {
            Some(i) => {
                self.descs[i] = Some(d);
                i
            }
            None => {
                self.descs.push(Some(d));
                self.descs.len() - 1
            }
        }
    }
}
