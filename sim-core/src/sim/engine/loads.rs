//! Asynchronous loads: a read posted on the MTE2 pipe whose bytes the core collects later.
//! The read is applied like a blocking one (same checks, same flow); only its end differs:
//! the bytes wait here until the core asks for them, or the core waits here for the bytes.

use super::Engine;
use super::event::Event;
use crate::api::request::Reply;
use crate::base::payload::Payload;
use crate::base::time::SimTime;

/// Where an asynchronous load stands.
#[derive(Debug)]
enum Slot {
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
pub(super) struct Loads {
    /// `slots[actor]`: `(stamped ticket, slot)`, in no particular order (only looked up).
    slots: Vec<Vec<(u64, Slot)>>,
    /// `epoch[actor]`: blocks the actor has ended.
    epoch: Vec<u64>,
}

impl Loads {
    /// `ticket` of `actor`'s current block, stamped.
    pub(super) fn stamp(&self, actor: usize, ticket: u64) -> u64 {
        (self.epoch.get(actor).copied().unwrap_or(0) << 40) | ticket
    }

    /// `actor`'s block ended: loads it never collected are dropped, now and on arrival.
    pub(super) fn end_block(&mut self, actor: usize) {
        if self.epoch.len() <= actor {
            self.epoch.resize(actor + 1, 0);
        }
        self.epoch[actor] += 1;
        if let Some(v) = self.slots.get_mut(actor) {
            v.clear();
        }
    }

    fn current(&self, actor: usize, stamped: u64) -> bool {
        stamped >> 40 == self.epoch.get(actor).copied().unwrap_or(0)
    }

    /// Takes the slot of `actor`'s load `stamped`, if it has one.
    fn take(&mut self, actor: usize, stamped: u64) -> Option<Slot> {
        let v = self.slots.get_mut(actor)?;
        let i = v.iter().position(|&(t, _)| t == stamped)?;
        Some(v.swap_remove(i).1)
    }

    fn put(&mut self, actor: usize, stamped: u64, slot: Slot) {
        if self.slots.len() <= actor {
            self.slots.resize_with(actor + 1, Vec::new);
        }
        self.slots[actor].push((stamped, slot));
    }
}

impl Engine {
    /// How a read of `actor` ends: a reply (blocking read) or an arrival event (`ticket`).
    pub(super) fn read_end(
        &self,
        actor: usize,
        data: Payload,
        ticket: Option<u64>,
        issued: SimTime,
        peer: Option<usize>,
    ) -> Event {
        match ticket {
            None => Event::Reply { actor, reply: Reply::Data(data) },
            Some(ticket) => Event::Loaded { actor, ticket, data, issued, peer },
        }
    }

    /// The bytes of load `ticket` reached UB at `t`.
    pub(super) fn loaded(
        &mut self,
        t: SimTime,
        actor: usize,
        ticket: u64,
        data: Payload,
        issued: SimTime,
        peer: Option<usize>,
    ) {
        self.obs.load_arrived(actor, peer, issued, t, data.len());
        if !self.loads.current(actor, ticket) {
            return;
        }
        match self.loads.take(actor, ticket) {
            Some(Slot::Awaited) => self.reply(actor, t, Reply::Data(data)),
            _ => self.loads.put(actor, ticket, Slot::Arrived(data)),
        }
    }

    /// `actor` asks for the bytes of load `ticket`: now if they are there, else on arrival.
    pub(super) fn collect(&mut self, t: SimTime, actor: usize, ticket: u64) {
        let ticket = self.loads.stamp(actor, ticket);
        match self.loads.take(actor, ticket) {
            Some(Slot::Arrived(data)) => self.reply(actor, t, Reply::Data(data)),
            _ => self.loads.put(actor, ticket, Slot::Awaited),
        }
    }
}
