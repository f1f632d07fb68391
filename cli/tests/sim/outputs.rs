//! Outputs of issue 6: [STRACE] lines that read back into the same BenchmarkStats, a Chrome
//! trace that is valid JSON with the expected tracks, the sweep's JSON, and the CLI gates.

use crate::common::scratch_dir;
use collectives::{Call, Kind};
use ranksim::Config;
use ranksim::collectives;
use ranksim::formats::StraceLog;
use ranksim::formats::benchmark_stats::{BenchmarkStats, Metric, Spread, group_invocations, parse_strace};
use ranksim::prelude::*;
use ranksim_cli::sweep::{SweepSpec, run_calls};
use serde_json::Value;
use std::process::Command;

fn spec(kind: Kind, iters: u32, warmup: u32, seed: Option<u64>) -> SweepSpec {
    let jitter = seed.map(|seed| ranksim::sim_core::Jitter {
        seed,
        op: SimDuration::from_ns(30),
        dispatch: SimDuration::from_ns(500),
    });
    SweepSpec::new(Call::new(kind, 4).with_core_num(2)).with_iters(iters).with_warmup(warmup).with_jitter(jitter)
}

fn stats_of(log: &StraceLog, rounds: usize, warmup: usize) -> BenchmarkStats {
    BenchmarkStats::from_l3(log.invocations().to_vec(), rounds, warmup).with_names(log.names().clone())
}

#[test]
fn strace_text_reads_back_into_the_same_stats() {
    let cfg = Config::default_preset();
    let report = run_calls(&cfg, &spec(Kind::AllReduce, 5, 2, Some(11)), 4096, 7, false).unwrap().unwrap();
    let mut log = StraceLog::new(&cfg.host);
    log.add_run(&report);
    let direct = stats_of(&log, 5, 2);
    let text = log.text();
    // Records from forked ranks can share a physical line; PyPTO splits them again.
    let glued = text.replace("\n[mono_ns", "[mono_ns");
    for t in [&text, &glued] {
        let parsed = BenchmarkStats::from_l3(group_invocations(parse_strace(t)), 5, 2).with_names(log.names().clone());
        assert_eq!(parsed.to_string(), direct.to_string());
        assert_eq!(parsed.device_wall_us, direct.device_wall_us);
        assert_eq!(parsed.host_wall_us, direct.host_wall_us);
        assert_eq!(parsed.per_rank(Metric::Device).unwrap(), direct.per_rank(Metric::Device).unwrap());
        assert_eq!(parsed.per_round(Metric::Union).unwrap(), direct.per_round(Metric::Union).unwrap());
        assert_eq!(
            parsed.format_mean_tree(true, Spread::Both, None, None),
            direct.format_mean_tree(true, Spread::Both, None, None)
        );
    }
    // The headline is the per-round max over ranks of each rank's device wall, and jitter makes
    // rounds differ.
    assert_eq!(direct.rounds_dispatches.len(), 5);
    assert!(!direct.fallback_flattened && !direct.unstable_dispatch_slots);
    assert!(direct.device_us_stdev() > 0.0, "{direct}");
    let line = direct.to_string();
    assert!(line.starts_with("BenchmarkStats(rounds=5, warmup=2): device_wall_us min="), "{line}");
    assert!(line.contains("[L3: 4 ranks, per-round max across ranks; host-union mean="), "{line}");
    // Every dispatch carries the span names PyPTO reads, one pid per rank, fresh inv each.
    assert!(text.contains("name=chip.run.runner_run.device_wall ts=0 dur="));
    assert!(text.contains(" clk=dev"));
    let pids: std::collections::BTreeSet<u64> = log.invocations().iter().map(|i| i.pid).collect();
    assert_eq!(pids.len(), 4);
    let invs: Vec<i64> = log.invocations().iter().filter(|i| i.pid == 41_000).map(|i| i.inv).collect();
    assert_eq!(invs, (1..=7).collect::<Vec<_>>());
}

#[test]
fn device_and_host_walls_follow_the_dispatch_records() {
    let cfg = Config::default_preset();
    let report = run_calls(&cfg, &spec(Kind::AllGather, 1, 0, None), 1 << 16, 1, false).unwrap().unwrap();
    let mut log = StraceLog::new(&cfg.host);
    log.add_run(&report);
    let s = stats_of(&log, 1, 0);
    let d = report.of_chip(0).next().unwrap();
    // The device wall is the first task's start to the dispatch's end (read off the record).
    let first = d.tasks.iter().map(|t| t.start).min().unwrap();
    let want = ((d.end.as_ps() - first.as_ps()) as f64 / 1000.0).round() / 1000.0;
    assert_eq!(s.per_rank(Metric::Device).unwrap()[&41_000], vec![want]);
    // chip.run adds the configured host costs.
    let host = s.per_rank(Metric::Host).unwrap()[&41_000][0];
    let extra = cfg.host.bind_us + cfg.host.finalize_us;
    assert!((host - want - extra).abs() < 1e-6, "host {host} device {want} host costs {extra}");
}

fn chrome_json(kind: Kind) -> Value {
    let cfg = Config::default_preset();
    let report = run_calls(&cfg, &spec(kind, 1, 0, None), 8192, 1, true).unwrap().unwrap();
    let trace = report.trace.expect("traced");
    let text = ranksim::formats::to_chrome_json(&trace, cfg.machine.ranks);
    serde_json::from_str(&text).expect("the Chrome trace is valid JSON")
}

#[test]
fn chrome_trace_has_processes_threads_slices_flows_and_link_counters() {
    let v = chrome_json(Kind::AllReduce);
    let events = v["traceEvents"].as_array().unwrap();
    let count = |ph: &str, pred: &dyn Fn(&Value) -> bool| events.iter().filter(|e| e["ph"] == ph && pred(e)).count();
    assert_eq!(count("M", &|e| e["name"] == "process_name"), 8, "a process per rank");
    assert!(
        count("M", &|e| e["name"] == "thread_name" && e["args"]["name"].as_str().unwrap().starts_with("core")) >= 8
    );
    for op in ["remote_load", "notify", "wait", "store", "vector"] {
        assert!(count("X", &|e| e["name"] == op) > 0, "no {op} slice");
    }
    assert_eq!(count("X", &|e| e["cat"] == "dispatch"), 4, "one dispatch slice per taking-part rank");
    let starts = count("s", &|e| e["name"] == "notify->wait");
    assert!(starts > 0 && starts == count("f", &|e| e["name"] == "notify->wait"));
    assert!(count("C", &|e| e["name"].as_str().unwrap().starts_with("link ")) > 0, "link counters");
    // Slices carry microsecond timestamps and non-negative durations.
    for e in events.iter().filter(|e| e["ph"] == "X") {
        assert!(e["ts"].as_f64().unwrap() >= 0.0 && e["dur"].as_f64().unwrap() >= 0.0);
    }
    let puts = chrome_json(Kind::AllGather);
    let events = puts["traceEvents"].as_array().unwrap();
    assert!(events.iter().any(|e| e["ph"] == "s" && e["name"] == "write->notify"), "put -> notify flows");
}

fn ranksim(args: &[&str], dir: &std::path::Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ranksim")).args(args).current_dir(dir).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn sweep_prints_the_table_and_writes_json_plot_strace_and_trace() {
    let d = scratch_dir("test-sweep");
    let args = [
        "sweep",
        "-b",
        "1K",
        "-e",
        "8K",
        "--collective",
        "allreduce,allgather",
        "--mode",
        "mesh,two-shot",
        "--core-num",
        "2",
        "--json",
        "s.json",
        "--plot",
        "s.svg",
        "--strace",
        "s.strace",
        "--trace",
        "t.json",
    ];
    let (code, out) = ranksim(&args, &d);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("#       size         count      type   redop    root     time   algbw   busbw  #wrong"),
        "{out}"
    );
    assert_eq!(out.matches("# Avg bus bandwidth").count(), 3, "one block per series:\n{out}");
    let rows: Vec<&str> = out.lines().filter(|l| !l.starts_with('#') && l.contains("float")).collect();
    assert_eq!(rows.len(), 4 + 4 + 4, "{out}");
    assert!(rows.iter().all(|r| r.trim_end().ends_with(" 0")), "no wrong element:\n{out}");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(d.join("s.json")).unwrap()).unwrap();
    assert_eq!(json["results"].as_array().unwrap().len(), 12);
    for key in ["size", "count", "type", "redop", "root", "time_us", "algbw_gbps", "busbw_gbps", "nwrong"] {
        assert!(json["results"][0].get(key).is_some(), "{key}");
    }
    // Three series: no average across them, one per series, with what shaped its rows.
    assert_eq!(json["average_bus_bandwidth"], Value::Null);
    let series = json["series"].as_array().unwrap();
    let labels: Vec<&str> = series.iter().map(|s| s["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["allreduce mesh core_num 2", "allreduce two-shot core_num 2", "allgather mesh core_num 1"]);
    for s in series {
        let rows: Vec<f64> = json["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["series"] == s["label"])
            .map(|r| r["busbw_gbps"].as_f64().unwrap())
            .collect();
        assert_eq!(rows.len(), 4);
        let avg = rows.iter().sum::<f64>() / 4.0;
        assert_eq!(s["average_bus_bandwidth"].as_f64().unwrap(), avg);
    }
    assert_eq!(series[1]["config"]["core_num"], 2);
    assert_eq!(series[2]["config"]["core_num"], 1);
    assert_eq!(json["config"]["mode"], "mesh,two-shot");
    // --core-num shapes the allreduce rows only: the allgather builtin says so.
    assert!(
        out.contains("# warning: --core-num 2 does not apply to allgather mesh (host): it runs on one block"),
        "{out}"
    );
    assert!(out.contains("path host core_num 2 dtype float"), "{out}");
    let svg = std::fs::read_to_string(d.join("s.svg")).unwrap();
    assert!(svg.starts_with("<svg") || svg.starts_with("<?xml"));
    assert!(svg.contains("allreduce two-shot"));
    let strace = std::fs::read_to_string(d.join("s.strace")).unwrap();
    assert_eq!(group_invocations(parse_strace(&strace)).len(), 12 * 8, "a dispatch per rank per size per series");
    let _: Value = serde_json::from_str(&std::fs::read_to_string(d.join("t.json")).unwrap()).unwrap();
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn min_busbw_and_wrong_elements_gate_the_exit_code() {
    let d = scratch_dir("test-gates");
    let (code, out) = ranksim(&["sweep", "-b", "4K", "-e", "4K", "--min-busbw", "100000"], &d);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("below --min-busbw 100000"), "{out}");
    let (code, _) = ranksim(&["sweep", "-b", "4K", "-e", "4K", "--min-busbw", "0.001"], &d);
    assert_eq!(code, 0);
    // The HOST ring silently returns when numel % NR != 0: 257 floats on 8 ranks stay unsummed;
    // the row is FAILED with the builtin's reason, with payload or without (issue 13).
    for extra in [None, Some("--no-data")] {
        let mut args = vec!["sweep", "--mode", "ring", "-b", "1028", "-e", "1028"];
        args.extend(extra);
        let (code, out) = ranksim(&args, &d);
        assert_eq!(code, 1, "{out}");
        assert!(out.contains("FAILED: cut short") && out.contains("numel (257)"), "{out}");
    }
    // Timing-only sweeps cannot check: #wrong is N/A and does not fail.
    let (code, out) = ranksim(&["sweep", "--mode", "ring", "-b", "1024", "-e", "1024", "--no-data"], &d);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("N/A") && out.contains("validation: off (timing-only)"), "{out}");
    let (code, out) = ranksim(&["sweep", "-b", "2K", "-e", "1K"], &d);
    assert_eq!(code, 2, "{out}");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn bench_prints_the_stats_line_first() {
    let d = scratch_dir("test-bench");
    let (code, out) =
        ranksim(&["bench", "-b", "16K", "-n", "4", "-w", "1", "--ranks", "4", "--strace", "b.strace"], &d);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.lines().next().unwrap().starts_with("BenchmarkStats(rounds=4, warmup=1): device_wall_us min="),
        "{out}"
    );
    assert!(out.contains("# per rank, over 4 rounds (us)"));
    assert!(out.contains(
        "dispatch pid=41000 slot=0 task=builtin.tensor.allreduce__sum__fp32 — mean of 4 launches (warmup 1 excluded)"
    ));
    let strace = std::fs::read_to_string(d.join("b.strace")).unwrap();
    let stats = BenchmarkStats::from_l3(group_invocations(parse_strace(&strace)), 4, 1);
    assert_eq!(stats.device_wall_us.len(), 4);
    assert!(out.starts_with(&stats.to_string()[..60]));
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn sizes_accept_suffixes_and_bad_ones_are_explained() {
    let d = scratch_dir("test-sizes");
    let (code, out) = ranksim(&["sweep", "-b", "12Q"], &d);
    assert_eq!(code, 2);
    assert!(out.contains("12Q"), "{out}");
    std::fs::remove_dir_all(&d).ok();
    assert_eq!(collectives::Kind::AllToAllV.name(), "all_to_all_v");
}
