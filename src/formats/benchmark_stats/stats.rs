//! [`BenchmarkStats`]: the aggregated timing of a benchmark, and the views PyPTO derives from
//! it (per dispatch, per rank, per round, and the headline summaries).

use super::error::BenchError;
use super::names::HOST_SPAN;
use super::numeric::{fmean, median, py_max, py_min, py_sum, stdev};
use super::span::TraceInvocation;
use std::collections::BTreeMap;

/// A per-dispatch metric PyPTO's views accept, plus the per-round-only `union`.
///
/// The views take `impl AsRef<str>`, so both `Metric::Device` and `"device"` work; any other
/// string is an error, as in PyPTO.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Metric {
    /// `device_wall` duration.
    Device,
    /// `chip.run` duration.
    Host,
    /// The orch/sched window ([`TraceInvocation::effective_us`]).
    Effective,
    /// Per round only: the cross-rank host-timeline window of the round's `chip.run` spans.
    Union,
}

impl Metric {
    /// The name PyPTO uses for the metric.
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::Device => "device",
            Metric::Host => "host",
            Metric::Effective => "effective",
            Metric::Union => "union",
        }
    }
}

impl AsRef<str> for Metric {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

/// The per-dispatch quantity a metric reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Attr {
    Device,
    Host,
    Effective,
}

impl Attr {
    /// Resolves a per-dispatch metric name, with PyPTO's error for anything else.
    fn resolve(metric: &str, caller: &'static str) -> Result<Attr, BenchError> {
        match metric {
            "device" => Ok(Attr::Device),
            "host" => Ok(Attr::Host),
            "effective" => Ok(Attr::Effective),
            _ => Err(BenchError::InvalidMetric { caller, metric: metric.to_string() }),
        }
    }

    pub(crate) fn of(self, inv: &TraceInvocation) -> f64 {
        match self {
            Attr::Device => inv.device_wall_us(),
            Attr::Host => inv.host_wall_us(),
            Attr::Effective => inv.effective_us(),
        }
    }
}

/// Aggregated per-launch timing, with PyPTO's `BenchmarkStats` semantics.
///
/// L2 runs fill [`device_wall_us`](Self::device_wall_us) / [`host_wall_us`](Self::host_wall_us)
/// with one sample per measured launch. L3 runs additionally keep the `round → pid → [dispatch]`
/// grid in [`rounds_dispatches`](Self::rounds_dispatches), whose entries index
/// [`invocations`](Self::invocations), so the grid and the flat list share dispatches.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BenchmarkStats {
    /// Per-round on-NPU wall (µs). L3: per round, the max over ranks of each rank's summed
    /// dispatches; L3 fallback: the pooled per-dispatch samples.
    pub device_wall_us: Vec<f64>,
    /// Per-round host wall (µs), built like `device_wall_us` from `chip.run`.
    pub host_wall_us: Vec<f64>,
    /// Measured launches requested.
    pub rounds: usize,
    /// Leading launches discarded.
    pub warmup: usize,
    /// Every measured dispatch, flattened (L3: pid by pid, round by round).
    pub invocations: Vec<TraceInvocation>,
    /// L3 only: `rounds_dispatches[k][pid]` = indices into `invocations` of that rank's
    /// dispatches in round `k`, in `inv` order; a dispatch's position is its slot.
    pub rounds_dispatches: Vec<BTreeMap<u64, Vec<usize>>>,
    /// L3 only: a rank's dispatch count was not a multiple of `warmup + rounds`, so the samples
    /// are a pool rather than rounds.
    pub fallback_flattened: bool,
    /// L3 only: some `(pid, slot)` ran different callables in different rounds, so the
    /// per-dispatch views report nothing.
    pub unstable_dispatch_slots: bool,
    /// Readable task names by hid; a hid without a name is shown as itself.
    pub names: BTreeMap<String, String>,
}

impl BenchmarkStats {
    /// Empty stats for a run of `rounds` measured launches after `warmup`.
    pub fn new(rounds: usize, warmup: usize) -> Self {
        BenchmarkStats { rounds, warmup, ..Self::default() }
    }

    /// These stats with `names` as the hid → task name table.
    pub fn with_names(mut self, names: BTreeMap<String, String>) -> Self {
        self.names = names;
        self
    }

    /// The readable name of `inv`'s task, or its hid when none is known.
    pub fn task_name<'a>(&'a self, inv: &'a TraceInvocation) -> &'a str {
        self.names.get(&inv.hid).filter(|n| !n.is_empty()).map_or(inv.hid.as_str(), String::as_str)
    }

    /// Every grid entry as `(round, pid, slot, invocation index)`, in round, pid, slot order.
    pub(crate) fn grid(&self) -> impl Iterator<Item = (usize, u64, usize, usize)> + '_ {
        self.rounds_dispatches.iter().enumerate().flat_map(|(k, ranks)| {
            ranks
                .iter()
                .flat_map(move |(&pid, idxs)| idxs.iter().enumerate().map(move |(slot, &idx)| (k, pid, slot, idx)))
        })
    }

    /// The invocations `idxs` point at, skipping any index outside `invocations`.
    fn dispatches<'a>(&'a self, idxs: &'a [usize]) -> impl Iterator<Item = &'a TraceInvocation> + 'a {
        idxs.iter().filter_map(|&i| self.invocations.get(i))
    }

    /// `{(pid, slot): [dispatch of round 0, round 1, ...]}`. Empty for L2, the fallback, and
    /// when slots are unstable.
    pub fn dispatch_groups(&self) -> BTreeMap<(u64, usize), Vec<&TraceInvocation>> {
        let mut out: BTreeMap<(u64, usize), Vec<&TraceInvocation>> = BTreeMap::new();
        if self.unstable_dispatch_slots {
            return out;
        }
        for (_, pid, slot, idx) in self.grid() {
            if let Some(inv) = self.invocations.get(idx) {
                out.entry((pid, slot)).or_default().push(inv);
            }
        }
        out
    }

    /// `{(pid, slot): task name}` from each slot's first measured round.
    pub fn dispatch_tasks(&self) -> BTreeMap<(u64, usize), String> {
        let groups = self.dispatch_groups();
        groups.into_iter().filter_map(|(key, group)| Some((key, self.task_name(group.first()?).to_string()))).collect()
    }

    /// `{(pid, slot): [metric per round]}` (µs), nothing summed. `metric`: device, host or
    /// effective.
    pub fn per_dispatch(&self, metric: impl AsRef<str>) -> Result<BTreeMap<(u64, usize), Vec<f64>>, BenchError> {
        let attr = Attr::resolve(metric.as_ref(), "per_dispatch()")?;
        Ok(self.per_dispatch_of(attr))
    }

    pub(crate) fn per_dispatch_of(&self, attr: Attr) -> BTreeMap<(u64, usize), Vec<f64>> {
        let groups = self.dispatch_groups();
        groups.into_iter().map(|(key, group)| (key, group.iter().map(|d| attr.of(d)).collect())).collect()
    }

    /// `{pid: [Σ metric over that rank's dispatches in round k]}` (µs): a rank's busy time per
    /// round. Empty for L2 and the fallback. `metric`: device, host or effective.
    pub fn per_rank(&self, metric: impl AsRef<str>) -> Result<BTreeMap<u64, Vec<f64>>, BenchError> {
        let attr = Attr::resolve(metric.as_ref(), "per_rank()")?;
        Ok(self.per_rank_of(attr))
    }

    pub(crate) fn per_rank_of(&self, attr: Attr) -> BTreeMap<u64, Vec<f64>> {
        let n = self.rounds_dispatches.len();
        let mut out: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
        for (k, ranks) in self.rounds_dispatches.iter().enumerate() {
            for (&pid, idxs) in ranks {
                let total = py_sum(self.dispatches(idxs).map(|d| attr.of(d)));
                out.entry(pid).or_insert_with(|| vec![0.0; n])[k] = total;
            }
        }
        out
    }

    /// One value per measured round (µs). `device` / `host`: the stored headline; `effective`:
    /// L3 max over ranks of their summed effective windows, else each launch's window;
    /// `union`: L3 host-timeline window per round, empty otherwise.
    pub fn per_round(&self, metric: impl AsRef<str>) -> Result<Vec<f64>, BenchError> {
        match metric.as_ref() {
            "device" => Ok(self.device_wall_us.clone()),
            "host" => Ok(self.host_wall_us.clone()),
            "effective" => Ok(self.effective_per_round()),
            "union" => Ok(self.union_per_round()),
            other => Err(BenchError::UnknownRoundMetric { metric: other.to_string() }),
        }
    }

    fn effective_per_round(&self) -> Vec<f64> {
        let ranks = self.per_rank_of(Attr::Effective);
        if ranks.is_empty() {
            return self.invocations.iter().map(TraceInvocation::effective_us).collect();
        }
        (0..self.rounds_dispatches.len()).filter_map(|k| py_max(ranks.values().map(|v| v[k]))).collect()
    }

    /// Per round, `(max chip.run end − min chip.run start) / 1000` over all ranks' dispatches;
    /// `0.0` for a round without host spans.
    pub(crate) fn union_per_round(&self) -> Vec<f64> {
        let window = |ranks: &BTreeMap<u64, Vec<usize>>| {
            let hosts = ranks.values().flat_map(|idxs| self.dispatches(idxs)).filter_map(|d| d.span(HOST_SPAN));
            let (mut start, mut end) = (None::<i128>, None::<i128>);
            for s in hosts {
                let (ts, te) = (i128::from(s.ts), i128::from(s.ts) + i128::from(s.dur));
                start = Some(start.map_or(ts, |v| v.min(ts)));
                end = Some(end.map_or(te, |v| v.max(te)));
            }
            match (start, end) {
                (Some(start), Some(end)) => (end - start) as f64 / 1000.0,
                _ => 0.0,
            }
        };
        self.rounds_dispatches.iter().map(window).collect()
    }

    /// The measured device-wall samples (alias of `device_wall_us`).
    pub fn samples(&self) -> &[f64] {
        &self.device_wall_us
    }

    /// Smallest device-wall sample, `0.0` if none.
    pub fn device_us_min(&self) -> f64 {
        py_min(self.device_wall_us.iter().copied()).unwrap_or(0.0)
    }

    /// Median device-wall sample (mean of the middle two for an even count), `0.0` if none.
    pub fn device_us_median(&self) -> f64 {
        median(&self.device_wall_us)
    }

    /// Mean device-wall sample, `0.0` if none.
    pub fn device_us_mean(&self) -> f64 {
        if self.device_wall_us.is_empty() { 0.0 } else { fmean(&self.device_wall_us) }
    }

    /// Largest device-wall sample, `0.0` if none.
    pub fn device_us_max(&self) -> f64 {
        py_max(self.device_wall_us.iter().copied()).unwrap_or(0.0)
    }

    /// Sample standard deviation (`n − 1`) of the device-wall samples, `0.0` below two.
    pub fn device_us_stdev(&self) -> f64 {
        stdev(&self.device_wall_us)
    }

    /// Whether there are samples and every one is zero (no device spans were captured).
    pub fn all_zero_device(&self) -> bool {
        !self.device_wall_us.is_empty() && self.device_wall_us.iter().all(|&x| x == 0.0)
    }
}
