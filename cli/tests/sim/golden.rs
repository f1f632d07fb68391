//! Golden outputs: what the simulator produced, byte for byte, for a fixed set of runs that
//! cover the collectives, the algorithms, the presets and rank counts, payload and timing-only
//! runs, seeded jitter, and the checker's findings. Restructuring or speeding up the engine
//! must leave every file identical.
//!
//! Each case runs the `ranksim` binary with its outputs (`--json`, `--strace`, `--trace`)
//! written to a scratch directory and compares them, and the exit code, with
//! `tests/golden/<case>/`. Stdout is not compared: tables and notes are formatting, pinned
//! by their own tests. An intended change of the outputs (a new JSON field, a change of a
//! simulated time with its reason) is blessed in its own commit with
//! `RANKSIM_BLESS=1 cargo test --test sim golden` and reviewed with `git diff tests/golden`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// One golden run: its name (a directory under `tests/golden/`) and its command line, split
/// at spaces; each output file it writes stands in it as `{name}`.
struct Case {
    name: &'static str,
    args: &'static str,
}

impl Case {
    /// The output files the case writes: its `{name}` arguments, in order.
    fn files(&self) -> impl Iterator<Item = &'static str> {
        self.args.split(' ').filter_map(output_file)
    }
}

/// The output file an argument stands for (`{sweep.json}`), if it is one.
fn output_file(arg: &str) -> Option<&str> {
    arg.strip_prefix('{').and_then(|a| a.strip_suffix('}'))
}

const CASES: &[Case] = &[
    Case {
        name: "allreduce-modes-a2a3",
        args: "sweep --mode mesh,ring,two-shot,aiv-mesh,sdma-mesh --core-num 8 \
               -b 1K -e 256K -f 4 --json {sweep.json} --strace {sweep.strace}",
    },
    Case {
        name: "allreduce-modes-a2a3-no-data",
        args: "sweep --mode mesh,ring,two-shot,aiv-mesh,sdma-mesh --core-num 8 \
               -b 1K -e 256K -f 4 --no-data --json {sweep.json}",
    },
    Case {
        name: "allreduce-trace-a2a3",
        args: "sweep --mode two-shot,sdma-mesh --core-num 2 -b 4K -e 4K --trace {trace.json}",
    },
    Case {
        name: "collectives-ring8",
        args: "sweep --config ring8 --collective allgather,reduce_scatter,all_to_all,broadcast,barrier --mode mesh \
               -b 1K -e 64K -f 8 --json {sweep.json} --strace {sweep.strace}",
    },
    Case {
        name: "incore-torus4x4-no-data",
        args: "sweep --config torus4x4 --collective allreduce,allgather --mode mesh --path incore \
               -b 1K -e 64K -f 8 --no-data --json {sweep.json}",
    },
    Case {
        name: "two-node-no-data",
        args: "sweep --config two-node --mode mesh,ring -b 4K -e 64K -f 4 --no-data --json {sweep.json}",
    },
    Case {
        name: "a3-supernode-two-shot",
        args: "sweep --config a3-supernode --mode two-shot --core-num 4 -b 4K -e 256K -f 8 --json {sweep.json}",
    },
    Case {
        name: "a5-hccl-class",
        args: "sweep --config a5 --mode sdma-mesh,aiv-mesh --core-num 8 -w 1 -b 4K -e 256K -f 8 --json {sweep.json}",
    },
    Case { name: "bench-seeded-jitter", args: "bench -b 64K -n 3 -w 1 --seed 7 --strace {bench.strace}" },
    Case {
        name: "check-broken-no-fence",
        args: "check --program broken-no-fence --json {findings.json} --trace {findings.trace.json}",
    },
    Case { name: "check-all-seeded", args: "check --seeds 2 --json {findings.json}" },
];

fn golden_dir(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(case)
}

/// Runs a case with its outputs in `scratch`; returns the exit code.
fn run_case(case: &Case, scratch: &Path) -> i32 {
    let args: Vec<String> = case
        .args
        .split(' ')
        .map(|a| match output_file(a) {
            Some(file) => scratch.join(file).display().to_string(),
            None => a.to_string(),
        })
        .collect();
    let out = Command::new(env!("CARGO_BIN_EXE_ranksim")).args(&args).output().expect("the ranksim binary runs");
    let code = out.status.code().unwrap_or(-1);
    assert!(matches!(code, 0 | 1), "{}: exit {code}\n{}", case.name, String::from_utf8_lossy(&out.stderr));
    code
}

/// The first line where `got` and `want` differ, for the failure message.
fn first_difference(got: &str, want: &str) -> String {
    let (mut g, mut w) = (got.lines(), want.lines());
    for n in 1.. {
        match (g.next(), w.next()) {
            (Some(a), Some(b)) if a == b => continue,
            (a, b) => return format!("line {n}:\n  got:  {}\n  want: {}", a.unwrap_or("<end>"), b.unwrap_or("<end>")),
        }
    }
    unreachable!()
}

/// Compares (or, with `RANKSIM_BLESS=1`, rewrites) one case's outputs; returns the mismatches.
fn check_case(case: &Case, bless: bool) -> Vec<String> {
    let scratch = std::env::temp_dir().join(format!("ranksim-golden-{}-{}", std::process::id(), case.name));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).expect("scratch directory");
    let code = run_case(case, &scratch);
    let dir = golden_dir(case.name);
    let mut outputs: Vec<(String, String)> = vec![("exit_code".into(), format!("{code}\n"))];
    for file in case.files() {
        let text = std::fs::read_to_string(scratch.join(file)).unwrap_or_else(|e| panic!("{}: {file}: {e}", case.name));
        outputs.push((file.to_string(), text));
    }
    let _ = std::fs::remove_dir_all(&scratch);
    let mut bad = Vec::new();
    for (file, got) in outputs {
        let path = dir.join(&file);
        if bless {
            std::fs::create_dir_all(&dir).expect("golden directory");
            std::fs::write(&path, &got).expect("golden file written");
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(want) if want == got => {}
            Ok(want) => bad.push(format!("{}: {}", path.display(), first_difference(&got, &want))),
            Err(e) => bad.push(format!("{}: {e}", path.display())),
        }
    }
    bad
}

#[test]
fn every_golden_output_is_reproduced_byte_for_byte() {
    let bless = std::env::var("RANKSIM_BLESS").is_ok_and(|v| v == "1");
    let bad: Vec<String> = CASES.iter().flat_map(|c| check_case(c, bless)).collect();
    assert!(
        bad.is_empty(),
        "{} golden file(s) differ (bless an intended change with RANKSIM_BLESS=1 cargo test --test sim golden, \
         in its own commit):\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn the_golden_cases_cover_payload_and_timing_only_runs_with_the_same_times() {
    // The timing-only twin of the payload case must give the same rows: `--no-data` changes
    // memory, never a time. (Skipped while blessing: the files are being rewritten.)
    if std::env::var("RANKSIM_BLESS").is_ok_and(|v| v == "1") {
        return;
    }
    let read = |case: &str| std::fs::read_to_string(golden_dir(case).join("sweep.json")).expect("golden json");
    let rows = |text: &str| -> Vec<String> {
        text.lines().filter(|l| l.contains("\"time_us\"") || l.contains("busbw")).map(str::to_string).collect()
    };
    let (with, without) = (read("allreduce-modes-a2a3"), read("allreduce-modes-a2a3-no-data"));
    assert!(!rows(&with).is_empty());
    assert_eq!(rows(&with), rows(&without));
}
