//! A user's collective gets the CLI (issue 24): `custom::cli_main`'s commands run a
//! `Collective` through the sweep, bench and check of `ranksim`, and the CI gate fails with
//! exit code 1 on a wrong element, on a finding and below `--min-busbw`; a deadlock is a
//! FAILED row whose notes and findings name the kernel line of each blocked wait.

use crate::common::scratch_dir;
use ranksim::measure::{Collective, Wrong};
use ranksim::prelude::*;
use ranksim_cli::commands::Status;
use std::cell::Cell;
use std::process::Command;

/// What is wrong with the test collective.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Bug {
    None,
    /// Rank 0's row lands one element to the right on every peer.
    Shifted,
    /// Every rank waits for one notify more than it gets.
    Deadlock,
}

/// A one-block direct allgather of f32 rows, optionally broken.
struct Gather(Bug);

struct Bufs {
    dom: Domain,
    stage: Tensor,
    target: Tensor,
    sig: Tensor,
    calls: Cell<i32>,
}

impl Collective for Gather {
    type Buffers = Bufs;
    fn name(&self) -> String {
        "gather".into()
    }
    fn dtype(&self) -> DType {
        DType::F32
    }
    fn bus_factor(&self, ranks: usize) -> f64 {
        (ranks as f64 - 1.0) / ranks as f64
    }
    fn count(&self, size_bytes: u64, ranks: usize) -> usize {
        (size_bytes / 4) as usize / ranks
    }
    fn bytes(&self, count: usize, ranks: usize) -> u64 {
        (count * ranks * 4) as u64
    }
    fn setup(&self, w: &mut World, dom: &Domain, count: usize) -> SimResult<Bufs> {
        let n = dom.size();
        Ok(Bufs {
            dom: dom.clone(),
            stage: w.alloc_window(dom, "stage", DType::F32, &[1, count])?,
            // One spare element so the shifted row still fits.
            target: w.alloc_window(dom, "target", DType::F32, &[n, count + 1])?,
            sig: w.alloc_window(dom, "signal", DType::I32, &[n, 1])?,
            calls: Cell::new(0),
        })
    }
    fn stage(&self, w: &mut World, b: &Bufs, count: usize) -> SimResult<()> {
        for r in 0..b.dom.size() {
            w.write(&b.stage, r, &(0..count).map(|i| (r * 100 + i % 100) as f32).collect::<Vec<_>>())?;
        }
        Ok(())
    }
    fn call(&self, w: &mut World, b: &Bufs) -> SimResult<()> {
        b.calls.set(b.calls.get() + 1);
        let (stage, target, sig) = (b.stage.clone(), b.target.clone(), b.sig.clone());
        let (bug, count) = (self.0, stage.numel());
        let expect = b.calls.get() + i32::from(bug == Bug::Deadlock);
        let kernel = Dispatch::kernel("gather", 1, move |core| {
            let (me, n) = (core.rank(), core.nranks());
            let t = core.load(&stage, &[0, 0], &[1, count])?;
            let col = usize::from(bug == Bug::Shifted && me == 0);
            core.store(&t, &target, &[me, col])?;
            for p in (0..n).filter(|&p| p != me) {
                core.remote_store(&t, &target, p, &[me, col], AtomicType::None)?;
                core.notify(&sig, p, &[me, 0], 1, NotifyOp::AtomicAdd)?;
            }
            for q in (0..n).filter(|&q| q != me) {
                core.wait(&sig, &[q, 0], expect, WaitCmp::Ge)?;
            }
            Ok(())
        });
        w.dispatch_all(&b.dom, kernel)
    }
    fn wrong(&self, w: &World, b: &Bufs, count: usize) -> SimResult<Wrong> {
        let mut wrong = Wrong::new();
        for r in 0..b.dom.size() {
            let got: Vec<f32> = w.read(&b.target, r)?;
            for src in 0..b.dom.size() {
                for i in 0..count {
                    let k = src * (count + 1) + i;
                    wrong.compare(r, k, f64::from(got[k]), (src * 100 + i % 100) as f64);
                }
            }
        }
        Ok(wrong)
    }
}

/// Runs the collective's command line in-process: the status and what it printed.
fn cli(bug: Bug, args: &[&str]) -> (Result<Status, String>, String) {
    let mut out = Vec::new();
    let argv = std::iter::once("gather").chain(args.iter().copied()).map(String::from);
    let r = ranksim_cli::commands::custom::run(&Gather(bug), argv, &mut out).expect("the flags parse");
    (r, String::from_utf8_lossy(&out).into_owned())
}

#[test]
fn a_clean_collective_passes_sweep_bench_and_check() {
    let (r, text) = cli(Bug::None, &["sweep", "-b", "8K", "-e", "32K", "-g", "4"]);
    assert_eq!(r, Ok(Status::Ok), "{text}");
    assert!(text.contains("collective gather mode - path -") && text.contains("# gather: your collective"), "{text}");
    assert_eq!(text.lines().filter(|l| l.contains("float    none")).count(), 3, "{text}");
    assert!(text.contains("# Out of bounds values : 0 OK"), "{text}");
    // The default command is the sweep, 1K to 16M: this kernel loads a whole row into UB, so
    // the large sizes are FAILED rows naming UB (a kernel error), and the sweep goes on.
    let (r, text) = cli(Bug::None, &[]);
    assert_eq!(r, Ok(Status::Failed), "{text}");
    assert!(text.contains("minBytes 1024 maxBytes 16777216"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("     2097152") && l.contains("FAILED:") && l.contains("UB")), "{text}");
    assert!(text.contains("        2048            64     float    none      -1"), "{text}");
    let (r, text) = cli(Bug::None, &["bench", "-b", "16K", "-n", "2", "-w", "1"]);
    assert_eq!(r, Ok(Status::Ok), "{text}");
    assert!(
        text.contains("BenchmarkStats(rounds=2, warmup=1)") && text.contains("# gather of 16384 B on 8 ranks"),
        "{text}"
    );
    let (r, text) = cli(Bug::None, &["check", "--seeds", "2"]);
    assert_eq!(r, Ok(Status::Ok), "{text}");
    assert!(text.contains("clean gather") && text.contains("3 run(s), 0 finding(s)"), "{text}");
}

#[test]
fn the_gate_fails_on_a_wrong_element_and_names_it() {
    let d = scratch_dir("custom-cli");
    let json = d.join("s.json");
    let (r, text) = cli(Bug::Shifted, &["sweep", "-b", "1K", "-e", "1K", "-g", "2", "-J", json.to_str().unwrap()]);
    assert_eq!(r, Ok(Status::Failed), "{text}");
    // 2 ranks x 128 elements: rank 0's row is shifted by one on both ranks (its element 0,
    // 0.0, is right by chance: the window starts zeroed).
    assert!(text.contains("# Out of bounds values : 254 FAILED"), "{text}");
    assert!(
        text.contains("        1024           128     float    none      -1     0.58    1.77    0.89     254\n"),
        "{text}"
    );
    assert!(
        text.contains("#   wrong: rank 0 element 1: got 0, expected 1\n#   wrong: rank 0 element 2: got 1, expected 2"),
        "{text}"
    );
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let first = &v["results"][0]["first_wrong"];
    assert_eq!(first.as_array().map(Vec::len), Some(4), "{v}");
    assert_eq!(first[0]["rank"], 0, "{v}");
    assert_eq!((first[0]["got"].as_f64(), first[0]["expected"].as_f64()), (Some(0.0), Some(1.0)), "{v}");
    // bench names the wrong elements too, and fails.
    let (r, text) = cli(Bug::Shifted, &["bench", "-b", "1K", "-n", "1", "-w", "0", "-g", "2"]);
    assert_eq!(r, Ok(Status::Failed), "{text}");
    assert!(text.contains("# FAILED: 254 wrong element(s)") && text.contains("#   wrong: rank 0 element 1"), "{text}");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn a_deadlock_is_a_failed_row_and_a_finding_with_the_wait_lines() {
    let (r, text) = cli(Bug::Deadlock, &["sweep", "-b", "1K", "-e", "2K", "-g", "2"]);
    assert_eq!(r, Ok(Status::Failed), "{text}");
    let rows: Vec<&str> = text.lines().filter(|l| l.contains("FAILED: deadlock at")).collect();
    assert_eq!(rows.len(), 2, "both sizes are FAILED rows, the sweep went on: {text}");
    assert!(text.contains("#         called at cli/tests/sim/custom_cli.rs:"), "{text}");
    assert!(text.contains("# Out of bounds values : 0 FAILED"), "{text}");
    let (r, text) = cli(Bug::Deadlock, &["check", "-g", "2"]);
    assert_eq!(r, Ok(Status::Failed), "{text}");
    assert!(text.contains("FOUND gather") && text.contains("deadlock"), "{text}");
    assert_eq!(text.matches("[cli/tests/sim/custom_cli.rs:").count(), 2, "every blocked wait names its line: {text}");
}

#[test]
fn the_gate_fails_below_min_busbw_and_refuses_what_it_cannot_run() {
    let (r, text) = cli(Bug::None, &["sweep", "-b", "8K", "-e", "8K", "--min-busbw", "1000"]);
    assert_eq!(r, Ok(Status::Failed), "{text}");
    assert!(text.contains("# FAILED: gather: average bus bandwidth"), "{text}");
    let (r, _) = cli(Bug::None, &["sweep", "-g", "1"]);
    assert!(r.unwrap_err().starts_with("-g 1: one rank has no peer"));
    let (r, _) = cli(Bug::None, &["sweep", "-n", "0"]);
    assert!(r.unwrap_err().contains("-n 0: timed calls must be in 1..=10000"));
    let (r, _) = cli(Bug::None, &["check", "--calls", "0"]);
    assert!(r.unwrap_err().contains("--calls 0"));
    // Flags of the built-ins only are usage errors; --help is not an error.
    let argv = ["gather", "sweep", "--mode", "ring"].map(String::from);
    let e = ranksim_cli::commands::custom::run(&Gather(Bug::None), argv, &mut Vec::new()).unwrap_err();
    assert!(e.use_stderr(), "{e}");
    let e =
        ranksim_cli::commands::custom::run(&Gather(Bug::None), ["gather", "--help"].map(String::from), &mut Vec::new())
            .unwrap_err();
    assert!(!e.use_stderr() && e.to_string().contains("gather: your collective on ranksim"), "{e}");
}

/// The guide's CI gate, on the example binary: exit 0 when it holds, 1 below --min-busbw, 2 on
/// a usage error.
#[test]
fn the_guides_one_line_gate_runs_on_the_example() {
    let exe = crate::examples::example_dir().join("my_allgather");
    let code = |args: &[&str]| {
        let out = Command::new(&exe).args(args).output().expect("the my_allgather example (cargo build --examples)");
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
    };
    // The guide's gate, as the guide writes it, holds for the guide's collective.
    let guide = include_str!("../../../docs/your-collective.md");
    let gate = ["sweep", "-b", "8K", "-e", "4M", "--min-busbw", "15"];
    assert!(guide.contains(&format!("my_allgather -- {} && \\\n", gate.join(" "))), "the guide's gate changed");
    assert!(guide.contains("my_allgather -- check --seeds 20\n"), "the guide's gate changed");
    let (c, text) = code(&gate);
    assert_eq!(c, Some(0), "{text}");
    let (c, text) = code(&["check", "--seeds", "20"]);
    assert_eq!(c, Some(0), "{text}");
    let (c, text) = code(&["sweep", "-b", "8K", "-e", "64K", "--min-busbw", "1000"]);
    assert_eq!(c, Some(1), "{text}");
    let (c, text) = code(&["check", "--seeds", "1"]);
    assert_eq!(c, Some(0), "{text}");
    let (c, text) = code(&["sweep", "-g", "1"]);
    assert_eq!(c, Some(2), "{text}");
}

/// Piped into `head`, a user's collective ends quietly as `ranksim` does, not with
/// `error: Broken pipe` and exit code 2.
#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_the_example_quietly() {
    let exe = crate::examples::example_dir().join("my_allgather");
    let script = format!("'{}' sweep -e 64K | head -1 >/dev/null", exe.display());
    let out = Command::new("sh").arg("-c").arg(&script).output().expect("sh runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("Broken pipe"), "{err}");
}
