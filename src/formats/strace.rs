//! The `[STRACE]` spans of simulated dispatches, as PyPTO's runtime would emit them: one pid
//! per rank, a fresh `inv` per dispatch, `chip.run` (host clock) around `chip.run.runner_run`
//! around the device-clock `chip.run.runner_run.device_wall` and its `orch` / `sched`
//! children. PyPTO's parser (and ranksim's) rebuilds `BenchmarkStats` from them.
//!
//! The host clock is the simulated clock shifted to a fixed monotonic origin, shared by every
//! rank, so the cross-rank union window is meaningful; consecutive runs are laid end to end.

use super::benchmark_stats::{self, DEVICE_SPAN, HOST_SPAN, ORCH_SPAN, SCHED_SPAN, TraceInvocation, TraceSpan};
use crate::config::HostConfig;
use sim_core::{RunReport, SimDuration, SimTime, stats::DispatchRecord};
use std::collections::BTreeMap;

/// The simulated `CLOCK_MONOTONIC` reading of time zero, in ns.
pub const MONO_ORIGIN_NS: u64 = 1_000_000_000_000;
/// The wall-clock reading (ns since the Unix epoch) paired with it in `CLOCK_ANCHOR` lines.
pub const WALL_ORIGIN_NS: u64 = 1_780_000_000_000_000_000;
/// pid of rank 0; rank r is `PID_BASE + r`.
pub const PID_BASE: u64 = 41_000;

/// Nanoseconds of a picosecond count, rounded to nearest.
fn ns(ps: u64) -> i64 {
    i64::try_from(ps.saturating_add(500) / 1000).unwrap_or(i64::MAX)
}

/// A callable's hash: FNV-1a of its name (stable across runs and platforms).
pub fn hid_of(name: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    benchmark_stats::hid_hex(h)
}

/// Collects the dispatches of one or more runs as `[STRACE]` invocations.
#[derive(Clone, Debug)]
pub struct StraceLog {
    bind: SimDuration,
    finalize: SimDuration,
    /// Host-clock offset (ps) of the next run.
    offset: u64,
    next_inv: BTreeMap<u64, i64>,
    invocations: Vec<TraceInvocation>,
    names: BTreeMap<String, String>,
}

impl StraceLog {
    /// An empty log with the host costs of `host`.
    pub fn new(host: &HostConfig) -> StraceLog {
        StraceLog {
            bind: SimDuration::from_ns_f64(host.bind_us * 1000.0),
            finalize: SimDuration::from_ns_f64(host.finalize_us * 1000.0),
            offset: host_pad(host),
            next_inv: BTreeMap::new(),
            invocations: Vec::new(),
            names: BTreeMap::new(),
        }
    }

    /// Adds every dispatch of a run, in each rank's dispatch order.
    pub fn add_run(&mut self, report: &RunReport) {
        let mut ds: Vec<&DispatchRecord> = report.dispatches.iter().collect();
        ds.sort_by_key(|d| (d.chip, d.index));
        for d in ds {
            let inv = self.invocation(d);
            self.invocations.push(inv);
        }
        let end = report.dispatches.iter().map(|d| d.end).max().unwrap_or(SimTime::ZERO);
        // Saturating: past the u64 clock the host timeline stops (configs bound `[host]` so a
        // real sweep never gets there).
        self.offset = self.offset.saturating_add((end + self.finalize + self.bind).as_ps());
    }

    fn invocation(&mut self, d: &DispatchRecord) -> TraceInvocation {
        let pid = PID_BASE + d.chip as u64;
        let inv = {
            let n = self.next_inv.entry(pid).or_insert(1);
            *n += 1;
            *n - 1
        };
        let hid = hid_of(&d.name);
        self.names.insert(hid.clone(), d.name.clone());
        let (dev_start, dev_end) = (d.first_start(), d.end);
        let dev = ns(dev_end.saturating_since(dev_start).as_ps()).max(1);
        let host_start = self.offset.saturating_add(dev_start.as_ps());
        let span = |depth: u32, name: &str, ts: i64, dur: i64, attrs: String| TraceSpan {
            pid,
            tid: pid,
            inv,
            hid: hid.clone(),
            depth,
            name: name.to_string(),
            ts,
            dur,
            attrs,
        };
        let mut spans = Vec::new();
        let last_task_start = d.tasks.iter().map(|t| t.start).max().unwrap_or(dev_start);
        let orch = ns(last_task_start.saturating_since(dev_start).as_ps());
        if orch > 0 {
            spans.push(span(3, ORCH_SPAN, 0, orch, "clk=dev".into()));
        }
        spans.push(span(3, SCHED_SPAN, 0, dev, "clk=dev".into()));
        spans.push(span(2, DEVICE_SPAN, 0, dev, "clk=dev".into()));
        let mono = |ps: u64| (MONO_ORIGIN_NS as i64).saturating_add(ns(ps));
        spans.push(span(1, "chip.run.runner_run", mono(host_start), dev, String::new()));
        let root_start = host_start.saturating_sub(self.bind.as_ps());
        let root_dur = dev.saturating_add(ns(self.bind.as_ps().saturating_add(self.finalize.as_ps())));
        let attrs = format!("run_id={inv} dispatch_id={inv} slot_id=0 generation=1 run_epoch={inv}");
        spans.push(span(0, HOST_SPAN, mono(root_start), root_dur, attrs));
        TraceInvocation { pid, inv, hid, spans }
    }

    /// Every invocation so far.
    pub fn invocations(&self) -> &[TraceInvocation] {
        &self.invocations
    }

    /// hid -> dispatch name, for [`BenchmarkStats::with_names`](super::benchmark_stats::BenchmarkStats::with_names).
    pub fn names(&self) -> &BTreeMap<String, String> {
        &self.names
    }

    /// The log as text: a `CLOCK_ANCHOR` line per pid, then every span line with the host
    /// logger's prefix, ordered by emission time (a dispatch's spans are emitted together when
    /// its `chip.run` closes, children first).
    pub fn text(&self) -> String {
        let mut lines: Vec<(i64, u64, usize, String)> = Vec::new();
        let pids: std::collections::BTreeSet<u64> = self.invocations.iter().map(|i| i.pid).collect();
        let mut out = String::new();
        for pid in pids {
            out.push_str(&benchmark_stats::format_clock_anchor(pid, MONO_ORIGIN_NS, WALL_ORIGIN_NS, pid));
            out.push('\n');
        }
        for inv in &self.invocations {
            let end = inv.root().map_or(0, |r| r.ts + r.dur);
            for (k, s) in inv.spans.iter().enumerate() {
                lines.push((end, s.pid, k, benchmark_stats::format_span_line(s, Some((end.max(0) as u64, s.tid)))));
            }
        }
        lines.sort_by_key(|l| (l.0, l.1, l.2));
        for (_, _, _, l) in lines {
            out.push_str(&l);
            out.push('\n');
        }
        out
    }
}

/// Host time before the first dispatch of a log, so no host timestamp precedes the origin.
fn host_pad(host: &HostConfig) -> u64 {
    SimDuration::from_ns_f64(host.bind_us * 1000.0).as_ps()
}
