//! The sweep's time column: a row's time is the slowest rank's device wall of a timed call,
//! averaged over the timed calls, warmup calls excluded, and a timing-only run gives the same
//! times as one with payload.

use ranksim::Config;
use ranksim::collectives::{Call, Kind, Mode};
use ranksim::measure::{Measure, time_per_call};
use ranksim::prelude::*;
use ranksim_cli::sweep::{SweepSpec, run_calls, run_point};

fn spec(kind: Kind, mode: Mode, iters: u32, warmup: u32, timing_only: bool) -> SweepSpec {
    let call = Call::new(kind, 4).with_mode(mode).with_core_num(4);
    SweepSpec::new(call).with_iters(iters).with_warmup(warmup).with_timing_only(timing_only)
}

/// Per call index, the slowest rank's device wall in us (its first task's start to the
/// dispatch's end), read off the dispatch records.
fn walls(r: &RunReport, ranks: usize, calls: usize) -> Vec<f64> {
    (0..calls)
        .map(|i| {
            (0..ranks)
                .flat_map(|c| r.of_chip(c).filter(move |d| d.index == i))
                .map(|d| {
                    let first = d.tasks.iter().map(|t| t.start).min().expect("a task");
                    (d.end.as_ps() - first.as_ps()) as f64 / 1e6
                })
                .fold(0.0, f64::max)
        })
        .collect()
}

#[test]
fn a_row_is_the_mean_over_timed_calls_of_the_slowest_ranks_device_wall() {
    let cfg = Config::default_preset();
    // The SDMA allreduce's first call pays the channels' cold start, so calls differ.
    let s = spec(Kind::AllReduce, Mode::SdmaMesh, 2, 1, true);
    let r = run_calls(&cfg, &s, 1 << 20, 3, false).unwrap().unwrap();
    let w = walls(&r, 4, 3);
    assert!(w[0] > w[1] + 50.0, "the cold first call is slower: {w:?}");
    assert_eq!(time_per_call(&r, &Measure { iters: 2, warmup: 1, ..Measure::new(4) }), (w[1] + w[2]) / 2.0);
    assert_eq!(time_per_call(&r, &Measure { iters: 3, ..Measure::new(4) }), (w[0] + w[1] + w[2]) / 3.0);
    // The sweep's row agrees: 1 warmup + 2 timed calls.
    let p = run_point(&cfg, &s, 1 << 20, false).unwrap().unwrap();
    assert_eq!(p.row.time_us, (w[1] + w[2]) / 2.0);
}

#[test]
fn timing_only_runs_give_the_times_of_runs_with_payload() {
    let cfg = Config::default_preset();
    for (kind, mode) in [
        (Kind::AllReduce, Mode::Mesh),
        (Kind::AllReduce, Mode::AivMesh),
        (Kind::AllGather, Mode::SdmaMesh),
        (Kind::ReduceScatter, Mode::Mesh),
        (Kind::AllToAll, Mode::Mesh),
    ] {
        let with = run_point(&cfg, &spec(kind, mode, 1, 0, false), 64 << 10, false).unwrap().unwrap();
        let without = run_point(&cfg, &spec(kind, mode, 1, 0, true), 64 << 10, false).unwrap().unwrap();
        assert_eq!(with.row.nwrong, Some(0), "{kind} {mode}");
        assert_eq!(without.row.nwrong, None, "{kind} {mode}: a timing-only row checks nothing");
        assert_eq!(with.row.time_us, without.row.time_us, "{kind} {mode}");
    }
}
