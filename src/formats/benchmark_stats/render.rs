//! PyPTO's text renderings of [`BenchmarkStats`], byte for byte: the one-line summary
//! (`Display`), the per-launch span trees, and the mean trees.

use super::error::{BenchError, py_option};
use super::mean::{MeanGroup, SpanSamples, mean_of};
use super::names::{NO_TREE_MSG, STR_MAX_DISPATCHES, UNSTABLE_SLOTS_MSG};
use super::numeric::{fmean, stdev_int};
use super::stats::{Attr, BenchmarkStats};
use std::collections::{BTreeSet, HashMap};
use std::fmt;

/// The spread columns the mean tree shows after each node's mean.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Spread {
    /// `±stdev` (sample standard deviation; `0.0` for a single launch).
    #[default]
    Stdev,
    /// `[min..max]`.
    MinMax,
    /// `±stdev` then `[min..max]`.
    Both,
    /// The mean alone.
    None,
}

impl Spread {
    fn stdev(self) -> bool {
        matches!(self, Spread::Stdev | Spread::Both)
    }

    fn minmax(self) -> bool {
        matches!(self, Spread::MinMax | Spread::Both)
    }

    /// The header's description of a node's columns.
    fn legend(self) -> String {
        let mut legend = String::from("mean");
        if self.stdev() {
            legend.push_str(" ±stdev");
        }
        if self.minmax() {
            legend.push_str(" [min..max]");
        }
        legend
    }
}

impl fmt::Display for BenchmarkStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.device_wall_us.is_empty() {
            return write!(f, "BenchmarkStats(rounds={}: no samples)", self.rounds);
        }
        if self.all_zero_device() {
            return write!(
                f,
                "BenchmarkStats(rounds={}): device_wall_us all 0 — runtime built without SIMPLER_HOST_STRACE or sim \
                 platform (use host_wall_us)",
                self.rounds
            );
        }
        write!(
            f,
            "BenchmarkStats(rounds={}, warmup={}): device_wall_us min={:.1} median={:.1} mean={:.1} max={:.1} \
             stdev={:.1}{}{}",
            self.rounds,
            self.warmup,
            self.device_us_min(),
            self.device_us_median(),
            self.device_us_mean(),
            self.device_us_max(),
            self.device_us_stdev(),
            self.summary_suffix(),
            self.per_dispatch_line()
        )
    }
}

impl BenchmarkStats {
    /// The bracketed note on how the headline was aggregated (L3 grid or fallback pool).
    fn summary_suffix(&self) -> String {
        if !self.rounds_dispatches.is_empty() {
            let ranks: BTreeSet<u64> = self.rounds_dispatches.iter().flat_map(|r| r.keys().copied()).collect();
            let mut suffix = format!(" [L3: {} ranks, per-round max across ranks", ranks.len());
            let union = self.union_per_round();
            if !union.is_empty() {
                suffix.push_str(&format!("; host-union mean={:.1}us", fmean(&union)));
            }
            suffix.push(']');
            return suffix;
        }
        if self.fallback_flattened {
            return " [L3: flattened per-dispatch pool — non-deterministic dispatch shape]".to_string();
        }
        String::new()
    }

    /// A second line with each dispatch's mean device wall, only when some rank dispatches more
    /// than once per round (the case the summed headline hides).
    fn per_dispatch_line(&self) -> String {
        let per_dispatch = self.per_dispatch_of(Attr::Device);
        if per_dispatch.len() <= self.per_rank_of(Attr::Device).len() {
            return String::new();
        }
        let tasks = self.dispatch_tasks();
        let mut cells: Vec<String> = per_dispatch
            .iter()
            .take(STR_MAX_DISPATCHES)
            .map(|(key, vals)| {
                let task = tasks.get(key).map_or("", String::as_str);
                format!("(pid={},slot={},task={task})={:.1}", key.0, key.1, fmean(vals))
            })
            .collect();
        let elided = per_dispatch.len().saturating_sub(STR_MAX_DISPATCHES);
        if elided > 0 {
            cells.push(format!("... +{elided} more"));
        }
        format!("\n  per-dispatch device mean us: {}", cells.join("  "))
    }

    /// The span tree of measured launch `launch`, or of every launch when `None`, each under a
    /// `launch[i] (pid=.. inv=.. hid=..[ round=k slot=s][ task=name]):` header. Durations in µs
    /// when `us`, else ns. An error when `launch` is past the measured launches.
    pub fn format_tree(&self, launch: Option<usize>, us: bool) -> Result<String, BenchError> {
        if self.invocations.is_empty() {
            return Ok(NO_TREE_MSG.to_string());
        }
        let selected: Vec<usize> = match launch {
            None => (0..self.invocations.len()).collect(),
            Some(i) if i < self.invocations.len() => vec![i],
            Some(i) => return Err(BenchError::LaunchOutOfRange { launch: i, len: self.invocations.len() }),
        };
        let coords: HashMap<usize, (usize, usize)> =
            self.grid().map(|(round, _, slot, idx)| (idx, (round, slot))).collect();
        let mut out = Vec::with_capacity(selected.len() * 2);
        for i in selected {
            let inv = &self.invocations[i];
            let mut tag = coords.get(&i).map_or(String::new(), |(k, s)| format!(" round={k} slot={s}"));
            let name = self.task_name(inv);
            if name != inv.hid {
                tag.push_str(&format!(" task={name}"));
            }
            out.push(format!("launch[{i}] (pid={} inv={} hid={}{tag}):", inv.pid, inv.inv, inv.hid));
            out.push(inv.format_tree(us));
        }
        Ok(out.join("\n"))
    }

    /// One tree per dispatch (`(pid, slot)`; a single unlabeled tree for L2 / fallback) whose
    /// nodes show the mean duration across the measured launches, followed by the `spread`
    /// columns. `pid` / `slot` narrow the L3 dispatches. Values in µs when `us`, else ns.
    pub fn format_mean_tree(&self, us: bool, spread: Spread, pid: Option<u64>, slot: Option<usize>) -> String {
        let groups = self.mean_tree_groups(pid, slot);
        if groups.is_empty() {
            return self.no_mean_tree_message(pid, slot);
        }
        let mut out: Vec<String> = Vec::new();
        for group in &groups {
            let Some(tree) = self.mean_tree(group, us, spread) else { continue };
            if !out.is_empty() {
                out.push(String::new());
            }
            out.push(tree);
        }
        out.join("\n")
    }

    /// Why there is no mean tree to show.
    fn no_mean_tree_message(&self, pid: Option<u64>, slot: Option<usize>) -> String {
        if self.unstable_dispatch_slots {
            UNSTABLE_SLOTS_MSG.to_string()
        } else if !self.invocations.is_empty() {
            format!("BenchmarkStats: no dispatch matches pid={} slot={}", py_option(&pid), py_option(&slot))
        } else {
            NO_TREE_MSG.to_string()
        }
    }

    /// The header line and mean tree of one group.
    fn mean_tree(&self, group: &MeanGroup<'_>, us: bool, spread: Spread) -> Option<String> {
        let mean = mean_of(&group.invocations)?;
        let samples = SpanSamples::collect(&group.invocations);
        let prefix = group.label.as_ref().map_or(String::new(), |label| format!("dispatch {label} — "));
        let header = format!(
            "{prefix}mean of {} launches (warmup {} excluded); each node: {}:",
            group.invocations.len(),
            self.warmup,
            spread.legend()
        );
        let tree = mean.format_tree_with(|span| mean_columns(samples.durations(&span.name), us, spread));
        Some(format!("{header}\n{tree}"))
    }
}

/// The value columns of one mean-tree node from every duration recorded under its name.
fn mean_columns(durs: &[i64], us: bool, spread: Spread) -> Vec<String> {
    let (scale, unit) = if us { (1000.0, "us") } else { (1.0, "ns") };
    let floats: Vec<f64> = durs.iter().map(|&d| d as f64).collect();
    let mean = if floats.is_empty() { 0.0 } else { fmean(&floats) };
    let mut cols = vec![format!("{:.1}{unit}", mean / scale)];
    if spread.stdev() {
        cols.push(format!("±{:.1}", stdev_int(durs) / scale));
    }
    if spread.minmax() {
        let min = durs.iter().min().map_or(0.0, |&d| d as f64);
        let max = durs.iter().max().map_or(0.0, |&d| d as f64);
        cols.push(format!("[{:.1}..{:.1}]", min / scale, max / scale));
    }
    cols
}
