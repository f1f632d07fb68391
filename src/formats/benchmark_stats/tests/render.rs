//! `Display`, `format_tree`, `format_mean_tree` and `mean_invocation`, byte for byte.

use super::*;
use std::collections::BTreeMap;

/// L2: launches of `abc` with device 5, 7 | 10, 12.5, 11.25 µs (warmup 2), one stray `def`.
fn l2() -> BenchmarkStats {
    let mut invs: Vec<TraceInvocation> = [5_000, 7_000, 10_000, 12_500, 11_250]
        .into_iter()
        .zip(1..)
        .map(|(dev, inv)| dispatch(3, inv, "abc", 100_000 * inv, 20_000, dev))
        .collect();
    invs.push(dispatch(3, 9, "def", 900_000, 20_000, 1));
    BenchmarkStats::from_l2(invs, 3, 2)
}

fn l3() -> BenchmarkStats {
    BenchmarkStats::from_l3(l3_two_ranks(), 2, 1)
}

fn l3_slots() -> BenchmarkStats {
    let names = BTreeMap::from([("a1".to_string(), "matmul".to_string())]);
    BenchmarkStats::from_l3(l3_two_slots(), 2, 0).with_names(names)
}

#[test]
fn display_without_samples() {
    assert_eq!(BenchmarkStats::new(5, 2).to_string(), "BenchmarkStats(rounds=5: no samples)");
}

#[test]
fn display_all_zero() {
    let stats = BenchmarkStats { device_wall_us: vec![0.0, 0.0], ..BenchmarkStats::new(4, 1) };
    assert!(stats.all_zero_device());
    assert_eq!(
        stats.to_string(),
        "BenchmarkStats(rounds=4): device_wall_us all 0 — runtime built without SIMPLER_HOST_STRACE or sim platform \
         (use host_wall_us)"
    );
}

#[test]
fn display_l2_rounds_ties_to_even() {
    // Samples 10, 12.5, 11.25: median and mean 11.25 -> "11.2", stdev exactly 1.25 -> "1.2".
    assert_eq!(
        l2().to_string(),
        "BenchmarkStats(rounds=3, warmup=2): device_wall_us min=10.0 median=11.2 mean=11.2 max=12.5 stdev=1.2"
    );
}

#[test]
fn display_l3_grid_with_host_union() {
    // Rounds: max(100, 110) = 110, max(120, 115) = 120; union 2.000..2.165 ms = 165 µs per round.
    assert_eq!(
        l3().to_string(),
        "BenchmarkStats(rounds=2, warmup=1): device_wall_us min=110.0 median=115.0 mean=115.0 max=120.0 stdev=7.1 \
         [L3: 2 ranks, per-round max across ranks; host-union mean=165.0us]"
    );
}

#[test]
fn display_l3_lists_dispatches_when_a_rank_dispatches_twice() {
    // Rank sums: pid 10 100 / 103, pid 20 95 / 96; union inv 1 start .. inv 2 end + 3 µs skew.
    assert_eq!(
        l3_slots().to_string(),
        "BenchmarkStats(rounds=2, warmup=0): device_wall_us min=100.0 median=101.5 mean=101.5 max=103.0 stdev=2.1 \
         [L3: 2 ranks, per-round max across ranks; host-union mean=1083.0us]\n  per-dispatch device mean us: \
         (pid=10,slot=0,task=matmul)=41.0  (pid=10,slot=1,task=b2)=60.5  (pid=20,slot=0,task=matmul)=44.5  \
         (pid=20,slot=1,task=b2)=51.0"
    );
}

#[test]
fn display_elides_past_eight_dispatches() {
    let invs: Vec<TraceInvocation> =
        (1..=10).map(|k| dispatch(7, k, &format!("h{}", k - 1), 10_000 * k, 5_000, 1_000 * k)).collect();
    let stats = BenchmarkStats::from_l3(invs, 1, 0);
    // One round: 1 + 2 + ... + 10 = 55 µs; union 10 µs .. 105 µs.
    let cells: Vec<String> = (0..8).map(|s| format!("(pid=7,slot={s},task=h{s})={}.0", s + 1)).collect();
    let expected = format!(
        "BenchmarkStats(rounds=1, warmup=0): device_wall_us min=55.0 median=55.0 mean=55.0 max=55.0 stdev=0.0 \
         [L3: 1 ranks, per-round max across ranks; host-union mean=95.0us]\n  per-dispatch device mean us: {}  \
         ... +2 more",
        cells.join("  ")
    );
    assert_eq!(stats.to_string(), expected);
}

#[test]
fn display_fallback_pool() {
    let mut invs: Vec<TraceInvocation> = (1..=4).map(|i| dispatch(10, i, "aa", 10_000 * i, 5_000, 1_000 * i)).collect();
    invs.extend((1..=3).map(|i| dispatch(20, i, "aa", 10_000 * i, 5_000, 1_000 * i + 500)));
    let stats = BenchmarkStats::from_l3(invs, 2, 1);
    // Pool 2, 3, 4 | 2.5, 3.5: sample stdev sqrt(2.5 / 4) = 0.79.
    assert_eq!(
        stats.to_string(),
        "BenchmarkStats(rounds=2, warmup=1): device_wall_us min=2.0 median=3.0 mean=3.0 max=4.0 stdev=0.8 \
         [L3: flattened per-dispatch pool — non-deterministic dispatch shape]"
    );
}

#[test]
fn format_tree_labels_rounds_slots_and_named_tasks() {
    let stats = l3_slots();
    let expected = lines(&[
        "launch[0] (pid=10 inv=1 hid=a1 round=0 slot=0 task=matmul):",
        "chip.run                 80.0us",
        "`- runner_run            79.8us",
        "   `- device_wall [dev]  40.0us",
        "      |- orch [dev]      20.0us",
        "      `- sched [dev]     39.7us",
    ]);
    assert_eq!(stats.format_tree(Some(0), true), Ok(expected));
    let expected = lines(&[
        "launch[3] (pid=10 inv=4 hid=b2 round=1 slot=1):",
        "chip.run                 80000ns",
        "`- runner_run            79800ns",
        "   `- device_wall [dev]  61000ns",
        "      |- orch [dev]      30500ns",
        "      `- sched [dev]     60700ns",
    ]);
    assert_eq!(stats.format_tree(Some(3), false), Ok(expected));
}

#[test]
fn format_tree_of_every_launch() {
    let all = l3().format_tree(None, true).unwrap_or_default();
    let headers: Vec<&str> = all.lines().filter(|l| l.starts_with("launch[")).collect();
    assert_eq!(
        headers,
        [
            "launch[0] (pid=10 inv=2 hid=aa round=0 slot=0):",
            "launch[1] (pid=10 inv=3 hid=aa round=1 slot=0):",
            "launch[2] (pid=20 inv=2 hid=aa round=0 slot=0):",
            "launch[3] (pid=20 inv=3 hid=aa round=1 slot=0):",
        ]
    );
    assert_eq!(all.lines().count(), 4 * 6);
    assert!(all.ends_with("      `- sched [dev]     114.7us"));
}

#[test]
fn format_tree_without_grid_has_plain_headers() {
    let expected = lines(&[
        "launch[0] (pid=3 inv=3 hid=abc):",
        "chip.run                 20.0us",
        "`- runner_run            19.8us",
        "   `- device_wall [dev]  10.0us",
        "      |- orch [dev]       5.0us",
        "      `- sched [dev]      9.7us",
    ]);
    assert_eq!(l2().format_tree(Some(0), true), Ok(expected));
}

#[test]
fn format_tree_edge_cases() {
    assert_eq!(BenchmarkStats::new(3, 0).format_tree(Some(7), true), Ok(NO_TREE_MSG.to_string()));
    assert_eq!(NO_TREE_MSG, "BenchmarkStats: no span tree captured (non-SIMPLER_HOST_STRACE build or *sim platform)");
    let err = l2().format_tree(Some(3), true);
    assert_eq!(err, Err(BenchError::LaunchOutOfRange { launch: 3, len: 3 }));
    assert_eq!(
        err.err().map(|e| e.to_string()).as_deref(),
        Some("format_tree(): launch index 3 out of range (3 measured launches)")
    );
}

const PID10_HEADER: &str = "dispatch pid=10 slot=0 task=aa — mean of 2 launches (warmup 1 excluded); each node: ";

#[test]
fn mean_tree_stdev_of_every_dispatch() {
    let expected = lines(&[
        "dispatch pid=10 slot=0 task=aa — mean of 2 launches (warmup 1 excluded); each node: mean ±stdev:",
        "chip.run                 150.0us   ±0.0",
        "`- runner_run            149.8us   ±0.0",
        "   `- device_wall [dev]  110.0us  ±14.1",
        "      |- orch [dev]       55.0us   ±7.1",
        "      `- sched [dev]     109.7us  ±14.1",
        "",
        "dispatch pid=20 slot=0 task=aa — mean of 2 launches (warmup 1 excluded); each node: mean ±stdev:",
        "chip.run                 160.0us  ±0.0",
        "`- runner_run            159.8us  ±0.0",
        "   `- device_wall [dev]  112.5us  ±3.5",
        "      |- orch [dev]       56.2us  ±1.8",
        "      `- sched [dev]     112.2us  ±3.5",
    ]);
    assert_eq!(l3().format_mean_tree(true, Spread::default(), None, None), expected);
}

#[test]
fn mean_tree_minmax() {
    let expected = lines(&[
        &format!("{PID10_HEADER}mean [min..max]:"),
        "chip.run                 150.0us  [150.0..150.0]",
        "`- runner_run            149.8us  [149.8..149.8]",
        "   `- device_wall [dev]  110.0us  [100.0..120.0]",
        "      |- orch [dev]       55.0us    [50.0..60.0]",
        "      `- sched [dev]     109.7us   [99.7..119.7]",
    ]);
    assert_eq!(l3().format_mean_tree(true, Spread::MinMax, Some(10), None), expected);
}

#[test]
fn mean_tree_both() {
    let expected = lines(&[
        &format!("{PID10_HEADER}mean ±stdev [min..max]:"),
        "chip.run                 150.0us   ±0.0  [150.0..150.0]",
        "`- runner_run            149.8us   ±0.0  [149.8..149.8]",
        "   `- device_wall [dev]  110.0us  ±14.1  [100.0..120.0]",
        "      |- orch [dev]       55.0us   ±7.1    [50.0..60.0]",
        "      `- sched [dev]     109.7us  ±14.1   [99.7..119.7]",
    ]);
    assert_eq!(l3().format_mean_tree(true, Spread::Both, Some(10), Some(0)), expected);
}

#[test]
fn mean_tree_none() {
    let expected = lines(&[
        &format!("{PID10_HEADER}mean:"),
        "chip.run                 150.0us",
        "`- runner_run            149.8us",
        "   `- device_wall [dev]  110.0us",
        "      |- orch [dev]       55.0us",
        "      `- sched [dev]     109.7us",
    ]);
    assert_eq!(l3().format_mean_tree(true, Spread::None, Some(10), None), expected);
}

#[test]
fn mean_tree_in_nanoseconds() {
    let expected = lines(&[
        "dispatch pid=20 slot=0 task=aa — mean of 2 launches (warmup 1 excluded); each node: mean ±stdev [min..max]:",
        "chip.run                 160000.0ns     ±0.0  [160000.0..160000.0]",
        "`- runner_run            159800.0ns     ±0.0  [159800.0..159800.0]",
        "   `- device_wall [dev]  112500.0ns  ±3535.5  [110000.0..115000.0]",
        "      |- orch [dev]       56250.0ns  ±1767.8    [55000.0..57500.0]",
        "      `- sched [dev]     112200.0ns  ±3535.5  [109700.0..114700.0]",
    ]);
    assert_eq!(l3().format_mean_tree(false, Spread::Both, Some(20), Some(0)), expected);
}

#[test]
fn mean_tree_l2_is_one_unlabeled_group() {
    let expected = lines(&[
        "mean of 3 launches (warmup 2 excluded); each node: mean ±stdev [min..max]:",
        "chip.run                 20.0us  ±0.0  [20.0..20.0]",
        "`- runner_run            19.8us  ±0.0  [19.8..19.8]",
        "   `- device_wall [dev]  11.2us  ±1.2  [10.0..12.5]",
        "      |- orch [dev]       5.6us  ±0.6    [5.0..6.2]",
        "      `- sched [dev]     10.9us  ±1.2   [9.7..12.2]",
    ]);
    assert_eq!(l2().format_mean_tree(true, Spread::Both, None, None), expected);
}

#[test]
fn mean_tree_messages() {
    assert_eq!(
        l3().format_mean_tree(true, Spread::Stdev, Some(99), None),
        "BenchmarkStats: no dispatch matches pid=99 slot=None"
    );
    assert_eq!(
        l2().format_mean_tree(true, Spread::Stdev, None, Some(0)),
        "BenchmarkStats: no dispatch matches pid=None slot=0"
    );
    assert_eq!(BenchmarkStats::new(1, 0).format_mean_tree(true, Spread::Stdev, None, None), NO_TREE_MSG);
}

#[test]
fn mean_invocation_averages_one_dispatch() {
    let mean = l3().mean_invocation(Some(20), None).ok().flatten().unwrap_or_default();
    assert_eq!((mean.pid, mean.inv, mean.hid.as_str()), (20, -1, "aa"));
    let summary: Vec<(&str, u32, i64, i64, &str)> =
        mean.spans.iter().map(|s| (s.name.as_str(), s.depth, s.ts, s.dur, s.attrs.as_str())).collect();
    assert_eq!(
        summary,
        [
            (DEVICE_SPAN, 2, 0, 112_500, "clk=dev"),
            (ORCH_SPAN, 3, 100, 56_250, "clk=dev"),
            (SCHED_SPAN, 3, 200, 112_200, "clk=dev"),
            (RUNNER, 1, 2_505_100, 159_800, ""),
            (HOST_SPAN, 0, 2_505_000, 160_000, "run_id=2"),
        ]
    );
    assert!(mean.spans.iter().all(|s| s.inv == -1 && s.tid == 21));
}

#[test]
fn mean_invocation_rounds_half_to_even() {
    let one = |inv: i64, ts: i64, dur: i64| TraceInvocation {
        pid: 1,
        inv,
        hid: "h".into(),
        spans: vec![span(1, inv, "h", 0, HOST_SPAN, ts, dur, ""), span(1, inv, "h", 2, DEVICE_SPAN, 0, dur, "clk=dev")],
    };
    // ts mean 2.5 -> 2, dur mean 3.5 -> 4.
    let stats = BenchmarkStats::from_l2(vec![one(1, 2, 3), one(2, 3, 4)], 2, 0);
    let mean = stats.mean_invocation(None, None).ok().flatten().unwrap_or_default();
    assert_eq!((mean.spans[0].ts, mean.spans[0].dur), (2, 4));
}

#[test]
fn mean_invocation_refuses_to_fuse_dispatches() {
    let err = l3().mean_invocation(None, None);
    assert_eq!(
        err.err().map(|e| e.to_string()).as_deref(),
        Some(
            "mean_invocation(): 2 dispatches match pid=None slot=None ([(10, 0), (20, 0)]); averaging them by span \
             name would fuse distinct dispatches. Pass pid=/slot= to select one, or use format_mean_tree()."
        )
    );
    assert_eq!(l3().mean_invocation(Some(99), None), Ok(None));
    assert_eq!(BenchmarkStats::new(1, 0).mean_invocation(None, None), Ok(None));
}
