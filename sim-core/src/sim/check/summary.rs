//! What [`World::check`](crate::World::check) is asked and what it answers: its options, the
//! findings merged over its runs, and the findings a deadlock report stands for. The runs
//! themselves are the host's (`World::check` in `world/run.rs`); this module knows no `World`.

use super::finding::{Finding, FindingKind, FindingSite};
use crate::base::deadlock::{BlockedWait, DeadlockReport, StuckTask};
use crate::base::livelock::{LivelockReport, SpinningPoll};
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
    let mut parts: Vec<String> = waits.iter().map(|w| blocked_wait_part(w)).collect();
    parts.extend(d.stuck.iter().map(stuck_task_part));
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

/// A blocked wait as a deadlock or livelock finding names it: where, what it waits for, and
/// what the cell holds.
fn blocked_wait_part(w: &BlockedWait) -> String {
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
}

/// A stuck task as a deadlock or livelock finding names it.
fn stuck_task_part(s: &StuckTask) -> String {
    format!("rank {} task `{}` {}", s.chip, s.task, s.reason)
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

/// The findings of a livelock: one naming every spinning poll (its cell, value and condition,
/// and the hint its history gives) and the blocked waits beside them.
pub fn livelock_findings(l: &LivelockReport) -> Vec<Finding> {
    let mut parts: Vec<String> = l
        .polls
        .iter()
        .map(|p| {
            let needs = p.cond.map_or_else(String::new, |c| format!(" for {} {}", c.symbol(), c.expected()));
            format!(
                "rank {} block {} (task `{}`) polls `{}{:?}`{needs} but it holds {} ({})",
                p.chip,
                p.block,
                p.task,
                p.buffer,
                p.coords,
                p.current,
                p.hint()
            )
        })
        .collect();
    let waits: Vec<&BlockedWait> = l.waits.iter().chain(&l.deferred).collect();
    parts.extend(waits.iter().map(|w| blocked_wait_part(w)));
    parts.extend(l.stuck.iter().map(stuck_task_part));
    let rank = l.polls.first().map_or(0, |p| p.chip);
    let mut sites: Vec<FindingSite> = l.polls.iter().map(poll_site).collect();
    sites.extend(waits.iter().map(|w| wait_site(w)));
    vec![Finding {
        kind: FindingKind::Livelock,
        time: l.since,
        rank,
        message: format!("every running core spins and nothing can change what it polls: {}", parts.join("; ")),
        sites,
        count: 1,
        seed: None,
    }]
}

fn poll_site(p: &SpinningPoll) -> FindingSite {
    let op = match p.cond {
        Some(c) => format!("{} {} {}", p.op, c.symbol(), c.expected()),
        None => p.op.clone(),
    };
    FindingSite {
        rank: p.chip,
        block: p.block,
        task: p.task.clone(),
        dispatch: p.dispatch.clone(),
        op,
        target: format!("{}{:?}", p.buffer, p.coords),
        time: p.since,
        location: p.location.clone(),
    }
}
