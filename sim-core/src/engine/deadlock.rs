//! Builds the report of a run that can make no more progress.

use super::Engine;
use super::sched::TaskState;
use super::signals::{Waiter, WaiterKind};
use crate::addr::MemKey;
use crate::report::{BlockedWait, DeadlockReport, StuckTask};
use crate::signal::Cond;

impl Engine {
    pub(super) fn deadlock_report(&self) -> DeadlockReport {
        let mut waits = Vec::new();
        let mut deferred = Vec::new();
        for w in self.signals.pending() {
            let (actor, list) = match w.kind {
                WaiterKind::Blocking { actor } => (actor, &mut waits),
                WaiterKind::Deferred { actor, .. } => (actor, &mut deferred),
            };
            list.extend(self.describe(actor, w));
        }
        waits.sort_by_key(|w: &BlockedWait| (w.chip, w.block, w.offset));
        deferred.sort_by_key(|w: &BlockedWait| (w.chip, w.block, w.offset));
        DeadlockReport { time: self.now, waits, deferred, stuck: self.stuck_tasks() }
    }

    /// One entry per cell of `w` whose condition is still false.
    fn describe(&self, actor: usize, w: &Waiter) -> Vec<BlockedWait> {
        let chip = self.chip_of(actor);
        let (block, task) = match (w.kind, &self.actors[actor].job) {
            (WaiterKind::Deferred { task, block, .. }, _) => (block, self.task_name(chip, task).unwrap_or_default()),
            (WaiterKind::Blocking { .. }, Some((_, a))) => (a.block, a.ctx.task.to_string()),
            (WaiterKind::Blocking { .. }, None) => (self.core_of(actor), String::new()),
        };
        let dispatch = self.chips[chip].active.as_ref().map_or_else(|| "?".to_string(), |a| a.name.to_string());
        let (expected, cmp) = match w.cond {
            Cond::Signed(c, e) => (e as i64, c.symbol().to_string()),
            Cond::UnsignedGe(e) => (e as i64, ">= (unsigned, deferred)".to_string()),
        };
        w.cells
            .iter()
            .filter(|c| !w.cond.holds(self.mem.cell(c)))
            .map(|c| BlockedWait {
                chip,
                domain_rank: match c.mem {
                    MemKey::Win { member, .. } => member,
                    MemKey::Gm { chip, .. } => chip,
                },
                block,
                task: task.clone(),
                dispatch: dispatch.clone(),
                since: w.since,
                buffer: c.buffer.to_string(),
                coords: c.coords.clone(),
                offset: c.offset,
                current: self.mem.cell(c) as i64,
                expected,
                cmp: cmp.clone(),
                last_writers: self.signals.last_writers(c.mem, c.offset),
            })
            .collect()
    }

    fn task_name(&self, chip: usize, task: usize) -> Option<String> {
        let a = self.chips[chip].active.as_ref()?;
        Some(a.tasks.get(task)?.task.name.to_string())
    }

    fn stuck_tasks(&self) -> Vec<StuckTask> {
        let mut out = Vec::new();
        for (chip, cs) in self.chips.iter().enumerate() {
            let Some(active) = cs.active.as_ref() else {
                continue;
            };
            for tr in &active.tasks {
                // The task's kind of core: AIV `0..aiv`, AIC `aiv..`.
                let (cores, kind) = match tr.task.kind {
                    crate::program::CoreKind::Vector => (0..self.aiv, "AIV"),
                    crate::program::CoreKind::Cube => (self.aiv..cs.busy.len(), "AIC"),
                };
                let total = cores.len();
                let free = cores.clone().filter(|&c| !cs.busy[c]).count();
                let waiting = cores.filter(|&c| cs.busy[c] && self.is_blocked(chip * self.cores + c)).count();
                let reason = match tr.state {
                    TaskState::Ready => format!(
                        "cannot be placed: it needs {} free {kind} core(s) but only {free} of {total} are free ({waiting} occupied by blocked waits); use defer_wait for waiters, or fewer blocks",
                        tr.task.blocks * tr.task.lanes,
                    ),
                    TaskState::Waiting => {
                        let deps: Vec<String> = tr
                            .task
                            .deps
                            .iter()
                            .filter(|d| active.tasks[d.0].state != TaskState::Done)
                            .map(|d| format!("`{}`", active.tasks[d.0].task.name))
                            .collect();
                        format!("never started: it depends on {} which never completed", deps.join(", "))
                    }
                    _ => continue,
                };
                out.push(StuckTask {
                    chip,
                    dispatch: active.name.to_string(),
                    task: tr.task.name.to_string(),
                    blocks: tr.task.blocks,
                    reason,
                });
            }
            for d in cs.queued() {
                out.push(StuckTask {
                    chip,
                    dispatch: d.name.to_string(),
                    task: String::from("*"),
                    blocks: d.tasks.iter().map(|t| t.blocks).sum(),
                    reason: format!("never started: the chip is still running dispatch `{}`", active.name),
                });
            }
        }
        out
    }
}
