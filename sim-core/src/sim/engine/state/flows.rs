//! Flows in progress, per path in first-in first-out order. `flow.rs` sends their packets.

use super::super::event::Key;
use crate::base::time::SimTime;
use crate::model::PathId;
use std::collections::VecDeque;

/// One flow in progress. Its events wait in the engine's event slots from the start, so a
/// flow is small to move and its end event is queued without being moved again.
#[derive(Debug)]
pub(crate) struct Flow {
    pub(in crate::sim::engine) path: PathId,
    /// The chip whose side sends its packets (where its steps happen).
    pub(in crate::sim::engine) chip: u32,
    /// When its first packet may enter the path.
    pub(in crate::sim::engine) at: SimTime,
    /// Bytes not yet sent (a request flow sends one empty packet).
    pub(in crate::sim::engine) left: u64,
    pub(in crate::sim::engine) origin: Key,
    /// The slot of the event applied at the time the sender is free again.
    pub(in crate::sim::engine) cleared: Option<u32>,
    /// The slot of the event applied when the last byte has arrived (an [`Event::Reply`]
    /// releases its actor then).
    pub(in crate::sim::engine) end: u32,
}

/// Flows in progress and the per-path FIFO queues.
#[derive(Debug, Default)]
pub(crate) struct Flows {
    pub(in crate::sim::engine) slots: Vec<Option<Flow>>,
    pub(in crate::sim::engine) free: Vec<usize>,
    /// Per path (indexed by the dense [`PathId`]), the flows not finished sending; the front
    /// one is sending. Queues are kept when they empty, so a path reused costs no allocation.
    pub(in crate::sim::engine) queues: Vec<VecDeque<usize>>,
}

impl Flows {
    pub(in crate::sim::engine) fn put(&mut self, f: Flow) -> usize {
        match self.free.pop() {
            Some(i) => {
                self.slots[i] = Some(f);
                i
            }
            None => {
                self.slots.push(Some(f));
                self.slots.len() - 1
            }
        }
    }
}
