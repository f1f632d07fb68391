//! Livelocks: every core with a block spins on polls (`test_signal`, `read_scalar`) or waits,
//! and nothing else happens in the machine, so nothing can ever change what they poll.
//!
//! The rule: the engine counts the events that change nothing (polls, scalar reads, trace
//! notes); every other event is a change. Each core counts its polls since the last change.
//! When every core with a block has polled [`RunOptions::livelock_polls`] times since the
//! last change, or is blocked in a `wait` (which only a change could release), and the queue
//! holds nothing but polls, then no event can ever change memory again: the run ends with a
//! [`LivelockReport`]. A poller waiting on a transfer is never taken for one (the transfer's
//! packets are changes), nor is a core that computes between polls until it has polled that
//! many times.
//!
//! [`RunOptions::livelock_polls`]: crate::RunOptions::livelock_polls

use super::deadlock::domain_rank;
use super::event::{Event, Pending};
use super::{ActorState, Engine};
use crate::base::addr::{Caller, Cells, Place};
use crate::base::error::SimError;
use crate::base::livelock::{LivelockReport, SpinningPoll};
use crate::base::time::SimTime;

/// One poll, as [`Engine::spun`] counts it.
pub(super) enum Spun {
    /// A test of the actor's polled cells that answered no: a polling loop goes on.
    Test,
    /// A test that answered yes: the loop it was in ends, so the core is not spinning.
    Held,
    /// A scalar read of one element, called at the caller: a spin when it reads the element
    /// it read last (a core scanning many elements is not spinning).
    Read(Place, Caller),
}

impl Engine {
    /// The events applied so far that changed something.
    fn changes(&self) -> u64 {
        self.stats.events - self.quiet
    }

    /// Counts a poll of `actor` at `t`; once every core spins or waits with nothing but polls
    /// pending, ends the run as a livelock.
    pub(super) fn spun(&mut self, actor: usize, t: SimTime, poll: Spun) {
        let limit = self.livelock_polls;
        if limit == 0 || self.part.is_some() {
            return;
        }
        let changes = self.changes();
        let s = &mut self.actors[actor].spin;
        let again = match &poll {
            Spun::Test => s.read_at.is_none(),
            Spun::Held => false,
            Spun::Read(place, _) => s.read_at == Some((place.mem, place.region.span().0)),
        };
        if s.epoch != changes || !again {
            (s.epoch, s.polls, s.since) = (changes, 0, t);
        }
        match poll {
            Spun::Test => (s.read_at, s.read) = (None, None),
            Spun::Held => {
                // Counted again from its next poll on.
                (s.epoch, s.read_at, s.read) = (u64::MAX, None, None);
                return;
            }
            Spun::Read(place, caller) => {
                s.read_at = Some((place.mem, place.region.span().0));
                if s.polls + 1 >= limit {
                    s.read = Some(Box::new((place, caller)));
                }
            }
        }
        s.polls += 1;
        if s.polls != limit {
            return;
        }
        if self.saturated.0 != changes {
            self.saturated = (changes, 0);
        }
        self.saturated.1 += 1;
        if self.saturated.1 + self.signals.blocking_waiters() >= self.busy && self.spinning_only(changes) {
            let report = self.livelock_report(changes);
            self.fail(SimError::Livelock(Box::new(report)));
        }
    }

    /// Whether every core with a block spun `livelock_polls` times since change `changes` or
    /// waits, and nothing but polls is pending.
    fn spinning_only(&self, changes: u64) -> bool {
        let spinning = |a: &super::Actor| a.spin.epoch == changes && a.spin.polls >= self.livelock_polls;
        let waiting: std::collections::HashSet<usize> = self
            .signals
            .pending()
            .filter_map(|w| match w.kind {
                super::signals::WaiterKind::Blocking { actor } => Some(actor),
                super::signals::WaiterKind::Deferred { .. } => None,
            })
            .collect();
        let cores_ok = self.actors.iter().all(|(i, a)| {
            a.state == ActorState::Idle || spinning(a) || (a.state == ActorState::Blocked && waiting.contains(&i))
        });
        cores_ok
            && self.queue.entries().all(|p| match p {
                Pending::Poll => true,
                Pending::FlowStep(_) => false,
                Pending::Slot(s) => matches!(self.slots.peek(s), Some(Event::Request { req, .. }) if req.is_quiet()),
            })
    }

    /// The report of a livelock found after change `changes`.
    fn livelock_report(&self, changes: u64) -> LivelockReport {
        let blocked = self.deadlock_report();
        let mut polls = Vec::new();
        for (actor, a) in self.actors.iter() {
            if a.state == ActorState::Idle || a.spin.epoch != changes || a.spin.polls < self.livelock_polls {
                continue;
            }
            let chip = self.chip_of(actor);
            let (block, task) = match &a.job {
                Some((_, j)) => (j.block, j.ctx.task.to_string()),
                None => (self.core_of(actor), String::new()),
            };
            let dispatch = self.chips[chip].active.as_ref().map_or_else(|| "?".to_string(), |d| d.name.to_string());
            let base = SpinningPoll {
                chip,
                domain_rank: 0,
                block,
                task,
                dispatch,
                op: String::new(),
                buffer: String::new(),
                coords: Vec::new(),
                offset: 0,
                current: 0.0,
                cond: None,
                polls: a.spin.polls,
                since: a.spin.since,
                last_writers: Vec::new(),
                location: None,
            };
            match a.spin.read.as_deref() {
                Some((place, caller)) => {
                    let data = self.mem.peek(place).into_bytes();
                    let offset = place.region.span().0;
                    polls.push(SpinningPoll {
                        op: "read_scalar".into(),
                        domain_rank: domain_rank(place.mem),
                        buffer: place.buffer().to_string(),
                        coords: element_coords(place),
                        offset,
                        current: place.tensor.dtype().read_f64(&data, 0),
                        last_writers: self.signals.last_writers(place.mem, offset),
                        location: caller.map(|l| l.to_string()),
                        ..base
                    });
                }
                None => {
                    let cells = match &a.polled.cells {
                        Cells::One(c) => std::slice::from_ref(c),
                        Cells::Many(v) => v.as_slice(),
                    };
                    for c in cells {
                        polls.push(SpinningPoll {
                            op: "test_signal".into(),
                            domain_rank: domain_rank(c.mem),
                            buffer: c.buffer.to_string(),
                            coords: c.coords.to_vec(),
                            offset: c.offset,
                            current: f64::from(self.mem.cell(c)),
                            cond: Some(a.polled.cond),
                            last_writers: self.signals.last_writers(c.mem, c.offset),
                            location: a.polled.caller.map(|l| l.to_string()),
                            ..base.clone()
                        });
                    }
                }
            }
        }
        polls.sort_by_key(|p| (p.chip, p.block, p.offset));
        let since = polls.iter().map(|p| p.since).min().unwrap_or(self.now);
        LivelockReport {
            time: self.now,
            since,
            threshold: self.livelock_polls,
            polls,
            waits: blocked.waits,
            deferred: blocked.deferred,
            stuck: blocked.stuck,
        }
    }
}

/// The coordinates of a scalar access's element in its tensor.
fn element_coords(place: &Place) -> Vec<usize> {
    let (lo, _) = place.region.span();
    let esize = place.esize().max(1);
    let mut flat = lo.saturating_sub(place.base() + place.tensor.0.start) / esize;
    if place.tensor.0.strides.is_some() {
        // A strided slice: the element's index in it is not its flat offset; name the offset.
        return vec![flat];
    }
    let shape = place.tensor.shape();
    let mut coords = vec![0; shape.len()];
    for (c, &d) in coords.iter_mut().zip(shape).rev() {
        let d = d.max(1);
        *c = flat % d;
        flat /= d;
    }
    coords
}
