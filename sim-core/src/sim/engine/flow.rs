//! Flows: bytes moving along a path of the [`Network`](crate::model::Network), packet by
//! packet. Each packet is an event, so packets of concurrent flows interleave on shared
//! resources in time order. Flows on one path are served first in, first out: a flow sends
//! its first packet only after the previous flow on that path has sent its last, so a notify
//! never overtakes the payload sent before it on the same path.

use super::Engine;
use super::event::{Event, Key};
use super::state::flows::Flow;
use crate::base::time::SimTime;
use crate::model::{Busy, Network, Onward, PacketTiming, PathId, PathKind, Route};
use crate::results::trace::LinkBusy;
use std::collections::VecDeque;

impl Engine {
    /// Starts moving `bytes` along `route` no earlier than `at`. `cleared` is applied when the
    /// sender is free again, `end` when the last byte has arrived.
    pub(super) fn start_flow(
        &mut self,
        origin: Key,
        route: Route,
        bytes: u64,
        at: SimTime,
        cleared: Option<Event>,
        end: Event,
    ) {
        let at = at + self.op_jitter();
        let path = self.net.path(&route);
        let cleared = cleared.map(|ev| self.slots.put(ev));
        let end = self.slots.put(end);
        // Data read from a peer leaves from the peer's side.
        let sender = match route.kind {
            PathKind::RemoteRead | PathKind::SdmaGet => route.peer,
            _ => route.chip,
        };
        let chip = crate::base::addr::narrow(sender);
        let id = self.flows.put(Flow { path, chip, at, left: bytes, origin, cleared, end });
        let p = path.0 as usize;
        if self.flows.queues.len() <= p {
            self.flows.queues.resize_with(p + 1, VecDeque::new);
        }
        let q = &mut self.flows.queues[p];
        q.push_back(id);
        if q.len() == 1 {
            self.push_derived(at, origin, Event::FlowStep { flow: id });
        }
    }

    /// Sends the next packet of flow `id` at the current time. A packet that stops at a
    /// switch goes on with an [`Event::Onward`] there, which ends the flow for its last one.
    pub(super) fn flow_step(&mut self, key: Key, id: usize) {
        let Some(f) = self.flows.slots[id].as_mut() else { return };
        let pkt = f.left.min(self.net.packet_bytes());
        f.left -= pkt;
        let (path, origin, more) = (f.path, f.origin, f.left > 0);
        self.stats.packets += 1;
        let timing = self.send_packet(|net, busy| net.send(path, pkt, key.time, busy));
        if more {
            if let Some(from) = timing.onward {
                let ev = Event::Onward { path, bytes: pkt, from, end: None, cleared: None };
                self.push_derived(from.ready, origin, ev);
            }
            self.push_derived(timing.cleared, origin, Event::FlowStep { flow: id });
            return;
        }
        let Some(f) = self.flows.slots[id].take() else { return };
        self.flows.free.push(id);
        let mut cleared = f.cleared;
        if let Some(slot) = cleared
            && !timing.onward.is_some_and(|_| self.past_switch(slot, f.chip as usize))
        {
            self.push_derived_slot(timing.cleared, origin, slot);
            cleared = None;
        }
        match timing.onward {
            Some(from) => {
                let ev = Event::Onward { path, bytes: pkt, from, end: Some(f.end), cleared };
                self.push_derived(from.ready, origin, ev)
            }
            None => self.end_flow(timing.arrival, origin, f.end),
        }
        self.next_on_path(path, timing.cleared);
    }

    /// A packet reached the switch on its path: books the rest of the path; the flow's last
    /// packet (`end` given) ends the flow when it arrives.
    pub(super) fn onward(&mut self, key: Key, path: PathId, bytes: u64, from: Onward, slots: [Option<u32>; 2]) {
        let [end, cleared] = slots;
        let timing = self.send_packet(|net, busy| net.send_onward(path, bytes, from, busy));
        if let Some(slot) = cleared {
            self.push_derived_slot(timing.cleared, key, slot);
        }
        if let Some(slot) = end {
            self.end_flow(timing.arrival, key, slot);
        }
    }

    /// Whether the event in `slot` (a flow's cleared event) happens past the switch of the
    /// flow's path, on another island than the flow's sender `chip`: a get's channel, which the
    /// data reaches after the switch.
    fn past_switch(&self, slot: u32, chip: usize) -> bool {
        self.slots.peek(slot).is_some_and(|ev| self.vis.island(self.place_of(ev)) != self.vis.island(chip))
    }

    /// Moves a packet with `send`, reporting the resources it kept busy in a traced run.
    fn send_packet(
        &mut self,
        send: impl FnOnce(&mut dyn Network, Option<&mut Vec<Busy>>) -> PacketTiming,
    ) -> PacketTiming {
        if !self.obs.wants_links() {
            return send(self.net.as_mut(), None);
        }
        let mut busy = Vec::new();
        let timing = send(self.net.as_mut(), Some(&mut busy));
        self.trace_busy(&busy);
        timing
    }

    /// Applies a flow's end event (in `slot`) when its last byte has arrived: a reply releases
    /// its actor then, any other event is queued for then.
    fn end_flow(&mut self, arrival: SimTime, origin: Key, slot: u32) {
        if self.slots.is_reply(slot) {
            if let Event::Reply { actor, reply } = self.slots.take(slot) {
                self.reply(actor, arrival, reply);
            }
        } else {
            self.push_derived_slot(arrival, origin, slot);
        }
    }

    /// The flow after a finished one on `path` starts once the path has cleared.
    fn next_on_path(&mut self, path: PathId, cleared: SimTime) {
        let Some(q) = self.flows.queues.get_mut(path.0 as usize) else { return };
        q.pop_front();
        let Some(&next) = q.front() else { return };
        let Some(f) = self.flows.slots[next].as_ref() else { return };
        let (at, origin) = (f.at.max(cleared), f.origin);
        self.push_derived(at, origin, Event::FlowStep { flow: next });
    }

    /// Reports the resources a packet kept busy (traced runs only).
    fn trace_busy(&mut self, busy: &[crate::model::Busy]) {
        for b in busy.iter().filter(|b| b.end > b.start) {
            let rec = LinkBusy {
                resource: self.net.resource_name(b.resource),
                chip: self.net.resource_chip(b.resource),
                start: b.start,
                end: b.end,
                bytes: b.bytes,
            };
            self.obs.link_busy(rec);
        }
    }
}
