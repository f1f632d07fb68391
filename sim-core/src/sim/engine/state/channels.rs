//! Each chip's SDMA channels: their descriptor queues and the transfers in progress. `sdma.rs`
//! runs them.

use super::super::desc::Desc;
use super::super::observe::SdmaToken;
use super::per_actor::PerActor;
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
    /// By global channel number (`chip * channels + channel`), for the chips the engine runs.
    pub(in crate::sim::engine) channels: PerActor<Channel>,
    pub(in crate::sim::engine) descs: Vec<Option<Desc>>,
    pub(in crate::sim::engine) free: Vec<usize>,
    /// Transfers not yet waited, by (actor, id).
    pub(in crate::sim::engine) transfers: BTreeMap<(usize, u64), Transfer>,
}

impl Sdma {
    /// The SDMA state of the chips `chips` (all of a run's, or a split run's partition's).
    pub(crate) fn new(chips: std::ops::Range<usize>, params: Option<&SdmaParams>) -> Sdma {
        let n = params.map_or(0, |p| p.channels);
        Sdma {
            params: params.cloned(),
            channels: PerActor::new(chips.start * n..chips.end * n, Channel::default),
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
