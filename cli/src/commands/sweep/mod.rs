//! `ranksim sweep`: an nccl-tests style bandwidth sweep of one or more collectives (and, for
//! allreduce, algorithms) over message sizes, with JSON, SVG, \[STRACE\] and Chrome trace
//! outputs and CI gates on wrong elements and average bus bandwidth.
//!
//! Without `--mode` the sweep is the main job: PyPTO's builtin kernel next to the best
//! HCCL-class algorithm the machine supports, each series with a note on what it models and
//! the machine's bus-bandwidth bound.

mod flags;
mod output;
pub(crate) mod plan;
mod run;

pub use flags::{SeriesFlags, SweepArgs, SweepFlags};
use output::{HCCL_NOTE, hccl_costs_note, sweep_config, trust_line};
pub use plan::{
    Combo, DEFAULT_RUN_WORK, Fitted, cap_default_work, combos, fit_sizes, modes_of, one_rank_error, plan_combos,
};
use plan::{checked_ranks, checked_sizes, combo_label, distinct_sizes, flag_warnings, has_elements, spec};
pub use run::{FailedRowFn, MeasureFn, SeriesPlan, SweepRun};

use super::CmdResult;
use crate::processes::{Place, one_each, same_everywhere};
use crate::sweep::{failed_row, mode_note, run_point_watched};
use collectives::Kind;
use ranksim::Config;
use ranksim::formats::{self, ResultRow};
use ranksim::measure::busbw_bound;
use sim_core::Progress;
use std::io::Write;

/// Runs the sweep, printing the table to `out` and a progress bar to stderr when stdout and stderr are terminals.
pub fn sweep(out: &mut dyn Write, a: &SweepArgs) -> CmdResult {
    let cfg = Config::load_or_default(a.config.as_deref()).map_err(|e| e.to_string())?;
    let ranks = checked_ranks(a, &cfg)?;
    let all_sizes = checked_sizes(a)?;
    let (combos, skipped) = plan_combos(a, &cfg, ranks)?;
    for combo in &combos {
        let spec = spec(a, combo, ranks);
        spec.validate("-e", a.max_bytes, cfg.machine.ranks)?;
        if !all_sizes.iter().any(|&s| has_elements(&spec, s)) {
            return Err(format!(
                "{}: no size from -b {} to -e {} gives an element per rank on {ranks} ranks ({}-byte {}); raise -e",
                combo_label(a, combo, ranks),
                a.min_bytes,
                a.max_bytes,
                a.dtype.size(),
                a.dtype
            ));
        }
    }
    // Memory: every size of every series is estimated before anything runs.
    let mut skipped = skipped;
    let mut planned = Vec::new();
    for combo in &combos {
        let spec = spec(a, combo, ranks);
        // A barrier moves no payload: every size would be the same size-0 row.
        let capped: Vec<u64> = all_sizes.iter().copied().filter(|&s| combo.max_bytes.is_none_or(|m| s <= m)).collect();
        let sizes: &[u64] = if spec.call.kind == Kind::Barrier { &all_sizes[..1] } else { &capped };
        let todo = distinct_sizes(&spec, sizes);
        let fitted = fit_sizes(a, &todo, &|s| crate::sweep::estimate(&cfg, &spec, s), &|s, e, l| {
            crate::sweep::memory_refusal(&cfg, &spec, s, e, l)
        })?;
        let fitted = if a.builtin_max_bytes.is_some() {
            cap_default_work(fitted, &|s| crate::sweep::work(&cfg, &spec, s))?
        } else {
            fitted
        };
        match fitted.left_out {
            Some((_, why)) if fitted.sizes.is_empty() => {
                skipped.push(format!("{} skipped: {why}", combo_label(a, combo, ranks)))
            }
            _ => planned.push((combo.clone(), fitted)),
        }
    }
    if planned.is_empty() {
        return Err(format!("nothing to sweep: {}", skipped.join("; ")));
    }
    let combos: Vec<Combo> = planned.iter().map(|(c, _)| c.clone()).collect();
    let mut run = SweepRun::new(combos.len() > 1, &cfg);
    for w in skipped.into_iter().chain(flag_warnings(a, &combos, ranks)) {
        run.warn(out, w)?;
    }
    for (combo, fitted) in planned {
        let combo = &combo;
        let spec = spec(a, combo, ranks);
        let lbl = combo_label(a, combo, ranks);
        let bound = busbw_bound(&cfg, ranks, Some(spec.call.kind)).map_err(|e| e.to_string())?;
        let note = if combo.auto { HCCL_NOTE.to_string() } else { mode_note(&spec) };
        let mut notes = vec![format!("{lbl}: {note}")];
        let reports_bound = spec.call.kind != Kind::Barrier;
        if reports_bound {
            notes.push(format!("bound: {}", bound.line()));
        }
        if let Some(n) = hccl_costs_note(&cfg, &spec) {
            notes.push(format!("{lbl}: {n}"));
        }
        if spec.call.kind == Kind::Barrier && all_sizes.len() > 1 {
            notes.push("barrier moves no payload: one row, not one per size".to_string());
        }
        if let Some(m) = combo.max_bytes {
            notes.push(format!(
                "{lbl}: up to {} in the default run (one block: its time grows linearly with the size); \
                 give -e for larger sizes",
                formats::size_label(m)
            ));
        }
        notes.extend(fitted.notes(&lbl));
        let mut config = sweep_config(a, &cfg, &spec, combo.max_bytes.unwrap_or(a.max_bytes));
        if combo.auto {
            config.mode = "hccl".into();
        }
        let plan = SeriesPlan {
            config,
            label: lbl,
            notes,
            threads: fitted.threads,
            sizes: fitted.sizes,
            bound: reports_bound.then_some(bound.gbps).filter(|b| b.is_finite()),
            trust: Some(trust_line(&cfg, &spec)),
        };
        let auto = combo.auto;
        let measure = |size: u64, trace: bool, progress: Option<&Progress>| {
            if !auto {
                return run_point_watched(&cfg, &spec, size, trace, progress);
            }
            let (s, algorithm) = spec.hccl_pick(size);
            let point = run_point_watched(&cfg, &s, size, trace, progress)?;
            Ok(point.map(|mut p| {
                p.row.algorithm = Some(algorithm);
                p
            }))
        };
        let failed = |size: u64, why: String| {
            let (s, algorithm) = if auto { spec.hccl_pick(size) } else { (spec.clone(), String::new()) };
            failed_row(&s, size, why).map(|r| ResultRow { algorithm: auto.then_some(algorithm), ..r })
        };
        run.series(out, a, plan, &measure, &failed)?;
    }
    run.finish(out, a, ranks)
}

/// A sweep's arguments for a run over `place = (rank, size)` processes: one partition each,
/// sizes one after another (every process takes part in every run), and the JSON, STRACE and
/// plot written by the first process only. Nothing that changes a run may differ between the
/// processes (they would wait for each other forever): `--trace`, which asks for a traced run,
/// stays on every process, and only the first writes the file.
pub fn sweep_args(mut a: SweepArgs, place: Place) -> Result<SweepArgs, String> {
    let Some((rank, size)) = place else { return Ok(a) };
    a.partitions = one_each(a.partitions, size)?;
    a.processes = true;
    a.jobs = Some(1);
    a.budgets.max_memory = same_everywhere(a.budgets.max_memory);
    if rank > 0 {
        (a.json, a.plot, a.strace, a.no_trace_file) = (None, None, None, true);
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use collectives::Path;
    use ranksim::measure::memory::MemoryLimit;
    use sim_core::{DType, MemoryEstimate};
    use std::path::PathBuf;

    #[test]
    fn a_sweep_over_processes_has_one_partition_each_and_only_the_first_writes_files() {
        let mut a = SweepArgs::new(None);
        (a.json, a.trace) = (Some("r.json".into()), Some("t.json".into()));
        let first = sweep_args(a.clone(), Some((0, 3))).unwrap();
        assert_eq!((first.partitions, first.processes, first.jobs), (3, true, Some(1)));
        assert!(first.json.is_some() && !first.no_trace_file);
        let third = sweep_args(a.clone(), Some((2, 3))).unwrap();
        assert!(third.json.is_none());
        assert!(third.trace.is_some() && third.no_trace_file, "every process traces, the first writes the file");
        assert_eq!(sweep_args(a.clone(), None).unwrap().partitions, 1, "alone: unchanged");
        a.partitions = 2;
        assert!(sweep_args(a, Some((0, 3))).unwrap_err().contains("one partition per process (3)"));
    }

    /// Processes decide alike: a given --max-memory holds on every one, the memory each host
    /// happens to have available is not a limit (alone, it is).
    #[test]
    fn processes_share_a_given_memory_limit_and_not_what_each_host_has() {
        let mut a = SweepArgs::new(None);
        a.budgets.max_memory = Some(MemoryLimit::Available(8 << 30));
        assert_eq!(sweep_args(a.clone(), Some((1, 2))).unwrap().budgets.max_memory, None);
        assert_eq!(sweep_args(a.clone(), None).unwrap().budgets.max_memory, Some(MemoryLimit::Available(8 << 30)));
        a.budgets.max_memory = Some(MemoryLimit::Given(4 << 30));
        assert_eq!(sweep_args(a, Some((0, 2))).unwrap().budgets.max_memory, Some(MemoryLimit::Given(4 << 30)));
    }

    #[test]
    fn new_takes_the_command_lines_defaults() {
        let a = SweepArgs::new(Some("ring8".into()));
        assert_eq!(a.config, Some(PathBuf::from("ring8")));
        assert_eq!(a.collectives, [Kind::AllReduce]);
        assert!(a.modes.is_none() && a.path == Path::Host && a.dtype == DType::F32);
        assert_eq!((a.min_bytes, a.max_bytes, a.builtin_max_bytes), (1 << 10, 16 << 20, Some(4 << 20)));
        assert_eq!((a.factor, a.iters, a.warmup), (2.0, 1, 0));
        assert!(a.op.is_none() && a.root.is_none() && a.ranks.is_none() && a.core_num.is_none());
        assert!(a.json.is_none() && a.plot.is_none() && a.strace.is_none() && a.trace.is_none());
        assert!(a.min_busbw.is_none() && a.jitter.is_none() && a.jobs.is_none());
        assert!(!a.no_data && !a.stats);
        assert_eq!((a.partitions, a.processes), (1, false));
    }

    /// A run split in N takes N host threads: without -j a sweep runs fewer sizes at once
    /// (never none); -j is taken as given when its runs fit.
    #[test]
    fn split_runs_leave_host_threads_to_their_partitions() {
        let mut a = SweepArgs::new(None);
        a.budgets.max_memory = None;
        let threads = |a: &SweepArgs| fit_sizes(a, &[1024], &|_| Ok(gib(0)), &|_, _, _| String::new()).unwrap().threads;
        let all = threads(&a);
        a.partitions = 2;
        assert_eq!(threads(&a), (all / 2).max(1));
        a.partitions = 1 << 10;
        assert_eq!(threads(&a), 1);
        a.jobs = Some(3);
        assert_eq!(threads(&a), 3);
    }

    fn gib(n: u64) -> Option<MemoryEstimate> {
        let mut e = MemoryEstimate::new();
        e.add("payload", n << 30);
        Some(e)
    }

    /// Sizes whose estimate exceeds the limit: refused when -e asked for them, left out of the
    /// default run (with the first one's refusal); -j runs only as many sizes at once as fit.
    #[test]
    fn sizes_fit_the_memory_limit_or_are_refused() {
        let mut a = SweepArgs::new(None);
        a.budgets.max_memory = Some(MemoryLimit::Given(10 << 30));
        a.jobs = Some(4);
        // 1 KiB holds 1 GiB, 2 KiB 4 GiB, 4 KiB 16 GiB, 8 KiB 64 GiB.
        let est = |s: u64| Ok(gib((s / 1024) * (s / 1024)));
        let refusal = |s: u64, e: &MemoryEstimate, l: MemoryLimit| format!("{s} needs {} > {}", e.total(), l.bytes());
        let sizes = [1024, 2048, 4096, 8192];
        let f = fit_sizes(&a, &sizes, &est, &refusal).unwrap();
        assert_eq!(f.sizes, [1024, 2048]);
        assert_eq!(f.left_out, Some((4096, format!("4096 needs {} > {}", 16u64 << 30, 10u64 << 30))));
        // Two runs of 4 GiB fit in 10 GiB, not four.
        assert_eq!((f.threads, f.lowered_jobs), (2, Some(4)));
        let notes = f.notes("x");
        assert!(
            notes[0].starts_with("x: up to 2K in the default run (give -e 4K to ask for larger sizes): 4096 needs")
        );
        assert_eq!(notes[1], "x: -j 4 lowered to 2: more runs at once would not fit in memory");
        a.builtin_max_bytes = None; // -e given
        assert_eq!(
            fit_sizes(&a, &sizes, &est, &refusal).unwrap_err(),
            format!("4096 needs {} > {}", 16u64 << 30, 10u64 << 30)
        );
        // Nothing fits: the default run leaves every size out.
        a.builtin_max_bytes = Some(4 << 20);
        a.budgets.max_memory = Some(MemoryLimit::Given(1 << 20));
        let f = fit_sizes(&a, &sizes, &est, &refusal).unwrap();
        assert!(f.sizes.is_empty() && f.left_out.as_ref().is_some_and(|(s, _)| *s == 1024));
    }

    /// A default series runs its sizes while their summed work stays within the budget; the
    /// first always runs, even over it; a cut names the first size left out and the sum.
    #[test]
    fn a_default_series_keeps_to_its_work_budget() {
        let fitted = |sizes: &[u64]| Fitted { sizes: sizes.to_vec(), threads: 1, lowered_jobs: None, left_out: None };
        let quarter = DEFAULT_RUN_WORK / 4;
        let f = cap_default_work(fitted(&[1, 2, 4, 8]), &|s| Ok(Some(s * quarter / 2))).unwrap();
        // 1/8 + 1/4 + 1/2 of the budget fit; with 8 (a whole budget) the sum is 15/8 of it.
        assert_eq!(f.sizes, [1, 2, 4]);
        let (size, why) = f.left_out.unwrap();
        assert_eq!(size, 8);
        assert!(why.contains(&format!("about {} M operations", 15 * DEFAULT_RUN_WORK / 8 / 1_000_000)), "{why}");
        let f = cap_default_work(fitted(&[1, 2]), &|_| Ok(Some(3 * DEFAULT_RUN_WORK))).unwrap();
        assert_eq!((f.sizes, f.left_out.map(|(s, _)| s)), (vec![1], Some(2)));
        let f = cap_default_work(fitted(&[1, 2, 4]), &|_| Ok(None)).unwrap();
        assert_eq!((f.sizes.len(), f.left_out), (3, None));
    }

    /// On what the host has (no --max-memory), a default series keeps to half of it (a
    /// default sweep of cluster1024's allreduce reached 16 MiB, 16.1 GiB estimated against
    /// 20.8 GiB available, and the host's other processes pushed it to the OOM killer), while
    /// sizes asked for with -e may use all of it.
    #[test]
    fn a_default_series_keeps_to_half_of_what_the_host_has() {
        let mut a = SweepArgs::new(None);
        a.budgets.max_memory = Some(MemoryLimit::Available(20 << 30));
        a.jobs = Some(1);
        let est = |s: u64| Ok(gib(s / 1024)); // 1 KiB holds 1 GiB
        let refusal = |s: u64, _: &MemoryEstimate, l: MemoryLimit| format!("{s}: {} of {}", l.bytes(), l.source());
        let sizes = [4096, 8192, 16384];
        let f = fit_sizes(&a, &sizes, &est, &refusal).unwrap();
        assert_eq!(f.sizes, [4096, 8192]);
        let (size, why) = f.left_out.unwrap();
        assert_eq!(size, 16384);
        assert!(why.starts_with(&format!("16384: {} of half of what this host has available", 10u64 << 30)), "{why}");
        a.builtin_max_bytes = None; // -e 16K: the whole of what the host has
        assert_eq!(fit_sizes(&a, &sizes, &est, &refusal).unwrap().sizes, sizes);
        // A given limit is taken whole by a default run too.
        a.builtin_max_bytes = Some(4 << 20);
        a.budgets.max_memory = Some(MemoryLimit::Given(20 << 30));
        assert_eq!(fit_sizes(&a, &sizes, &est, &refusal).unwrap().sizes, sizes);
    }
}
