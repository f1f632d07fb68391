//! Asynchronous loads: a read posted on the MTE2 pipe whose bytes the core collects later.
//! The read is applied like a blocking one (same checks, same flow); only its end differs:
//! the bytes wait here until the core asks for them, or the core waits here for the bytes.

use super::Engine;
use super::event::Event;
use super::state::pending_loads::Slot;
use crate::api::request::Reply;
use crate::base::payload::Payload;
use crate::base::time::SimTime;

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
