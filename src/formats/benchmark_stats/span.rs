//! One `[STRACE]` span and one dispatch's spans (a `(pid, inv)` group), with the per-dispatch
//! metrics PyPTO reads from them.

use super::names::{DEVICE_SPAN, HOST_SPAN, ORCH_SPAN, SCHED_SPAN};
use std::collections::BTreeMap;

/// One `[STRACE]` record: a node of a dispatch's call tree.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TraceSpan {
    /// Emitting process; one per rank.
    pub pid: u64,
    /// Emitting thread (`gettid()`).
    pub tid: u64,
    /// Process-wide invocation id; `(pid, inv)` groups one dispatch. `-1` marks a mean.
    pub inv: i64,
    /// Callable hash, lowercase hex without `0x`.
    pub hid: String,
    /// Tree depth (0 = `chip.run`).
    pub depth: u32,
    /// Dotted span name, decoded.
    pub name: String,
    /// Start in ns: host monotonic clock, or the dispatch's device-clock origin for device spans.
    pub ts: i64,
    /// Duration in ns.
    pub dur: i64,
    /// The record's trailing `k=v` attributes; device spans carry `clk=dev`.
    pub attrs: String,
}

impl TraceSpan {
    /// Whether this is a device-clock span (`clk=dev` in its attributes).
    pub fn is_device(&self) -> bool {
        self.attrs.contains("clk=dev")
    }

    /// Duration in microseconds.
    pub fn dur_us(&self) -> f64 {
        self.dur as f64 / 1000.0
    }
}

/// Every span of one dispatch (one `(pid, inv)` group), in emission order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceInvocation {
    /// The process id (one per rank).
    pub pid: u64,
    /// Invocation id; `-1` for a synthetic mean.
    pub inv: i64,
    /// Callable hash of the dispatch (its first span's `hid`).
    pub hid: String,
    /// Its spans.
    pub spans: Vec<TraceSpan>,
}

impl TraceInvocation {
    /// The first depth-0 span (normally `chip.run`).
    pub fn root(&self) -> Option<&TraceSpan> {
        self.spans.iter().find(|s| s.depth == 0)
    }

    /// The first span named `name`; a repeated name always resolves to its first record.
    pub fn span(&self, name: &str) -> Option<&TraceSpan> {
        self.spans.iter().find(|s| s.name == name)
    }

    /// Each distinct span name mapped to its first-seen span.
    pub fn by_name(&self) -> BTreeMap<&str, &TraceSpan> {
        let mut map = BTreeMap::new();
        for s in &self.spans {
            map.entry(s.name.as_str()).or_insert(s);
        }
        map
    }

    /// The dispatch's task identity: its callable hash.
    pub fn task(&self) -> &str {
        &self.hid
    }

    /// On-NPU wall (µs) of the `device_wall` span, `0.0` if absent.
    pub fn device_wall_us(&self) -> f64 {
        self.span(DEVICE_SPAN).map_or(0.0, TraceSpan::dur_us)
    }

    /// Host wall (µs) of the `chip.run` span, `0.0` if absent.
    pub fn host_wall_us(&self) -> f64 {
        self.span(HOST_SPAN).map_or(0.0, TraceSpan::dur_us)
    }

    /// The "effective" window (µs): from the earliest start to the latest end of the device
    /// `orch` / `sched` spans, which share the dispatch's device-clock origin. `0.0` if neither.
    pub fn effective_us(&self) -> f64 {
        let spans: Vec<&TraceSpan> = [ORCH_SPAN, SCHED_SPAN].iter().filter_map(|n| self.span(n)).collect();
        let start = spans.iter().map(|s| i128::from(s.ts)).min();
        let end = spans.iter().map(|s| i128::from(s.ts) + i128::from(s.dur)).max();
        match (start, end) {
            (Some(start), Some(end)) => (end - start) as f64 / 1000.0,
            _ => 0.0,
        }
    }
}
