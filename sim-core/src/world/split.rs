//! Split runs: one engine per partition of whole islands (`crate::sim::split`), on host
//! threads of this process or one per process of a [`ProcessGroup`](crate::sim::split::ProcessGroup)
//! (MPI), their results merged into what one engine would have left.

use super::World;
use super::run::Ended;
use crate::api::program::Dispatch;
use crate::base::deadlock::DeadlockReport;
use crate::base::error::{SimError, SimResult};
use crate::base::time::SimTime;
use crate::model::Network;
use crate::results::stats::{DispatchRecord, EngineStats, HostStats, Traffic};
use crate::sim::driver;
use crate::sim::engine::{Engine, Observers, Recording};
use crate::sim::memory::Memory;
use crate::sim::options::KernelExec;
use crate::sim::split::{self, Board, GroupSeat, Plan, ProcessGroup, Seat};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// What one partition leaves behind, for the merge.
#[derive(serde::Serialize, serde::Deserialize)]
struct PartResult {
    outcome: PartOutcome,
    /// The time of its last event.
    now: SimTime,
    records: Vec<DispatchRecord>,
    stats: EngineStats,
    host: HostStats,
    traffic: Vec<Traffic>,
    /// Its memory (in another process's result, only its own chips' bytes and cells).
    mem: Memory,
    /// The facts a checked, traced or observed run's partition recorded, for the merge to
    /// replay.
    recording: Option<Recording>,
}

/// How one partition ended.
#[derive(serde::Serialize, serde::Deserialize)]
enum PartOutcome {
    Done,
    /// Its part of a deadlock (its own chips' waits).
    Deadlock(DeadlockReport),
    /// Another partition failed first, which ended this one.
    Ended,
    /// Its own error. From another process it comes as its message ([`SimError::Invalid`]
    /// prints just that).
    Failed(#[serde(with = "error_text")] SimError),
    /// Its engine panicked (or its thread could not run): why.
    Died(String),
}

/// A [`SimError`] as its message between processes.
mod error_text {
    use crate::base::error::SimError;

    pub(super) fn serialize<S: serde::Serializer>(e: &SimError, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&e.to_string())
    }

    pub(super) fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<SimError, D::Error> {
        let text: String = serde::Deserialize::deserialize(d)?;
        Ok(SimError::Invalid(text))
    }
}

impl PartResult {
    /// What `eng` (run with host counters `host`) leaves, and its network.
    fn of(mut eng: Engine, host: HostStats) -> (PartResult, Box<dyn Network>) {
        let outcome = match eng.outcome().cloned() {
            Some(Ok(())) => PartOutcome::Done,
            Some(Err(SimError::Deadlock(r))) => PartOutcome::Deadlock(*r),
            Some(Err(SimError::PartitionFailed { .. })) => PartOutcome::Ended,
            Some(Err(e)) => PartOutcome::Failed(e),
            None => PartOutcome::Failed(SimError::invalid("the partition ended without an outcome")),
        };
        let (now, records, stats, traffic) =
            (eng.now(), eng.records.clone(), eng.stats.clone(), eng.traffic().to_vec());
        let recording = eng.take_recording();
        let (mem, net) = eng.into_parts();
        (PartResult { outcome, now, records, stats, host, traffic, mem, recording }, net)
    }

    /// A partition that died, `why`, leaving nothing else.
    fn died(why: String) -> PartResult {
        PartResult {
            outcome: PartOutcome::Died(why),
            now: SimTime::ZERO,
            records: Vec::new(),
            stats: EngineStats::default(),
            host: HostStats::default(),
            traffic: Vec::new(),
            mem: Memory::default(),
            recording: None,
        }
    }
}

impl World {
    /// How this run is split, or why it cannot be (what to change).
    pub(super) fn split_plan(&self) -> SimResult<Plan> {
        let parts = self.options.partitions;
        let refuse = |what: &str| {
            SimError::invalid(format!("--partitions {parts}: a split run cannot {what} yet; run with --partitions 1"))
        };
        if self.options.processes && !self.observers.is_empty() {
            return Err(refuse("have observers over processes (they see a run split on threads)"));
        }
        if self.options.kernel_exec == KernelExec::Threads {
            return Err(refuse("run kernels on threads (use coroutines, the default)"));
        }
        if self.options.fibers.is_some() {
            return Err(refuse("run kernels as the host's fibers (its partitions' threads could not switch them)"));
        }
        if self.options.processes {
            let size = split::with_group(|g| g.size())
                .ok_or_else(|| SimError::invalid("a run over processes needs their group (split::join_processes)"))?;
            if size != parts {
                return Err(SimError::invalid(format!(
                    "--partitions {parts} over {size} processes: a run over processes has one partition per process"
                )));
            }
        }
        let net = self
            .net
            .as_deref()
            .ok_or_else(|| SimError::invalid("the network model was lost by an earlier failed run"))?;
        split::plan(net, self.size, parts)
    }

    /// Runs the dispatches split as `plan` says, one engine per partition, on threads of
    /// this process or one in each process of its group, and merges what they leave.
    pub(super) fn run_split(
        &mut self,
        plan: &Plan,
        net: Box<dyn Network>,
        mem: Memory,
        queues: Vec<Vec<Dispatch>>,
    ) -> Ended {
        let stack_bytes = match self.options.kernel_exec {
            KernelExec::Coroutines { stack_bytes } => stack_bytes,
            KernelExec::Threads => KernelExec::DEFAULT_STACK_BYTES,
        };
        if self.options.processes {
            return self.run_over_processes(plan, net, mem, queues, stack_bytes);
        }
        let mut nets = Vec::with_capacity(plan.parts);
        for id in 1..plan.parts {
            match net.fork_for(split::own_chips(&plan.owner, id)) {
                Some(n) => nets.push(n),
                None => {
                    let outcome = Err(SimError::invalid("this network model cannot be split; run with --partitions 1"));
                    return Ended::empty(outcome, mem, Some(net));
                }
            }
        }
        nets.insert(0, net);
        let users = (!self.observers.is_empty()).then(|| self.observers.iter().any(|o| o.wants_links()));
        let engines: Vec<Engine> = nets
            .into_iter()
            .enumerate()
            .map(|(id, n)| {
                let part = Some((id, plan.owner.clone()));
                let mut e = Engine::new(self.chip.clone(), n, mem.clone(), queues.clone(), &self.options, part);
                if let Some(links) = users {
                    e.record_for_users(links);
                }
                e
            })
            .collect();
        drop((mem, queues));
        let mut net = None;
        let results: Vec<PartResult> = run_partitions(engines, plan, &self.chip, stack_bytes)
            .into_iter()
            .map(|end| match end {
                Ok((eng, host)) => {
                    let (r, n) = PartResult::of(eng, host);
                    net.get_or_insert(n);
                    r
                }
                Err(why) => PartResult::died(why),
            })
            .collect();
        self.merge(plan, results, net)
    }

    /// Runs this process's partition of the run, meeting the other processes of the group
    /// between windows, then gathers every partition's result from them.
    fn run_over_processes(
        &mut self,
        plan: &Plan,
        net: Box<dyn Network>,
        mem: Memory,
        queues: Vec<Vec<Dispatch>>,
        stack_bytes: usize,
    ) -> Ended {
        // No spare copy of the network is kept for a partition that dies (a copy costs as much
        // as the model, which the engine then cuts to this process's own chips): the world
        // then has none for its next run, as when every partition on threads died.
        let (chip, options, owner) = (self.chip.clone(), self.options.clone(), plan.owner.clone());
        let chip_of = self.window_chips();
        let gathered = split::with_group(|group| {
            let id = group.rank();
            let eng = Engine::new(chip.clone(), net, mem, queues, &options, Some((id, owner.clone())));
            let mut seat = GroupSeat { group, lookahead: plan.lookahead };
            let run = catch_unwind(AssertUnwindSafe(|| {
                driver::run_partition(eng, chip, stack_bytes, &mut seat, plan.lookahead)
            }));
            let (mut mine, net) = match run {
                Ok((eng, host)) => {
                    let (r, n) = PartResult::of(eng, host);
                    (r, Some(n))
                }
                Err(p) => {
                    // Take part in the window the others are in, reporting the failure, so
                    // they end instead of waiting for this process.
                    split::dead_window(seat.group);
                    (PartResult::died(driver::panic_text(p)), None)
                }
            };
            mine.mem.keep_only(&|c| owner.get(c).is_some_and(|&o| o as usize == id), &chip_of);
            (gather(seat.group, mine), net)
        });
        let (results, net) = match gathered {
            Some((Ok(results), net)) => (results, net),
            Some((Err(e), net)) => (vec![PartResult::died(format!("the results could not be gathered: {e}"))], net),
            None => (vec![PartResult::died("this process joined no process group".into())], None),
        };
        self.merge(plan, results, net)
    }

    /// The chip of each domain member's window.
    fn window_chips(&self) -> impl Fn(usize, usize) -> usize + use<> {
        let members: Vec<Vec<usize>> = self.domains.iter().map(|d| d.domain.members().to_vec()).collect();
        move |domain, member| members.get(domain).and_then(|m| m.get(member)).copied().unwrap_or(usize::MAX)
    }

    /// One run's result from its partitions': each chip's memory from its partition, counters
    /// summed, records together, and the first failure (deadlock reports joined).
    fn merge(&mut self, plan: &Plan, results: Vec<PartResult>, net: Option<Box<dyn Network>>) -> Ended {
        let mut host = HostStats::default();
        let mut stats = EngineStats::default();
        let mut traffic = vec![Traffic::default(); self.size];
        let (mut records, mut now) = (Vec::new(), SimTime::ZERO);
        let (mut failure, mut deadlocks): (Option<SimError>, Vec<DeadlockReport>) = (None, Vec::new());
        let chip_of = self.window_chips();
        let mut mem: Option<Memory> = None;
        let watched = self.options.check || self.options.trace || !self.observers.is_empty();
        let mut recordings = Vec::new();
        for (id, mut r) in results.into_iter().enumerate() {
            if watched {
                recordings.push(r.recording.take());
            }
            add_host(&mut host, &r.host);
            stats.requests += r.stats.requests;
            stats.events += r.stats.events;
            stats.packets += r.stats.packets;
            for (t, e) in traffic.iter_mut().zip(&r.traffic) {
                add_traffic(t, e);
            }
            records.append(&mut r.records);
            now = now.max(r.now);
            match r.outcome {
                PartOutcome::Done | PartOutcome::Ended => {}
                PartOutcome::Deadlock(d) => deadlocks.push(d),
                PartOutcome::Failed(e) => {
                    failure.get_or_insert(e);
                }
                PartOutcome::Died(why) => {
                    failure.get_or_insert(SimError::invalid(format!("partition {id} of the split run died: {why}")));
                }
            }
            match mem.as_mut() {
                None => mem = Some(r.mem),
                Some(m) => m.adopt(r.mem, &|chip| plan.owner.get(chip).is_some_and(|&o| o as usize == id), &chip_of),
            }
        }
        let outcome = match (failure, deadlocks.is_empty()) {
            (Some(e), _) => Err(e),
            (None, false) => Err(SimError::Deadlock(Box::new(join_deadlocks(deadlocks, now)))),
            (None, true) => Ok(()),
        };
        let mem = mem.unwrap_or_default();
        let (findings, trace, outcome) = match recordings.into_iter().collect::<Option<Vec<Recording>>>() {
            Some(parts) if watched => {
                let what = (self.size, self.options.trace, self.options.check);
                let lent = (&mut records, &mut self.observers);
                match Observers::replay_split(what, parts, lent, now, |m, off| mem.cell_at(m, off)) {
                    Ok((findings, trace)) => (findings, trace, outcome),
                    Err(e) => (
                        Vec::new(),
                        None,
                        outcome.and(Err(SimError::invalid(format!("the split run's observers: {e}")))),
                    ),
                }
            }
            // A partition that died recorded nothing: the run has failed already.
            _ => (Vec::new(), None, outcome),
        };
        // Every partition holding a network model died: the world has none for its next run.
        let outcome = if net.is_none() {
            outcome.and(Err(SimError::invalid("the split run lost its network model")))
        } else {
            outcome
        };
        Ended { outcome, now, records, stats, host, traffic, findings, trace, mem, net }
    }
}

/// Every process's result, gathered from the group. This process's own is dropped once it
/// is bytes, and each process's bytes once decoded, so a result is held at most twice.
fn gather(group: &mut dyn ProcessGroup, mine: PartResult) -> Result<Vec<PartResult>, String> {
    let bytes = bincode::serialize(&mine).map_err(|e| e.to_string())?;
    drop(mine);
    let all = group.all_gather(bytes)?;
    all.into_iter()
        .map(|b| bincode::deserialize(&b).map_err(|e| format!("a partition's result did not decode: {e}")))
        .collect()
}

/// Runs each engine on a thread of its own at one board; a thread that panics marks its
/// partition dead so the others end instead of waiting for it.
fn run_partitions(
    engines: Vec<Engine>,
    plan: &Plan,
    chip: &std::sync::Arc<dyn crate::model::ChipTiming>,
    stack_bytes: usize,
) -> Vec<Result<(Engine, HostStats), String>> {
    let board = Board::new(plan);
    let lookahead = plan.lookahead;
    std::thread::scope(|s| {
        let handles: Vec<_> = engines
            .into_iter()
            .enumerate()
            .map(|(id, eng)| {
                let (board, chip) = (board.clone(), chip.clone());
                std::thread::Builder::new().name(format!("ranksim-part{id}")).spawn_scoped(s, move || {
                    let mut seat = Seat { board: board.clone(), id };
                    let r = catch_unwind(AssertUnwindSafe(|| {
                        driver::run_partition(eng, chip, stack_bytes, &mut seat, lookahead)
                    }));
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

/// One deadlock report from the partitions' (each lists its own chips' waits), at `now`, the
/// last event of the whole run (a partition with nothing blocked may have applied it).
fn join_deadlocks(parts: Vec<DeadlockReport>, now: SimTime) -> DeadlockReport {
    let mut all = DeadlockReport { time: now, waits: Vec::new(), deferred: Vec::new(), stuck: Vec::new() };
    for mut r in parts {
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
    fn empty(outcome: SimResult<()>, mem: Memory, net: Option<Box<dyn Network>>) -> Ended {
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

#[cfg(test)]
mod tests {
    use crate::api::program::Dispatch;
    use crate::base::dtype::DType;
    use crate::base::signal::AtomicType;
    use crate::base::tile::Tile;
    use crate::sim::engine::testkit::{SplitNet, TestChip};
    use crate::world::World;
    use std::sync::Arc;

    /// A world of 4 chips in islands of 2 on `net`, split in 2, where each chip stores to
    /// chip `to(rank)`.
    fn storing_world(net: SplitNet, to: fn(usize) -> usize) -> World {
        let mut w = World::new(4, Arc::new(TestChip), Box::new(net)).unwrap();
        w.options_mut().partitions = 2;
        let dom = w.create_domain("d", &[0, 1, 2, 3], Default::default()).unwrap();
        let buf = w.alloc_window(&dom, "buf", DType::F32, &[1, 4]).unwrap();
        let d = Dispatch::kernel("store", 1, move |core| {
            let t = Tile::from_slice(1, 4, &[1.0f32; 4])?;
            core.remote_store(&t, &buf, to(core.rank()), &[0, 0], AtomicType::None)
        });
        w.dispatch_all(&dom, d.in_domain(&dom)).unwrap();
        w
    }

    const NET: SplitNet = SplitNet { per: 2, lookahead_ns: 5, dies: None };

    /// This model lands a store on another island with no switch to split its path at: an
    /// event that would cross partitions at once ends the run with an error, not a wrong result.
    #[test]
    fn an_event_that_may_not_cross_ends_the_run_saying_so() {
        let e = storing_world(NET, |r| (r + 1) % 4).run().unwrap_err().to_string();
        assert!(e.contains("the landing of a write") && e.contains("may cross partitions"), "{e}");
    }

    /// The same over processes (threads playing them): the process whose engine panicked
    /// takes part in the window the others are in, so every process ends with the error
    /// naming it, and none waits forever.
    #[test]
    fn a_process_whose_partition_dies_ends_every_process_with_an_error_naming_it() {
        use crate::sim::split::{LocalGroup, join_processes};
        let errors: Vec<String> = std::thread::scope(|s| {
            let members: Vec<_> = LocalGroup::new(2)
                .into_iter()
                .map(|g| {
                    s.spawn(move || {
                        join_processes(Box::new(g));
                        let mut w = storing_world(SplitNet { dies: Some(2), ..NET }, |r| r ^ 1);
                        w.options_mut().processes = true;
                        w.run().unwrap_err().to_string()
                    })
                })
                .collect();
            members.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for e in &errors {
            assert!(e.contains("partition 1 of the split run died") && e.contains("the model failed on chip 2"), "{e}");
        }
    }

    /// Partition 1's engine panics: every partition ends, and the run's error names it. (Each
    /// chip stores to its island's other chip, which this model may split.)
    #[test]
    fn a_partition_that_dies_ends_the_run_with_an_error_naming_it() {
        assert!(storing_world(NET, |r| r ^ 1).run().is_ok());
        let e = storing_world(SplitNet { dies: Some(2), ..NET }, |r| r ^ 1).run().unwrap_err().to_string();
        assert!(e.contains("partition 1 of the split run died") && e.contains("the model failed on chip 2"), "{e}");
    }
}
