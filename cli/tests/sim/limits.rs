//! Config ranges (`chip_model::limits`, `Config::MAX_*`) and simulated-time overflow: every
//! number a config gives is range-checked with its exact key path, and a program that runs the
//! u64-picosecond clock past its end fails with an error, never a panic (issue 13).

use crate::common::{all, scratch_dir, simple};
use ranksim::Config;
use ranksim::prelude::*;
use ranksim_cli::commands::sweep::SweepArgs;

const A2A3: &str = include_str!("../../../configs/a2a3.toml");

/// The a2a3 preset with one line's `old` text replaced by `new`.
fn a2a3_with(old: &str, new: &str) -> String {
    assert!(A2A3.contains(old), "the preset has no `{old}`");
    A2A3.replacen(old, new, 1)
}

fn config_err(text: &str) -> String {
    match Config::from_toml(text, "test") {
        Ok(_) => panic!("config accepted"),
        Err(e) => e.to_string(),
    }
}

/// Each huge timing value that used to overflow simulated time (a panic, exit 101) is now a
/// config error naming its exact key path, the value and the range.
#[test]
fn huge_chip_times_are_refused_by_key() {
    let cases = [
        ("wait_poll_ns = 100.0", "wait_poll_ns = 1e17", "chip.wait_poll_ns = 100000000000000000"),
        ("dispatch_launch_ns = 8080.0", "dispatch_launch_ns = 1e16", "chip.dispatch_launch_ns = "),
        ("task_start_ns = 800.0", "task_start_ns = 1e15", "chip.task_start_ns = "),
        ("notify_issue_ns = 100.0", "notify_issue_ns = 1e16", "chip.notify_issue_ns = "),
        (
            "fixed_cycles = 33 ",
            "fixed_cycles = 18446744073709551615 ",
            "chip.vector.fixed_cycles = 18446744073709551615",
        ),
        ("half_bytes = 1755 ", "half_bytes = 1e28 ", "chip.dma.ub_to_gm.half_bytes = "),
        ("half_bytes = 30643 ", "half_bytes = 1e20 ", "chip.dma.gm_to_ub.half_bytes = "),
        ("issue_ns = 115.0 ", "issue_ns = 1e17 ", "chip.cube.gm_to_l1.issue_ns = "),
        ("cold_start_ns = 92000.0", "cold_start_ns = 1e30", "chip.sdma.cold_start_ns = "),
        ("fixed_cycles = 14 ", "fixed_cycles = 9000000000000 ", "chip.cube.fixed_cycles = 9000000000000"),
    ];
    for (old, new, want) in cases {
        let e = config_err(&a2a3_with(old, new));
        assert!(e.contains(want), "{new}: {e}");
        assert!(e.contains("1 s"), "{new}: the range is not given: {e}");
    }
    // The largest allowed values are accepted and run.
    let edge = a2a3_with("wait_poll_ns = 100.0", "wait_poll_ns = 1e9");
    let cfg = Config::from_toml(&edge, "edge").expect("1 s is allowed");
    cfg.world().expect("the world builds");
}

/// `[host]` costs that overflowed the `[STRACE]` host timeline are refused.
#[test]
fn huge_host_costs_are_refused_by_key() {
    for (old, new, key) in [
        ("bind_us = 4.04 ", "bind_us = 1e13 ", "host.bind_us = 10000000000000"),
        ("finalize_us = 4.04 ", "finalize_us = 1e14 ", "host.finalize_us = "),
        ("hccl_launch_us = 55.0 ", "hccl_launch_us = -1.0 ", "host.hccl_launch_us = -1"),
        ("hccl_setup_us = 30.0 ", "hccl_setup_us = 1e9 ", "host.hccl_setup_us = 1000000000"),
    ] {
        let e = config_err(&a2a3_with(old, new));
        assert!(e.contains(key) && e.contains("1e6"), "{e}");
    }
}

/// `hbm_efficiency = 1e-30` is blamed on itself, not on `hbm_gbps`.
#[test]
fn a_tiny_hbm_efficiency_names_the_efficiency() {
    let e = config_err(&a2a3_with("hbm_efficiency = 0.84 ", "hbm_efficiency = 1e-30 "));
    assert!(e.contains("chip.hbm_efficiency = 0.000000000000000000000000000001"), "{e}");
    assert!(!e.contains("chip.hbm_gbps ="), "{e}");
}

/// Too many ranks or cores are refused before any memory is allocated for them.
#[test]
fn counts_have_ranges() {
    let e = config_err(&a2a3_with("ranks = 8 ", "ranks = 100000000 "));
    assert!(e.contains("machine.ranks = 100000000") && e.contains("1..=8192"), "{e}");
    let e = config_err(&a2a3_with("aiv_cores = 48 ", "aiv_cores = 1000000 "));
    assert!(e.contains("chip.aiv_cores = 1000000") && e.contains("1..=4096"), "{e}");
}

/// A kernel whose own clock runs past u64 picoseconds (`compute(u64::MAX)`) ends the run with
/// an error naming the chip, the core and what was being scheduled; it used to panic.
#[test]
fn a_kernel_that_overflows_the_clock_fails_the_run() {
    let mut w = simple(2);
    let dom = all(&mut w);
    w.dispatch(
        0,
        Dispatch::kernel("forever", 1, |c| {
            c.compute(u64::MAX);
            c.compute(1);
            Ok(())
        })
        .in_domain(&dom),
    )
    .unwrap();
    let e = w.run().expect_err("the clock overflowed").to_string();
    assert!(e.contains("simulated time overflowed") && e.contains("chip 0 core 0"), "{e}");
    // Two long computes that only overflow together: the sum saturates, the run fails.
    let mut w = simple(2);
    let dom = all(&mut w);
    w.dispatch(
        1,
        Dispatch::kernel("long", 1, |c| {
            c.compute(u64::MAX / 1_500);
            c.compute(u64::MAX / 1_500);
            Ok(())
        })
        .in_domain(&dom),
    )
    .unwrap();
    let e = w.run().expect_err("the clock overflowed").to_string();
    assert!(e.contains("simulated time overflowed") && e.contains("chip 1 core 0"), "{e}");
}

fn sweep_args() -> SweepArgs {
    SweepArgs {
        modes: Some(vec![collectives::Mode::Mesh]),
        min_bytes: 1024,
        max_bytes: 1024,
        builtin_max_bytes: None,
        op: Some(ReduceOp::Sum),
        root: Some(0),
        core_num: Some(1),
        ..SweepArgs::new(None)
    }
}

/// The largest allowed costs everywhere still give a finite, correct sweep with \[STRACE\].
#[test]
fn the_largest_allowed_costs_sweep_without_overflow() {
    let mut text = A2A3.to_string();
    for (old, new) in [
        ("wait_poll_ns = 100.0", "wait_poll_ns = 1e9"),
        ("notify_issue_ns = 100.0", "notify_issue_ns = 1e9"),
        ("dispatch_launch_ns = 8080.0", "dispatch_launch_ns = 1e9"),
        ("task_start_ns = 800.0", "task_start_ns = 1e9"),
        ("bind_us = 4.04 ", "bind_us = 1e6 "),
        ("finalize_us = 4.04 ", "finalize_us = 1e6 "),
    ] {
        text = text.replacen(old, new, 1);
    }
    let dir = scratch_dir("limits");
    let path = dir.join("max.toml");
    std::fs::write(&path, &text).unwrap();
    let strace = dir.join("s.txt");
    let a = SweepArgs { config: Some(path), strace: Some(strace.clone()), iters: 3, warmup: 2, ..sweep_args() };
    let mut out = Vec::new();
    let status = ranksim_cli::commands::sweep::sweep(&mut out, &a).expect("the sweep runs");
    let text = String::from_utf8(out).unwrap();
    assert_eq!(status, ranksim_cli::commands::Status::Ok, "{text}");
    let row = text.lines().find(|l| l.trim_start().starts_with("1024")).expect("a row");
    let time: f64 = row.split_whitespace().nth(5).unwrap().parse().unwrap_or(f64::NAN);
    // At least a launch, a task start, a notify and a wait of 1 s each per call.
    assert!(time > 4e6, "{row}");
    assert!(std::fs::read_to_string(&strace).unwrap().contains("[STRACE]"));
    std::fs::remove_dir_all(&dir).ok();
}

/// A value of the wrong type inside `[chip.dma.*]` (and the cube's DMA curves) is reported at
/// its key's line, not at the table header; a missing or foreign key is named.
#[test]
fn type_errors_in_dma_tables_name_the_key() {
    let e = config_err(&a2a3_with("gbps = 473.6 ", "gbps = \"x\" "));
    assert!(e.contains("gbps = \"x\"") && e.contains("invalid type: string"), "{e}");
    assert!(!e.contains("| [chip.cube.gm_to_l1]"), "{e}");
    let e = config_err(&a2a3_with("half_bytes = 1755 ", "half_bytes = [1] "));
    assert!(e.contains("half_bytes = [1]"), "{e}");
    let e = config_err(&a2a3_with("half_bytes = 1755 ", "# half_bytes removed "));
    assert!(e.contains("curve = \"hill\" needs `half_bytes`"), "{e}");
    let e = config_err(&a2a3_with("half_bytes = 1755 ", "half_bytes = 1755\nissue_ns = 3.0 "));
    assert!(e.contains("`issue_ns` is not a key of curve = \"hill\""), "{e}");
    let e = config_err(&a2a3_with("curve = \"flat\"", "curve = \"steep\""));
    assert!(e.contains("curve = \"steep\" is not a DMA curve; use flat or hill"), "{e}");
}

/// A buffer whose byte size overflows (a size of u64::MAX elements, say) is an error naming the
/// buffer and its shape, not an overflow panic or an "empty shape".
#[test]
fn a_buffer_too_large_to_address_is_refused_by_name() {
    let mut w = simple(2);
    let dom = all(&mut w);
    let e = w.alloc_window(&dom, "huge", DType::F32, &[usize::MAX]).unwrap_err().to_string();
    assert!(e.contains("buffer `huge`") && e.contains("[18446744073709551615]") && e.contains("2^48"), "{e}");
    let e = w.alloc_tensor("wide", DType::I32, &[1 << 40, 1 << 10]).unwrap_err().to_string();
    assert!(e.contains("buffer `wide`") && !e.contains("non-empty"), "{e}");
    // bench at a size of u64::MAX bytes is refused naming -b.
    let call = collectives::Call::new(collectives::Kind::AllReduce, 8);
    let spec = ranksim_cli::sweep::SweepSpec::new(call).with_timing_only(true);
    let a = ranksim_cli::commands::bench::BenchArgs { config: None, spec, size: u64::MAX, strace: None, stats: false };
    let e = ranksim_cli::commands::bench::bench(&mut Vec::new(), &a).unwrap_err();
    assert!(e.starts_with("-b 18446744073709551615: a size is at most"), "{e}");
}
