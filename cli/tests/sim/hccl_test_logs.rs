//! hccl_test logs (cli/tests/data/hccl_test/, written for these tests in the tool's format):
//! `ranksim validate --hccl-test` reports the model's error per row, `calibrate --hccl-test`
//! fits to one, `ranksim hccl-test` prints what the tool would and reads back at no error, and a
//! malformed log is refused by line.

use ranksim::Config;
use ranksim_cli::hccl_test::{self, Overrides, loop_time_us};
use std::process::Command;

fn ranksim(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ranksim")).args(args).output().expect("the ranksim binary runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

fn data(name: &str) -> String {
    format!("{}/tests/data/hccl_test/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The validate report as JSON, with the exit code and the text.
fn validate_json(args: &[&str], tag: &str) -> (i32, String, serde_json::Value) {
    let json = std::env::temp_dir().join(format!("ranksim-hccl-test-{tag}-{}.json", std::process::id()));
    let mut all = vec!["validate"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", json.to_str().unwrap()]);
    let (code, out) = ranksim(&all);
    let v = std::fs::read_to_string(&json).map(|t| serde_json::from_str(&t).unwrap()).unwrap_or_default();
    let _ = std::fs::remove_file(&json);
    (code, out, v)
}

/// Each row of a host-launched allreduce log against the model: the model's time is
/// hccl_test's loop (20 calls after 10, one launch per `host.hccl_launch_us`, each op
/// `host.hccl_setup_us` plus its warm device time), and the error is the row's own.
#[test]
fn validate_reports_each_rows_error_against_hccl_tests_loop() {
    let cfg = Config::default_preset();
    let log_path = data("allreduce-8p.log");
    let (code, out, v) = validate_json(&["--hccl-test", &log_path], "ar");
    let t = &v["tables"][0];
    assert_eq!(
        t["workload"],
        "hccl_test allreduce on 8 ranks, f32, sdma-mesh (HCCL's default expansion), -w 10 -n 20, host-launched"
    );
    let log = hccl_test::parse_log(&log_path, &std::fs::read_to_string(&log_path).unwrap()).unwrap();
    let run = hccl_test::run_of(&log, &Overrides::default(), &cfg).unwrap();
    let points = t["points"].as_array().unwrap();
    assert_eq!(points.len(), 5, "{out}");
    let (launch, setup) = (cfg.host.hccl_launch_us, cfg.host.hccl_setup_us);
    let mut outside = 0;
    for (p, row) in points.iter().zip(&log.rows) {
        assert_eq!(p["size"].as_u64(), Some(row.size));
        assert_eq!(p["measured"].as_f64(), Some(row.time_us));
        let device = run.device_us(&cfg, row.size).unwrap();
        let want = loop_time_us(launch, setup + device, 20, 10).unwrap();
        let model = p["model"].as_f64().unwrap();
        assert!((model - want).abs() < 1e-9, "{}: {model} vs {want}", row.size);
        if setup + device < launch {
            // Host-bound (after the warm-up): one launch per op.
            assert!((model - launch).abs() < 1e-9, "{}", row.size);
        } else {
            assert!((model - (setup + device)).abs() < 1e-9, "{}", row.size);
        }
        let err = p["error_pct"].as_f64().unwrap();
        assert!((err - (model - row.time_us) / row.time_us * 100.0).abs() < 1e-9);
        assert_eq!(p["algorithm"], "sdma-mesh");
        outside += usize::from(err.abs() > 10.0);
    }
    assert_eq!(v["points_outside"].as_u64(), Some(outside as u64));
    assert_eq!(code, i32::from(outside > 0), "{out}");
    // The failed row and the skipped lines are said, not fatal.
    assert!(out.contains("# source: line 8: hccl_test's check failed at 524288 B"), "{out}");
    assert!(out.contains("     size(B)     measured(us)        model(us)   error(%)  algorithm"), "{out}");
}

/// An AIV-mode log timed on the device only (-t 1): every row runs what HCCL picks at its
/// size and the model's time is one warm call's device time.
#[test]
fn an_aiv_log_runs_hccls_pick_per_row_on_device_time() {
    let cfg = Config::default_preset();
    let log_path = data("allgather-8p-aiv.log");
    let (code, out, v) = validate_json(&["--hccl-test", &log_path, "--tolerance", "100"], "ag");
    assert_eq!(code, 0, "{out}");
    let log = hccl_test::parse_log(&log_path, &std::fs::read_to_string(&log_path).unwrap()).unwrap();
    let run = hccl_test::run_of(&log, &Overrides::default(), &cfg).unwrap();
    assert!(run.device_time && run.iters == 30 && run.warmup == 5);
    let points = v["tables"][0]["points"].as_array().unwrap();
    for (p, row) in points.iter().zip(&log.rows) {
        assert_eq!(p["model"].as_f64(), Some(run.device_us(&cfg, row.size).unwrap()), "{}", row.size);
        // Up to 700 KiB per rank (5.6 MiB gathered) HCCL runs its small-count AIV kernel.
        assert_eq!(p["algorithm"], "aiv-mesh (AllGatherMeshAivSmallCountExecutor)", "{}", row.size);
    }
    // --mode forces one algorithm at every size.
    let (_, out, v) = validate_json(&["--hccl-test", &log_path, "--mode", "sdma-mesh"], "ag-sdma");
    let points = v["tables"][0]["points"].as_array().unwrap();
    assert!(points.iter().all(|p| p["algorithm"] == "sdma-mesh"), "{out}");
}

/// `ranksim hccl-test` prints the tool's table for the machine; validate reads it back with
/// errors no larger than its printed rounding (2 decimals of a microsecond).
#[test]
fn hccl_test_output_reads_back_as_a_log() {
    let (code, out) = ranksim(&[
        "hccl-test",
        "reduce_scatter_test",
        "--ranks",
        "4",
        "-b",
        "64K",
        "-e",
        "1M",
        "-f",
        "4",
        "-n",
        "5",
        "-w",
        "2",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("# mpirun -n 4 ./bin/reduce_scatter_test -b 65536 -e 1048576 -f 4 -d fp32 -o sum -r 0 -n 5 -w 2"),
        "{out}"
    );
    assert!(out.contains("the minbytes is 65536, maxbytes is 1048576, iters is 5, warmup_iters is 2"), "{out}");
    assert!(out.contains("data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:"), "{out}");
    let log = hccl_test::parse_log("gen", &out).unwrap();
    assert_eq!(log.rows.iter().map(|r| r.size).collect::<Vec<_>>(), vec![65536, 262144, 1048576]);
    assert!(log.inconsistent.is_empty() && log.rows.iter().all(|r| r.check == "NULL"), "{out}");
    let path = std::env::temp_dir().join(format!("ranksim-hccl-test-gen-{}.log", std::process::id()));
    std::fs::write(&path, &out).unwrap();
    let (code, back, v) = validate_json(&["--hccl-test", path.to_str().unwrap(), "--tolerance", "0.1"], "gen");
    let _ = std::fs::remove_file(&path);
    assert_eq!(code, 0, "{back}");
    for p in v["tables"][0]["points"].as_array().unwrap() {
        let (m, s) = (p["measured"].as_f64().unwrap(), p["model"].as_f64().unwrap());
        assert!((m - s).abs() <= 0.005 + 1e-9, "{p}");
    }
    let (code, out) = ranksim(&["hccl-test", "scatter_test"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("ranksim models hccl_test's all_reduce_test"), "{out}");
    let (code, out) = ranksim(&["hccl-test", "allreduce", "-b", "1M", "-e", "1K"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("-e 1024 is below -b 1048576"), "{out}");
}

#[test]
fn a_malformed_log_is_refused_by_line_with_the_fix() {
    let (code, out) = ranksim(&["validate", "--hccl-test", &data("malformed-row.log")]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("malformed-row.log line 5: aveg_time `1O5.20` is not a number"), "{out}");
    let (code, out) = ranksim(&["validate", "--hccl-test", &data("no-command.log")]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("no-command.log: the log shows no hccl_test command line") && out.contains("--collective"),
        "{out}"
    );
    let (code, out) = ranksim(&[
        "validate",
        "--hccl-test",
        &data("no-command.log"),
        "--collective",
        "allreduce",
        "--ranks",
        "2",
        "--tolerance",
        "1000",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("hccl_test allreduce on 2 ranks"), "{out}");
    let (code, out) = ranksim(&["validate", "--hccl-test", "/nonexistent/run.log"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("cannot read /nonexistent/run.log"), "{out}");
}

/// calibrate fits the links to an hccl_test log (here one printed by `ranksim hccl-test` on
/// a2a3 itself, two ranks on the device clock, so the fit has a known answer: a2a3's links).
#[test]
fn calibrate_fits_the_links_to_an_hccl_test_log() {
    let (code, log) = ranksim(&[
        "hccl-test",
        "allgather",
        "--ranks",
        "2",
        "-b",
        "4K",
        "-e",
        "4M",
        "-f",
        "16",
        "-t",
        "1",
        "--mode",
        "sdma-mesh",
    ]);
    assert_eq!(code, 0, "{log}");
    let path = std::env::temp_dir().join(format!("ranksim-hccl-test-cal-{}.log", std::process::id()));
    std::fs::write(&path, &log).unwrap();
    let (code, out) = ranksim(&["calibrate", "--hccl-test", path.to_str().unwrap(), "--mode", "sdma-mesh"]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("rows of hccl_test allgather on 2 ranks"), "{out}");
    let cfg = Config::default_preset();
    let interconnect::TopologyConfig::FullMesh(fm) = &cfg.fabric.topology else { panic!("a2a3 is a full mesh") };
    let gbps: f64 = out.lines().find_map(|l| l.strip_prefix("link_gbps = ")).unwrap().parse().unwrap();
    assert!((gbps - fm.link_gbps).abs() / fm.link_gbps < 0.02, "{gbps} vs {}: {out}", fm.link_gbps);
}
