//! What an engine that runs one partition of a split run holds: the split, and the events on
//! their way to other partitions (`partition.rs` sends and accepts them).

use super::super::event::{Event, Key};
use crate::model::Route;
use std::ops::Range;
use std::sync::Arc;

/// What an engine that runs one partition knows of the split.
pub(in crate::sim::engine) struct Part {
    /// This partition's number.
    pub(in crate::sim::engine) id: usize,
    /// The partition of each chip.
    pub(in crate::sim::engine) owner: Arc<[u32]>,
    /// Events for other partitions, by partition, in the order they were caused.
    pub(in crate::sim::engine) outbox: Vec<Vec<Crossing>>,
}

/// An event on its way to another partition. What the sender's state numbers (the slot of
/// a packet's last-hop event, its path) travels by value.
#[derive(Debug)]
pub(crate) struct Crossing {
    pub(in crate::sim::engine) key: Key,
    pub(in crate::sim::engine) ev: Event,
    /// The events that end the flow of an [`Event::Onward`] carrying its last packet, and
    /// that clear its sender (a get's channel), when it has them; boxed, as few crossings
    /// carry them and a window's crossings are held at once (twice their inline size).
    pub(in crate::sim::engine) end: Option<Box<Event>>,
    pub(in crate::sim::engine) cleared: Option<Box<Event>>,
    /// The route of an [`Event::Onward`]'s path.
    pub(in crate::sim::engine) route: Option<Route>,
    /// The block and task of the writer of the write or notify its flow lands (its writer's
    /// partition knows them): a landing records them in the cell's history, for reports.
    pub(in crate::sim::engine) job: Option<WriterJob>,
}

/// The block and task a writer (an actor of another partition) runs.
#[derive(Clone, Debug)]
pub(crate) struct WriterJob {
    pub(in crate::sim::engine) writer: usize,
    pub(in crate::sim::engine) block: usize,
    pub(in crate::sim::engine) task: Arc<str>,
}

impl Crossing {
    /// The event's key, for a deterministic order of arrival.
    pub(crate) fn order(&self) -> (u128, u64) {
        self.key.stamp()
    }
}

/// The chips of partition `id` as one range, from its first (in `owner`, the partition of
/// each chip) to its last, the ones between included (all its own when partitions are
/// consecutive islands of consecutive chips); empty when it owns no chip. What a partition's
/// engine and network model hold.
pub(crate) fn own_chips(owner: &[u32], id: usize) -> Range<usize> {
    let own = |&(_, &o): &(usize, &u32)| o as usize == id;
    match (owner.iter().enumerate().find(own), owner.iter().enumerate().rev().find(own)) {
        (Some((first, _)), Some((last, _))) => first..last + 1,
        _ => 0..0,
    }
}
