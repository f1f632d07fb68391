//! Building [`BenchmarkStats`] from grouped invocations with PyPTO's L2 and L3 rules.

use super::names::{DEVICE_SPAN, HOST_SPAN};
use super::numeric::py_max;
use super::span::TraceInvocation;
use super::stats::{Attr, BenchmarkStats};
use std::collections::{BTreeMap, HashMap};

/// Invocations per pid, pids in first-appearance order, each list in `inv` order.
type ByPid = Vec<(u64, Vec<TraceInvocation>)>;

impl BenchmarkStats {
    /// L2 aggregation: take the busiest hid bucket (the register-once callable; ties go to the
    /// bucket seen first), order it by `inv`, drop `warmup` launches, and read each launch's
    /// `chip.run` and `device_wall` durations.
    pub fn from_l2(invocations: Vec<TraceInvocation>, rounds: usize, warmup: usize) -> Self {
        let mut stats = BenchmarkStats::new(rounds, warmup);
        for inv in busiest_bucket(invocations).into_iter().skip(warmup) {
            stats.push_sample(inv);
        }
        stats
    }

    /// L3 aggregation (one pid per rank): only invocations with a depth-0 `chip.run` are
    /// dispatches; pids that never emit a `device_wall` (the host-orch parent) are dropped.
    /// If every rank's count is a positive multiple of `warmup + rounds`, each rank's stream is
    /// cut into that many equal rounds by count, warmup rounds are dropped, and the headline of
    /// round `k` is the max over ranks of the rank's summed dispatches. Otherwise the samples
    /// are pooled per dispatch (`warmup` dropped per rank) and `fallback_flattened` is set.
    pub fn from_l3(invocations: Vec<TraceInvocation>, rounds: usize, warmup: usize) -> Self {
        let mut stats = BenchmarkStats::new(rounds, warmup);
        let by_pid = ranks_with_device_spans(dispatches_by_pid(invocations));
        if by_pid.is_empty() {
            return stats;
        }
        let launches = warmup.checked_add(rounds).filter(|&l| l > 0);
        match launches.filter(|&l| by_pid.iter().all(|(_, invs)| invs.len().is_multiple_of(l))) {
            Some(launches) => stats.fill_grid(by_pid, launches),
            None => stats.fill_pool(by_pid),
        }
        stats
    }

    /// Appends one measured launch as a sample.
    fn push_sample(&mut self, inv: TraceInvocation) {
        self.host_wall_us.push(inv.host_wall_us());
        self.device_wall_us.push(inv.device_wall_us());
        self.invocations.push(inv);
    }

    /// The non-segmentable fallback: every rank's dispatches after its first `warmup`, pooled.
    fn fill_pool(&mut self, by_pid: ByPid) {
        self.fallback_flattened = true;
        for (_, invs) in by_pid {
            for inv in invs.into_iter().skip(self.warmup) {
                self.push_sample(inv);
            }
        }
    }

    /// Cuts each rank's stream into `launches` equal chunks, keeps the measured ones as the
    /// round grid, then derives slot stability and the per-round headline.
    fn fill_grid(&mut self, by_pid: ByPid, launches: usize) {
        self.rounds_dispatches = vec![BTreeMap::new(); self.rounds];
        for (pid, invs) in by_pid {
            let per_round = invs.len() / launches;
            let mut measured = invs.into_iter().skip(self.warmup * per_round);
            for round in &mut self.rounds_dispatches {
                let idxs: Vec<usize> = measured
                    .by_ref()
                    .take(per_round)
                    .map(|inv| {
                        self.invocations.push(inv);
                        self.invocations.len() - 1
                    })
                    .collect();
                round.insert(pid, idxs);
            }
        }
        self.unstable_dispatch_slots = self.has_unstable_slots();
        self.device_wall_us = self.round_max(Attr::Device);
        self.host_wall_us = self.round_max(Attr::Host);
    }

    /// Whether some `(pid, slot)` carried more than one hid across the rounds.
    fn has_unstable_slots(&self) -> bool {
        let mut seen: HashMap<(u64, usize), &str> = HashMap::new();
        self.grid().any(|(_, pid, slot, idx)| {
            let Some(inv) = self.invocations.get(idx) else { return false };
            *seen.entry((pid, slot)).or_insert(inv.hid.as_str()) != inv.hid
        })
    }

    /// Per round, the max over ranks of the rank's summed `attr`.
    fn round_max(&self, attr: Attr) -> Vec<f64> {
        let ranks = self.per_rank_of(attr);
        (0..self.rounds_dispatches.len()).filter_map(|k| py_max(ranks.values().map(|v| v[k]))).collect()
    }
}

/// Buckets invocations by hid (buckets in first-appearance order, each sorted by `inv`) and
/// returns the largest, the first one on a tie.
fn busiest_bucket(invocations: Vec<TraceInvocation>) -> Vec<TraceInvocation> {
    let mut buckets: Vec<Vec<TraceInvocation>> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for inv in invocations {
        let slot = *index.entry(inv.hid.clone()).or_insert_with(|| {
            buckets.push(Vec::new());
            buckets.len() - 1
        });
        buckets[slot].push(inv);
    }
    let mut best: Option<Vec<TraceInvocation>> = None;
    for bucket in buckets {
        if best.as_ref().is_none_or(|b| bucket.len() > b.len()) {
            best = Some(bucket);
        }
    }
    let mut best = best.unwrap_or_default();
    best.sort_by_key(|inv| inv.inv);
    best
}

/// The dispatch invocations (those with a depth-0 `chip.run`) per pid, each pid's in `inv`
/// order, pids in first-appearance order.
fn dispatches_by_pid(invocations: Vec<TraceInvocation>) -> ByPid {
    let mut by_pid: ByPid = Vec::new();
    let mut index: HashMap<u64, usize> = HashMap::new();
    for inv in invocations.into_iter().filter(is_dispatch) {
        let slot = *index.entry(inv.pid).or_insert_with(|| {
            by_pid.push((inv.pid, Vec::new()));
            by_pid.len() - 1
        });
        by_pid[slot].1.push(inv);
    }
    for (_, invs) in &mut by_pid {
        invs.sort_by_key(|inv| inv.inv);
    }
    by_pid
}

/// Whether `inv` is a chip dispatch: it has a `chip.run` span at depth 0.
fn is_dispatch(inv: &TraceInvocation) -> bool {
    inv.spans.iter().any(|s| s.depth == 0 && s.name == HOST_SPAN)
}

/// Drops pids none of whose dispatches has a `device_wall` span (the L3 host-orch parent).
fn ranks_with_device_spans(by_pid: ByPid) -> ByPid {
    by_pid.into_iter().filter(|(_, invs)| invs.iter().any(|inv| inv.span(DEVICE_SPAN).is_some())).collect()
}
