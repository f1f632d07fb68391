//! Memory fits or refuses up front (issue 40): a run's estimate (`measure::memory`, from the
//! config and the call) is within a factor of two of the peak the process measures; what does
//! not fit in `--max-memory` (or what the host has) is refused before it runs, with the
//! estimate, its largest part and what would fit; a default sweep leaves out the sizes that do
//! not fit and, past kMaxSupportedRanks, runs only what the vendor library runs at that scale.
//! The reliability corpus (every preset x collective, default sweeps) is the ignored
//! `every_default_sweep_completes_or_refuses`.

use collectives::{Call, Kind, Mode};
use ranksim::Config;
use ranksim::measure::memory::MemoryLimit;
use ranksim::measure::{self, Builtin, Measure};
use ranksim::prelude::*;
use ranksim_cli::commands::sweep::{SweepArgs, combos};
use ranksim_cli::sweep::SweepSpec;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs the `ranksim` binary with `args`: exit code and output.
fn ranksim(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ranksim")).args(args).output().expect("the ranksim binary runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

/// How a child process ended: its exit code (`None`: killed), its peak resident set and its
/// wall time.
struct Ended {
    code: Option<i32>,
    peak: u64,
    wall: Duration,
    out: String,
}

/// Runs the `ranksim` binary with `args`, killing it past `timeout` or past `max_rss` bytes
/// resident: how it ended and its peak, its `VmHWM` read every 10 ms until it exits (not
/// `ru_maxrss`, which on Linux starts from the resident set of the test process that forked
/// it, over a gigabyte while the other tests run).
fn measured(args: &[&str], timeout: Duration, max_rss: u64) -> Ended {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let log = std::env::temp_dir().join(format!("ranksim-mem-{}-{n}.log", std::process::id()));
    let file = std::fs::File::create(&log).expect("a log file");
    // Reaped by `wait4` below.
    #[allow(clippy::zombie_processes)]
    let child = Command::new(env!("CARGO_BIN_EXE_ranksim"))
        .args(args)
        .stdout(file.try_clone().expect("the log file twice"))
        .stderr(file)
        .stdin(Stdio::null())
        .spawn()
        .expect("the ranksim binary runs");
    let pid = child.id() as libc::pid_t;
    let started = Instant::now();
    // SAFETY: `rusage` is plain integers, valid all zero.
    let (mut status, mut usage): (libc::c_int, libc::rusage) = (0, unsafe { std::mem::zeroed() });
    let (mut killed, mut peak) = (false, 0);
    let field = |text: &str, key: &str| {
        let line = text.lines().find(|l| l.starts_with(key))?;
        line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kib| kib * 1024)
    };
    loop {
        // Once the child has exited its memory is gone (no VmHWM line): read before reaping.
        let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        peak = peak.max(field(&text, "VmHWM:").unwrap_or(0));
        let rss = field(&text, "VmRSS:").unwrap_or(0);
        // SAFETY: `pid` is our child, not yet reaped (std's `Child` is never waited here);
        // `status` and `usage` are valid for writes.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break;
        }
        if !killed && (started.elapsed() > timeout || rss > max_rss) {
            // SAFETY: signalling our own child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            killed = true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let code = if libc::WIFEXITED(status) { Some(libc::WEXITSTATUS(status)) } else { None };
    let out = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    Ended { code, peak, wall: started.elapsed(), out }
}

/// One measured case: `sweep` of one series at one size, run alone (`-j 1`).
struct Case {
    preset: &'static str,
    kind: Kind,
    mode: Mode,
    blocks: usize,
    ranks: Option<usize>,
    size: u64,
    timing_only: bool,
    warmup: u32,
}

impl Case {
    fn args(&self) -> Vec<String> {
        let size = self.size.to_string();
        let mut a: Vec<String> = ["sweep", "--config", self.preset, "--collective", self.kind.name()]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mode = self.mode.to_string();
        let blocks = self.blocks.to_string();
        let warmup = self.warmup.to_string();
        a.extend(
            ["--mode", &mode, "--core-num", &blocks, "-b", &size, "-e", &size, "-j", "1", "-w", &warmup]
                .map(String::from),
        );
        if let Some(g) = self.ranks {
            a.extend(["-g".to_string(), g.to_string()]);
        }
        if self.timing_only {
            a.push("--no-data".into());
        }
        a
    }

    fn estimate(&self) -> u64 {
        let cfg = Config::preset(self.preset).unwrap();
        let ranks = self.ranks.unwrap_or(cfg.machine.ranks);
        let call = Call::new(self.kind, ranks).with_mode(self.mode).with_core_num(self.blocks);
        let m = Measure { timing_only: self.timing_only, warmup: self.warmup, ..Measure::new(ranks) };
        measure::memory::estimate(&cfg, &Builtin(&call), &m, self.size).unwrap().unwrap().total()
    }
}

/// The estimate against the peak the process reaches, for cases each dominated by another
/// part: payload (a2a3, two-node), the machine and its routes (cluster1024 rhd), every block
/// talking to every peer (an all_to_all over 48 blocks), the grouped mesh's barriers. Each
/// within a factor of two (measured on a release build: 0.8-1.3).
#[test]
fn memory_estimate_vs_peak() {
    let m = |preset, kind, mode, blocks, ranks, size, timing_only, warmup| Case {
        preset,
        kind,
        mode,
        blocks,
        ranks,
        size,
        timing_only,
        warmup,
    };
    let cases = [
        m("a2a3", Kind::AllReduce, Mode::AivMesh, 48, None, 16 << 20, false, 0),
        m("two-node", Kind::AllReduce, Mode::Rhd, 1, None, 16 << 20, false, 0),
        m("cluster1024", Kind::AllReduce, Mode::Rhd, 1, None, 256 << 10, true, 0),
        m("cluster1024", Kind::AllToAll, Mode::AivMesh, 48, Some(32), 64 << 10, true, 1),
        m("cluster1024", Kind::AllToAll, Mode::GroupedMesh, 1, Some(128), 64 << 10, true, 1),
    ];
    let mut table = String::from("case | estimate MiB | peak MiB | ratio\n");
    let mut worst = Vec::new();
    for c in &cases {
        let args = c.args();
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let e = c.estimate();
        let run = measured(&argv, Duration::from_secs(600), 8 << 30);
        assert_eq!(run.code, Some(0), "{argv:?} ended {:?} after {:?}:\n{}", run.code, run.wall, run.out);
        let ratio = e as f64 / run.peak as f64;
        table += &format!(
            "{} | {:.1} | {:.1} | {ratio:.2}\n",
            argv[1..].join(" "),
            e as f64 / 1048576.0,
            run.peak as f64 / 1048576.0
        );
        if !(0.5..=2.0).contains(&ratio) {
            worst.push(argv.join(" "));
        }
    }
    println!("{table}");
    assert!(worst.is_empty(), "estimates off by more than 2x:\n{table}");
}

/// The known case (issue 40): the default series of a 1024-rank all_to_all was a 48-block AIV
/// full mesh, killed by the OOM killer after minutes at 24 GB. Asked for, it is refused within
/// a second with the estimate, its largest part and what fits; by default the series is the
/// grouped mesh on one block (the builtin returns at once above 16 ranks).
#[test]
fn a_sweep_that_cannot_fit_is_refused_before_it_runs() {
    let started = Instant::now();
    let (code, out) = ranksim(&[
        "sweep",
        "--config",
        "cluster1024",
        "--collective",
        "all_to_all",
        "--mode",
        "aiv-mesh",
        "--core-num",
        "48",
        "-b",
        "64K",
        "-e",
        "64K",
        "--no-data",
        "--max-memory",
        "16G",
    ]);
    assert!(started.elapsed() < Duration::from_secs(20), "took {:?}", started.elapsed());
    assert_eq!(code, 2, "{out}");
    for part in [
        "error: all_to_all aiv-mesh at 64K on 1024 ranks would hold about ",
        "more than the 16.0 GiB it may use (the limit given with --max-memory or max_memory=)",
        "the largest part is routes (",
        "Not run. What fits: --core-num ",
        "--mode grouped-mesh --core-num 1 (about ",
        "-g 512 (about ",
    ] {
        assert!(out.contains(part), "missing `{part}` in:\n{out}");
    }
    let cfg = Config::preset("cluster1024").unwrap();
    let mut a = SweepArgs::new(None);
    a.collectives = vec![Kind::AllToAll];
    let labels: Vec<String> = combos(&a, &cfg, 1024)
        .iter()
        .map(|c| format!("{} {} {} -w {}", c.kind, c.mode, c.core_num, c.warmup))
        .collect();
    // Across servers the default all_to_all is HCCL's two-level one (pairwise between servers)
    // on a few blocks, warm.
    let hier = collectives::serving(Kind::AllToAll, Mode::Hier).unwrap();
    assert_eq!(hier.default_blocks, collectives::DefaultBlocks::Fixed(4));
    assert_eq!(labels, ["all_to_all hier 4 -w 1"]);
    // On two-node's 16 ranks (two servers) the builtin runs beside it; on one server of 8 the
    // single-server meshes.
    let two = Config::preset("two-node").unwrap();
    let labels: Vec<String> = combos(&a, &two, 16).iter().map(|c| c.mode.to_string()).collect();
    assert_eq!(labels, ["mesh", "hier"]);
    let labels: Vec<String> = combos(&a, &two, 8).iter().map(|c| c.mode.to_string()).collect();
    assert_eq!(labels, ["mesh", "aiv-mesh"]);
}

/// A collective with no algorithm at that scale is refused at once, saying why and what runs.
#[test]
fn a_default_sweep_past_the_builtins_with_no_algorithm_at_that_scale_is_refused() {
    // Across cluster1024's 128 servers allgather, reduce_scatter and all_to_all run HCCL's
    // two-level `hier`; the others have no algorithm modelled at that scale.
    let cfg = ranksim::Config::preset("cluster1024").unwrap();
    let mut a = ranksim_cli::commands::sweep::SweepArgs::new(Some("cluster1024".into()));
    a.collectives = vec![Kind::AllGather, Kind::ReduceScatter, Kind::AllToAll];
    let picked: Vec<String> =
        ranksim_cli::commands::sweep::combos(&a, &cfg, 1024).iter().map(|c| format!("{} {}", c.kind, c.mode)).collect();
    assert_eq!(picked, ["allgather hier", "reduce_scatter hier", "all_to_all hier"]);
    for kind in ["broadcast", "all_to_all_v", "barrier"] {
        let started = Instant::now();
        let (code, out) = ranksim(&["sweep", "--config", "cluster1024", "--collective", kind]);
        assert!(started.elapsed() < Duration::from_secs(20), "{kind} took {:?}", started.elapsed());
        assert_eq!(code, 2, "{kind}: {out}");
        let want = format!(
            "error: nothing to sweep: {kind} skipped: PyPTO's HOST builtin returns at once above 16 ranks \
             (kMaxSupportedRanks) and no HCCL-class {kind} modelled here runs at 1024 ranks"
        );
        assert!(out.contains(&want), "{kind}: {out}");
        assert!(out.contains("sweep one server with -g 8, the InCore lowering with --path incore"), "{out}");
    }
}

/// `--max-memory`: explicit sizes that do not fit are refused (payload the largest part, with
/// the timing-only estimate that fits); the default run leaves them out with a note and runs
/// the rest; -j runs only as many sizes at once as fit.
#[test]
fn max_memory_refuses_explicit_sizes_and_trims_the_default_run() {
    let (code, out) =
        ranksim(&["sweep", "--mode", "aiv-mesh", "--core-num", "48", "-b", "16M", "-e", "16M", "--max-memory", "100M"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("error: allreduce aiv-mesh at 16M on 8 ranks would hold about "), "{out}");
    assert!(out.contains("(payload 128.0 MiB, host buffers 48.0 MiB"), "{out}");
    assert!(
        out.contains("the largest part is payload (128.0 MiB). Not run. What fits: --no-data (timing-only"),
        "{out}"
    );
    let (code, out) = ranksim(&["sweep", "-b", "1M", "--max-memory", "100M", "--no-data", "-f", "4"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = ranksim(&["sweep", "-b", "1M", "-f", "4", "--max-memory", "100M"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("# allreduce hccl core_num 48: up to 4M in the default run (give -e 16M to ask for larger sizes)"),
        "{out}"
    );
    assert!(!out.lines().any(|l| l.starts_with("    16777216")), "16M ran:\n{out}");
    assert!(out.lines().filter(|l| l.starts_with("     4194304")).count() == 2, "{out}");
    let (code, out) = ranksim(&["sweep", "--mode", "ring", "-b", "4M", "-e", "8M", "-j", "2", "--max-memory", "120M"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("# allreduce ring core_num 1: -j 2 lowered to 1: more runs at once would not fit in memory"),
        "{out}"
    );
    let (code, out) = ranksim(&["sweep", "--max-memory", "0"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("must be more than 0 bytes"), "{out}");
}

/// bench, check and run refuse too: a built-in's bench with what would fit, a collective's
/// check by its estimate with the checker's records, any program by what its world holds
/// (sim-core's `RunOptions::max_memory`).
#[test]
fn bench_check_and_run_refuse_what_does_not_fit() {
    let (code, out) =
        ranksim(&["bench", "-b", "16M", "--mode", "aiv-mesh", "--core-num", "48", "--max-memory", "100M"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("error: allreduce aiv-mesh at 16M on 8 ranks would hold about "), "{out}");
    assert!(out.contains("What fits: --no-data"), "{out}");
    let (code, out) = ranksim(&["check", "--program", "all_to_all-aiv-mesh-host", "--max-memory", "17M"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("error: all_to_all-aiv-mesh-host on 8 ranks would hold about "), "{out}");
    assert!(out.contains("checker ") && !out.contains("timing-only"), "{out}");
    let (code, out) = ranksim(&["run", "hello_rank", "--max-memory", "1M"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("FAIL hello_rank         this run would hold about "), "{out}");
    assert!(out.contains("more than the 1.0 MiB it may use (RunOptions::max_memory"), "{out}");
    let (code, out) = ranksim(&["run", "hello_rank", "--max-memory", "1G"]);
    assert_eq!(code, 0, "{out}");
}

/// The library refuses a run over `Budgets::max_memory` with `SimError::Memory`, and so does a
/// world over `RunOptions::max_memory`; within the limit both run.
#[test]
fn the_library_and_sim_core_refuse_over_the_limit() {
    let cfg = Config::default_preset();
    let call = Call::new(Kind::AllReduce, 8);
    let mut m = Measure::new(8);
    m.budgets.max_memory = Some(MemoryLimit::Given(20 << 20));
    match measure::run(&cfg, &Builtin(&call), &m, 16 << 20, 1) {
        Err(measure::Error::Sim(SimError::Memory(r))) => {
            assert_eq!(r.what, "allreduce mesh at 16M on 8 ranks");
            assert_eq!(r.estimate.largest().map(|i| i.what.as_str()), Some("payload"));
            assert!(r.advice.contains("timing-only"), "{}", r.advice);
        }
        other => panic!("not refused: {:?}", other.map(|r| r.report.end)),
    }
    m.budgets.max_memory = Some(MemoryLimit::Given(1 << 30));
    assert!(measure::run(&cfg, &Builtin(&call), &m, 1 << 10, 1).is_ok());
    let mut w = cfg.world().unwrap();
    let dom = w.create_domain("d", &[0, 1], DomainOptions::default()).unwrap();
    w.alloc_window(&dom, "x", DType::F32, &[1 << 20]).unwrap();
    w.dispatch_all(&dom, Dispatch::kernel("k", 1, |_| Ok(()))).unwrap();
    assert_eq!(w.payload_bytes(), 8 << 20);
    w.options_mut().max_memory = Some(4 << 20);
    let Err(SimError::Memory(r)) = w.run() else { panic!("not refused") };
    assert_eq!(r.estimate.bytes_of("payload"), 8 << 20);
    assert!(r.to_string().contains("To fit: keep no payload (World::set_timing_only"), "{r}");
    w.options_mut().max_memory = Some(1 << 30);
    w.run().expect("fits");
}

/// A sweep of a spec over `sizes`, estimated: every size of a default sweep of every preset x
/// collective is estimated in well under a second (the planning a sweep does before it runs).
#[test]
fn planning_every_default_sweep_takes_no_time() {
    let started = Instant::now();
    for &(preset, _) in ranksim::config::PRESETS {
        let cfg = Config::preset(preset).unwrap();
        let ranks = cfg.machine.ranks;
        for kind in Kind::ALL {
            let mut a = SweepArgs::new(None);
            a.collectives = vec![kind];
            for c in combos(&a, &cfg, ranks) {
                let call = Call::new(kind, ranks).with_mode(c.mode).with_core_num(c.core_num);
                let spec = SweepSpec::new(call).with_warmup(c.warmup);
                for size in [1 << 10, 1 << 20, 16 << 20] {
                    ranksim_cli::sweep::estimate(&cfg, &spec, size).unwrap();
                }
            }
        }
    }
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
}

/// The reliability corpus of issue 40: `ranksim sweep --config X --collective C` with the
/// defaults, for every preset X and collective C, completes (exit 0 or 1 with its rows) or
/// refuses (exit 2 with a message) within seconds; none is killed, none outgrows what the host
/// has. Minutes on two cores in a release build: `cargo test --release --test sim
/// every_default_sweep -- --ignored --nocapture` (RANKSIM_CORPUS_MAX_MEMORY=8G runs it as on a
/// host with 8 GiB).
#[test]
#[ignore]
fn every_default_sweep_completes_or_refuses() {
    let limit = std::env::var("RANKSIM_CORPUS_MAX_MEMORY").ok();
    let host = measure::memory::available().expect("the host says what it has");
    let ceiling = limit.as_deref().map_or(host, |l| ranksim::formats::parse_size(l).expect("a size"));
    let mut table = String::new();
    let mut bad = Vec::new();
    for &(preset, _) in ranksim::config::PRESETS {
        for kind in Kind::ALL {
            let mut args = vec!["sweep", "--config", preset, "--collective", kind.name()];
            if let Some(l) = &limit {
                args.extend(["--max-memory", l.as_str()]);
            }
            let run = measured(&args, Duration::from_secs(1800), ceiling + (ceiling / 8));
            let what = match run.code {
                Some(0 | 1) => format!("completes in {:.1} s", run.wall.as_secs_f64()),
                Some(2) => format!(
                    "refuses in {:.1} s: {}",
                    run.wall.as_secs_f64(),
                    run.out
                        .lines()
                        .find(|l| l.starts_with("error:"))
                        .unwrap_or("?")
                        .chars()
                        .take(160)
                        .collect::<String>()
                ),
                _ => format!("KILLED after {:.1} s", run.wall.as_secs_f64()),
            };
            let line = format!("{preset} x {kind}: {what}, peak {} MiB", run.peak >> 20);
            println!("{line}");
            table += &line;
            table.push('\n');
            let refused_slowly = run.code == Some(2) && run.wall > Duration::from_secs(30);
            if !matches!(run.code, Some(0..=2)) || refused_slowly || run.peak > ceiling {
                bad.push(line);
            }
        }
    }
    assert!(bad.is_empty(), "{}\n\nall:\n{table}", bad.join("\n"));
}
