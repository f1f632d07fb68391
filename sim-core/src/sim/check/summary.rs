//! What [`World::check`](crate::World::check) is asked and what it answers: its options, the
//! findings merged over its runs, and the findings a deadlock report stands for. The runs
//! themselves are the host's (`World::check` in `world/run.rs`); this module knows no `World`.

use super::finding::{Finding, FindingKind, FindingSite};
use crate::base::deadlock::{BlockedWait, DeadlockReport};
use crate::base::time::SimDuration;

/// How [`World::check`](crate::World::check) explores orderings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckOptions {
    /// Jittered reruns after the unperturbed run, with seeds `1..=seeds`.
    pub seeds: u64,
    /// Largest extra delay of each transfer in a jittered run.
    pub op_jitter: SimDuration,
    /// Largest extra delay of each dispatch start in a jittered run.
    pub dispatch_jitter: SimDuration,
}

impl Default for CheckOptions {
    /// No reruns; jitter up to 500 ns per transfer and 5 us per dispatch when seeds are asked.
    fn default() -> CheckOptions {
        CheckOptions { seeds: 0, op_jitter: SimDuration::from_ns(500), dispatch_jitter: SimDuration::from_us(5) }
    }
}

/// What [`World::check`](crate::World::check) found over all its runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Distinct findings, each with the first seed that showed it (`None`: the unperturbed
    /// run) and its total count.
    pub findings: Vec<Finding>,
    /// Runs made (1 + seeds).
    pub runs: usize,
}

impl CheckReport {
    /// Whether no run found anything.
    pub fn is_clean(&self) -> bool {
        self.findings.is_empty()
    }

    /// Adds the findings of one run.
    pub fn merge(&mut self, found: Vec<Finding>, seed: Option<u64>) {
        for mut f in found {
            match self.findings.iter_mut().find(|g| g.key() == f.key()) {
                Some(g) => g.count += f.count,
                None => {
                    f.seed = seed;
                    self.findings.push(f);
                }
            }
        }
    }
}

/// The findings of a deadlock: the deadlock itself, and each blocked wait whose last write
/// was a Set that can never satisfy it.
pub fn deadlock_findings(d: &DeadlockReport) -> Vec<Finding> {
    let waits: Vec<&BlockedWait> = d.waits.iter().chain(&d.deferred).collect();
    let mut parts: Vec<String> = waits
        .iter()
        .map(|w| {
            format!(
                "rank {} block {} (task `{}`) waits for `{}{:?}` {} {} but it holds {}",
                w.chip,
                w.block,
                w.task,
                w.buffer,
                w.coords,
                w.cond.symbol(),
                w.cond.expected(),
                w.current
            )
        })
        .collect();
    parts.extend(d.stuck.iter().map(|s| format!("rank {} task `{}` {}", s.chip, s.task, s.reason)));
    let rank = waits.first().map_or_else(|| d.stuck.first().map_or(0, |s| s.chip), |w| w.chip);
    let mut out = vec![Finding {
        kind: FindingKind::Deadlock,
        time: d.time,
        rank,
        message: format!("no core can make progress: {}", parts.join("; ")),
        sites: waits.iter().map(|w| wait_site(w)).collect(),
        count: 1,
        seed: None,
    }];
    for w in waits {
        if let Some(last) = w.useless_set() {
            out.push(Finding {
                kind: FindingKind::UselessNotify,
                time: last.time,
                rank: w.chip,
                message: format!(
                    "`notify Set {}` by rank {} (task `{}`) left `{}{:?}` on rank {} at a value the wait {} {} of rank {} \
                     can never accept (PyPTO: `tag=0` with Ge(1)); notify a value >= {}, or use AtomicAdd",
                    last.value,
                    last.chip,
                    last.task,
                    w.buffer,
                    w.coords,
                    w.chip,
                    w.cond.symbol(),
                    w.cond.expected(),
                    w.chip,
                    w.cond.expected()
                ),
                sites: vec![wait_site(w)],
                count: 1,
                seed: None,
            });
        }
    }
    out
}

fn wait_site(w: &BlockedWait) -> FindingSite {
    FindingSite {
        rank: w.chip,
        block: w.block,
        task: w.task.clone(),
        dispatch: w.dispatch.clone(),
        op: format!("wait {} {}", w.cond.symbol(), w.cond.expected()),
        target: format!("{}{:?}", w.buffer, w.coords),
        time: w.since,
        location: w.location.clone(),
    }
}
