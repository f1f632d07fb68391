//! Split runs on the host's threads: one engine per partition of whole islands
//! (`crate::sim::split`), their results merged into what one engine would have left.

use super::World;
use super::run::Ended;
use crate::api::program::Dispatch;
use crate::base::deadlock::DeadlockReport;
use crate::base::error::{SimError, SimResult};
use crate::base::time::SimTime;
use crate::model::Network;
use crate::results::stats::{EngineStats, HostStats, Traffic};
use crate::sim::driver;
use crate::sim::engine::Engine;
use crate::sim::memory::Memory;
use crate::sim::options::KernelExec;
use crate::sim::split::{self, Board, Plan, Seat};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// What one partition's thread hands back: its engine and host counters, or why it died.
type PartEnd = Result<(Engine, HostStats), String>;

impl World {
    /// How this run is split, or why it cannot be (what to change).
    pub(super) fn split_plan(&self) -> SimResult<Plan> {
        let parts = self.options.partitions;
        let refuse = |what: &str| {
            SimError::invalid(format!("--partitions {parts}: a split run cannot {what} yet; run with --partitions 1"))
        };
        if self.options.check {
            return Err(refuse("be checked (the protocol checker sees one engine)"));
        }
        if self.options.trace {
            return Err(refuse("be traced"));
        }
        if !self.observers.is_empty() {
            return Err(refuse("have observers"));
        }
        if self.options.kernel_exec == KernelExec::Threads {
            return Err(refuse("run kernels on threads (use coroutines, the default)"));
        }
        let net = self
            .net
            .as_deref()
            .ok_or_else(|| SimError::invalid("the network model was lost by an earlier failed run"))?;
        split::plan(net, self.size, parts)
    }

    /// Runs the dispatches split as `plan` says, one engine per partition on a thread of its
    /// own, and merges what they leave.
    pub(super) fn run_split(
        &mut self,
        plan: &Plan,
        net: Box<dyn Network>,
        mem: Memory,
        queues: Vec<Vec<Dispatch>>,
    ) -> Ended {
        let mut nets = Vec::with_capacity(plan.parts);
        for _ in 1..plan.parts {
            match net.fork() {
                Some(n) => nets.push(n),
                None => {
                    let outcome = Err(SimError::invalid("this network model cannot be split; run with --partitions 1"));
                    return Ended::empty(outcome, mem, net);
                }
            }
        }
        nets.insert(0, net);
        let stack_bytes = match self.options.kernel_exec {
            KernelExec::Coroutines { stack_bytes } => stack_bytes,
            KernelExec::Threads => KernelExec::DEFAULT_STACK_BYTES,
        };
        let engines: Vec<Engine> = nets
            .into_iter()
            .enumerate()
            .map(|(id, n)| {
                let mut e = Engine::new(self.chip.clone(), n, mem.clone(), queues.clone(), &self.options);
                e.partition(id, plan.owner.clone());
                e
            })
            .collect();
        drop((mem, queues));
        let ends = run_partitions(engines, plan, &self.chip, stack_bytes);
        self.merge(plan, ends)
    }

    /// One run's result from its partitions': each chip's memory from its partition, counters
    /// summed, records together, and the first failure (deadlock reports joined).
    fn merge(&self, plan: &Plan, ends: Vec<PartEnd>) -> Ended {
        let mut host = HostStats::default();
        let mut stats = EngineStats::default();
        let mut traffic = vec![Traffic::default(); self.size];
        let (mut records, mut now) = (Vec::new(), SimTime::ZERO);
        let (mut failure, mut deadlocks): (Option<SimError>, Vec<DeadlockReport>) = (None, Vec::new());
        let mut parts = Vec::new();
        for (id, end) in ends.into_iter().enumerate() {
            let (mut eng, h) = match end {
                Ok(x) => x,
                Err(msg) => {
                    failure.get_or_insert(SimError::invalid(format!("partition {id} of the split run died: {msg}")));
                    continue;
                }
            };
            add_host(&mut host, &h);
            stats.requests += eng.stats.requests;
            stats.events += eng.stats.events;
            stats.packets += eng.stats.packets;
            for (t, e) in traffic.iter_mut().zip(eng.traffic()) {
                add_traffic(t, e);
            }
            records.append(&mut eng.records);
            now = now.max(eng.now());
            match eng.outcome().cloned() {
                Some(Err(SimError::Deadlock(r))) => deadlocks.push(*r),
                Some(Err(SimError::PartitionFailed { .. })) | Some(Ok(())) => {}
                Some(Err(e)) => {
                    failure.get_or_insert(e);
                }
                None => {
                    failure.get_or_insert(SimError::invalid(format!("partition {id} ended without an outcome")));
                }
            }
            parts.push((id, eng.into_parts()));
        }
        let outcome = match (failure, deadlocks.is_empty()) {
            (Some(e), _) => Err(e),
            (None, false) => Err(SimError::Deadlock(Box::new(join_deadlocks(deadlocks)))),
            (None, true) => Ok(()),
        };
        let mut it = parts.into_iter();
        let Some((_, (mut mem, net))) = it.next() else {
            unreachable!("partition 0 always hands back its engine or the run failed above")
        };
        let chip_of =
            |domain: usize, member: usize| self.domains.get(domain).map_or(usize::MAX, |d| d.domain.members()[member]);
        let owner = &plan.owner;
        for (id, (m, _)) in it {
            mem.adopt(m, &|chip| owner.get(chip).is_some_and(|&o| o as usize == id), &chip_of);
        }
        Ended { outcome, now, records, stats, host, traffic, findings: Vec::new(), trace: None, mem, net }
    }
}

/// Runs each engine on a thread of its own at one board; a thread that panics marks its
/// partition dead so the others end instead of waiting for it.
fn run_partitions(
    engines: Vec<Engine>,
    plan: &Plan,
    chip: &std::sync::Arc<dyn crate::model::ChipTiming>,
    stack_bytes: usize,
) -> Vec<PartEnd> {
    let board = Board::new(plan);
    std::thread::scope(|s| {
        let handles: Vec<_> = engines
            .into_iter()
            .enumerate()
            .map(|(id, eng)| {
                let (board, chip) = (board.clone(), chip.clone());
                std::thread::Builder::new().name(format!("ranksim-part{id}")).spawn_scoped(s, move || {
                    let mut seat = Seat { board: board.clone(), id };
                    let r = catch_unwind(AssertUnwindSafe(|| driver::run_partition(eng, chip, stack_bytes, &mut seat)));
                    r.map_err(|p| {
                        board.dead(id);
                        driver::panic_text(p)
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .enumerate()
            .map(|(id, h)| match h {
                Ok(h) => h.join().unwrap_or_else(|_| Err(format!("partition {id}'s thread could not be joined"))),
                Err(e) => {
                    board.dead(id);
                    Err(format!("could not start a host thread for partition {id}: {e}"))
                }
            })
            .collect()
    })
}

fn add_host(to: &mut HostStats, h: &HostStats) {
    to.handoffs += h.handoffs;
    to.threads += h.threads;
    to.coroutines += h.coroutines;
    to.stacks += h.stacks;
}

fn add_traffic(to: &mut Traffic, t: &Traffic) {
    to.remote_read_bytes += t.remote_read_bytes;
    to.remote_write_bytes += t.remote_write_bytes;
    to.local_read_bytes += t.local_read_bytes;
    to.local_write_bytes += t.local_write_bytes;
    to.remote_notifies += t.remote_notifies;
    to.local_notifies += t.local_notifies;
    to.waits += t.waits;
}

/// One deadlock report from the partitions' (each lists its own chips' waits).
fn join_deadlocks(parts: Vec<DeadlockReport>) -> DeadlockReport {
    let mut all = DeadlockReport { time: SimTime::ZERO, waits: Vec::new(), deferred: Vec::new(), stuck: Vec::new() };
    for mut r in parts {
        all.time = all.time.max(r.time);
        all.waits.append(&mut r.waits);
        all.deferred.append(&mut r.deferred);
        all.stuck.append(&mut r.stuck);
    }
    all.waits.sort_by_key(|w| (w.chip, w.block, w.offset));
    all.deferred.sort_by_key(|w| (w.chip, w.block, w.offset));
    all.stuck.sort_by_key(|s| s.chip);
    all
}

impl Ended {
    /// A run that failed before any engine ran.
    fn empty(outcome: SimResult<()>, mem: Memory, net: Box<dyn Network>) -> Ended {
        Ended {
            outcome,
            now: SimTime::ZERO,
            records: Vec::new(),
            stats: EngineStats::default(),
            host: HostStats::default(),
            traffic: Vec::new(),
            findings: Vec::new(),
            trace: None,
            mem,
            net,
        }
    }
}
