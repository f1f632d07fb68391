//! Running the queued dispatches: one run ([`World::run`]) and the checker's reruns
//! ([`World::check`]). What a run leaves behind, [`RunReport`], is in `run_report.rs`.

use super::World;
use super::check::{CheckRun, check_runs};
use super::run_report::RunReport;
use crate::api::program::Dispatch;
use crate::base::error::{SimError, SimResult};
use crate::base::time::SimTime;
use crate::model::Network;
use crate::results::stats::{DispatchRecord, EngineStats, HostStats, Traffic};
use crate::results::trace::Mark;
use crate::sim::check::{CheckOptions, CheckReport};
use crate::sim::driver;
use crate::sim::engine::Engine;
use crate::sim::memory::Memory;

impl World {
    /// Runs every queued dispatch to completion and returns its timing. On failure (bad
    /// kernel argument, panic, deadlock) the memory is left as the run left it.
    /// The windows of domains released before the run are freed at its end, whatever its
    /// outcome.
    pub fn run(&mut self) -> SimResult<RunReport> {
        let r = self.run_once();
        self.free_released();
        r
    }

    /// [`World::run`] without freeing released domains (the checker reruns a program).
    fn run_once(&mut self) -> SimResult<RunReport> {
        self.refuse_if_too_big()?;
        for i in 0..self.domains.len() {
            self.prepare_domain(i);
        }
        let plan = if self.options.partitions > 1 { Some(self.split_plan()?) } else { None };
        let queues = std::mem::replace(&mut self.queues, vec![Vec::new(); self.size]);
        let mem = std::mem::take(&mut self.mem);
        let net =
            self.net.take().ok_or_else(|| SimError::invalid("the network model was lost by an earlier failed run"))?;
        let ended = match plan {
            Some(plan) => self.run_split(&plan, net, mem, queues),
            None => self.run_whole(net, mem, queues),
        };
        self.report(ended)
    }

    /// Runs the dispatches on one engine.
    fn run_whole(&mut self, net: Box<dyn Network>, mem: Memory, queues: Vec<Vec<Dispatch>>) -> Ended {
        let mut engine = Engine::new(self.chip.clone(), net, mem, queues, &self.options, None);
        engine.attach_observers(std::mem::take(&mut self.observers));
        let (mut engine, host) =
            driver::run(engine, self.chip.clone(), self.options.kernel_exec, self.options.fibers.clone());
        self.observers = engine.detach_observers();
        let outcome =
            engine.outcome().cloned().unwrap_or_else(|| Err(SimError::invalid("the run ended without an outcome")));
        let findings = engine.take_findings();
        let trace = engine.take_trace();
        let (records, stats, traffic, now) =
            (engine.records.clone(), engine.stats.clone(), engine.traffic().to_vec(), engine.now());
        let (mem, net) = engine.into_parts();
        Ended { outcome, now, records, stats, host, traffic, findings, trace, mem, net: Some(net) }
    }

    /// Makes the run's report from what its engines left, and takes back its memory and network.
    fn report(&mut self, ended: Ended) -> SimResult<RunReport> {
        let Ended { outcome, now, mut records, stats, host, traffic, findings, mut trace, mem, net } = ended;
        records.sort_by_key(|d| (d.end, d.chip, d.index));
        self.findings = findings.clone();
        if let Some(tr) = trace.as_mut() {
            tr.marks = findings
                .iter()
                .map(|f| Mark { chip: f.rank, time: f.time, name: f.kind.name().to_string(), detail: f.to_string() })
                .collect();
        }
        let report = RunReport {
            end: now,
            dispatches: records,
            stats,
            host,
            traffic,
            findings,
            trace,
            warnings: std::mem::take(&mut self.warnings),
        };
        self.mem = mem;
        self.net = net;
        for d in &mut self.domains {
            d.dirty = true;
        }
        outcome.map(|()| RunReport {
            end: report.dispatches.iter().map(|d| d.end).max().unwrap_or(SimTime::ZERO),
            ..report
        })
    }
}

/// What a run's engines leave behind, before it becomes a [`RunReport`].
pub(super) struct Ended {
    pub(super) outcome: SimResult<()>,
    /// The time of the last event applied.
    pub(super) now: SimTime,
    pub(super) records: Vec<DispatchRecord>,
    pub(super) stats: EngineStats,
    pub(super) host: HostStats,
    pub(super) traffic: Vec<Traffic>,
    pub(super) findings: Vec<crate::sim::check::Finding>,
    pub(super) trace: Option<crate::results::trace::Trace>,
    pub(super) mem: Memory,
    /// The network model, for the next run (`None`: lost with a partition that died).
    pub(super) net: Option<Box<dyn Network>>,
}

impl World {
    /// Runs the queued dispatches under the protocol checker, through [`check_runs`]: once
    /// unperturbed, then once per seed with seeded timing jitter, each from the state the host
    /// set up. Deadlocks become findings; a kernel error (bad argument, panic) is returned as
    /// the error, and so is a run cut short ([`SimError::CutShort`]). The world is left as the
    /// last run left it; the queue is consumed.
    pub fn check(&mut self, opts: &CheckOptions) -> SimResult<CheckReport> {
        let (queues, mem, warnings, saved) =
            (self.queues.clone(), self.mem.clone(), self.warnings.clone(), self.options.clone());
        let dirty: Vec<bool> = self.domains.iter().map(|d| d.dirty).collect();
        let checked = check_runs(opts, |jitter| {
            (self.queues, self.mem, self.warnings) = (queues.clone(), mem.clone(), warnings.clone());
            for (d, &was) in self.domains.iter_mut().zip(&dirty) {
                d.dirty = was;
            }
            self.options.check = true;
            self.options.jitter = jitter;
            let outcome = self.run_once();
            CheckRun { outcome, findings: std::mem::take(&mut self.findings) }
        });
        self.options = saved;
        self.free_released();
        checked.map(|c| c.report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::program::{Dispatch, Task};
    use crate::base::dtype::DType;
    use crate::base::signal::{NotifyOp, WaitCmp};
    use crate::base::time::SimDuration;
    use crate::sim::engine::testkit::{TestChip, TestNet, ns};
    use crate::sim::options::{Progress, RunOptions};
    use crate::world::DomainOptions;
    use parking_lot::Mutex;
    use std::sync::Arc;

    /// Rank 0 notifies rank 1's cell 0 (AtomicAdd 3); rank 1 waits for `>= 3`, as a thread
    /// kernel or as an async kernel the driver polls. Returns what
    /// each rank saw of its clock (at its start, and rank 1's after the wait), the cell, and
    /// the run's end.
    fn notify_then_wait(options: RunOptions, async_kernel: bool) -> (Vec<(usize, SimTime, SimTime)>, i32, SimTime) {
        let mut world = World::new(2, Arc::new(TestChip), Box::new(TestNet)).expect("a world of 2");
        *world.options_mut() = options;
        let all = world.create_domain("d", &[0, 1], DomainOptions::default()).expect("a domain");
        let sig = world.alloc_window(&all, "sig", DType::I32, &[1, 8]).expect("a window");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (s, log) = (sig.clone(), seen.clone());
        let kernel = if async_kernel {
            let mut d = Dispatch::new("ping");
            d.add(Task::new_async("ping", 1, move |ops| {
                let (s, log) = (s.clone(), log.clone());
                Box::pin(async move {
                    let start = ops.now();
                    let r = if ops.rank() == 0 {
                        ops.notify(&s, 1, &[0, 0], 3, NotifyOp::AtomicAdd)
                    } else {
                        ops.wait(&s, &[0, 0], 3, WaitCmp::Ge).await
                    };
                    log.lock().push((ops.rank(), start, ops.now()));
                    r
                })
            }));
            d
        } else {
            Dispatch::kernel("ping", 1, move |core| {
                let start = core.now();
                if core.rank() == 0 {
                    core.notify(&s, 1, &[0, 0], 3, NotifyOp::AtomicAdd)?;
                } else {
                    core.wait(&s, &[0, 0], 3, WaitCmp::Ge)?;
                }
                log.lock().push((core.rank(), start, core.now()));
                Ok(())
            })
        };
        world.dispatch_all(&all, kernel.in_domain(&all)).expect("queued");
        let report = world.run().expect("the run ends");
        let cell = world.read::<i32>(&sig, 1).expect("rank 1's window")[0];
        let mut seen = std::mem::take(&mut *seen.lock());
        seen.sort();
        (seen, cell, report.end)
    }

    #[test]
    fn a_wait_returns_a_poll_after_the_notify_lands() {
        let (seen, cell, end) = notify_then_wait(RunOptions::default(), false);
        assert_eq!(cell, 3);
        let [(0, start0, after0), (1, start1, after1)] = seen[..] else { panic!("two ranks ran: {seen:?}") };
        assert_eq!(start0, start1, "both chips start their dispatch together");
        // The notify takes its issue cost (1 ns) on the sender's clock and enters the fabric
        // after it; the test fabric lands it 1 ns later and the waiter sees it one poll (2 ns)
        // after that.
        assert_eq!(after0 - start0, SimDuration::from_ns(1));
        assert_eq!(after1 - start1, SimDuration::from_ns(1 + 1 + 2));
        assert!(end >= after1 && end > ns(0));
    }

    #[test]
    fn a_checked_run_computes_the_same_bytes_at_the_same_times() {
        let plain = notify_then_wait(RunOptions::default(), false);
        let checked = notify_then_wait(RunOptions { check: true, ..RunOptions::default() }, false);
        assert_eq!(plain, checked);
    }

    #[test]
    fn an_async_kernel_sends_the_same_requests_at_the_same_times_as_a_thread_kernel() {
        let thread = notify_then_wait(RunOptions::default(), false);
        let polled = notify_then_wait(RunOptions::default(), true);
        assert_eq!(thread, polled);
    }

    /// Fibers of a host's own, made here of corosensei coroutines: counts what it spawns.
    #[derive(Default)]
    struct HostFibers(std::sync::atomic::AtomicUsize);

    struct HostFiber(corosensei::Coroutine<(), (), ()>);

    struct Back<'a>(&'a corosensei::Yielder<(), ()>);

    impl crate::Suspend for Back<'_> {
        fn suspend(&self) {
            self.0.suspend(());
        }
    }

    impl crate::FiberHost for HostFibers {
        fn spawn(&self, body: crate::FiberBody) -> Box<dyn crate::Fiber> {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Box::new(HostFiber(corosensei::Coroutine::new(move |y: &corosensei::Yielder<(), ()>, ()| body(&Back(y)))))
        }
    }

    impl crate::Fiber for HostFiber {
        fn resume(&mut self) -> bool {
            matches!(self.0.resume(()), corosensei::CoroutineResult::Return(()))
        }
    }

    #[test]
    fn a_hosts_fibers_run_the_same_requests_at_the_same_times_as_coroutines() {
        let host = Arc::new(HostFibers::default());
        let fibers = crate::Fibers(host.clone());
        let with = notify_then_wait(RunOptions { fibers: Some(fibers), ..RunOptions::default() }, false);
        assert_eq!(host.0.load(std::sync::atomic::Ordering::Relaxed), 2, "one fiber per block");
        assert_eq!(with, notify_then_wait(RunOptions::default(), false));
        // A split run refuses them: its partitions' threads could not switch the host's fibers.
        let mut world = World::new(2, Arc::new(TestChip), Box::new(TestNet)).expect("a world of 2");
        *world.options_mut() = RunOptions { fibers: Some(crate::Fibers(host)), partitions: 2, ..RunOptions::default() };
        let err = world.split_plan().map(|_| ()).expect_err("refused");
        assert!(err.to_string().contains("fibers"), "{err}");
    }

    #[test]
    fn a_run_publishes_its_events_and_time_to_its_progress() {
        let p = Progress::new();
        let watched = RunOptions { progress: Some(p.clone()), ..RunOptions::default() };
        let first = notify_then_wait(watched.clone(), false);
        let events = p.events();
        assert!(events > 0, "a run of two dispatches applies events");
        assert!(p.now() > SimTime::ZERO && p.now() <= first.2, "published {:?}, end {:?}", p.now(), first.2);
        // Watching changes nothing, and a second run adds exactly as many events again.
        assert_eq!(first, notify_then_wait(RunOptions::default(), false));
        assert_eq!(first, notify_then_wait(watched, false));
        assert_eq!(p.events(), 2 * events);
    }
}
