//! Runs split into partitions of whole islands (`--partitions`, `RunOptions::partitions`)
//! give what one engine gives, byte for byte: every collective and algorithm on two-node with
//! data, the 1024-rank cluster timing-only, users' own kernels, a deadlock's report, and what
//! the protocol checker and the tracer see. What a split run cannot do is refused with an error
//! that says what to change.

use crate::coroutines::kernels::USER_WORKLOADS;
use ranksim::Config;
use ranksim::collectives::{Call, Kind, Mode};
use ranksim::measure::{self, Builtin, Measure};
use ranksim::prelude::*;
use ranksim::sim_core::stats::HostStats;
use ranksim::sim_core::{KernelExec, LocalGroup, join_processes};
use std::process::Command;

/// `ranksim CMD --FLAG_A a --FLAG_B b --partitions P ARGS` with both flags' files in a
/// directory of its own: exit code, stdout and the two files.
fn ranksim(cmd: &str, [flag_a, flag_b]: [&str; 2], args: &[&str], parts: usize) -> (i32, String, Vec<u8>, Vec<u8>) {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("ranksim-split-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b) = (dir.join("a.out"), dir.join("b.out"));
    let (a_path, b_path, p) = (a.display().to_string(), b.display().to_string(), parts.to_string());
    let mut all: Vec<&str> = vec![cmd, flag_a, &a_path, flag_b, &b_path, "--partitions", &p];
    all.extend(args);
    let out = Command::new(env!("CARGO_BIN_EXE_ranksim")).args(&all).output().expect("ranksim runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let files = (std::fs::read(&a).unwrap_or_default(), std::fs::read(&b).unwrap_or_default());
    std::fs::remove_dir_all(&dir).ok();
    (out.status.code().unwrap_or(-1), stdout, files.0, files.1)
}

/// `ranksim sweep ARGS --partitions P` with JSON and STRACE files.
fn sweep(args: &[&str], parts: usize) -> (i32, String, Vec<u8>, Vec<u8>) {
    ranksim("sweep", ["--json", "--strace"], args, parts)
}

#[test]
fn every_collective_on_two_node_is_byte_identical_split_in_one_to_four() {
    let modes = "mesh,ring,two-shot,aiv-mesh,sdma-mesh,rhd,hier,grouped-mesh";
    let args = ["--config", "two-node", "--collective", "all", "--mode", modes, "-b", "64K", "-e", "128K"];
    let one = sweep(&args, 1);
    assert_eq!(one.0, 0, "{}", one.1);
    // Data is checked: every row has a #wrong of 0, and no row failed.
    assert!(!one.1.contains("FAILED"), "{}", one.1);
    assert!(one.1.matches("Out of bounds values : 0 OK").count() >= 15, "{}", one.1);
    for parts in 2..=4 {
        let split = sweep(&args, parts);
        assert!(split == one, "--partitions {parts} differs from one engine:\n{}", split.1);
    }
}

#[test]
fn the_1024_rank_cluster_is_byte_identical_split_in_one_to_four() {
    let args = ["--config", "cluster1024", "--no-data", "--mode", "rhd,hier", "-b", "256K", "-e", "256K"];
    let one = sweep(&args, 1);
    assert_eq!(one.0, 0, "{}", one.1);
    for parts in 2..=4 {
        assert!(sweep(&args, parts) == one, "--partitions {parts} differs from one engine");
    }
}

/// A world of the two-node preset (two servers of 8 behind a switch) split in `parts`.
fn two_node(parts: usize) -> World {
    let mut w = Config::preset("two-node").unwrap().world().unwrap();
    w.options_mut().partitions = parts;
    w
}

/// A report without its host counters (how the host ran it, not what ran).
fn simulated(mut r: RunReport) -> RunReport {
    r.host = HostStats::default();
    r
}

/// Users' own kernels (remote stores, AtomicAdd, notify / wait, test polling, put / get) on
/// all 16 ranks of both servers, as coroutines and as async kernels.
#[test]
fn user_kernels_across_servers_are_byte_identical_split() {
    for w in USER_WORKLOADS {
        let run = |parts| {
            let mut world = two_node(parts);
            let windows = (w.setup)(&mut world, 16, 2).unwrap();
            let report = world.run().unwrap_or_else(|e| panic!("{} split in {parts}: {e}", w.name));
            let bytes: Vec<Vec<u8>> =
                windows.iter().flat_map(|t| (0..16).map(|r| world.read_bytes(t, r).unwrap())).collect();
            (simulated(report), bytes)
        };
        let one = run(1);
        assert!(one.0.stats.events > 1000, "{}: {:?}", w.name, one.0.stats);
        for parts in 2..=4 {
            let split = run(parts);
            assert!(split.1 == one.1, "{} split in {parts}: memory differs", w.name);
            assert_eq!(split.0, one.0, "{} split in {parts}", w.name);
        }
    }
}

/// Rank 0 waits for a notify that rank 9 (the other server) never sends, and rank 9 for one
/// from rank 0: the split run ends in the same deadlock, reported the same way.
#[test]
fn a_deadlock_across_servers_is_reported_as_one_engine_reports_it() {
    let run = |parts| {
        let mut w = two_node(parts);
        let dom = w.create_domain("d", &(0..16).collect::<Vec<_>>(), Default::default()).unwrap();
        let sig = w.alloc_window(&dom, "sig", DType::I32, &[16, 8]).unwrap();
        let d = Dispatch::kernel("stuck", 1, move |core| {
            let me = core.rank();
            if me == 0 || me == 9 {
                core.notify(&sig, 9 - me, &[me, 1], 1, NotifyOp::AtomicAdd)?;
                core.wait(&sig, &[9 - me, 0], 1, WaitCmp::Ge)?;
            }
            Ok(())
        });
        w.dispatch_all(&dom, d.in_domain(&dom)).unwrap();
        w.run().expect_err("the run deadlocks").to_string()
    };
    let one = run(1);
    assert!(one.contains("deadlock at") && one.contains("2 blocked wait(s)"), "{one}");
    for parts in 2..=3 {
        assert_eq!(run(parts), one, "split in {parts}");
    }
}

#[test]
fn what_a_split_run_cannot_do_is_refused_with_what_to_change() {
    let mut w = two_node(2);
    w.options_mut().kernel_exec = KernelExec::Threads;
    let dom = w.create_domain("d", &[0, 9], Default::default()).unwrap();
    w.dispatch_all(&dom, Dispatch::kernel("k", 1, |_| Ok(())).in_domain(&dom)).unwrap();
    let e = w.run().expect_err("refused").to_string();
    assert!(e.contains("run kernels on threads") && e.contains("--partitions 1"), "{e}");
    // The world is left whole: the same program runs unsplit.
    w.options_mut().partitions = 1;
    w.dispatch_all(&dom, Dispatch::kernel("k", 1, |_| Ok(())).in_domain(&dom)).unwrap();
    w.run().expect("runs on one engine");
}

/// `ranksim check ARGS --partitions P` with JSON findings and the unperturbed run's trace.
fn check(args: &[&str], parts: usize) -> (i32, String, Vec<u8>, Vec<u8>) {
    ranksim("check", ["--json", "--trace"], args, parts)
}

/// Every program of the checker's zoo of broken protocols, across both servers of two-node:
/// the checker finds the same (text, JSON, the trace with its findings marked) whether the
/// runs are split in 1, 2, 3 or 4 partitions, unperturbed and jittered.
#[test]
fn the_checker_finds_the_same_in_a_run_split_in_one_to_four() {
    let list = Command::new(env!("CARGO_BIN_EXE_ranksim")).args(["check", "--list"]).output().unwrap();
    let list = String::from_utf8(list.stdout).unwrap();
    let broken: Vec<&str> =
        list.lines().filter_map(|l| l.split_whitespace().next()).filter(|n| n.starts_with("broken-")).collect();
    assert!(broken.len() >= 10, "{list}");
    for prog in broken {
        let args = ["--config", "two-node", "--program", prog, "--seeds", "1"];
        let one = check(&args, 1);
        assert_eq!(one.0, 1, "{prog} has findings:\n{}", one.1);
        assert!(one.1.contains("FOUND"), "{prog}:\n{}", one.1);
        for parts in 2..=4 {
            let split = check(&args, parts);
            assert!(split == one, "{prog} split in {parts} differs from one engine:\n{}\n---\n{}", split.1, one.1);
        }
    }
}

/// A traced sweep (the timeline of its first run, with links and flows) across the switch:
/// the trace file is the same split or not.
#[test]
fn a_traced_sweep_is_byte_identical_split() {
    for (coll, mode) in [("allreduce", "rhd"), ("all_to_all", "sdma-mesh"), ("allreduce", "hier")] {
        let run = |parts: usize| {
            let dir =
                std::env::temp_dir().join(format!("ranksim-split-trace-{}-{coll}-{mode}-{parts}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let t = dir.join("trace.json").display().to_string();
            let args =
                ["--config", "two-node", "--collective", coll, "--mode", mode, "-b", "64K", "-e", "64K", "--trace", &t];
            let (code, out, ..) = sweep(&args, parts);
            let trace = std::fs::read(&t).unwrap_or_default();
            std::fs::remove_dir_all(&dir).ok();
            assert_eq!(code, 0, "{out}");
            (out.replace(&t, "TRACE"), trace)
        };
        let one = run(1);
        assert!(one.1.len() > 10_000, "{coll} {mode}: a trace was written");
        for parts in 2..=4 {
            assert!(run(parts) == one, "{coll} {mode} traced, split in {parts}");
        }
    }
}

/// Users' own kernels checked and traced: the run's report (findings, the timeline with its
/// spans, flows and link occupancy) is the same split in 1 to 4.
#[test]
fn checked_and_traced_user_kernels_are_byte_identical_split() {
    for w in USER_WORKLOADS {
        let run = |parts| {
            let mut world = two_node(parts);
            world.options_mut().check = true;
            world.options_mut().trace = true;
            (w.setup)(&mut world, 16, 2).unwrap();
            simulated(world.run().unwrap_or_else(|e| panic!("{} split in {parts}: {e}", w.name)))
        };
        let one = run(1);
        let trace = one.trace.as_ref().expect("a traced run has a trace");
        assert!(!trace.ops.is_empty(), "{}", w.name);
        for parts in 2..=4 {
            assert_eq!(run(parts), one, "{} checked and traced, split in {parts}", w.name);
        }
    }
}

/// `f` on each member of a group of `n` processes played by threads (every crossing and
/// every partition's result travels as bytes, as over MPI), by rank.
fn over_processes<R: Send>(n: usize, f: impl Fn() -> R + Sync) -> Vec<R> {
    std::thread::scope(|s| {
        let members: Vec<_> = LocalGroup::new(n)
            .into_iter()
            .map(|g| {
                let f = &f;
                s.spawn(move || {
                    join_processes(Box::new(g));
                    f()
                })
            })
            .collect();
        members.into_iter().map(|h| h.join().expect("a member ran")).collect()
    })
}

/// Collectives and users' kernels split over processes (threads standing in for MPI's
/// ranks): every process ends with what one engine gives, memory included.
#[test]
fn runs_over_processes_give_every_process_what_one_engine_gives() {
    let cfg = Config::preset("two-node").unwrap();
    for (kind, mode) in [(Kind::AllReduce, Mode::Rhd), (Kind::AllReduce, Mode::Hier), (Kind::AllToAll, Mode::SdmaMesh)]
    {
        let call = Call::new(kind, 16).with_mode(mode);
        let run = |m: &Measure| {
            let r = measure::run(&cfg, &Builtin(&call), m, 64 << 10, 1).unwrap();
            (simulated(r.report), r.wrong.count())
        };
        let one = run(&Measure::new(16));
        assert_eq!(one.1, 0, "{kind} {mode}: wrong elements");
        for n in [2, 3] {
            let m = Measure { partitions: n, processes: true, ..Measure::new(16) };
            for (rank, got) in over_processes(n, || run(&m)).into_iter().enumerate() {
                assert_eq!(got, one, "{kind} {mode} over {n} processes, process {rank}");
            }
        }
    }
    let w = &USER_WORKLOADS[1];
    let run = |parts: usize, processes: bool| {
        let mut world = two_node(parts);
        world.options_mut().processes = processes;
        let windows = (w.setup)(&mut world, 16, 2).unwrap();
        let report = world.run().unwrap();
        let bytes: Vec<Vec<u8>> =
            windows.iter().flat_map(|t| (0..16).map(|r| world.read_bytes(t, r).unwrap())).collect();
        (simulated(report), bytes)
    };
    let one = run(1, false);
    for got in over_processes(2, || run(2, true)) {
        assert!(got == one, "{} over 2 processes differs", w.name);
    }
}

/// A user's own collective through `ranksim_cli::main_for` (the guide's `my_allgather`) splits
/// as the built-ins do: `--partitions` gives what one engine gives.
#[test]
fn a_users_collective_sweep_is_byte_identical_split() {
    let exe = crate::examples::example_dir().join("my_allgather");
    let run = |parts: &str| {
        let args = ["sweep", "--config", "two-node", "-b", "64K", "-e", "256K", "--partitions", parts];
        let out = Command::new(&exe).args(args).output().expect("the my_allgather example (cargo build --examples)");
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let one = run("1");
    assert!(one.contains("Out of bounds values : 0 OK"), "{one}");
    for parts in ["2", "3"] {
        assert_eq!(run(parts), one, "--partitions {parts}");
    }
}

/// Rank 9 waits for 2 in a cell that rank 0 (the other server, another partition) notifies
/// once: the deadlock report names rank 0's block and task as the cell's last writer, as one
/// engine does, though that writer runs in another partition (on a thread, or in another
/// process), and at the time of the run's last event, which the other partition applied.
#[test]
fn a_deadlock_names_a_last_writer_from_another_partition_by_its_block_and_task() {
    let run = |parts, processes| {
        let mut w = two_node(parts);
        w.options_mut().processes = processes;
        let dom = w.create_domain("d", &(0..16).collect::<Vec<_>>(), Default::default()).unwrap();
        let sig = w.alloc_window(&dom, "sig", DType::I32, &[16, 8]).unwrap();
        let d = Dispatch::kernel("short", 2, move |core| {
            match (core.rank(), core.block_idx()) {
                (0, 1) => core.notify(&sig, 9, &[0, 0], 1, NotifyOp::AtomicAdd)?,
                (9, 0) => core.wait(&sig, &[0, 0], 2, WaitCmp::Ge)?,
                _ => {}
            }
            Ok(())
        });
        w.dispatch_all(&dom, d.in_domain(&dom)).unwrap();
        w.run().expect_err("the run deadlocks").to_string()
    };
    let one = run(1, false);
    assert!(one.contains("rank 0 block 1 task `short`: notify AtomicAdd 1"), "{one}");
    assert_eq!(run(2, false), one);
    for got in over_processes(2, || run(2, true)) {
        assert_eq!(got, one, "over processes");
    }
}

/// Rank 9 loads from rank 0's window (across the switch) while rank 0 stores into it, with
/// nothing ordering the two, and rank 0 stores into rank 9's window while rank 9 reads it:
/// checked and traced, the split run finds the same races, naming the same kernel lines
/// (carried as text between processes), and draws the same timeline, on threads and over
/// processes.
#[test]
fn races_across_partitions_are_found_and_traced_as_one_engine_does_over_threads_and_processes() {
    let run = |parts, processes| {
        let mut w = two_node(parts);
        (w.options_mut().check, w.options_mut().trace, w.options_mut().processes) = (true, true, processes);
        let dom = w.create_domain("d", &(0..16).collect::<Vec<_>>(), Default::default()).unwrap();
        let buf = w.alloc_window(&dom, "buf", DType::F32, &[1, 64]).unwrap();
        let d = Dispatch::kernel("racy", 1, move |core| {
            let ones = ranksim::sim_core::Tile::from_slice(1, 64, &[1.0f32; 64])?;
            match core.rank() {
                0 => {
                    core.store(&ones, &buf, &[0, 0])?;
                    core.remote_store(&ones, &buf, 9, &[0, 0], AtomicType::None)?;
                }
                9 => {
                    core.remote_load(&buf, 0, &[0, 0], &[1, 64])?;
                    core.load(&buf, &[0, 0], &[1, 64])?;
                }
                _ => {}
            }
            Ok(())
        });
        w.dispatch_all(&dom, d.in_domain(&dom)).unwrap();
        simulated(w.run().expect("the run ends"))
    };
    let one = run(1, false);
    let text: Vec<String> = one.findings.iter().map(|f| f.to_string()).collect();
    assert!(one.findings.len() >= 2, "{text:#?}");
    assert!(text.iter().all(|f| f.contains("tests/sim/split.rs:")), "findings name the kernel's lines: {text:#?}");
    assert_eq!(run(2, false), one, "on threads");
    for n in [2, 3] {
        for (rank, got) in over_processes(n, || run(n, true)).into_iter().enumerate() {
            assert_eq!(got, one, "over {n} processes, process {rank}");
        }
    }
}

/// Users' own kernels checked and traced over processes: every process ends with one
/// engine's report.
#[test]
fn checked_and_traced_user_kernels_over_processes_give_one_engines_report() {
    for w in USER_WORKLOADS {
        let run = |parts, processes| {
            let mut world = two_node(parts);
            (world.options_mut().check, world.options_mut().trace) = (true, true);
            world.options_mut().processes = processes;
            (w.setup)(&mut world, 16, 2).unwrap();
            simulated(world.run().unwrap_or_else(|e| panic!("{} split in {parts}: {e}", w.name)))
        };
        let one = run(1, false);
        for got in over_processes(2, || run(2, true)) {
            assert_eq!(got, one, "{} checked and traced over 2 processes", w.name);
        }
    }
}

/// Every fact an observer is told, as text, in order.
#[derive(Clone, Default)]
struct Transcript(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl Transcript {
    fn say(&self, fact: String) {
        self.0.lock().unwrap().push(fact);
    }
}

mod transcript {
    use super::Transcript;
    use ranksim::prelude::*;
    use ranksim::sim_core::Cond;
    use ranksim::sim_core::observe::*;
    use ranksim::sim_core::trace::LinkBusy;

    impl Observe for Transcript {
        fn wants_links(&self) -> bool {
            true
        }
        fn run_started(&mut self, ranks: usize, cores: usize) {
            self.say(format!("run {ranks} x {cores}"));
        }
        fn run_ended(&mut self, end: SimTime) {
            self.say(format!("end {end:?}"));
        }
        fn block_started(&mut self, b: &BlockStart<'_>) {
            self.say(format!("{b:?}"));
        }
        fn op_started(&mut self, op: &OpInfo) {
            self.say(format!("started {op:?}"));
        }
        fn op_span(&mut self, op: &OpInfo, end: SimTime) {
            self.say(format!("span {op:?} {end:?}"));
        }
        fn resumed(&mut self, core: CoreId, at: SimTime) {
            self.say(format!("resumed {core:?} {at:?}"));
        }
        fn read(&mut self, core: CoreId, src: MemRegion<'_>, at: OpAt) {
            self.say(format!("read {core:?} {src:?} {} {:?} {:?}", at.name(), at.time(), at.location()));
        }
        fn write_issued(&mut self, core: CoreId, id: WriteId, dst: MemRegion<'_>, atomic: bool, at: OpAt) {
            self.say(format!(
                "write {core:?} {id:?} {dst:?} {atomic} {} {:?} {:?}",
                at.name(),
                at.time(),
                at.location()
            ));
        }
        fn write_landed(&mut self, id: WriteId) {
            self.say(format!("landed {id:?}"));
        }
        fn notify_issued(&mut self, core: CoreId, id: WriteId, cell: SignalCell<'_>, op: NotifyOp, v: i32, at: OpAt) {
            self.say(format!("notify {core:?} {id:?} {cell:?} {op:?} {v} {:?}", at.location()));
        }
        fn notify_landed(&mut self, id: WriteId, cell: SignalCell<'_>, old_new: (i32, i32), eq: EqWaiters<'_>) {
            self.say(format!("notified {id:?} {cell:?} {old_new:?} {:?}", eq.get()));
        }
        fn wait_released(
            &mut self,
            core: CoreId,
            op: OpId,
            (cells, c): (SignalCells<'_>, Cond),
            at: SimTime,
            by: Option<OpId>,
        ) {
            self.say(format!("released {core:?} {op:?} {cells:?} {c:?} {at:?} {by:?}"));
        }
        fn test_polled(
            &mut self,
            core: CoreId,
            op: OpId,
            (cells, c): (SignalCells<'_>, Cond),
            holds: bool,
            at: SimTime,
        ) {
            self.say(format!("polled {core:?} {op:?} {cells:?} {c:?} {holds} {at:?}"));
        }
        fn sdma_moved(
            &mut self,
            ids: (SdmaId, WriteId),
            (src, dst): (MemRegion<'_>, MemRegion<'_>),
            atomic: bool,
            at: OpAt,
        ) {
            self.say(format!("moved {ids:?} {src:?} {dst:?} {atomic} {:?}", at.time()));
        }
        fn link_busy(&mut self, busy: &LinkBusy) {
            self.say(format!("{busy:?}"));
        }
    }
}

/// A user's own observer sees a run split on threads as it sees one engine's: the same facts,
/// with the same ids, call sites and link occupancy, in the same order; over processes it is
/// refused with what to change.
#[test]
fn a_users_observer_sees_a_run_split_on_threads_as_one_engines() {
    for w in USER_WORKLOADS {
        let run = |parts| {
            let mut world = two_node(parts);
            let seen = Transcript::default();
            world.observe(Box::new(seen.clone()));
            (w.setup)(&mut world, 16, 2).unwrap();
            let report = simulated(world.run().unwrap_or_else(|e| panic!("{} split in {parts}: {e}", w.name)));
            assert_eq!(world.take_observers().len(), 1, "the observer is handed back");
            let facts = std::mem::take(&mut *seen.0.lock().unwrap());
            (report, facts)
        };
        let one = run(1);
        assert!(one.1.len() > 100 && one.1.last().is_some_and(|f| f.starts_with("end")), "{}", w.name);
        for parts in 2..=3 {
            let split = run(parts);
            assert_eq!(split.0, one.0, "{} split in {parts}: report", w.name);
            if let Some(i) = (0..one.1.len().max(split.1.len())).find(|&i| one.1.get(i) != split.1.get(i)) {
                panic!("{} split in {parts}: fact {i} differs:\n{:?}\n{:?}", w.name, one.1.get(i), split.1.get(i));
            }
        }
    }
    let mut w = two_node(2);
    w.options_mut().processes = true;
    w.observe(Box::new(Transcript::default()));
    let dom = w.create_domain("d", &[0, 9], Default::default()).unwrap();
    w.dispatch_all(&dom, Dispatch::kernel("k", 1, |_| Ok(())).in_domain(&dom)).unwrap();
    let e = w.run().expect_err("refused").to_string();
    assert!(e.contains("have observers over processes") && e.contains("--partitions 1"), "{e}");
}
