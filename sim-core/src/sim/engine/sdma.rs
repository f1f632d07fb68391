//! SDMA copy engines: per-chip channels that move GM to GM (local or a peer's) without UB.
//!
//! A transfer (`put_async` / `get_async`) is a list of descriptors queued on one channel, or
//! striped over several consecutive ones (`SdmaOpts::queues`, descriptor `k` on the
//! `k % queues`-th); each channel runs its descriptors one after another. A descriptor starts when the channel is free and the
//! transfer has been posted (the request's resume time), plus `cold_start` for the channel's
//! first descriptor of the run; it costs `descriptor` before its first byte moves, then it is
//! a flow of packets: a put's along `PathKind::SdmaPut` (HBM, channel, links, peer port, peer
//! HBM), a get's data along `SdmaGet` (peer HBM, links, port, channel, HBM) once its request
//! has crossed along `SdmaRequest`. A get's request leaves as the descriptor starts (it needs
//! only the source's address), so its crossing overlaps the descriptor cost: the data moves at
//! the later of the two, not after their sum. The source is read when its flow starts
//! (at the owner, for a get) and the bytes land when the flow arrives. The next descriptor
//! starts once this one's flow has cleared the channel. A descriptor holds a slot of its
//! channel's queue from submission until its bytes land; a transfer is complete when its last
//! descriptor has landed.
//!
//! Across a switch the channel's chip learns that a descriptor landed one route latency later
//! (`SdmaEvent::Done`), as it learns of a core's writes: its queue slot and the transfer's
//! completion wait for that.
//!
//! Ordering: SDMA writes are not the core's writes. A notify or `fence` of the issuing core
//! does not wait for them (a notify issued before `wait_async` may overtake the data); only
//! `wait_async`, or a `test_async` that answers true, orders what follows after the data.

use super::Engine;
use super::desc::Desc;
use super::event::{Event, Key, SdmaEvent};
use super::observe::{OpAt, WriteToken};
use super::state::channels::Transfer;
use crate::api::request::{OpKind, Reply, SdmaSpec};
use crate::base::call_site::CallSite;
use crate::base::error::{SimError, Site};
use crate::base::payload::Payload;
use crate::base::time::SimTime;
use crate::model::{PathKind, Route};

impl Engine {
    fn site_of(&self, actor: usize) -> Site {
        match self.actors.get(actor).and_then(|a| a.job.as_ref()) {
            Some((_, a)) => a.ctx.site(a.block),
            None => Site { chip: self.chip_of(actor), block: self.core_of(actor), task: "?".into() },
        }
    }

    /// A posted `put_async` / `get_async`: queue its descriptors on the channel.
    pub(super) fn sdma_submit(&mut self, key: Key, actor: usize, spec: SdmaSpec, resume: SimTime) {
        let me = self.chip_of(actor);
        let site = self.site_of(actor);
        let Some(p) = self.sdma.params.clone() else {
            let msg = "this chip has no SDMA engines; add a [chip.sdma] table to the machine config".to_string();
            self.fail(SimError::BadOp { site, op: spec.op.name(), msg });
            return;
        };
        if spec.channel >= p.channels {
            let msg = format!(
                "channel {} is out of range: the chip has {} SDMA channels (chip.sdma.channels)",
                spec.channel, p.channels
            );
            self.fail(SimError::BadOp { site, op: spec.op.name(), msg });
            return;
        }
        let n = spec.descs.len();
        let queues = spec.queues.clamp(1, p.channels);
        // Descriptor k runs on the (k % queues)-th of the transfer's consecutive channels.
        let ch_of = |k: usize| me * p.channels + (spec.channel + k % queues) % p.channels;
        for q in 0..queues.min(n) {
            let (ch, adds) = (ch_of(q), (n - q).div_ceil(queues));
            let held = self.sdma.channels[ch].held;
            if held + adds > p.queue_depth {
                let msg = format!(
                    "SDMA channel {} of rank {me} holds {held} descriptors and this transfer adds {adds}, more than its \
                     queue depth {} (chip.sdma.queue_depth); wait_async earlier transfers first, spread them over \
                     channels (SdmaOpts::channel / queues), or raise chip.sdma.queue_depth",
                    ch - me * p.channels,
                    p.queue_depth
                );
                self.fail(SimError::BadOp { site, op: spec.op.name(), msg });
                return;
            }
        }
        let t = key.time;
        let clock = self.obs.sdma_posted(actor, &spec, t, resume);
        self.sdma.transfers.insert((actor, spec.id), Transfer { left: n, waiting: false, clock });
        for (k, (src, dst)) in spec.descs.into_iter().enumerate() {
            let ch = ch_of(k);
            let d = Desc {
                actor,
                id: spec.id,
                ch,
                src,
                dst,
                get: spec.get,
                atomic: spec.atomic,
                ready: resume.max(t),
                data_from: resume.max(t),
                op: spec.op,
                caller: spec.caller.map(CallSite::from),
                clock,
            };
            let i = self.sdma.put(d);
            self.sdma.channels[ch].queue.push_back(i);
            self.sdma.channels[ch].held += 1;
        }
        for q in 0..queues.min(n) {
            self.sdma_kick(key, ch_of(q));
        }
    }

    /// Starts channel `ch`'s next descriptor if the channel is free.
    fn sdma_kick(&mut self, key: Key, ch: usize) {
        let Some(p) = self.sdma.params.as_ref() else { return };
        let (cold, desc_cost) = (p.cold_start, p.descriptor);
        let c = &mut self.sdma.channels[ch];
        if c.busy {
            return;
        }
        let Some(&front) = c.queue.front() else { return };
        let Some(d) = self.sdma.descs[front].as_ref() else { return };
        let mut start = key.time.max(d.ready);
        if !c.warm {
            c.warm = true;
            start += cold;
        }
        c.busy = true;
        // A get starts at once (its request leaves now, see `sdma_start`); a put when its
        // descriptor cost is paid.
        let at = if d.get { start } else { start + desc_cost };
        self.push_derived(at, key, Event::Sdma(SdmaEvent::Start { ch }));
    }

    pub(super) fn sdma_event(&mut self, key: Key, e: SdmaEvent) {
        match e {
            SdmaEvent::Start { ch } => self.sdma_start(key, ch),
            SdmaEvent::RemoteRead { desc } => self.sdma_read(key, desc),
            SdmaEvent::Cleared { ch } => {
                self.sdma.channels[ch].busy = false;
                self.sdma_kick(key, ch);
            }
            SdmaEvent::Land { desc, data, check } => self.sdma_land(key, &desc, data, check),
            SdmaEvent::Done { actor, id, ch } => self.sdma_done(key.time, actor, id, ch),
        }
    }

    /// The chip where SDMA event `e` happens: the channel's, or the chip a descriptor reads
    /// from (a get's request) or lands on.
    pub(super) fn sdma_place(&self, e: &SdmaEvent) -> usize {
        match e {
            SdmaEvent::Start { ch } | SdmaEvent::Cleared { ch } | SdmaEvent::Done { ch, .. } => {
                self.sdma.chip_of_channel(*ch)
            }
            SdmaEvent::RemoteRead { desc } => desc.src.chip(),
            SdmaEvent::Land { desc, .. } => desc.dst.chip(),
        }
    }

    /// Channel `ch` starts its front descriptor, which leaves the channel's store: from here
    /// on it travels with its events.
    fn sdma_start(&mut self, key: Key, ch: usize) {
        let Some(i) = self.sdma.channels[ch].queue.pop_front() else { return };
        let Some(mut d) = self.sdma.descs[i].take() else { return };
        self.sdma.free.push(i);
        if d.get {
            // The request is sent now; the data waits for the descriptor cost as well.
            d.data_from = key.time + self.sdma.params.as_ref().map(|p| p.descriptor).unwrap_or_default();
        }
        let d = Box::new(d);
        if d.get {
            let channel = ch - self.chip_of(d.actor) * self.sdma.params.as_ref().map_or(1, |p| p.channels);
            let route =
                Route { kind: PathKind::SdmaRequest, chip: self.chip_of(d.actor), core: channel, peer: d.src.chip() };
            let end = Event::Sdma(SdmaEvent::RemoteRead { desc: d });
            self.start_flow(key, route, 0, key.time, None, end);
        } else {
            self.sdma_read(key, d);
        }
    }

    /// Reads a descriptor's source now and sends its bytes on their way.
    fn sdma_read(&mut self, key: Key, d: Box<Desc>) {
        let (actor, ch) = (d.actor, d.ch);
        let me = self.chip_of(actor);
        let channel = ch - me * self.sdma.params.as_ref().map_or(1, |p| p.channels);
        let at = OpAt { op: d.op, time: key.time, caller: d.caller };
        let check = self.obs.sdma_moved(&d.clock, (&d.src, &d.dst), d.atomic.is_some(), at);
        let data = self.mem.read(&d.src);
        let get = d.get;
        let route = if d.get {
            Route { kind: PathKind::SdmaGet, chip: me, core: channel, peer: d.src.chip() }
        } else {
            Route { kind: PathKind::SdmaPut, chip: me, core: channel, peer: d.dst.chip() }
        };
        let bytes = data.len() as u64;
        let at = if get { (key.time + self.net.read_turnaround()).max(d.data_from) } else { key.time };
        let cleared = Some(Event::Sdma(SdmaEvent::Cleared { ch }));
        let end = Event::Sdma(SdmaEvent::Land { desc: d, data, check });
        self.start_flow(key, route, bytes, at, cleared, end);
    }

    /// A descriptor's bytes land: its channel's chip learns it at once within its island, one
    /// route latency later across a switch (`Network::news_delay`).
    fn sdma_land(&mut self, key: Key, d: &Desc, data: Payload, check: WriteToken) {
        self.land(key.time, &d.dst, data, d.atomic, d.actor, d.op);
        self.obs.write_landed(check);
        let home = self.sdma.chip_of_channel(d.ch);
        if self.vis.island(d.dst.chip()) == self.vis.island(home) {
            return self.sdma_done(key.time, d.actor, d.id, d.ch);
        }
        let at = key.time + self.net.news_delay(d.dst.chip(), home);
        let done = SdmaEvent::Done { actor: d.actor, id: d.id, ch: d.ch };
        self.push_derived(at, key, Event::Sdma(done));
    }

    /// Channel `ch`'s chip knows at `t` that a descriptor of `actor`'s transfer `id` landed:
    /// the descriptor leaves the channel's queue, and the transfer completes with its last.
    fn sdma_done(&mut self, t: SimTime, actor: usize, id: u64, ch: usize) {
        self.sdma.channels[ch].held -= 1;
        let Some(tr) = self.sdma.transfers.get_mut(&(actor, id)) else { return };
        tr.left -= 1;
        if tr.left == 0 && tr.waiting {
            let poll = self.sdma.params.as_ref().map(|p| p.poll).unwrap_or_default();
            self.sdma_complete(actor, id, t + poll);
        }
    }

    /// The waiting `actor` observed transfer `id` complete: it resumes at `at`.
    fn sdma_complete(&mut self, actor: usize, id: u64, at: SimTime) {
        if let Some(t) = self.sdma.transfers.remove(&(actor, id)) {
            self.obs.sdma_completed(actor, &t.clock, true);
        }
        self.reply(actor, at, Reply::Done);
    }

    fn sdma_unknown(&mut self, actor: usize, op: OpKind, id: u64, t: SimTime) {
        let msg = format!("SDMA handle #{id} is not a transfer in progress of this core (already waited?)");
        let err = SimError::BadOp { site: self.site_of(actor), op: op.name(), msg };
        self.reply(actor, t, Reply::Err(Box::new(err)));
    }

    /// `test_async`: whether the transfer has completed, after one poll.
    pub(super) fn sdma_test(&mut self, key: Key, actor: usize, id: u64) {
        let t = key.time;
        self.obs.op_started(actor, OpKind::TestAsync, t, 0, None);
        let poll = self.sdma.params.as_ref().map(|p| p.poll).unwrap_or_default();
        let Some(tr) = self.sdma.transfers.get(&(actor, id)) else {
            return self.sdma_unknown(actor, OpKind::TestAsync, id, t);
        };
        let done = tr.left == 0;
        if done {
            self.obs.sdma_completed(actor, &tr.clock, false);
        }
        self.reply(actor, t + poll, Reply::Flag(done));
    }

    /// `wait_async`: resolves one poll after the transfer has completed.
    pub(super) fn sdma_wait(&mut self, key: Key, actor: usize, id: u64) {
        let t = key.time;
        self.obs.op_started(actor, OpKind::WaitAsync, t, 0, None);
        let poll = self.sdma.params.as_ref().map(|p| p.poll).unwrap_or_default();
        let Some(tr) = self.sdma.transfers.get_mut(&(actor, id)) else {
            return self.sdma_unknown(actor, OpKind::WaitAsync, id, t);
        };
        if tr.left == 0 {
            self.sdma_complete(actor, id, t + poll);
        } else {
            tr.waiting = true;
        }
    }
}
