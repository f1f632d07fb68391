//! Builds the report of a run that can make no more progress.

use super::Engine;
use super::signals::{Waiter, WaiterKind};
use super::state::tasks::TaskState;
use crate::base::addr::MemKey;
use crate::base::deadlock::{BlockedWait, DeadlockReport, StuckTask};

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
        let (block, task) = match (w.kind, self.actors.get(actor).and_then(|a| a.job.as_ref())) {
            (WaiterKind::Deferred { task, block, .. }, _) => (block, self.task_name(chip, task).unwrap_or_default()),
            (WaiterKind::Blocking { .. }, Some((_, a))) => (a.block, a.ctx.task.to_string()),
            (WaiterKind::Blocking { .. }, None) => (self.core_of(actor), String::new()),
        };
        let dispatch = self.chips[chip].active.as_ref().map_or_else(|| "?".to_string(), |a| a.name.to_string());
        w.cells
            .iter()
            .filter(|c| !w.cond.holds(self.mem.cell(c)))
            .map(|c| BlockedWait {
                chip,
                domain_rank: domain_rank(c.mem),
                block,
                task: task.clone(),
                dispatch: dispatch.clone(),
                since: w.since,
                buffer: c.buffer.to_string(),
                coords: c.coords.to_vec(),
                offset: c.offset,
                current: self.mem.cell(c) as i64,
                cond: w.cond,
                last_writers: self.signals.last_writers(c.mem, c.offset),
                location: w.caller.map(|l| l.to_string()),
            })
            .collect()
    }

    pub(super) fn task_name(&self, chip: usize, task: usize) -> Option<String> {
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
                    crate::api::program::CoreKind::Vector => (0..self.aiv, "AIV"),
                    crate::api::program::CoreKind::Cube => (self.aiv..cs.busy.len(), "AIC"),
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

/// The dense rank in its comm domain of the member holding `mem` (a GM buffer: its chip).
pub(super) fn domain_rank(mem: MemKey) -> usize {
    match mem {
        MemKey::Win { member, .. } => member as usize,
        MemKey::Gm { chip, .. } => chip as usize,
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{cell, engine_running, ns};
    use super::*;
    use crate::api::program::{Dispatch, Task};
    use crate::api::request::Request;
    use crate::base::addr::Cells;
    use crate::base::deadlock::CellWrite;
    use crate::base::error::SimError;
    use crate::base::signal::Cond;
    use crate::base::signal::{NotifyOp, WaitCmp};
    use crate::base::time::SimTime;

    fn task(name: &str, blocks: usize) -> Task {
        Task::new(name, blocks, |_| Ok(()))
    }

    fn one(name: &str, t: Task) -> Dispatch {
        let mut d = Dispatch::new(name);
        d.add(t);
        d
    }

    /// The report a run ended with; fails the test if it did not end in a deadlock.
    fn report(eng: &Engine) -> DeadlockReport {
        match eng.outcome() {
            Some(Err(SimError::Deadlock(r))) => (**r).clone(),
            _ => panic!("the run should have ended in a deadlock"),
        }
    }

    fn finish(eng: &mut Engine, actor: usize, at: SimTime) {
        eng.submit(actor, at, at, Request::Finish { result: Ok(()) });
    }

    #[test]
    fn a_wait_nobody_satisfies_is_reported_with_the_cells_last_writer_and_what_is_queued_behind_it() {
        let queues = vec![
            vec![one("d0", task("waiter", 1)), one("later", task("next", 1))],
            vec![one("d1", task("notifier", 1))],
        ];
        let mut eng = engine_running(queues, false);
        eng.start();
        eng.pump();
        // Chip 0 waits for its cell to equal 2; chip 1 adds 1 to it and ends.
        let sig = cell(0, 8);
        eng.submit(
            0,
            ns(12),
            ns(12),
            Request::Wait { cells: Cells::from(sig.clone()), expected: 2, cmp: WaitCmp::Eq, caller: None },
        );
        let notify = Request::Notify { cell: sig, value: 1, op: NotifyOp::AtomicAdd, caller: None };
        eng.submit(1, ns(12), ns(12), notify);
        finish(&mut eng, 1, ns(13));
        eng.pump();
        let r = report(&eng);
        // The notify is issued at 13 ns and lands 1 ns later; then nothing can move.
        assert_eq!(r.time, ns(14));
        let writer = CellWrite {
            chip: 1,
            block: 0,
            task: "notifier".into(),
            op: crate::base::deadlock::CellWriteOp::Notify(crate::base::signal::NotifyOp::AtomicAdd),
            value: 1,
            time: ns(14),
        };
        let wait = BlockedWait {
            chip: 0,
            domain_rank: 0,
            block: 0,
            task: "waiter".into(),
            dispatch: "d0".into(),
            since: ns(12),
            buffer: "sig".into(),
            coords: vec![2],
            offset: 8,
            current: 1,
            cond: crate::base::signal::Cond::Signed(crate::base::signal::WaitCmp::Eq, 2),
            last_writers: vec![writer],
            location: None,
        };
        assert_eq!(r.waits, vec![wait]);
        assert!(r.deferred.is_empty());
        let queued = StuckTask {
            chip: 0,
            dispatch: "later".into(),
            task: "*".into(),
            blocks: 1,
            reason: "never started: the chip is still running dispatch `d0`".into(),
        };
        assert_eq!(r.stuck, vec![queued]);
    }

    #[test]
    fn a_task_wider_than_the_chip_is_reported_unplaceable_and_its_dependents_never_started() {
        let mut d = Dispatch::new("d");
        let wide = d.add(task("wide", 2));
        d.add(task("after", 1).after(&[wide]));
        let mut eng = engine_running(vec![vec![d]], false);
        eng.start();
        eng.pump();
        let r = report(&eng);
        assert_eq!(r.time, ns(10), "stuck as soon as the dispatch started");
        assert!(r.waits.is_empty() && r.deferred.is_empty());
        let reasons: Vec<(&str, &str)> = r.stuck.iter().map(|s| (s.task.as_str(), s.reason.as_str())).collect();
        assert_eq!(
            reasons,
            vec![
                (
                    "wide",
                    "cannot be placed: it needs 2 free AIV core(s) but only 1 of 1 are free (0 occupied by blocked \
                     waits); use defer_wait for waiters, or fewer blocks"
                ),
                ("after", "never started: it depends on `wide` which never completed"),
            ]
        );
        assert_eq!((r.stuck[0].blocks, r.stuck[1].blocks), (2, 1));
    }

    #[test]
    fn a_deferred_condition_that_never_holds_is_reported_as_deferred() {
        let mut d = Dispatch::new("d");
        let a = d.add(task("a", 1));
        d.add(task("b", 1).after(&[a]));
        let mut eng = engine_running(vec![vec![d]], false);
        eng.start();
        eng.pump();
        eng.submit(0, ns(12), ns(12), Request::DeferWait { conds: vec![(cell(0, 4), 5)], caller: None });
        eng.pump();
        finish(&mut eng, 0, ns(13));
        eng.pump();
        let r = report(&eng);
        assert!(r.waits.is_empty());
        let seen: Vec<_> = r
            .deferred
            .iter()
            .map(|w| (w.chip, w.block, w.task.as_str(), w.since, w.offset, w.current, w.cond))
            .collect();
        assert_eq!(seen, vec![(0, 0, "a", ns(12), 4, 0, Cond::UnsignedGe(5))]);
        assert_eq!((r.deferred[0].cond.symbol(), r.deferred[0].cond.expected()), (">= (unsigned, deferred)", 5));
        let stuck: Vec<_> = r.stuck.iter().map(|s| (s.task.as_str(), s.reason.as_str())).collect();
        assert_eq!(stuck, vec![("b", "never started: it depends on `a` which never completed")]);
    }
}
