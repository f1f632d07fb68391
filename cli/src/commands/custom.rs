//! The command line of a user's collective: [`crate::main_for`] gives a
//! [`Collective`] the `sweep`, `bench` and `check` commands of `ranksim`, with the same flags
//! (those that do not describe a built-in: no `--collective`, `--mode`, `-d`), the same
//! outputs and the same exit codes (0 ok; 1 a wrong element, a finding, a FAILED row, an
//! average busbw below `--min-busbw`; 2 a usage error), so a CI gate for your protocol is
//! one command.

use super::bench::{BenchCalls, BenchRunFlags, Printed, print_bench};
use super::sweep::{SeriesFlags, SeriesPlan, SweepArgs, SweepRun};
use super::{CmdResult, Status};
use ranksim::Config;
use ranksim::formats::{self, parse_size};
use ranksim::measure::memory::MemoryLimit;
use ranksim::measure::{self, Collective, Measure};
use sim_core::{MemoryEstimate, MemoryReport, Progress};
use std::io::Write;
use std::path::PathBuf;

/// The commands a user's collective gets (its name and about are set from the collective).
#[derive(clap::Parser, Debug)]
#[command(args_override_self = true)]
struct CollectiveCli {
    #[command(subcommand)]
    command: Option<CollectiveCommand>,
}

#[derive(clap::Subcommand, Debug)]
enum CollectiveCommand {
    /// Bandwidth sweep over message sizes, printed like nccl-tests (size, count, type, redop,
    /// root, time, algbw, busbw, #wrong), every element checked against your golden. Exits 1
    /// on a wrong element, a size whose run failed (a deadlock, a kernel error: a FAILED row
    /// says why) or an average busbw below --min-busbw. The default command.
    Sweep(Box<SeriesFlags>),
    /// PyPTO's benchmark(): WARMUP + ROUNDS calls, BenchmarkStats from their [STRACE] spans,
    /// a per-rank table and the mean span tree.
    Bench(Box<BenchFlags>),
    /// Run calls under the protocol checker (data races, stale reads, signal misuse,
    /// deadlocks), unperturbed and with seeded jitter; exit 1 when anything is found.
    Check(Box<CheckFlags>),
}

#[derive(clap::Args, Debug)]
struct BenchFlags {
    /// Machine config (TOML) or preset name; default: the embedded a2a3 preset.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Message size in bytes (K/M/G suffixes), as your collective's `count` reads it.
    #[arg(short = 'b', long, default_value = "256K", value_parser = parse_size)]
    size: u64,
    #[command(flatten)]
    calls: BenchCalls,
    /// Ranks taking part, 2 or more (default: all).
    #[arg(short = 'g', long)]
    ranks: Option<usize>,
    #[command(flatten)]
    run: BenchRunFlags,
}

#[derive(clap::Args, Debug)]
struct CheckFlags {
    /// Machine config (TOML) or preset name; default: the embedded a2a3 preset.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Message size in bytes of each checked call (K/M/G suffixes).
    #[arg(short = 'b', long, default_value = "8K", value_parser = parse_size)]
    size: u64,
    /// Calls in a row (two: what one call leaves behind meets the next).
    #[arg(long, default_value_t = 2)]
    calls: usize,
    /// Ranks taking part, 2 or more (default: all).
    #[arg(short = 'g', long)]
    ranks: Option<usize>,
    #[command(flatten)]
    reruns: super::check::RerunFlags,
    /// Write the findings as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write the unperturbed run's Perfetto trace, findings as instant events.
    #[arg(long)]
    trace: Option<PathBuf>,
}

/// Parses `args` (the program name first, as `std::env::args` gives it) and runs the command
/// on `c`, writing to `out`. A usage error (`--help` included) is `Err` with clap's text.
pub fn run<C: Collective + Sync>(
    c: &C,
    args: impl IntoIterator<Item = String>,
    out: &mut dyn Write,
) -> Result<CmdResult, clap::Error> {
    run_over(c, args, out, None)
}

/// [`run`] as process `place = (rank, size)` of a sweep split over processes (`mpirun`).
pub fn run_over<C: Collective + Sync>(
    c: &C,
    args: impl IntoIterator<Item = String>,
    out: &mut dyn Write,
    place: crate::processes::Place,
) -> Result<CmdResult, clap::Error> {
    use clap::{CommandFactory, FromArgMatches};
    let about = format!(
        "{}: your collective on ranksim, with the sweep, bench and check of `ranksim` and their exit codes \
         (0 ok; 1 a wrong element, a finding, a FAILED row or busbw below --min-busbw; 2 a usage error)",
        c.name()
    );
    let matches = CollectiveCli::command().bin_name(c.name()).about(about).try_get_matches_from(args)?;
    let cli = CollectiveCli::from_arg_matches(&matches)?;
    Ok(match cli.command {
        None => super::sweep::sweep_args(SweepArgs::new(None), place).and_then(|a| sweep(out, c, &a)),
        Some(CollectiveCommand::Sweep(s)) => {
            super::sweep::sweep_args(SweepArgs::from(*s), place).and_then(|a| sweep(out, c, &a))
        }
        Some(CollectiveCommand::Bench(b)) => bench(out, c, &b),
        Some(CollectiveCommand::Check(k)) => check(out, c, &k, place),
    })
}

/// The ranks of a command: `-g`, or every rank; one rank, or more than the machine has, is
/// refused as `ranksim sweep` refuses it.
fn ranks(cfg: &Config, asked: Option<usize>) -> Result<usize, String> {
    let n = cfg.machine.ranks;
    match asked.unwrap_or(n) {
        1 => Err(super::sweep::one_rank_error(&cfg.machine.name, n)),
        r if r == 0 || r > n => Err(format!("--ranks {r}: machine `{}` has {n} ranks; use 2..={n}", cfg.machine.name)),
        r => Ok(r),
    }
}

/// `sweep` of a user's collective: one series through the same table, footer, summary and
/// outputs as the built-ins (`SweepRun`).
pub fn sweep<C: Collective + Sync>(out: &mut dyn Write, c: &C, a: &SweepArgs) -> CmdResult {
    let cfg = Config::load_or_default(a.config.as_deref()).map_err(|e| e.to_string())?;
    let ranks = ranks(&cfg, a.ranks)?;
    let sizes = formats::sweep_sizes(a.min_bytes, a.max_bytes, a.factor)
        .map_err(|e| format!("-b {} -e {} -f {}: {e}", a.min_bytes, a.max_bytes, a.factor))?;
    if let Some(min) = a.min_busbw
        && !(min.is_finite() && min >= 0.0)
    {
        return Err(format!("--min-busbw {min}: must be a finite number of GB/s, 0 or more"));
    }
    let m = Measure {
        iters: a.iters,
        warmup: a.warmup,
        jitter: a.jitter,
        timing_only: a.no_data,
        partitions: a.partitions,
        processes: a.processes,
        budgets: a.budgets,
        interrupt: Some(crate::interrupt::flag()),
        ..Measure::new(ranks)
    };
    crate::sweep::validate_measure(&m, "-e", a.max_bytes)?;
    let mut todo: Vec<u64> = Vec::new();
    let mut last = None;
    for &s in &sizes {
        let count = c.count(s, ranks);
        if (count > 0 || c.runs_without_data()) && last != Some(count) {
            todo.push(s);
        }
        last = Some(count);
    }
    if todo.is_empty() {
        return Err(format!(
            "{}: no size from -b {} to -e {} gives an element per rank on {ranks} ranks; raise -e",
            c.name(),
            a.min_bytes,
            a.max_bytes
        ));
    }
    // Memory: every size is estimated before anything runs (refused, or left out of the
    // default run, when it does not fit).
    let estimate = |s: u64| measure::memory::estimate(&cfg, c, &m, s).map_err(|e| e.to_string());
    let refusal = |s: u64, e: &MemoryEstimate, l: MemoryLimit| {
        let what = format!("{} at {} on {ranks} ranks", c.name(), formats::size_label(s));
        let advice = measure::memory::advice(e, l.bytes(), m.timing_only);
        let report =
            MemoryReport { what, estimate: e.clone(), limit: l.bytes(), limit_source: l.source().into(), advice };
        report.to_string()
    };
    let fitted = super::sweep::fit_sizes(a, &todo, &estimate, &refusal)?;
    if let (true, Some((_, why))) = (fitted.sizes.is_empty(), &fitted.left_out) {
        return Err(why.clone());
    }
    let bound = measure::busbw_bound(&cfg, ranks, None).map_err(|e| e.to_string())?;
    let mut notes = vec![
        format!("{}: your collective (measure::Collective), on {ranks} ranks", c.name()),
        format!("bound: {}", bound.line()),
    ];
    notes.extend(fitted.notes(&c.name()));
    let plan = SeriesPlan {
        label: c.name(),
        config: measure::sweep_config(&cfg, c, &m, (a.min_bytes, a.max_bytes, a.factor)),
        notes,
        threads: fitted.threads,
        sizes: fitted.sizes,
        bound: Some(bound.gbps).filter(|b| b.is_finite()),
        trust: Some(format!("no measured table covers {}: its numbers are the model's alone", c.name())),
    };
    let measure = |size: u64, trace: bool, progress: Option<&Progress>| {
        measure::point(&cfg, c, &Measure { trace, progress: progress.cloned(), ..m.clone() }, size)
            .map_err(|e| e.to_string())
    };
    let mut run = SweepRun::new(false, &cfg);
    run.series(out, a, plan, &measure, &|size, why| measure::failed_row(c, &m, size, why))?;
    run.finish(out, a, ranks)
}

/// `bench` of a user's collective.
fn bench<C: Collective>(out: &mut dyn Write, c: &C, b: &BenchFlags) -> CmdResult {
    let cfg = Config::load_or_default(b.config.as_deref()).map_err(|e| e.to_string())?;
    let ranks = ranks(&cfg, b.ranks)?;
    let m = Measure {
        iters: b.calls.rounds,
        warmup: b.calls.warmup,
        jitter: b.run.jitter.jitter(),
        timing_only: b.run.no_data,
        budgets: b.run.budgets.budgets(),
        interrupt: Some(crate::interrupt::flag()),
        ..Measure::new(ranks)
    };
    crate::sweep::validate_measure(&m, "-b", b.size)?;
    let count = c.count(b.size, ranks);
    if count == 0 && !c.runs_without_data() {
        return Err(format!("-b {}: gives no element per rank; use a larger -b", b.size));
    }
    let started = std::time::Instant::now();
    let (rounds, warmup) = (b.calls.rounds as usize, b.calls.warmup as usize);
    let run = measure::run(&cfg, c, &m, b.size, rounds + warmup).map_err(|e| e.to_string())?;
    let bound = measure::busbw_bound(&cfg, ranks, None).map_err(|e| e.to_string())?;
    let bytes = c.bytes(count, ranks);
    let headline = |mean_us: f64| {
        let algbw = formats::algbw_gbps(bytes, mean_us);
        Ok(format!(
            "# {} of {bytes} B on {ranks} ranks: mean device wall {mean_us:.1} us -> algbw {algbw:.2} GB/s, busbw {:.2} GB/s (machine bound {:.2} GB/s)",
            c.name(),
            algbw * c.bus_factor(ranks),
            bound.gbps
        ))
    };
    let printed = Printed { rounds, warmup, strace: b.run.strace.as_deref(), stats: b.run.stats, started };
    let status = print_bench(out, &cfg, &run.report, &printed, &headline)?;
    if run.wrong.count() > 0 {
        writeln!(out, "# FAILED: {} wrong element(s) after {} call(s)", run.wrong.count(), rounds + warmup)
            .map_err(|e| e.to_string())?;
        for x in run.wrong.first() {
            writeln!(out, "#   wrong: {x}").map_err(|e| e.to_string())?;
        }
        return Ok(Status::Failed);
    }
    Ok(status)
}

/// `check` of a user's collective: `--calls` calls under the checker, unperturbed and per seed;
/// as process `place` of a run over processes, one partition each and the files written by
/// the first (every process traces alike).
fn check<C: Collective>(out: &mut dyn Write, c: &C, k: &CheckFlags, place: crate::processes::Place) -> CmdResult {
    let (partitions, processes, first) = match place {
        Some((rank, size)) => (crate::processes::one_each(k.reruns.partitions(), size)?, true, rank == 0),
        None => (k.reruns.partitions(), false, true),
    };
    let io = |e: std::io::Error| e.to_string();
    let cfg = Config::load_or_default(k.config.as_deref()).map_err(|e| e.to_string())?;
    let ranks = ranks(&cfg, k.ranks)?;
    let opts = k.reruns.options();
    super::check::validate_options(&opts)?;
    if k.calls == 0 || k.calls > ranksim::measure::MAX_CALLS as usize {
        return Err(format!("--calls {}: must be in 1..={}", k.calls, ranksim::measure::MAX_CALLS));
    }
    if c.count(k.size, ranks) == 0 && !c.runs_without_data() {
        return Err(format!("-b {}: gives no element per rank; use a larger -b", k.size));
    }
    writeln!(
        out,
        "# ranksim check on `{}`: {}, {} call(s) of {} B on {ranks} ranks, the unperturbed run and {} seed(s) (jitter up to {} per transfer, {} per dispatch)",
        cfg.machine.name,
        c.name(),
        k.calls,
        k.size,
        opts.seeds,
        opts.op_jitter,
        opts.dispatch_jitter
    )
    .map_err(io)?;
    let mut budgets = k.reruns.budgets();
    if processes {
        budgets.max_memory = crate::processes::same_everywhere(budgets.max_memory);
    }
    let m = Measure {
        trace: k.trace.is_some(),
        partitions,
        processes,
        budgets,
        interrupt: Some(crate::interrupt::flag()),
        ..Measure::new(ranks)
    };
    let measure::Checked { report: r, timeline } =
        measure::check(&cfg, c, &m, k.size, k.calls, &opts).map_err(|e| e.to_string())?;
    if let (Some(path), Some(t), true) = (&k.trace, timeline, first) {
        let json = formats::to_chrome_json(&t, cfg.machine.ranks);
        std::fs::write(path, json).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    super::check::print(out, &c.name(), ranks, &r).map_err(io)?;
    writeln!(out, "# {} finding(s)", r.findings.len()).map_err(io)?;
    let found = !r.findings.is_empty();
    if let (Some(path), true) = (&k.json, first) {
        let results = [(c.name(), ranks, r)];
        let text = serde_json::to_string_pretty(&super::check::json(&cfg, &results)).map_err(|e| e.to_string())?;
        std::fs::write(path, text + "\n").map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(if found { Status::Failed } else { Status::Ok })
}
