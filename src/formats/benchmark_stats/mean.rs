//! Span-wise means of one dispatch's launches, and the dispatch groups the mean views average.

use super::error::BenchError;
use super::numeric::round_mean;
use super::span::{TraceInvocation, TraceSpan};
use super::stats::BenchmarkStats;
use std::collections::HashMap;

/// One set of launches of the same dispatch, with its header label (`None` for L2 / fallback).
pub(crate) struct MeanGroup<'a> {
    pub(crate) label: Option<String>,
    pub(crate) invocations: Vec<&'a TraceInvocation>,
}

/// Per span name (first-seen order): the first span carrying it and every `ts` / `dur` seen.
pub(crate) struct SpanSamples<'a> {
    pub(crate) template: Vec<&'a TraceSpan>,
    pub(crate) ts: Vec<Vec<i64>>,
    pub(crate) dur: Vec<Vec<i64>>,
    index: HashMap<&'a str, usize>,
}

impl<'a> SpanSamples<'a> {
    pub(crate) fn collect(invocations: &[&'a TraceInvocation]) -> Self {
        let mut samples = SpanSamples { template: Vec::new(), ts: Vec::new(), dur: Vec::new(), index: HashMap::new() };
        for s in invocations.iter().flat_map(|inv| &inv.spans) {
            let i = *samples.index.entry(s.name.as_str()).or_insert(samples.template.len());
            if i == samples.template.len() {
                samples.template.push(s);
                samples.ts.push(Vec::new());
                samples.dur.push(Vec::new());
            }
            samples.ts[i].push(s.ts);
            samples.dur[i].push(s.dur);
        }
        samples
    }

    /// Every duration recorded under `name` (empty if none).
    pub(crate) fn durations(&self, name: &str) -> &[i64] {
        self.index.get(name).map_or(&[], |&i| &self.dur[i])
    }
}

/// A synthetic invocation whose spans carry the mean `ts` / `dur` (rounded half to even) of
/// each span name across `invocations`; `depth`, `attrs` and ids come from the first span seen
/// with that name, and `inv` is `-1`. `None` when `invocations` is empty.
pub(crate) fn mean_of(invocations: &[&TraceInvocation]) -> Option<TraceInvocation> {
    let first = invocations.first()?;
    let samples = SpanSamples::collect(invocations);
    let spans = samples
        .template
        .iter()
        .enumerate()
        .map(|(i, t)| TraceSpan {
            inv: -1,
            ts: round_mean(&samples.ts[i]),
            dur: round_mean(&samples.dur[i]),
            ..(*t).clone()
        })
        .collect();
    Some(TraceInvocation { pid: first.pid, inv: -1, hid: first.hid.clone(), spans })
}

impl BenchmarkStats {
    /// The groups the mean views average: one per `(pid, slot)` on an L3 grid (narrowed by
    /// `pid` / `slot`), or one unlabeled group of every launch for L2 / fallback. Empty when
    /// slots are unstable.
    pub(crate) fn mean_tree_groups(&self, pid: Option<u64>, slot: Option<usize>) -> Vec<MeanGroup<'_>> {
        if self.unstable_dispatch_slots {
            return Vec::new();
        }
        let groups = self.dispatch_groups();
        if groups.is_empty() {
            if pid.is_some() || slot.is_some() || self.invocations.is_empty() {
                return Vec::new();
            }
            return vec![MeanGroup { label: None, invocations: self.invocations.iter().collect() }];
        }
        let tasks = self.dispatch_tasks();
        groups
            .into_iter()
            .filter(|((p, s), _)| pid.is_none_or(|want| want == *p) && slot.is_none_or(|want| want == *s))
            .map(|(key, invocations)| {
                let task = tasks.get(&key).map_or("", String::as_str);
                MeanGroup { label: Some(format!("pid={} slot={} task={task}", key.0, key.1)), invocations }
            })
            .collect()
    }

    /// The span-wise mean of one dispatch's measured launches (see [`BenchmarkStats::format_mean_tree`]
    /// for the grouping). `Ok(None)` when nothing matches; an error when the selectors match
    /// several dispatches, since averaging distinct dispatches by span name fuses kernels.
    pub fn mean_invocation(
        &self,
        pid: Option<u64>,
        slot: Option<usize>,
    ) -> Result<Option<TraceInvocation>, BenchError> {
        let groups = self.mean_tree_groups(pid, slot);
        match groups.as_slice() {
            [] => Ok(None),
            [only] => Ok(mean_of(&only.invocations)),
            many => Err(BenchError::AmbiguousDispatch {
                count: many.len(),
                pid,
                slot,
                keys: self.dispatch_groups().into_keys().collect(),
            }),
        }
    }
}
