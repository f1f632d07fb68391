//! Asynchronous loads: a read posted on the MTE2 pipe whose bytes the core collects later.
//! The read is applied like a blocking one (same checks, same flow); only its end differs:
//! the bytes wait here until the core asks for them, or the core waits here for the bytes.

use super::Engine;
use super::event::Event;
use crate::payload::Payload;
use crate::request::Reply;
use crate::time::SimTime;
use std::collections::BTreeMap;

/// Where an asynchronous load stands.
#[derive(Debug)]
enum Slot {
    /// Its bytes are in UB, not collected yet.
    Arrived(Payload),
    /// The core is blocked collecting it.
    Awaited,
}

/// Asynchronous loads not collected yet, by (actor, stamped ticket). A core numbers its loads
/// from 0 in every block; the stamp adds the actor's block count so a load that arrives after
/// its block ended cannot be mistaken for one of the next block.
#[derive(Debug, Default)]
pub(super) struct Loads {
    slots: BTreeMap<(usize, u64), Slot>,
    /// Blocks each actor has ended.
    epoch: BTreeMap<usize, u64>,
}

impl Loads {
    /// `ticket` of `actor`'s current block, stamped.
    pub(super) fn stamp(&self, actor: usize, ticket: u64) -> u64 {
        (self.epoch.get(&actor).copied().unwrap_or(0) << 40) | ticket
    }

    /// `actor`'s block ended: loads it never collected are dropped, now and on arrival.
    pub(super) fn end_block(&mut self, actor: usize) {
        *self.epoch.entry(actor).or_default() += 1;
        self.slots.retain(|&(a, _), _| a != actor);
    }

    fn current(&self, actor: usize, stamped: u64) -> bool {
        stamped >> 40 == self.epoch.get(&actor).copied().unwrap_or(0)
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
        match self.loads.slots.remove(&(actor, ticket)) {
            Some(Slot::Awaited) => self.reply(actor, t, Reply::Data(data)),
            _ => {
                self.loads.slots.insert((actor, ticket), Slot::Arrived(data));
            }
        }
    }

    /// `actor` asks for the bytes of load `ticket`: now if they are there, else on arrival.
    pub(super) fn collect(&mut self, t: SimTime, actor: usize, ticket: u64) {
        let ticket = self.loads.stamp(actor, ticket);
        match self.loads.slots.remove(&(actor, ticket)) {
            Some(Slot::Arrived(data)) => self.reply(actor, t, Reply::Data(data)),
            _ => {
                self.loads.slots.insert((actor, ticket), Slot::Awaited);
            }
        }
    }
}
