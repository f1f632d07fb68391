//! Issue 12, "a first hour that convinces": nccl-tests habits work or are named, every
//! parameter that shapes a row is printed, outputs are readable.

use ranksim::Config;
use ranksim::collectives::{Kind, Mode};
use ranksim_cli::sweep::{SweepSpec, run_point};
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
    // `--mode` is explained from the modes table: every mode with what it is, each
    // collective's modes, and the default series.
    for m in ranksim::collectives::MODES {
        assert!(out.contains(&format!("{:<12}  {}\n", m.name, m.about)), "{}: {out}", m.name);
    }
    assert!(out.contains("all_to_all: mesh, sdma-mesh, aiv-mesh, grouped-mesh, hier;"), "{out}");
    assert!(
        out.contains("Across servers: allreduce rhd; allgather hier; reduce_scatter hier; all_to_all hier."),
        "{out}"
    );
    assert!(!out.contains("more only matter with --seed"), "{out}");
    // What the matrix says is what a sweep does: every row of an unsupported pair is FAILED,
    // with the reason, and the sweep exits 1.
    let (code, out) = ranksim(&["sweep", "--collective", "allgather", "--mode", "mesh", "-d", "f16", "-e", "4K"]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(out.lines().filter(|l| l.contains("FAILED") && l.contains("supports f32")).count(), 3, "{out}");
}

#[test]
fn the_first_call_differs_so_n_matters_without_a_seed() {
    // What the -n help says: the copy engines' cold start is in the first call only.
    let cfg = Config::default_preset();
    let call = ranksim::collectives::Call::new(Kind::AllReduce, 4).with_mode(Mode::SdmaMesh).with_core_num(4);
    let spec = |iters| SweepSpec::new(call).with_iters(iters).with_timing_only(true);
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

#[test]
fn bench_prints_each_distinct_tree_once_and_the_bandwidth() {
    let (code, out) = ranksim(&["bench", "-b", "16K", "-n", "2", "-w", "1", "-g", "4"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out.matches("dispatch pid=").count(), 1, "{out}");
    assert!(out.contains("the same tree on ranks 0, 1, 2, 3 (4 ranks)"), "{out}");
    assert_eq!(out.matches("`- device_wall [dev]").count(), 1, "{out}");
    // algbw and busbw from the headline mean, by nccl-tests' conventions.
    let line = out.lines().find(|l| l.starts_with("# allreduce of 16384 B on 4 ranks: mean device wall ")).unwrap();
    let num = |after: &str| -> f64 {
        let rest = &line[line.find(after).unwrap() + after.len()..];
        rest.split_whitespace().next().unwrap().parse().unwrap()
    };
    let t = num("mean device wall ");
    let mean: f64 =
        out.lines().next().unwrap().split("mean=").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert_eq!(t, mean, "{out}");
    assert!((num("algbw ") - 16384.0 / 1e3 / t).abs() < 0.006, "{out}");
    assert!((num("busbw ") - 16384.0 / 1e3 / t * 1.5).abs() < 0.006, "{out}");
    assert!(line.ends_with("(machine bound 58.80 GB/s)"), "{out}");
}

#[test]
fn distinct_trees_keeps_trees_that_differ() {
    let tree = |pid: u64, us: &str| format!("dispatch pid={pid} slot=0 task=t — mean of 2 launches:\nchip.run  {us}us");
    let text = [tree(41000, "5.0"), tree(41001, "6.0"), tree(41002, "5.0")].join("\n\n");
    let got = ranksim_cli::commands::bench::distinct_trees(&text, &[41000, 41001, 41002]);
    assert_eq!(
        got,
        "dispatch pid=41000 slot=0 task=t — mean of 2 launches:\nthe same tree on ranks 0, 2 (2 ranks)\nchip.run  5.0us\n\n\
         dispatch pid=41001 slot=0 task=t — mean of 2 launches:\nchip.run  6.0us"
    );
}

/// Jittered ranks give trees that differ in their last digits: printed once, with the range
/// of their root spans, not once per rank (issue 24); trees 1 % apart or more stay apart.
#[test]
fn distinct_trees_folds_near_identical_trees() {
    let tree = |pid: u64, us: &str| {
        format!(
            "dispatch pid={pid} slot=0 task=t — mean of 2 launches:\nchip.run  {us}us  ±0.5\n`- sched  {us}us  ±0.5"
        )
    };
    let text = [tree(41000, "305.9"), tree(41001, "306.5"), tree(41002, "310.0")].join("\n\n");
    let got = ranksim_cli::commands::bench::distinct_trees(&text, &[41000, 41001, 41002]);
    assert_eq!(
        got,
        "dispatch pid=41000 slot=0 task=t — mean of 2 launches:\n\
         the same spans on ranks 0, 1 (2 ranks), within 1%: the root span's mean is 305.9 to 306.5 us over them; this is rank 0's\n\
         chip.run  305.9us  ±0.5\n`- sched  305.9us  ±0.5\n\n\
         dispatch pid=41002 slot=0 task=t — mean of 2 launches:\nchip.run  310.0us  ±0.5\n`- sched  310.0us  ±0.5"
    );
}

#[test]
fn check_groups_findings_every_rank_repeats() {
    let (code, out) = ranksim(&["check", "--program", "broken-missing-barrier", "--ranks", "4"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("4 ranks, 1 run(s), 4 finding(s)"), "{out}");
    assert_eq!(out.matches("[data-race]").count(), 1, "{out}");
    assert!(
        out.contains("... and the same finding, every rank shifted alike, on rank(s) 2, 3, 0 (4 ranks in all)"),
        "{out}"
    );
    assert!(out.contains("# 4 finding(s)"), "{out}");
}

#[test]
fn topo_summarises_links_by_class_and_lists_them_on_request() {
    let (code, out) = ranksim(&["topo", "--config", "two-node"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("links: 144 directed, in 3 class(es)"), "{out}");
    assert!(out.contains("  112 x chip-to-chip  28.000 GB/s  19.600 GB/s  110.000 ns"), "{out}");
    assert!(out.contains("  16 x nic1-up        25.000 GB/s  23.875 GB/s  750.000 ns"), "{out}");
    assert!(out.contains("ports: 16 ingress, each 196.000 GB/s raw, 137.200 GB/s effective"), "{out}");
    assert!(!out.contains("link 0->1"), "{out}");
    let (code, all) = ranksim(&["topo", "--config", "two-node", "--links"]);
    assert_eq!(code, 0, "{all}");
    assert!(all.contains("link 0->1") && all.contains("port 15"), "{all}");
    // The summary's 5 lines (header, 3 classes, ports) become 1 + 144 links and 1 + 16 ports.
    assert_eq!(all.lines().count(), out.lines().count() - 5 + 1 + 144 + 1 + 16, "{all}");
    // A big full mesh: the summary stays a screenful.
    let toml = include_str!("../../../configs/a2a3.toml").replace("ranks = 8 ", "ranks = 256 ");
    let path = std::env::temp_dir().join(format!("ranksim-mesh256-{}.toml", std::process::id()));
    std::fs::write(&path, toml).unwrap();
    let (code, big) = ranksim(&["topo", "--config", path.to_str().unwrap()]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(code, 0, "{big}");
    assert!(big.contains("links: 65280 directed, in 1 class(es)"), "{big}");
    assert!(big.lines().count() < 20, "{big}");
}

#[test]
fn sweep_prints_the_warnings_the_simulator_raises() {
    // The HOST ring returns early when numel % ranks != 0; the sweep says so once.
    let (code, out) = ranksim(&["sweep", "--mode", "ring", "-b", "1028", "-e", "1028"]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(out.matches("# warning: ").count(), 1, "{out}");
    assert!(out.lines().any(|l| l.starts_with("# warning: ") && l.contains("ring")), "{out}");
}

#[test]
fn jitter_that_shapes_the_rows_is_in_the_header_and_the_json() {
    let json = std::env::temp_dir().join(format!("ranksim-jit-{}.json", std::process::id()));
    let j = json.to_str().unwrap();
    let args = ["sweep", "--mode", "mesh", "-b", "1K", "-e", "1K", "-g", "2", "--seed", "3", "--jitter-op-ns", "30"];
    let (code, out) = ranksim(&[&args[..], &["-J", j]].concat());
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(" seed: 3 jitter: up to 30 ns per transfer, 1000 ns per dispatch validation: on"), "{out}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let _ = std::fs::remove_file(&json);
    assert_eq!(v["config"]["jitter_op_ns"], 30);
    assert_eq!(v["config"]["jitter_dispatch_ns"], 1000);
    let (_, plain) = ranksim(&["sweep", "--mode", "mesh", "-b", "1K", "-e", "1K", "-g", "2"]);
    assert!(plain.contains(" seed: 0 jitter: off validation: on"), "{plain}");
}
