//! Issue 12, "a first hour that convinces": nccl-tests habits work or are named, every
//! parameter that shapes a row is printed, outputs are readable.

use ranksim::Config;
use ranksim::collectives::{Kind, Mode, Path};
use ranksim::prelude::*;
use ranksim::sweep::{SweepSpec, run_point};
use serde_json::Value;
use std::process::Command;

fn ranksim(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ranksim"))
        .args(args)
        .current_dir(std::env::temp_dir())
        .output()
        .expect("the ranksim binary runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

fn data_rows(out: &str) -> Vec<&str> {
    out.lines().filter(|l| !l.starts_with('#') && l.contains("float")).collect()
}

#[test]
fn nccl_tests_flags_g_c_and_j_work() {
    let json = std::env::temp_dir().join(format!("ranksim-j-{}.json", std::process::id()));
    let j = json.to_str().unwrap();
    let (code, out) = ranksim(&["sweep", "--mode", "mesh", "-b", "4K", "-e", "8K", "-g", "4", "-c", "0", "-J", j]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(" ranks 4 machine a2a3 ") && out.contains("validation: off (timing-only)"), "{out}");
    assert_eq!(data_rows(&out).len(), 2, "{out}");
    assert!(data_rows(&out).iter().all(|r| r.ends_with("N/A")), "{out}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let _ = std::fs::remove_file(&json);
    assert_eq!(v["config"]["ranks"], 4);
    assert_eq!(v["config"]["timing_only"], true);
    // -c 1 checks; the same times as -c 0.
    let (code, checked) = ranksim(&["sweep", "--mode", "mesh", "-b", "4K", "-e", "8K", "-g", "4", "-c", "1"]);
    assert_eq!(code, 0, "{checked}");
    let time = |r: &str| r.split_whitespace().nth(5).unwrap().to_string();
    let (a, b) = (data_rows(&out), data_rows(&checked));
    assert_eq!(a.iter().map(|r| time(r)).collect::<Vec<_>>(), b.iter().map(|r| time(r)).collect::<Vec<_>>());
    assert!(b.iter().all(|r| r.ends_with(" 0")), "{checked}");
    let (code, out) = ranksim(&["sweep", "-c", "2"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("2 is not in 0..=1"), "{out}");
}

#[test]
fn avg_and_all_ops_are_refused_with_the_equivalent_named() {
    let (code, out) = ranksim(&["sweep", "-o", "avg"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("no avg; use -o sum (avg is sum / ranks"), "{out}");
    let (code, out) = ranksim(&["bench", "-o", "avg"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("use -o sum"), "{out}");
    let (code, out) = ranksim(&["sweep", "-o", "all"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("run one sweep per op"), "{out}");
}

#[test]
fn collective_all_sweeps_every_collective_and_a_barrier_once() {
    let (code, out) = ranksim(&["sweep", "--collective", "all", "--mode", "mesh", "-b", "1K", "-e", "4K", "-g", "2"]);
    assert_eq!(code, 0, "{out}");
    let series: Vec<&str> = out.lines().filter(|l| l.starts_with("# ranksim ")).collect();
    assert_eq!(series.len(), Kind::ALL.len(), "{out}");
    for k in Kind::ALL {
        assert!(out.contains(&format!("sweep: collective {} ", k.name())), "{k} missing:\n{out}");
    }
    // The barrier moves no payload: one size-0 row, not three identical ones.
    let barrier = &out[out.find("collective barrier").unwrap()..];
    let rows: Vec<&str> = barrier.lines().filter(|l| l.trim_start().starts_with("0 ")).collect();
    assert_eq!(rows.len(), 1, "{out}");
    assert!(barrier.contains("# barrier moves no payload: one row, not one per size"), "{out}");
}

#[test]
fn sweep_help_has_the_support_matrix_and_an_honest_n() {
    let (code, out) = ranksim(&["sweep", "--help"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Element types (-d) each collective and --mode accepts on `a2a3`"), "{out}");
    // The builtin HOST allgather is f32 only; its InCore lowering takes every type.
    assert!(
        out.contains("  allgather mesh                y    -    -    -    -    -   |    y    y    y    y    y    y"),
        "{out}"
    );
    assert!(
        out.contains("  allreduce mesh                y    y    -    -    -    -   |    y    y    -    -    -    -"),
        "{out}"
    );
    assert!(out.contains("the first pays\n") || out.contains("the first pays one-time costs"), "{out}");
    assert!(!out.contains("more only matter with --seed"), "{out}");
    // What the matrix says is what a sweep does.
    let (code, out) = ranksim(&["sweep", "--collective", "allgather", "--mode", "mesh", "-d", "f16", "-e", "4K"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("supports f32"), "{out}");
}

#[test]
fn the_first_call_differs_so_n_matters_without_a_seed() {
    // What the -n help says: the copy engines' cold start is in the first call only.
    let cfg = Config::default_preset();
    let spec = |iters| SweepSpec {
        kind: Kind::AllReduce,
        mode: Mode::SdmaMesh,
        path: Path::Host,
        dtype: DType::F32,
        op: ReduceOp::Sum,
        root: 0,
        iters,
        warmup: 0,
        ranks: 4,
        core_num: 4,
        jitter: None,
        timing_only: true,
    };
    let one = run_point(&cfg, &spec(1), 64 << 10, false).unwrap().unwrap().row.time_us;
    let two = run_point(&cfg, &spec(2), 64 << 10, false).unwrap().unwrap().row.time_us;
    assert!(one > two + 40.0, "-n 1 {one} us, -n 2 {two} us: the cold start is averaged over two calls");
}

#[test]
fn flags_that_do_not_apply_draw_a_warning() {
    let (code, out) = ranksim(&["sweep", "--mode", "ring", "--core-num", "8", "-r", "3", "-b", "1K", "-e", "1K"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("# warning: --core-num 8 does not apply to allreduce ring (host): it runs on one block"),
        "{out}"
    );
    assert!(out.contains("# warning: --root does not apply to allreduce: only broadcast has a root"), "{out}");
    let (_, out) = ranksim(&["sweep", "--collective", "broadcast", "-o", "max", "-b", "1K", "-e", "1K"]);
    assert!(out.contains("# warning: -o does not apply to broadcast: it does not reduce"), "{out}");
    let (_, out) = ranksim(&["sweep", "--mode", "sdma-mesh", "--core-num", "4", "-b", "1K", "-e", "1K"]);
    assert!(out.contains("the first call pays the copy engines' cold start"), "{out}");
    // Given where it applies: no warning, and it is in the header and the legend.
    let svg = std::env::temp_dir().join(format!("ranksim-legend-{}.svg", std::process::id()));
    let (_, out) = ranksim(&[
        "sweep",
        "--mode",
        "two-shot",
        "--core-num",
        "8",
        "-b",
        "1K",
        "-e",
        "1K",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(!out.contains("warning"), "{out}");
    assert!(out.contains("mode two-shot path host core_num 8 dtype float"), "{out}");
    let text = std::fs::read_to_string(&svg).unwrap();
    let _ = std::fs::remove_file(&svg);
    assert!(text.contains("allreduce two-shot core_num 8"), "{text}");
}
