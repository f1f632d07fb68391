//! The checker's loop, written once: a program run unperturbed, then once per seed with seeded
//! timing jitter, findings merged with the seed that shows them, a deadlock turned into
//! findings, and a run cut short refused. [`World::check`](super::World::check) reruns one
//! world's queued dispatches through it; a host program that sets itself up on a fresh world
//! each time (the library's `measure::check_program`) goes through it too.

use super::run_report::RunReport;
use crate::base::error::{SimError, SimResult};
use crate::sim::check::{CheckOptions, CheckReport, Finding, deadlock_findings, livelock_findings};
use crate::sim::options::Jitter;

/// One run of a checked program, as [`check_runs`] is handed it: how it ended and what the
/// checker found (also when it failed).
#[derive(Debug)]
pub struct CheckRun {
    /// The run's outcome.
    pub outcome: SimResult<RunReport>,
    /// The checker's findings of that run (`World::last_findings`).
    pub findings: Vec<Finding>,
}

/// What [`check_runs`] found: the merged findings, and the unperturbed run's report when that
/// run completed (its timeline, when it was traced, carries the findings as marks).
#[derive(Debug)]
pub struct CheckedRuns {
    /// Findings of every run, each with the first seed that showed it.
    pub report: CheckReport,
    /// The unperturbed run's report, if it completed.
    pub unperturbed: Option<RunReport>,
}

/// Makes `1 + opts.seeds` runs of a program through `run`, which is given the run's jitter
/// (`None` for the first, unperturbed run; seeds `1..=opts.seeds` after it) and must run the
/// program with [`RunOptions::check`](crate::RunOptions::check) on and that jitter.
///
/// A deadlock is a finding, not an error. A kernel error (bad argument, panic) ends the loop
/// with that error. A run the simulator warned about (a builtin that returned at once) checked
/// nothing: it ends the loop with [`SimError::CutShort`], never a clean report.
pub fn check_runs(opts: &CheckOptions, mut run: impl FnMut(Option<Jitter>) -> CheckRun) -> SimResult<CheckedRuns> {
    let mut out = CheckedRuns { report: CheckReport::default(), unperturbed: None };
    for i in 0..=opts.seeds {
        let seed = (i > 0).then_some(i);
        let jitter = seed.map(|seed| Jitter { seed, op: opts.op_jitter, dispatch: opts.dispatch_jitter });
        let CheckRun { outcome, mut findings } = run(jitter);
        match outcome {
            Ok(r) if !r.warnings.is_empty() => return Err(SimError::CutShort { warnings: r.warnings }),
            Ok(r) if seed.is_none() => out.unperturbed = Some(r),
            Ok(_) => {}
            Err(SimError::Deadlock(d)) => findings.extend(deadlock_findings(&d)),
            Err(SimError::Livelock(l)) => findings.extend(livelock_findings(&l)),
            Err(e) => return Err(e),
        }
        out.report.runs += 1;
        out.report.merge(findings, seed);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::program::Dispatch;
    use crate::base::dtype::DType;
    use crate::base::signal::WaitCmp;
    use crate::sim::engine::testkit::{TestChip, TestNet};
    use crate::world::{DomainOptions, World};
    use std::sync::Arc;

    /// A world of 2 whose rank 1 waits for a notify nobody sends when `deadlock`, else both
    /// ranks only read their clock.
    fn world(deadlock: bool) -> World {
        let mut w = World::new(2, Arc::new(TestChip), Box::new(TestNet)).expect("a world of 2");
        let all = w.create_domain("d", &[0, 1], DomainOptions::default()).expect("a domain");
        let sig = w.alloc_window(&all, "sig", DType::I32, &[1, 8]).expect("a window");
        let k = Dispatch::kernel("k", 1, move |core| {
            if deadlock && core.rank() == 1 {
                core.wait(&sig, &[0, 0], 1, WaitCmp::Ge)?;
            }
            Ok(())
        });
        w.dispatch_all(&all, k).expect("a dispatch");
        w
    }

    #[test]
    fn a_checked_run_that_was_warned_about_is_refused_not_reported_clean() {
        let mut w = world(false);
        w.warn("broadcast returned at once: 1 rank");
        let err = w.check(&CheckOptions::default()).expect_err("a warned run checks nothing");
        assert_eq!(err, SimError::CutShort { warnings: vec!["broadcast returned at once: 1 rank".into()] });
        let mut clean = world(false);
        assert_eq!(clean.check(&CheckOptions::default()).map(|r| (r.runs, r.is_clean())), Ok((1, true)));
    }

    #[test]
    fn the_loop_runs_once_unperturbed_then_once_per_seed_and_merges_a_deadlock_with_its_first_seed() {
        let opts = CheckOptions { seeds: 3, ..CheckOptions::default() };
        let mut seen = Vec::new();
        let checked = check_runs(&opts, |jitter| {
            seen.push(jitter.map(|j| j.seed));
            let mut w = world(true);
            w.options_mut().check = true;
            w.options_mut().jitter = jitter;
            let outcome = w.run();
            CheckRun { outcome, findings: w.last_findings().to_vec() }
        })
        .expect("a deadlock is a finding, not an error");
        assert_eq!(seen, vec![None, Some(1), Some(2), Some(3)]);
        assert_eq!(checked.report.runs, 4);
        assert!(checked.unperturbed.is_none(), "the unperturbed run deadlocked");
        let deadlock = checked.report.findings.iter().find(|f| f.kind == crate::sim::check::FindingKind::Deadlock);
        let deadlock = deadlock.expect("the deadlock is reported");
        assert_eq!((deadlock.seed, deadlock.count, deadlock.rank), (None, 4, 1));
    }
}
