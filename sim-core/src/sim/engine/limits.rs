//! What ends a run from outside the model: its budgets (simulated time and events,
//! `RunOptions::max_sim_time` / `max_events`) and the host's stop flag (`RunOptions::interrupt`,
//! raised on Ctrl-C). The event loop asks one comparison of each per event; the rest is done
//! every [`Progress::EVERY`] events, when progress is published too.

use super::{ActorState, Engine};
use crate::base::budget::{BudgetReport, CoreActivity, Limit};
use crate::base::error::SimError;
use crate::base::time::SimTime;
use crate::sim::options::Interrupt;

impl Engine {
    /// Before the event due at `next`: publishes progress, and ends the run when the host
    /// asked it to stop or a budget is reached.
    pub(super) fn checkpoint(&mut self, next: SimTime) {
        let events = self.stats.events;
        if events >= self.limits.next_check {
            self.publish_progress();
            self.limits.next_check = self.limits.after(events);
        }
        if self.limits.interrupt.as_ref().is_some_and(Interrupt::is_raised) {
            return self.fail(SimError::Interrupted { time: self.now, events });
        }
        let limit = if events >= self.limits.max_events {
            Limit::Events(self.limits.max_events)
        } else if next > self.limits.max_time {
            Limit::SimTime(self.limits.max_time)
        } else {
            return;
        };
        let report = self.budget_report(limit);
        self.fail(SimError::Budget(Box::new(report)));
    }

    /// What every core with a block was doing when the run reached `limit`.
    fn budget_report(&self, limit: Limit) -> BudgetReport {
        let mut cores = Vec::new();
        for (actor, a) in self.actors.iter() {
            let Some((_, job)) = &a.job else { continue };
            let state = match a.state {
                ActorState::Running { at, .. } => format!("running (next request at {at})"),
                ActorState::Blocked => format!("blocked since {}", a.since),
                ActorState::Idle => continue,
            };
            cores.push(CoreActivity {
                chip: self.chip_of(actor),
                core: self.core_of(actor),
                block: job.block,
                task: job.ctx.task.to_string(),
                state,
                last_op: a.last.0.to_string(),
                location: a.last.1.map(|l| l.to_string()),
            });
        }
        BudgetReport { limit, time: self.now, events: self.stats.events, cores }
    }
}
