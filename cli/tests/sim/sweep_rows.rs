//! Never a silent wrong row (issue 13): a size whose run was cut short by a builtin's early
//! return, or failed (a dtype the path does not support, a tile that overflows UB), is a
//! FAILED row with its reason in the table and the JSON, and fails the command; the other
//! sizes still run. CLI values are checked as values (ranges, NaN, sums), naming the argument.

use crate::common::{scratch_dir, simple_toml};
use ranksim::collectives::{Kind, Mode, Path};
use ranksim::prelude::*;
use ranksim::sim_core::Jitter;
use ranksim_cli::commands::bench::{BenchArgs, bench};
use ranksim_cli::commands::sweep::{SweepArgs, sweep};
use ranksim_cli::commands::{Status, run::run};
use ranksim_cli::sweep::SweepSpec;
use serde_json::Value;

pub fn args() -> SweepArgs {
    SweepArgs {
        modes: Some(vec![Mode::Mesh]),
        min_bytes: 1024,
        max_bytes: 1024,
        builtin_max_bytes: None,
        core_num: Some(1),
        ..SweepArgs::new(None)
    }
}

/// Runs `sweep` in-process: its status (or error) and its table.
pub fn run_sweep(a: &SweepArgs) -> (Result<Status, String>, String) {
    let mut out = Vec::new();
    let r = sweep(&mut out, a);
    (r, String::from_utf8_lossy(&out).into_owned())
}

/// Data rows of a table (lines that start with a size).
fn rows(table: &str) -> Vec<&str> {
    table.lines().filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit())).collect()
}

/// The default 8 ranks at `-b 1000`: 250 floats are not a multiple of 8, the HOST ring returns
/// at once. The row used to read `0.00` (and pass with --no-data); now it is FAILED with the
/// builtin's reason, in the table and the JSON, with and without payload.
#[test]
fn a_ring_cut_short_is_a_failed_row_not_a_time() {
    let d = scratch_dir("rows-ring");
    for no_data in [false, true] {
        let json = d.join("s.json");
        let a = SweepArgs {
            modes: Some(vec![Mode::Ring]),
            min_bytes: 1000,
            max_bytes: 1000,
            no_data,
            json: Some(json.clone()),
            ..args()
        };
        let (r, table) = run_sweep(&a);
        assert_eq!(r, Ok(Status::Failed), "{table}");
        let row = rows(&table)[0];
        assert!(row.contains("FAILED: cut short") && row.contains("not a multiple of the rank count (8)"), "{row}");
        assert!(!row.contains("0.00"), "{row}");
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let r0 = &v["results"][0];
        assert!(r0["failed"].as_str().unwrap().contains("HOST ring"), "{r0}");
        assert!(r0["time_us"].is_null() && r0["busbw_gbps"].is_null(), "{r0}");
    }
    std::fs::remove_dir_all(&d).ok();
}

/// More than 16 ranks: every HOST builtin returns at once (kMaxSupportedRanks).
#[test]
fn more_than_16_ranks_on_the_host_path_fail_every_row() {
    let d = scratch_dir("rows-17");
    let cfg = d.join("m17.toml");
    std::fs::write(&cfg, simple_toml(17)).unwrap();
    let a = SweepArgs { config: Some(cfg.clone()), max_bytes: 4096, ..args() };
    let (r, table) = run_sweep(&a);
    assert_eq!(r, Ok(Status::Failed), "{table}");
    assert_eq!(rows(&table).len(), 3, "{table}");
    assert!(rows(&table).iter().all(|l| l.contains("FAILED: cut short") && l.contains("kMaxSupportedRanks")));
    // The InCore path has no such limit.
    let (r, table) = run_sweep(&SweepArgs { path: Path::InCore, ..a });
    assert_eq!(r, Ok(Status::Ok), "{table}");
    let call = ranksim::collectives::Call::new(Kind::Broadcast, 17);
    let spec = SweepSpec::new(call).with_iters(2).with_warmup(1).with_timing_only(true);
    // bench showed the warning but exited 0; now it fails.
    let mut out = Vec::new();
    let st = bench(&mut out, &BenchArgs { config: Some(cfg), spec, size: 4096, strace: None, stats: false });
    let text = String::from_utf8_lossy(&out);
    assert_eq!(st, Ok(Status::Failed), "{text}");
    assert!(text.contains("# warning:") && text.contains("# FAILED: the run was cut short"), "{text}");
    std::fs::remove_dir_all(&d).ok();
}

/// A dtype the HOST builtin does not support marks that collective's rows; the sweep goes on
/// (allreduce mesh supports f16 and is measured in the same sweep).
#[test]
fn unsupported_dtype_rows_are_marked_and_the_sweep_goes_on() {
    let d = scratch_dir("rows-f16");
    let json = d.join("s.json");
    let a = SweepArgs {
        collectives: vec![Kind::AllReduce, Kind::AllGather, Kind::ReduceScatter, Kind::AllToAll],
        dtype: DType::F16,
        max_bytes: 2048,
        json: Some(json.clone()),
        ..args()
    };
    let (r, table) = run_sweep(&a);
    assert_eq!(r, Ok(Status::Failed), "{table}");
    let rows = rows(&table);
    assert_eq!(rows.len(), 8, "{table}");
    assert!(rows[..2].iter().all(|l| !l.contains("FAILED")), "{table}");
    for l in &rows[2..] {
        assert!(l.contains("FAILED:") && l.contains("this collective supports f32"), "{l}");
    }
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let res = v["results"].as_array().unwrap();
    assert!(res[0]["failed"].is_null() && res[0]["time_us"].as_f64().unwrap() > 0.0);
    assert!(res[2]["failed"].as_str().unwrap().contains("allgather (mesh host)"), "{}", res[2]);
    // Each series averages its measured rows only: allreduce has a figure, allgather none.
    assert!(v["series"][0]["average_bus_bandwidth"].as_f64().unwrap() > 0.0, "{}", v["series"]);
    assert_eq!(v["series"][1]["average_bus_bandwidth"].as_f64(), Some(0.0), "{}", v["series"]);
    std::fs::remove_dir_all(&d).ok();
}

/// A run that fails (an InCore allgather whose row does not fit UB at 2 MiB) is a FAILED row;
/// the smaller size before it is still measured.
#[test]
fn a_ub_overflow_marks_its_row() {
    let a = SweepArgs {
        collectives: vec![Kind::AllGather],
        path: Path::InCore,
        min_bytes: 1 << 20,
        max_bytes: 2 << 20,
        no_data: true,
        ..args()
    };
    let (r, table) = run_sweep(&a);
    assert_eq!(r, Ok(Status::Failed), "{table}");
    let rows = rows(&table);
    assert_eq!(rows.len(), 2, "{table}");
    assert!(!rows[0].contains("FAILED"), "{table}");
    assert!(rows[1].contains("FAILED:") && rows[1].contains("UB holds 188416"), "{table}");
}

/// Arguments checked as values: each error names the argument, its value and the range.
#[test]
fn cli_values_are_checked_as_values() {
    let jit =
        |op, dispatch| Some(Jitter { seed: 1, op: SimDuration::from_ns(op), dispatch: SimDuration::from_ns(dispatch) });
    let cases: Vec<(SweepArgs, &str)> = vec![
        (SweepArgs { warmup: u32::MAX, ..args() }, "-w 4294967295: warmup calls must be in 0..=10000"),
        (SweepArgs { iters: 0, ..args() }, "-n 0: timed calls must be in 1..=10000"),
        (SweepArgs { iters: 10_001, ..args() }, "-n 10001"),
        (SweepArgs { min_busbw: Some(f64::NAN), ..args() }, "--min-busbw NaN"),
        (SweepArgs { min_busbw: Some(-1.0), ..args() }, "--min-busbw -1"),
        (SweepArgs { min_busbw: Some(f64::INFINITY), ..args() }, "--min-busbw inf"),
        (SweepArgs { jitter: jit(u64::MAX, 0), ..args() }, "--jitter-op-ns"),
        (SweepArgs { jitter: jit(0, 2_000_000_000), ..args() }, "--jitter-dispatch-ns 2000000000"),
        (
            SweepArgs { collectives: vec![Kind::Broadcast], root: Some(8), ..args() },
            "--root 8: out of range for 8 ranks",
        ),
        (SweepArgs { root: Some(usize::MAX), ..args() }, "--root 18446744073709551615"),
        (SweepArgs { min_bytes: 1, max_bytes: 1, ..args() }, "no size from -b 1 to -e 1 gives an element"),
        (
            SweepArgs { max_bytes: 4 << 30, ..args() },
            "-e 4294967296: a size is at most 1073741824 bytes (1G); add --no-data",
        ),
        (SweepArgs { max_bytes: u64::MAX, no_data: true, ..args() }, "-e 18446744073709551615: a size is at most"),
    ];
    for (a, want) in cases {
        let (r, table) = run_sweep(&a);
        let e = r.expect_err(want);
        assert!(e.contains(want), "want {want:?}, got {e:?}");
        assert!(table.is_empty(), "nothing is printed before the error: {table}");
    }
    // The edges are accepted.
    let (r, _) = run_sweep(&SweepArgs { min_busbw: Some(0.0), warmup: 2, iters: 3, ..args() });
    assert_eq!(r, Ok(Status::Ok));
}

/// A step factor that rounds two sizes to one element count prints the row once.
#[test]
fn a_step_factor_never_repeats_a_row() {
    let a = SweepArgs { min_bytes: 1000, max_bytes: 1040, factor: 1.001, no_data: true, ..args() };
    let (r, table) = run_sweep(&a);
    assert_eq!(r, Ok(Status::Ok), "{table}");
    let sizes: Vec<&str> = rows(&table).iter().map(|l| l.split_whitespace().next().unwrap()).collect();
    let mut uniq = sizes.clone();
    uniq.dedup();
    assert_eq!(sizes, uniq, "{table}");
    assert_eq!(sizes.len(), 11, "{table}");
    // A barrier moves no data: every size would be the same size-0 row, so it has one.
    let a = SweepArgs { collectives: vec![Kind::Barrier], min_bytes: 1024, max_bytes: 65536, factor: 8.0, ..args() };
    let (r, table) = run_sweep(&a);
    assert_eq!(r, Ok(Status::Ok), "{table}");
    assert_eq!(rows(&table).len(), 1, "{table}");
}

/// A 1-rank machine: `run` skips the programs that need two ranks, instead of failing with
/// "needs 2..=1 ranks"; a named one says how many it needs.
#[test]
fn run_on_one_rank_skips_programs_that_need_two() {
    let d = scratch_dir("rows-one");
    let cfg = d.join("one.toml");
    std::fs::write(&cfg, simple_toml(1)).unwrap();
    let mut out = Vec::new();
    let st = run(&mut out, None, Some(&cfg), None, false);
    let text = String::from_utf8_lossy(&out);
    assert_eq!(st, Ok(Status::Ok), "{text}");
    assert!(text.contains("SKIP put") && text.contains("needs at least 2 ranks"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("OK") && l.contains("hello_rank")), "{text}");
    let e = run(&mut Vec::new(), Some("put"), Some(&cfg), None, false).unwrap_err();
    assert!(e.contains("program `put` needs at least 2 ranks; got 1"), "{e}");
    let e = run(&mut Vec::new(), None, Some(&cfg), Some(2), false).unwrap_err();
    assert!(e.contains("--ranks 2: machine `simple` has 1 ranks; use 1..=1"), "{e}");
    // `check` of everything skips them too (it failed with "needs 2..=1 ranks"); on a 1-rank
    // a2a3, which has the SDMA engines and cube cores some programs need.
    let a2a3 = include_str!("../../../configs/a2a3.toml").replacen("ranks = 8 ", "ranks = 1 ", 1);
    let one = d.join("a2a3-1.toml");
    std::fs::write(&one, a2a3).unwrap();
    let a = ranksim_cli::commands::check::CheckArgs {
        config: Some(one),
        program: None,
        ranks: None,
        options: CheckOptions { seeds: 0, op_jitter: SimDuration::ZERO, dispatch_jitter: SimDuration::ZERO },
        partitions: 1,
        json: None,
        trace: None,
        list: false,
        ..Default::default()
    };
    let mut out = Vec::new();
    let st = ranksim_cli::commands::check::check(&mut out, &a);
    let text = String::from_utf8_lossy(&out);
    assert_eq!(st, Ok(Status::Ok), "{text}");
    assert!(text.contains("skip  signal_exchange") && text.contains("clean hello_rank"), "{text}");
    std::fs::remove_dir_all(&d).ok();
}

/// nccl-tests' habitual `-g 1` ran one rank (busbw 0.00, a bound of `-0.00 GB/s`, exit 0); it
/// is refused with what `-g` means here.
#[test]
fn one_rank_is_refused_with_what_g_means_here() {
    let (r, table) = run_sweep(&SweepArgs { ranks: Some(1), ..args() });
    let e = r.unwrap_err();
    assert!(e.starts_with("-g 1: one rank has no peer"), "{e}");
    assert!(e.contains("Leave -g out to use all 8 ranks of `a2a3`, or give 2..=8"), "{e}");
    assert!(table.is_empty(), "{table}");
    let d = scratch_dir("rows-g1");
    let cfg = d.join("one.toml");
    std::fs::write(&cfg, simple_toml(1)).unwrap();
    let e = run_sweep(&SweepArgs { config: Some(cfg), ..args() }).0.unwrap_err();
    assert!(e.contains("machine `simple` has one rank (machine.ranks = 1)"), "{e}");
    std::fs::remove_dir_all(&d).ok();
}

/// A `--mode` that does not apply to a collective used to run the builtin with `mode -` and no
/// word; now the collective is skipped with a note, and nothing left to run is an error.
/// (all_to_all and broadcast have an sdma-mesh since; barrier has only its builtin.)
#[test]
fn a_mode_that_does_not_apply_is_never_silently_ignored() {
    let only = SweepArgs { collectives: vec![Kind::Barrier], modes: Some(vec![Mode::SdmaMesh]), ..args() };
    let e = run_sweep(&only).0.unwrap_err();
    assert!(e.contains("barrier skipped: --mode sdma-mesh does not apply to it (barrier runs --mode mesh"), "{e}");
    let mixed = SweepArgs {
        collectives: vec![Kind::AllGather, Kind::Broadcast],
        modes: Some(vec![Mode::Mesh, Mode::Rhd]),
        ..args()
    };
    let (r, table) = run_sweep(&mixed);
    assert_eq!(r, Ok(Status::Ok), "{table}");
    assert!(
        table.contains(
            "# warning: --mode rhd does not apply to allgather (it runs --mode mesh,ring,aiv-mesh,sdma-mesh,hier): not run"
        ),
        "{table}"
    );
    assert!(
        table.contains(
            "# warning: --mode rhd does not apply to broadcast (it runs --mode mesh,aiv-mesh,sdma-mesh): not run"
        ),
        "{table}"
    );
    assert_eq!(rows(&table).len(), 2, "one row each for the builtins: {table}");
    assert!(!table.contains("mode rhd path"), "{table}");
}

/// A default series whose collective refuses the dtype is skipped with a note (the series that
/// run still pass); a series that measured nothing is FAILED in the summary, never `0.0% of
/// the bound`.
#[test]
fn series_that_cannot_run_are_skipped_or_failed_never_zero_percent() {
    let a = SweepArgs {
        dtype: DType::BF16,
        modes: None,
        min_bytes: 64 << 10,
        max_bytes: 64 << 10,
        core_num: None,
        no_data: true,
        ..args()
    };
    let (r, table) = run_sweep(&a);
    assert_eq!(r, Ok(Status::Ok), "{table}");
    assert!(
        table.contains("# warning: allreduce mesh core_num 1 skipped: allreduce (mesh host): `data` is bf16"),
        "{table}"
    );
    assert!(!table.contains("0.0% of the bound"), "{table}");
    // A 1000-byte ring on 8 ranks is cut short at its only size: FAILED in the summary too.
    let a = SweepArgs { modes: Some(vec![Mode::Mesh, Mode::Ring]), min_bytes: 1000, max_bytes: 1000, ..args() };
    let (r, table) = run_sweep(&a);
    assert_eq!(r, Ok(Status::Failed), "{table}");
    let summary = table.lines().find(|l| l.contains("allreduce ring core_num 1") && l.starts_with("#   ")).unwrap();
    assert!(summary.contains("FAILED: no size was measured"), "{table}");
    assert!(table.contains("# Out of bounds values : 0 FAILED"), "{table}");
    // Timing-only rows were not checked: no OK is claimed.
    let (_, table) = run_sweep(&SweepArgs { no_data: true, ..args() });
    assert!(table.contains("# Out of bounds values : N/A (not checked: timing-only)"), "{table}");
}

/// The sweep says how far its numbers are from measurements (issue 24): the nearest shipped
/// table of the same collective and algorithm, with the model's error against it, or that no
/// table covers the series.
#[test]
fn each_series_says_how_far_it_is_from_a_measurement() {
    let a =
        SweepArgs { modes: Some(vec![Mode::Mesh, Mode::SdmaMesh]), ranks: Some(2), warmup: 1, no_data: true, ..args() };
    let (r, table) = run_sweep(&a);
    assert_eq!(r, Ok(Status::Ok), "{table}");
    assert!(
        table.contains("# measured: no measured table covers allreduce mesh: these numbers are the model's alone"),
        "{table}"
    );
    let line =
        table.lines().find(|l| l.contains("# measured: the nearest measured table is t1-allreduce-2p")).expect(&table);
    // validate's figure for that table on this machine.
    let t = ranksim_cli::commands::validate::nearest_table(
        &ranksim::Config::default_preset(),
        Kind::AllReduce,
        Mode::SdmaMesh,
        2,
    )
    .unwrap();
    assert_eq!(t.name, "t1-allreduce-2p");
    assert!(line.contains(&format!("the model is off it by {};", t.error_summary())), "{line}");
    // T1 gives no size: the line says the error is at an assumed size and where the range is.
    assert!(t.best_of_range().is_none(), "a sweep does not run the range");
    assert!(line.contains("at an assumed size (the source gives none: `ranksim validate --table t1-allreduce-2p` shows the model over 1M..1G)"), "{line}");
    assert!(t.error_summary().starts_with(&format!("{:.1}% at an assumed size", t.rms_error_pct.unwrap())), "{line}");
    // 8 ranks: the 4-rank table is the nearer one.
    let t8 = ranksim_cli::commands::validate::nearest_table(
        &ranksim::Config::default_preset(),
        Kind::AllReduce,
        Mode::SdmaMesh,
        8,
    );
    assert_eq!(t8.unwrap().name, "t1-allreduce-4p");
}

/// The builtin allgather and all_to_all print the same times at the same size; the all_to_all
/// series says why, so identical numbers do not read as a copy-paste bug (issue 24).
#[test]
fn identical_allgather_and_all_to_all_times_are_explained() {
    let a = SweepArgs {
        collectives: vec![Kind::AllGather, Kind::AllToAll],
        min_bytes: 64 << 10,
        max_bytes: 64 << 10,
        ..args()
    };
    let (r, table) = run_sweep(&a);
    assert_eq!(r, Ok(Status::Ok), "{table}");
    let times: Vec<&str> = rows(&table).iter().map(|l| l.split_whitespace().nth(5).unwrap()).collect();
    assert_eq!(times.len(), 2, "{table}");
    assert_eq!(times[0], times[1], "{table}");
    assert!(table.contains("as the builtin allgather does, so at the same size their times are the same"), "{table}");
}

/// `--trace` records one run; the output says which (series and size), on stdout with the
/// table, instead of leaving the reader to guess (issue 24).
#[test]
fn the_trace_says_which_run_it_is() {
    let d = scratch_dir("rows-trace");
    let path = d.join("t.json");
    let a =
        SweepArgs { modes: Some(vec![Mode::Mesh, Mode::Ring]), max_bytes: 2048, trace: Some(path.clone()), ..args() };
    let (r, table) = run_sweep(&a);
    assert_eq!(r, Ok(Status::Ok), "{table}");
    let want = format!(
        "# trace: allreduce mesh core_num 1 at 1024 B (the first size that ran; one run per sweep) written to {}",
        path.display()
    );
    assert!(table.contains(&want), "{table}");
    assert!(path.is_file());
    std::fs::remove_dir_all(&d).ok();
}

/// A barrier in a summary has no bandwidth to compare: it says so instead of `0.00 GB/s`.
#[test]
fn a_barrier_in_the_summary_is_not_zero_gb_per_s() {
    let a = SweepArgs { collectives: vec![Kind::AllReduce, Kind::Barrier], ..args() };
    let (r, table) = run_sweep(&a);
    assert_eq!(r, Ok(Status::Ok), "{table}");
    let line = table.lines().find(|l| l.starts_with("#   barrier")).expect(&table);
    assert!(line.ends_with("moves no payload: its row gives its time"), "{table}");
}
