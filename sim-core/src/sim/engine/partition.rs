//! One partition of a run split at switches: the engine applies only the events of its own
//! chips, below a horizon the partitions agree on, and hands what it causes on another
//! partition's chips to the exchange (`crate::sim::split`) instead of its queue.
//!
//! Only four kinds of event ever cross an island, each at least the lookahead after its
//! cause (ARCHITECTURE, "Islands see each other only through delayed events"): a packet at a
//! switch going on to the receiver's side ([`Event::Onward`]), the news that a write landed
//! ([`Event::Acked`]), the release of a notify ([`Event::Release`]) and the news that an SDMA
//! descriptor landed ([`SdmaEvent::Done`]). Any other event bound for another partition, or
//! one due before the horizon, means the model broke that rule: the run ends with an error
//! that says so rather than with results that depend on the split.

use super::event::{Event, Key, SdmaEvent};
use super::state::part::{Crossing, Part, WriterJob};
use super::{Engine, Pending};
use crate::base::error::SimError;
use crate::base::time::SimTime;
use std::sync::Arc;

impl Engine {
    /// Makes this engine partition `id` of a split run: `owner[chip]` is each chip's
    /// partition. Other partitions' chips never start their dispatches here (the engine was
    /// built for this partition: [`Engine::new`]).
    pub(super) fn partition(&mut self, id: usize, owner: Arc<[u32]>) {
        let parts = owner.iter().map(|&p| p as usize + 1).max().unwrap_or(1).max(id + 1);
        for (chip, sched) in self.chips.iter_mut().enumerate() {
            if owner.get(chip).is_none_or(|&p| p as usize != id) {
                *sched = super::state::tasks::ChipSched::new(Vec::new(), self.cores);
            }
        }
        self.part = Some(Box::new(Part { id, owner, outbox: (0..parts).map(|_| Vec::new()).collect() }));
        self.obs.record_partition(id);
        self.horizon = SimTime::ZERO;
    }

    /// Lets this partition apply events before `horizon` (its next window).
    pub(crate) fn open_window(&mut self, horizon: SimTime) {
        self.horizon = horizon;
    }

    /// The earliest time this partition has anything to do at: its first pending event, or
    /// a running core's next request. `None`: nothing until another partition sends.
    pub(crate) fn next_time(&mut self) -> Option<SimTime> {
        let queued = self.queue.peek_key().map(|k| k.time);
        let running = self.running.first_packed().map(|b| Key::unbound(b).0);
        match (queued, running) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether every dispatch of this partition's chips has ended.
    pub(crate) fn chips_idle(&self) -> bool {
        self.chips.iter().all(super::state::tasks::ChipSched::is_idle)
    }

    /// Ends a split run that nothing can move on: done, or deadlocked (this partition's part
    /// of the report).
    pub(crate) fn end_split(&mut self) {
        if self.outcome.is_some() {
            return;
        }
        if self.chips_idle() {
            self.outcome = Some(Ok(()));
        } else {
            let report = self.deadlock_report();
            self.fail(SimError::Deadlock(Box::new(report)));
        }
    }

    /// Takes the events caused for each other partition since the last call.
    pub(crate) fn take_outbox(&mut self) -> Vec<Vec<Crossing>> {
        match self.part.as_mut() {
            Some(p) => p.outbox.iter_mut().map(std::mem::take).collect(),
            None => Vec::new(),
        }
    }

    /// Queues an event another partition caused for one of this partition's chips.
    pub(crate) fn accept(&mut self, c: Crossing) {
        let Crossing { key, mut ev, end, cleared, route, job } = c;
        if let Some(j) = job {
            self.foreign_jobs.insert(j.writer, (j.block, j.task));
        }
        if let Event::Onward { path, end: slot, cleared: cleared_slot, .. } = &mut ev {
            if let Some(r) = route {
                *path = self.net.path(&r);
            }
            *slot = end.map(|e| self.slots.put(*e));
            *cleared_slot = cleared.map(|e| self.slots.put(*e));
        }
        self.queue_local(key, ev);
    }

    /// Whether `chip` belongs to another partition (never, in a run that is not split).
    #[inline]
    pub(super) fn foreign(&self, chip: usize) -> bool {
        match self.part.as_deref() {
            Some(p) => p.owner.get(chip).is_some_and(|&o| o as usize != p.id),
            None => false,
        }
    }

    /// The chip whose state `ev` reads and changes (where [`Engine::apply`] says it happens).
    pub(super) fn place_of(&self, ev: &Event) -> usize {
        match ev {
            Event::Request { actor, .. }
            | Event::Loaded { actor, .. }
            | Event::Reply { actor, .. }
            | Event::Acked { writer: actor, .. } => self.chip_of(*actor),
            Event::RemoteRead { src, .. } | Event::CopyRemoteRead { src, .. } => src.chip(),
            Event::Land { dst, .. } => dst.chip(),
            Event::Signal(s) => s.cell.chip(),
            Event::Release { chip, .. } | Event::DispatchStart { chip } | Event::DeferredReady { chip, .. } => *chip,
            Event::FlowStep { flow } => self.flow_place(*flow),
            Event::Onward { from, .. } => from.chip as usize,
            Event::CopyLoaded { job, .. } | Event::CopyStored { job } => match self.copy_place(*job) {
                super::Here::Chip(c) => c,
                super::Here::Actor(a) => self.chip_of(a),
            },
            Event::Sdma(e) => self.sdma_place(e),
        }
    }

    /// Sends `ev` (due on another partition's chip) to the exchange, or ends the run if it is
    /// not an event that may cross, or comes sooner than the partitions' window allows.
    pub(super) fn send_across(&mut self, key: Key, mut ev: Event) {
        let crosses = matches!(
            ev,
            Event::Onward { .. } | Event::Acked { .. } | Event::Release { .. } | Event::Sdma(SdmaEvent::Done { .. })
        );
        let chip = self.place_of(&ev);
        let Some(p) = self.part.as_deref() else { return self.queue_local(key, ev) };
        let to = p.owner.get(chip).map_or(0, |&o| o as usize);
        if !crosses {
            return self.fail(SimError::invalid(format!(
                "partition {} caused {} on chip {chip} of partition {to}: only a packet past a switch and the news of \
                 a landing may cross partitions; this machine or operation cannot be split (run it with --partitions 1)",
                p.id,
                super::event_name(&ev),
            )));
        }
        if key.time < self.horizon {
            return self.fail(SimError::invalid(format!(
                "partition {} caused {} on chip {chip} of partition {to} at {}, before the window's end at {}: the \
                 lookahead was too long for this event (run it with --partitions 1)",
                p.id,
                super::event_name(&ev),
                key.time,
                self.horizon
            )));
        }
        let (mut end, mut cleared, mut route) = (None, None, None);
        if let Event::Onward { path, end: slot, cleared: cleared_slot, .. } = &mut ev {
            route = self.net.route_of(*path);
            end = slot.take().map(|s| Box::new(self.slots.take(s)));
            cleared = cleared_slot.take().map(|s| Box::new(self.slots.take(s)));
        }
        let job = end.as_deref().and_then(|e| self.writer_job(e));
        if let Some(p) = self.part.as_deref_mut()
            && let Some(out) = p.outbox.get_mut(to)
        {
            out.push(Crossing { key, ev, end, cleared, route, job });
        }
    }

    /// The block and task of the writer whose write or notify `end` lands. Its block runs
    /// until the write has landed and it has heard so, so they are still the writer's then.
    fn writer_job(&self, end: &Event) -> Option<WriterJob> {
        let writer = match end {
            Event::Land { writer, .. } => *writer as usize,
            Event::Signal(s) => s.writer,
            Event::Sdma(SdmaEvent::Land { desc, .. }) => desc.actor,
            _ => return None,
        };
        let (_, a) = self.actors.get(writer)?.job.as_ref()?;
        Some(WriterJob { writer, block: a.block, task: a.ctx.task.clone() })
    }

    /// [`Engine::push_derived_slot`]'s event, when it is bound for another partition.
    pub(super) fn slot_across(&mut self, key: Key, slot: u32) {
        let ev = self.slots.take(slot);
        self.send_across(key, ev);
    }

    /// Queues `ev` here.
    fn queue_local(&mut self, key: Key, ev: Event) {
        let what = match ev {
            Event::FlowStep { flow } if u32::try_from(flow).is_ok() => Pending::FlowStep(flow as u32),
            ev => Pending::Slot(self.slots.put(ev)),
        };
        self.queue.push(super::Entry { key, what });
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{engine, partition_engine};

    /// A partition of a split run holds the state of its own chips' cores only (chips 2-4 of
    /// 5 here, one core each): what a process of a run over MPI allocates falls with the
    /// number of processes. A run that is not split holds every core's.
    #[test]
    fn a_partition_holds_only_its_own_chips_cores() {
        let owner = [0, 0, 1, 1, 1];
        let part = partition_engine(&owner, 1);
        assert_eq!(part.actor_span(), 2..5);
        assert_eq!(part.running.live_span(), 2..5);
        assert_eq!(part.vis.inflight.span(), 2..5);
        assert_eq!(part.vis.unreleased.span(), 2..5);
        assert!(part.actors.get(1).is_none() && part.actors.get(2).is_some());
        assert_eq!(partition_engine(&owner, 0).actor_span(), 0..2);
        let whole = engine(5, false);
        assert_eq!((whole.actor_span(), whole.vis.inflight.span()), (0..5, 0..5));
    }
}
