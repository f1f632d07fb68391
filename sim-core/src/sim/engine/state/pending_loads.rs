//! Asynchronous loads whose bytes have not been collected yet, per core. `loads.rs` fills and
//! drains them.

use crate::base::payload::Payload;

/// Where an asynchronous load stands.
#[derive(Debug)]
pub(in crate::sim::engine) enum Slot {
    /// Its bytes are in UB, not collected yet.
    Arrived(Payload),
    /// The core is blocked collecting it.
    Awaited,
}

/// Asynchronous loads not collected yet, per actor, by stamped ticket. A core numbers its
/// loads from 0 in every block; the stamp adds the actor's block count so a load that arrives
/// after its block ended cannot be mistaken for one of the next block. A core keeps a few
/// loads in flight (double or triple buffering), so each actor's are a short list searched
/// in place, indexed by actor like the rest of the engine's per-core state.
#[derive(Debug, Default)]
pub(in crate::sim::engine) struct Loads {
    /// `slots[actor]`: `(stamped ticket, slot)`, in no particular order (only looked up).
    pub(in crate::sim::engine) slots: Vec<Vec<(u64, Slot)>>,
    /// `epoch[actor]`: blocks the actor has ended.
    pub(in crate::sim::engine) epoch: Vec<u64>,
}

impl Loads {
    /// `ticket` of `actor`'s current block, stamped.
    pub(in crate::sim::engine) fn stamp(&self, actor: usize, ticket: u64) -> u64 {
        (self.epoch.get(actor).copied().unwrap_or(0) << 40) | ticket
    }

    /// `actor`'s block ended: loads it never collected are dropped, now and on arrival.
    pub(in crate::sim::engine) fn end_block(&mut self, actor: usize) {
        if self.epoch.len() <= actor {
            self.epoch.resize(actor + 1, 0);
        }
        self.epoch[actor] += 1;
        if let Some(v) = self.slots.get_mut(actor) {
            v.clear();
        }
    }

    pub(in crate::sim::engine) fn current(&self, actor: usize, stamped: u64) -> bool {
        stamped >> 40 == self.epoch.get(actor).copied().unwrap_or(0)
    }

    /// Takes the slot of `actor`'s load `stamped`, if it has one.
    pub(in crate::sim::engine) fn take(&mut self, actor: usize, stamped: u64) -> Option<Slot> {
        let v = self.slots.get_mut(actor)?;
        let i = v.iter().position(|&(t, _)| t == stamped)?;
        Some(v.swap_remove(i).1)
    }

    pub(in crate::sim::engine) fn put(&mut self, actor: usize, stamped: u64, slot: Slot) {
        if self.slots.len() <= actor {
            self.slots.resize_with(actor + 1, Vec::new);
        }
        self.slots[actor].push((stamped, slot));
    }
}
