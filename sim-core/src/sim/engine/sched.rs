//! Each chip's task scheduler: dispatches run one at a time in submission order; a dispatch's
//! tasks start when their dependencies have completed and enough cores of their kind are free
//! (AIV cores, or AIC cores for a task built with `Task::on_cube`; all of a task's blocks start
//! together, on the lowest-numbered free cores of that kind). A deferred task's core is
//! released when its kernel ends; the task completes when its conditions hold.

use super::event::Event;
use super::observe::TraceId;
use super::signals::{Signals, Waiter, WaiterKind};
use super::state::tasks::{Active, MAX_CONDS_PER_TASK, MAX_DEFERRED_TASKS, TaskRun, TaskState};
use super::wake::Assignment;
use super::{ActorState, Engine};
use crate::api::program::CoreKind;
use crate::api::request::{OpKind, Reply, TaskCtx};
use crate::base::addr::{Caller, CellRef, Cells};
use crate::base::error::SimError;
use crate::base::signal::Cond;
use crate::base::tensor::DomainInfo;
use crate::base::time::SimTime;
use crate::results::stats::{DispatchRecord, TaskRecord};
use std::sync::Arc;

impl Engine {
    /// Starts the chip's next dispatch at `t`.
    pub(super) fn start_dispatch(&mut self, chip: usize, t: SimTime) {
        let world = self.world;
        let trace = self.traced();
        let cs = &mut self.chips[chip];
        let Some(d) = cs.queue.pop_front() else {
            return;
        };
        let domain: Option<Arc<DomainInfo>> = d.domain.as_ref().map(|d| d.0.clone());
        let mut tasks: Vec<TaskRun> = d
            .tasks
            .iter()
            .map(|task| TaskRun {
                ctx: Arc::new(TaskCtx {
                    chip,
                    task: task.name.clone(),
                    blocks: task.blocks,
                    lanes: task.lanes,
                    world_size: world,
                    domain: domain.clone(),
                    trace,
                    cube: task.kind == CoreKind::Cube,
                }),
                task: task.clone(),
                state: TaskState::Waiting,
                deps_left: task.deps.len(),
                dependents: Vec::new(),
                blocks_left: task.blocks * task.lanes,
                conds_total: 0,
                conds_left: 0,
                start: t,
            })
            .collect();
        for i in 0..tasks.len() {
            for dep in tasks[i].task.deps.clone() {
                tasks[dep.0].dependents.push(i);
            }
            if tasks[i].deps_left == 0 {
                tasks[i].state = TaskState::Ready;
            }
        }
        let left = tasks.len();
        self.obs.dispatch_started(chip, tasks.len(), cs.started);
        cs.active = Some(Active { index: cs.started, name: d.name.clone(), start: t, tasks, left, done: Vec::new() });
        cs.started += 1;
        if left == 0 {
            self.finish_dispatch(chip, t);
        } else {
            self.place(chip, t);
        }
    }

    /// Places every ready task that fits on free cores, in submission order.
    fn place(&mut self, chip: usize, t: SimTime) {
        let at = t + self.chip.task_start();
        let aiv = self.aiv;
        let mut starts = Vec::new();
        {
            let cs = &mut self.chips[chip];
            let Some(active) = cs.active.as_mut() else {
                return;
            };
            for (ti, tr) in active.tasks.iter_mut().enumerate() {
                if tr.state != TaskState::Ready {
                    continue;
                }
                let need = tr.task.blocks * tr.task.lanes;
                // AIV cores are 0..aiv, AIC cores aiv.. (see `Engine::new`).
                let cores = if tr.task.kind == CoreKind::Cube { aiv..cs.busy.len() } else { 0..aiv };
                let free: Vec<usize> = cores.filter(|&c| !cs.busy[c]).take(need).collect();
                if free.len() < need {
                    continue;
                }
                tr.state = TaskState::Running;
                tr.start = at;
                self.obs.task_placed(chip, ti, tr.task.deps.iter().map(|d| d.0));
                let lanes = tr.task.lanes;
                for (i, &core) in free.iter().enumerate() {
                    cs.busy[core] = true;
                    let (block, lane) = (i / lanes, i % lanes);
                    let assignment = Assignment { body: tr.task.body.clone(), ctx: tr.ctx.clone(), block, lane };
                    starts.push((chip * self.cores + core, ti, assignment));
                }
            }
        }
        for (actor, ti, assignment) in starts {
            self.start_actor(actor, at, ti, assignment);
        }
    }

    /// A block ended: free its core; complete its task if nothing else is pending.
    pub(super) fn finish_block(&mut self, t: SimTime, actor: usize, result: Result<(), SimError>) {
        let job = self.actors[actor].job.take();
        if job.is_some() {
            self.busy -= 1;
        }
        if let Err(e) = result {
            if !e.is_abort() {
                self.fail(e);
            }
            return;
        }
        let Some((ti, _)) = job else { return };
        let chip = self.chip_of(actor);
        let core = self.core_of(actor);
        self.obs.block_ended(actor, ti);
        let cs = &mut self.chips[chip];
        cs.busy[core] = false;
        let Some(active) = cs.active.as_mut() else {
            return;
        };
        let tr = &mut active.tasks[ti];
        tr.blocks_left -= 1;
        if tr.blocks_left == 0 && tr.conds_left == 0 {
            self.complete_task(chip, ti, t);
        }
        self.place(chip, t);
    }

    fn complete_task(&mut self, chip: usize, ti: usize, t: SimTime) {
        let cs = &mut self.chips[chip];
        let Some(active) = cs.active.as_mut() else {
            return;
        };
        let tr = &mut active.tasks[ti];
        tr.state = TaskState::Done;
        let record = TaskRecord { name: tr.task.name.to_string(), blocks: tr.task.blocks, start: tr.start, end: t };
        for d in tr.dependents.clone() {
            let dep = &mut active.tasks[d];
            dep.deps_left -= 1;
            if dep.deps_left == 0 {
                dep.state = TaskState::Ready;
            }
        }
        active.left -= 1;
        active.done.push(record);
        if active.left == 0 {
            self.finish_dispatch(chip, t);
        } else {
            self.place(chip, t);
        }
    }

    fn finish_dispatch(&mut self, chip: usize, t: SimTime) {
        self.obs.dispatch_ended(chip);
        let cs = &mut self.chips[chip];
        let Some(active) = cs.active.take() else {
            return;
        };
        let record = DispatchRecord {
            chip,
            index: active.index,
            name: active.name.to_string(),
            start: active.start,
            end: t,
            tasks: active.done,
        };
        self.records.push(record);
        if self.chips[chip].has_queued() {
            let next = t + self.chip.dispatch_launch() + self.dispatch_jitter(chip);
            self.push_host(next, chip as u64, Event::DispatchStart { chip });
        }
    }

    /// Registers a block's deferred conditions for its task (reference §2.6).
    pub(super) fn defer_wait(&mut self, t: SimTime, actor: usize, conds: Vec<(CellRef, u32)>, caller: Caller) {
        let chip = self.chip_of(actor);
        let Some((ti, a)) = self.actors[actor].job.clone() else {
            return;
        };
        let site = a.ctx.site(a.block);
        let (total, already_deferred, tasks_deferred) = {
            let cs = &self.chips[chip];
            let tr = cs.active.as_ref().map(|ac| &ac.tasks[ti]);
            (tr.map_or(0, |tr| tr.conds_total), tr.is_some_and(|tr| tr.conds_left > 0), cs.deferred_tasks)
        };
        if total + conds.len() > MAX_CONDS_PER_TASK {
            let msg = format!(
                "task would have {} deferred conditions; at most {MAX_CONDS_PER_TASK} per task are allowed (PTO2_ERROR_ASYNC_REGISTRATION_FAILED): split the waits over more tasks",
                total + conds.len()
            );
            self.reply(actor, t, Reply::Err(Box::new(SimError::BadOp { site, op: OpKind::DeferWait.name(), msg })));
            return;
        }
        let (ready, pending): (Vec<_>, Vec<_>) =
            conds.into_iter().partition(|(c, e)| Cond::UnsignedGe(*e).holds(self.mem.cell(c)));
        // A condition that already holds orders the task after the writes that made it hold,
        // exactly as one released later does.
        for (c, _) in &ready {
            self.obs.deferred_ready(chip, ti, c);
        }
        if !pending.is_empty() && !already_deferred && tasks_deferred >= MAX_DEFERRED_TASKS {
            let msg = format!(
                "chip {chip} already has {tasks_deferred} deferred tasks; at most {MAX_DEFERRED_TASKS} may be pending at once (PTO2_ERROR_ASYNC_WAIT_OVERFLOW)"
            );
            self.reply(actor, t, Reply::Err(Box::new(SimError::BadOp { site, op: OpKind::DeferWait.name(), msg })));
            return;
        }
        let n = pending.len();
        for (cell, e) in pending {
            let cond = Cond::UnsignedGe(e);
            debug_assert!(!Signals::satisfied(&self.mem, std::slice::from_ref(&cell), cond));
            self.signals.register(Waiter {
                kind: WaiterKind::Deferred { actor, chip, task: ti, block: a.block },
                cells: Cells::from(cell),
                cond,
                since: t,
                trace_id: TraceId::default(),
                caller,
            });
        }
        let cs = &mut self.chips[chip];
        if let Some(tr) = cs.active.as_mut().map(|ac| &mut ac.tasks[ti]) {
            tr.conds_total += n;
            if n > 0 && tr.conds_left == 0 {
                cs.deferred_tasks += 1;
            }
            tr.conds_left += n;
        }
        self.reply(actor, t + self.chip.notify_issue(), Reply::Done);
    }

    /// One deferred condition of a task became true.
    pub(super) fn deferred_ready(&mut self, chip: usize, ti: usize, t: SimTime) {
        let cs = &mut self.chips[chip];
        let Some(tr) = cs.active.as_mut().map(|ac| &mut ac.tasks[ti]) else {
            return;
        };
        tr.conds_left -= 1;
        if tr.conds_left == 0 {
            cs.deferred_tasks -= 1;
            if tr.blocks_left == 0 {
                self.complete_task(chip, ti, t);
            }
        }
    }

    /// Whether an actor is blocked (used by reports).
    pub(super) fn is_blocked(&self, actor: usize) -> bool {
        self.actors[actor].state == ActorState::Blocked
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{cell, engine_running, ns};
    use super::super::wake::Wake;
    use super::*;
    use crate::api::program::{Dispatch, Task};
    use crate::api::request::Request;

    /// A task whose kernel never runs (the tests drive the engine without a driver).
    fn task(name: &str) -> Task {
        Task::new(name, 1, |_| Ok(()))
    }

    /// The blocks the engine started since the last call: (actor, time, task, block).
    fn starts(eng: &mut Engine) -> Vec<(usize, SimTime, String, usize)> {
        eng.take_wakes()
            .into_iter()
            .filter_map(|w| match w {
                Wake::Start { actor, at, assignment } => {
                    Some((actor, at, assignment.ctx.task.to_string(), assignment.block))
                }
                _ => None,
            })
            .collect()
    }

    fn finish(eng: &mut Engine, actor: usize, at: SimTime) {
        eng.submit(actor, at, at, Request::Finish { result: Ok(()) });
        eng.pump();
    }

    #[test]
    fn a_dependent_task_starts_after_its_dependency_and_the_dispatch_records_both() {
        let mut d = Dispatch::new("d");
        let a = d.add(task("a"));
        d.add(task("b").after(&[a]));
        let mut eng = engine_running(vec![vec![d]], false);
        eng.start();
        eng.pump();
        // Launch 10 ns, then the task start cost 1 ns.
        assert_eq!(starts(&mut eng), vec![(0, ns(11), "a".to_string(), 0)]);
        finish(&mut eng, 0, ns(15));
        assert_eq!(starts(&mut eng), vec![(0, ns(16), "b".to_string(), 0)]);
        finish(&mut eng, 0, ns(20));
        assert!(matches!(eng.outcome(), Some(Ok(()))));
        let rec = |name: &str, start, end| TaskRecord { name: name.into(), blocks: 1, start: ns(start), end: ns(end) };
        assert_eq!(
            eng.records,
            vec![DispatchRecord {
                chip: 0,
                index: 0,
                name: "d".into(),
                start: ns(10),
                end: ns(20),
                tasks: vec![rec("a", 11, 15), rec("b", 16, 20)],
            }]
        );
    }

    #[test]
    fn a_chips_next_dispatch_launches_after_the_previous_one_ends() {
        let mut first = Dispatch::new("first");
        first.add(task("a"));
        let mut second = Dispatch::new("second");
        second.add(task("b"));
        let mut eng = engine_running(vec![vec![first, second]], false);
        eng.start();
        eng.pump();
        assert_eq!(starts(&mut eng), vec![(0, ns(11), "a".to_string(), 0)]);
        finish(&mut eng, 0, ns(30));
        // Ends at 30 ns; the next launch costs 10 ns, its task start 1 ns.
        assert_eq!(starts(&mut eng), vec![(0, ns(41), "b".to_string(), 0)]);
        finish(&mut eng, 0, ns(45));
        let seen: Vec<_> = eng.records.iter().map(|r| (r.index, r.name.as_str(), r.start, r.end)).collect();
        assert_eq!(seen, vec![(0, "first", ns(10), ns(30)), (1, "second", ns(40), ns(45))]);
    }

    #[test]
    fn defer_wait_refuses_more_conditions_than_a_task_may_hold() {
        let mut d = Dispatch::new("d");
        d.add(task("a"));
        let mut eng = engine_running(vec![vec![d]], false);
        eng.start();
        eng.pump();
        starts(&mut eng);
        let conds = (0..=MAX_CONDS_PER_TASK).map(|i| (cell(0, 4 * (i % 16)), 1)).collect();
        eng.submit(0, ns(12), ns(12), Request::DeferWait { conds, caller: None });
        eng.pump();
        let wakes = eng.take_wakes();
        let [Wake::Reply { actor: 0, at, reply: Reply::Err(e) }] = wakes.as_slice() else {
            panic!("expected one refusal");
        };
        let SimError::BadOp { op, msg, .. } = &**e else { panic!("expected a bad op, got {e}") };
        assert_eq!((*at, *op), (ns(12), "defer_wait"));
        assert!(msg.starts_with("task would have 65 deferred conditions; at most 64 per task"), "{msg}");
    }

    #[test]
    fn a_deferred_condition_that_already_holds_does_not_hold_the_task_back() {
        let mut d = Dispatch::new("d");
        let a = d.add(task("a"));
        d.add(task("b").after(&[a]));
        let mut eng = engine_running(vec![vec![d]], false);
        eng.mem.set_cell(&cell(0, 8), 3);
        eng.start();
        eng.pump();
        starts(&mut eng);
        eng.submit(0, ns(12), ns(12), Request::DeferWait { conds: vec![(cell(0, 8), 2)], caller: None });
        eng.pump();
        // The registration answers after one notify-issue cost.
        assert!(
            matches!(eng.take_wakes().as_slice(), [Wake::Reply { actor: 0, at, reply: Reply::Done }] if *at == ns(13))
        );
        finish(&mut eng, 0, ns(14));
        assert_eq!(starts(&mut eng), vec![(0, ns(15), "b".to_string(), 0)]);
        assert_eq!(eng.chips[0].deferred_tasks, 0);
    }
}
