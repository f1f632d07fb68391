//! Tests of the benchmark_stats module. Expected renderings were worked out by hand from PyPTO's
//! formatting rules (and agree with its `bench.py` on the same fixtures).

mod aggregate;
mod numeric;
mod parse;
mod render;
mod roundtrip;
mod tree;
mod write;

use super::*;

const RUNNER: &str = "chip.run.runner_run";

/// A span of process `pid` (thread `pid + 1`).
#[expect(clippy::too_many_arguments, reason = "mirrors the record's fields one to one")]
fn span(pid: u64, inv: i64, hid: &str, depth: u32, name: &str, ts: i64, dur: i64, attrs: &str) -> TraceSpan {
    TraceSpan { pid, tid: pid + 1, inv, hid: hid.into(), depth, name: name.into(), ts, dur, attrs: attrs.into() }
}

/// The spans of one dispatch, device spans first as the runtime emits them after readback:
/// `device_wall` (`dev` ns), `orch` (`dev / 2` from 100), `sched` (`dev − 300` from 200),
/// `runner_run` (host, 100 ns inside `chip.run` at both ends) and `chip.run` (`host_ts`,
/// `host_dur`).
fn dispatch_spans(pid: u64, inv: i64, hid: &str, host_ts: i64, host_dur: i64, dev: i64) -> Vec<TraceSpan> {
    vec![
        span(pid, inv, hid, 2, DEVICE_SPAN, 0, dev, "clk=dev"),
        span(pid, inv, hid, 3, ORCH_SPAN, 100, dev / 2, "clk=dev"),
        span(pid, inv, hid, 3, SCHED_SPAN, 200, dev - 300, "clk=dev"),
        span(pid, inv, hid, 1, RUNNER, host_ts + 100, host_dur - 200, ""),
        span(pid, inv, hid, 0, HOST_SPAN, host_ts, host_dur, &format!("run_id={inv}")),
    ]
}

/// The dispatch of [`dispatch_spans`] as an invocation.
fn dispatch(pid: u64, inv: i64, hid: &str, host_ts: i64, host_dur: i64, dev: i64) -> TraceInvocation {
    TraceInvocation { pid, inv, hid: hid.into(), spans: dispatch_spans(pid, inv, hid, host_ts, host_dur, dev) }
}

/// A host-orch parent's dispatch: `chip.run` only, no device spans.
fn host_only(pid: u64, inv: i64, hid: &str, ts: i64, dur: i64) -> TraceInvocation {
    TraceInvocation { pid, inv, hid: hid.into(), spans: vec![span(pid, inv, hid, 0, HOST_SPAN, ts, dur, "")] }
}

/// L3, 2 ranks (pids 10, 20) × 1 dispatch per round, warmup 1 + rounds 2, hid `aa`; device
/// µs pid 10: 90 | 100, 120, pid 20: 100 | 110, 115; chip.run 150 / 160 µs, pid 20 starting
/// 5 µs later. Also a host-orch parent (pid 5) and a prewarm group (pid 10, inv 0).
fn l3_two_ranks() -> Vec<TraceInvocation> {
    let mut out = vec![TraceInvocation {
        pid: 10,
        inv: 0,
        hid: "77".into(),
        spans: vec![span(10, 0, "77", 0, "chip.prewarm.build", 10, 5, "")],
    }];
    for (i, (d10, d20)) in [(90_000, 100_000), (100_000, 110_000), (120_000, 115_000)].into_iter().enumerate() {
        let inv = i as i64 + 1;
        out.push(dispatch(10, inv, "aa", 1_000_000 * inv, 150_000, d10));
        out.push(dispatch(20, inv, "aa", 1_000_000 * inv + 5_000, 160_000, d20));
        out.push(host_only(5, inv, "ff", 1_000_000 * inv - 1_000, 400_000));
    }
    out
}

/// L3, 2 ranks × 2 dispatches per round (hids `a1`, `b2`), warmup 0 + rounds 2; device µs
/// pid 10: [40, 60], [42, 61]; pid 20: [45, 50], [44, 52]. chip.run of inv `i` starts at
/// `i` ms (+3 µs on pid 20) and lasts 80 µs.
fn l3_two_slots() -> Vec<TraceInvocation> {
    let plan = [(10, [(40_000, 60_000), (42_000, 61_000)]), (20, [(45_000, 50_000), (44_000, 52_000)])];
    let mut out = Vec::new();
    for (pid, rounds) in plan {
        let skew = if pid == 20 { 3_000 } else { 0 };
        for (k, (a, b)) in rounds.into_iter().enumerate() {
            let inv = 2 * k as i64 + 1;
            out.push(dispatch(pid, inv, "a1", 1_000_000 * inv + skew, 80_000, a));
            out.push(dispatch(pid, inv + 1, "b2", 1_000_000 * (inv + 1) + skew, 80_000, b));
        }
    }
    out
}

/// Lines joined by `\n`, for multi-line expectations.
fn lines(parts: &[&str]) -> String {
    parts.join("\n")
}
