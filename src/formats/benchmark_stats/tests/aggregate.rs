//! `from_l2` / `from_l3` and the views derived from the grid.

use super::*;
use std::collections::BTreeMap;

/// `(pid, inv)` of each invocation, in order.
fn ids(stats: &BenchmarkStats) -> Vec<(u64, i64)> {
    stats.invocations.iter().map(|i| (i.pid, i.inv)).collect()
}

#[test]
fn l3_segments_rounds_by_count_and_drops_the_host_orch_parent() {
    let stats = BenchmarkStats::from_l3(l3_two_ranks(), 2, 1);
    assert!(!stats.fallback_flattened && !stats.unstable_dispatch_slots);
    // pid 5 (no device_wall) and the prewarm group (no depth-0 chip.run) are gone; inv 1 is warmup.
    assert_eq!(ids(&stats), [(10, 2), (10, 3), (20, 2), (20, 3)]);
    let grid = vec![BTreeMap::from([(10, vec![0]), (20, vec![2])]), BTreeMap::from([(10, vec![1]), (20, vec![3])])];
    assert_eq!(stats.rounds_dispatches, grid);
    assert_eq!(stats.device_wall_us, [110.0, 120.0]);
    assert_eq!(stats.host_wall_us, [160.0, 160.0]);
    assert_eq!((stats.rounds, stats.warmup), (2, 1));
}

#[test]
fn l3_views() {
    let stats = BenchmarkStats::from_l3(l3_two_ranks(), 2, 1);
    assert_eq!(stats.per_rank("host"), Ok(BTreeMap::from([(10, vec![150.0, 150.0]), (20, vec![160.0, 160.0])])));
    assert_eq!(
        stats.per_dispatch(Metric::Device),
        Ok(BTreeMap::from([((10, 0), vec![100.0, 120.0]), ((20, 0), vec![110.0, 115.0])]))
    );
    // Effective = dev − 200 ns: round maxima 110 − 0.2 and 120 − 0.2.
    assert_eq!(stats.per_round("effective"), Ok(vec![109.8, 119.8]));
    assert_eq!(stats.per_round(Metric::Union), Ok(vec![165.0, 165.0]));
    assert_eq!(stats.per_round("device"), Ok(vec![110.0, 120.0]));
    assert_eq!(stats.per_round("host"), Ok(vec![160.0, 160.0]));
    assert_eq!(stats.dispatch_tasks(), BTreeMap::from([((10, 0), "aa".to_string()), ((20, 0), "aa".to_string())]));
    let groups = stats.dispatch_groups();
    assert_eq!(groups[&(20, 0)].iter().map(|i| i.inv).collect::<Vec<_>>(), [2, 3]);
}

#[test]
fn l3_summary_statistics() {
    let stats = BenchmarkStats::from_l3(l3_two_ranks(), 2, 1);
    assert_eq!(stats.samples(), [110.0, 120.0]);
    assert_eq!(
        (stats.device_us_min(), stats.device_us_median(), stats.device_us_mean(), stats.device_us_max()),
        (110.0, 115.0, 115.0, 120.0)
    );
    assert_eq!(stats.device_us_stdev(), 7.071_067_811_865_475_5);
    assert!(!stats.all_zero_device());
    let empty = BenchmarkStats::new(3, 1);
    assert_eq!((empty.device_us_min(), empty.device_us_median(), empty.device_us_mean()), (0.0, 0.0, 0.0));
    assert_eq!((empty.device_us_max(), empty.device_us_stdev(), empty.all_zero_device()), (0.0, 0.0, false));
}

#[test]
fn l3_sums_a_ranks_dispatches_per_round() {
    let stats = BenchmarkStats::from_l3(l3_two_slots(), 2, 0);
    assert_eq!(stats.per_rank("device"), Ok(BTreeMap::from([(10, vec![100.0, 103.0]), (20, vec![95.0, 96.0])])));
    assert_eq!(stats.device_wall_us, [100.0, 103.0]);
    assert_eq!(stats.rounds_dispatches[1][&20], [6, 7]);
    assert_eq!(stats.dispatch_tasks()[&(10, 1)], "b2");
    let named = stats.with_names(BTreeMap::from([("b2".to_string(), "softmax".to_string())]));
    assert_eq!(named.dispatch_tasks()[&(20, 1)], "softmax");
    assert_eq!(named.task_name(&named.invocations[0]), "a1");
}

#[test]
fn l3_fallback_pools_and_drops_warmup_per_rank() {
    let mut invs: Vec<TraceInvocation> = (1..=4).map(|i| dispatch(10, i, "aa", 10_000 * i, 5_000, 1_000 * i)).collect();
    invs.extend((1..=3).map(|i| dispatch(20, i, "aa", 10_000 * i, 5_000, 1_000 * i + 500)));
    let stats = BenchmarkStats::from_l3(invs, 2, 1);
    assert!(stats.fallback_flattened);
    assert!(stats.rounds_dispatches.is_empty());
    assert_eq!(ids(&stats), [(10, 2), (10, 3), (10, 4), (20, 2), (20, 3)]);
    assert_eq!(stats.device_wall_us, [2.0, 3.0, 4.0, 2.5, 3.5]);
    assert_eq!(stats.host_wall_us, [5.0; 5]);
    assert_eq!(stats.per_rank("device"), Ok(BTreeMap::new()));
    assert_eq!(stats.per_round("union"), Ok(vec![]));
    assert_eq!(stats.per_round("effective"), Ok(vec![1.8, 2.8, 3.8, 2.3, 3.3]));
    assert!(stats.dispatch_groups().is_empty());
}

#[test]
fn l3_zero_launches_is_not_segmentable() {
    let stats = BenchmarkStats::from_l3(vec![dispatch(1, 1, "a", 0, 1_000, 500)], 0, 0);
    assert!(stats.fallback_flattened);
    assert_eq!(stats.device_wall_us, [0.5]);
}

#[test]
fn l3_unstable_slots_hide_the_per_dispatch_views_only() {
    let plan = [("a1", 1_000), ("b2", 2_000), ("b2", 2_500), ("a1", 1_500)];
    let invs = plan.iter().zip(1..).map(|(&(hid, dev), inv)| dispatch(10, inv, hid, 10_000 * inv, 5_000, dev));
    let stats = BenchmarkStats::from_l3(invs.collect(), 2, 0);
    assert!(stats.unstable_dispatch_slots);
    assert!(stats.dispatch_groups().is_empty() && stats.dispatch_tasks().is_empty());
    assert_eq!(stats.per_dispatch("host"), Ok(BTreeMap::new()));
    assert_eq!(stats.per_rank("device"), Ok(BTreeMap::from([(10, vec![3.0, 4.0])])));
    assert_eq!(stats.device_wall_us, [3.0, 4.0]);
    assert_eq!(stats.format_mean_tree(true, Spread::Stdev, None, None), UNSTABLE_SLOTS_MSG);
    assert_eq!(
        UNSTABLE_SLOTS_MSG,
        "BenchmarkStats: per-dispatch view unavailable — a rank's dispatch order varies between rounds, so a slot \
         does not identify one callable. The per-rank / per-round sums are unaffected."
    );
    assert_eq!(stats.mean_invocation(None, None), Ok(None));
    assert_eq!(
        stats.to_string(),
        "BenchmarkStats(rounds=2, warmup=0): device_wall_us min=3.0 median=3.5 mean=3.5 max=4.0 stdev=0.7 \
         [L3: 1 ranks, per-round max across ranks; host-union mean=15.0us]"
    );
}

#[test]
fn l3_without_ranks_is_empty() {
    let stats = BenchmarkStats::from_l3(vec![host_only(5, 1, "ff", 0, 10)], 1, 0);
    assert_eq!(stats, BenchmarkStats::new(1, 0));
    assert_eq!(BenchmarkStats::from_l2(Vec::new(), 1, 0), BenchmarkStats::new(1, 0));
}

#[test]
fn l2_takes_the_busiest_hid_in_inv_order() {
    let invs = vec![
        dispatch(3, 4, "abc", 400, 2_000, 4_000),
        dispatch(3, 1, "def", 100, 2_000, 9_000),
        dispatch(3, 2, "abc", 200, 2_000, 2_000),
        dispatch(3, 3, "abc", 300, 2_000, 3_000),
    ];
    let stats = BenchmarkStats::from_l2(invs, 2, 1);
    assert_eq!(ids(&stats), [(3, 3), (3, 4)]);
    assert_eq!(stats.device_wall_us, [3.0, 4.0]);
    assert_eq!(stats.host_wall_us, [2.0, 2.0]);
    assert!(stats.rounds_dispatches.is_empty() && !stats.fallback_flattened);
    assert_eq!(stats.per_round("effective"), Ok(vec![2.8, 3.8]));
    assert_eq!(stats.per_round("union"), Ok(vec![]));
}

#[test]
fn l2_tie_goes_to_the_first_bucket_seen() {
    let invs = vec![
        dispatch(3, 3, "bbb", 0, 1_000, 7_000),
        dispatch(3, 1, "aaa", 0, 1_000, 1_000),
        dispatch(3, 2, "aaa", 0, 1_000, 2_000),
        dispatch(3, 4, "bbb", 0, 1_000, 8_000),
    ];
    assert_eq!(BenchmarkStats::from_l2(invs, 2, 0).device_wall_us, [7.0, 8.0]);
}

#[test]
fn unknown_metrics_are_errors() {
    let stats = BenchmarkStats::from_l3(l3_two_ranks(), 2, 1);
    let message = |r: Result<(), BenchError>| r.err().map(|e| e.to_string()).unwrap_or_default();
    assert_eq!(
        message(stats.per_dispatch("union").map(drop)),
        "per_dispatch(): metric must be one of ['device', 'effective', 'host'], got 'union'"
    );
    assert_eq!(
        message(stats.per_rank("it's").map(drop)),
        "per_rank(): metric must be one of ['device', 'effective', 'host'], got \"it's\""
    );
    assert_eq!(message(stats.per_round("wall\n").map(drop)), "per_round(): unknown metric 'wall\\n'");
    assert_eq!(stats.per_round("Device"), Err(BenchError::UnknownRoundMetric { metric: "Device".into() }));
}
