//! Measuring a collective, yours or a built-in one: the [`Collective`] trait says what a
//! collective is to the measuring machinery (its buffers, inputs, golden, the bytes it moves
//! and its bus-bandwidth factor), and the functions here measure any implementation the way
//! `ranksim sweep`, `bench` and `check` measure the built-in ones, which go through the same
//! path ([`Builtin`] implements [`Collective`] for a [`collectives::Call`]).
//!
//! Every function takes the message size in **bytes** (nccl-tests' convention: the
//! collective's [`Collective::count`] turns it into elements per rank) and a [`Measure`], the
//! one options struct (ranks, calls, jitter, timing-only, trace, progress); errors are
//! [`Error`]s.
//!
//! - [`point`]: one size, nccl-tests' row (time, algbw, busbw, #wrong);
//! - [`sweep`]: sizes, printed as the nccl-tests table, rows returned (for JSON / SVG);
//! - [`bench()`]: PyPTO's `BenchmarkStats` of warmup + rounds calls;
//! - [`check`]: the protocol checker, unperturbed and with seeded jitter, through
//!   [`check_program`], the checker's one loop on fresh worlds (`ranksim check` uses it for every program);
//! - [`run`]: one run of `calls` calls, its [`RunReport`] (with
//!   [`RunReport::device_time`], and with a trace when [`Measure::trace`] asks, which
//!   [`chrome_trace`] turns into Perfetto / chrome://tracing JSON);
//! - [`busbw_bound`]: the machine's bus-bandwidth bound for a number of ranks ([`Bound`]).
//!
//! The guide `docs/your-collective.md` walks through a complete implementation
//! (`examples/my_allgather.rs`); `ranksim_cli::main_for` (the `ranksim-cli` crate) gives it
//! `ranksim`'s command line.

mod bound;
mod builtin;
mod collective;
mod error;
mod host_memory;
pub mod memory;
mod options;

pub use bound::{Bound, Cut, busbw_bound, cut_busbw};
pub use builtin::{Builtin, series_name};
use collective::elements;
pub use collective::{Collective, Wrong};
pub use error::Error;
pub use options::{Budgets, Measure};

use crate::Config;
use crate::formats::benchmark_stats::BenchmarkStats;
use crate::formats::{self, ResultRow, StraceLog, SweepConfig, SweepJson};
use sim_core::{
    CheckRun, DomainOptions, RunReport, SimError, SimResult, World,
    check::{CheckOptions, CheckReport},
    trace::Trace,
};
use std::io::Write;

/// The most timed calls ([`Measure::iters`]) and, separately, warmup calls per size: a bound
/// that keeps a sweep finite and its sums far from any overflow.
pub const MAX_CALLS: u32 = 10_000;

/// The largest message size with payload (1 GiB: every rank holds its buffers in memory).
pub const MAX_SIZE_PAYLOAD: u64 = 1 << 30;

/// The largest message size of a timing-only run: 16 GiB.
pub const MAX_SIZE_TIMING: u64 = 1 << 34;

/// The largest jitter (per transfer or per dispatch start): 1 s, as any configured cost.
pub const MAX_JITTER_PS: u64 = 1_000_000_000_000;

/// A finished run and its comparison with the golden (nothing wrong when it kept no payload).
#[derive(Clone, Debug)]
pub struct Run {
    /// What the run left behind: times, records, warnings, the trace when asked.
    pub report: RunReport,
    /// The elements that differ from the golden.
    pub wrong: Wrong,
}

/// A fresh world of `cfg` set up as `m` says (ranks checked; timing-only, trace, jitter,
/// progress).
fn world(cfg: &Config, m: &Measure) -> Result<World, Error> {
    let mut w = cfg.world()?;
    if m.ranks == 0 || m.ranks > w.size() {
        return Err(Error::Ranks { ranks: m.ranks, machine: w.size() });
    }
    if m.timing_only {
        w.set_timing_only()?;
    }
    w.options_mut().trace = m.trace;
    w.options_mut().jitter = m.jitter;
    w.options_mut().progress = m.progress.clone();
    w.options_mut().partitions = m.partitions;
    w.options_mut().processes = m.processes;
    m.budgets.apply(w.options_mut(), m.interrupt.as_ref());
    Ok(w)
}

/// Runs `calls` calls of `c` at `size_bytes` on a fresh world of `cfg` with `m.ranks` ranks
/// (timing-only when `m.timing_only`, traced when `m.trace`, with `m.jitter`), and compares the
/// result with the golden when the run kept payload. [`Error::NoElement`] when the size gives
/// no element per rank and `c` needs some.
///
/// With [`Budgets::max_memory`] set, a run whose estimate ([`memory::estimate_run`]) exceeds it
/// is refused before it starts ([`SimError::Memory`] in [`Error::Sim`]).
pub fn run<C: Collective>(cfg: &Config, c: &C, m: &Measure, size_bytes: u64, calls: usize) -> Result<Run, Error> {
    if m.budgets.max_memory.is_some()
        && let Some(e) = memory::estimate_run(cfg, c, m, size_bytes, calls)?
    {
        memory::refuse(&what(c, m, size_bytes), &e, m, true)?;
    }
    run_unchecked(cfg, c, m, size_bytes, calls)
}

/// `name at SIZE on N ranks`: what a memory refusal names.
fn what<C: Collective>(c: &C, m: &Measure, size_bytes: u64) -> String {
    format!("{} at {} on {} ranks", c.name(), formats::size_label(size_bytes), m.ranks)
}

/// [`run`] without the memory check (made once for all of [`point`]'s runs).
fn run_unchecked<C: Collective>(cfg: &Config, c: &C, m: &Measure, size_bytes: u64, calls: usize) -> Result<Run, Error> {
    let count = elements(c, m.ranks, size_bytes).ok_or(Error::NoElement { size_bytes })?;
    let mut w = world(cfg, m)?;
    let b = queue_elements(&mut w, c, m.ranks, count, calls)?;
    let report = w.run()?;
    let wrong = if w.has_payload() { c.wrong(&w, &b, count)? } else { Wrong::new() };
    Ok(Run { report, wrong })
}

/// Sets `c` up at `size_bytes` on the first `ranks` chips of `w` (domain `comm_d0`), stages
/// its inputs when `w` keeps payload, and queues `calls` calls, without running them: then
/// [`World::run`] runs them, or [`World::check`] checks them. An error when the size gives no
/// element per rank and `c` needs some.
pub fn queue<C: Collective>(
    w: &mut World,
    c: &C,
    ranks: usize,
    size_bytes: u64,
    calls: usize,
) -> SimResult<C::Buffers> {
    let count =
        elements(c, ranks, size_bytes).ok_or_else(|| SimError::invalid(Error::NoElement { size_bytes }.to_string()))?;
    queue_elements(w, c, ranks, count, calls)
}

/// [`queue`] of `count` elements per rank.
fn queue_elements<C: Collective>(
    w: &mut World,
    c: &C,
    ranks: usize,
    count: usize,
    calls: usize,
) -> SimResult<C::Buffers> {
    let members: Vec<usize> = (0..ranks).collect();
    let dom = w.create_domain("comm_d0", &members, DomainOptions::default())?;
    let b = c.setup(w, &dom, count)?;
    if w.has_payload() {
        c.stage(w, &b, count)?;
    }
    for _ in 0..calls {
        c.call(w, &b)?;
    }
    Ok(b)
}

/// One measured size: the row and the run its time was read from.
#[derive(Clone, Debug)]
pub struct Point {
    /// nccl-tests' row of the size.
    pub row: ResultRow,
    /// The run the time was read from (all calls).
    pub report: RunReport,
}

/// Measures `c` at `size_bytes` as `sweep` does: the elements are checked on a one-call run
/// (unless `m.timing_only`), the time is the mean over the `m.iters` timed calls of the
/// slowest rank's device wall (a timing-only run of `m.warmup` + `m.iters` calls when there is
/// more than one call; traced when `m.trace`). `None` when the size gives no element and the
/// collective needs some.
pub fn point<C: Collective>(cfg: &Config, c: &C, m: &Measure, size_bytes: u64) -> Result<Option<Point>, Error> {
    let n = m.ranks;
    let Some(count) = elements(c, n, size_bytes) else {
        return Ok(None);
    };
    let calls = m.calls();
    if m.budgets.max_memory.is_some()
        && let Some(e) = memory::estimate(cfg, c, m, size_bytes)?
    {
        memory::refuse(&what(c, m, size_bytes), &e, m, true)?;
    }
    let check_run = if m.timing_only {
        None
    } else {
        Some(run_unchecked(cfg, c, &Measure { trace: m.trace && calls == 1, ..m.clone() }, size_bytes, 1)?)
    };
    let timed = match (&check_run, calls) {
        (Some(r), 1) => r.report.clone(),
        _ => run_unchecked(cfg, c, &Measure { timing_only: true, ..m.clone() }, size_bytes, calls)?.report,
    };
    let bytes = c.bytes(count, n);
    let type_name = formats::nccl_type(c.dtype());
    // A builtin that returned at once (more than 16 ranks, a ring whose count is not a
    // multiple of the ranks, a root out of range) warned: its time is not the collective's.
    let mut warnings: Vec<&String> = check_run.iter().flat_map(|r| &r.report.warnings).collect();
    warnings.extend(timed.warnings.iter().filter(|w| !warnings.contains(w)).collect::<Vec<_>>());
    if !warnings.is_empty() {
        let why = format!("cut short: {}", warnings.iter().map(|w| w.as_str()).collect::<Vec<_>>().join("; "));
        let row = ResultRow::failed(bytes, count as u64, type_name, &c.redop(), c.root(), why);
        return Ok(Some(Point { row, report: timed }));
    }
    let time_us = time_per_call(&timed, m);
    let algbw = formats::algbw_gbps(bytes, time_us);
    let wrong = check_run.map(|r| r.wrong);
    let row = ResultRow {
        size: bytes,
        count: count as u64,
        type_name: type_name.to_string(),
        redop: c.redop(),
        root: c.root(),
        time_us,
        algbw_gbps: algbw,
        busbw_gbps: algbw * c.bus_factor(n),
        nwrong: wrong.as_ref().map(Wrong::count),
        series: None,
        algorithm: None,
        failed: None,
        first_wrong: wrong.map(|w| w.first).unwrap_or_default(),
    };
    Ok(Some(Point { row, report: timed }))
}

/// Mean over the timed calls (after `m.warmup`; `m.calls()` in all) of the slowest rank's
/// device wall, in microseconds, over the first `m.ranks` chips of a run's report.
pub fn time_per_call(r: &RunReport, m: &Measure) -> f64 {
    let calls = m.calls();
    let mut per_call = vec![sim_core::SimDuration::ZERO; calls];
    for chip in 0..m.ranks {
        for d in r.of_chip(chip) {
            if d.index < calls {
                per_call[d.index] = per_call[d.index].max(d.device_wall());
            }
        }
    }
    let measured = &per_call[(m.warmup as usize).min(calls - 1)..];
    measured.iter().map(|d| d.as_us_f64()).sum::<f64>() / measured.len() as f64
}

/// Sweeps `c` over `sizes` (bytes), printing the nccl-tests table (header, a row per size, the
/// average-busbw footer) to `out`; returns the rows and whether the sweep failed: an element
/// was wrong, or a size's run failed (a deadlock, a kernel error: a FAILED row with its reason,
/// and the sweep goes on).
pub fn sweep<C: Collective>(
    out: &mut dyn Write,
    cfg: &Config,
    c: &C,
    m: &Measure,
    sizes: &[u64],
) -> Result<(Vec<ResultRow>, bool), Error> {
    writeln!(
        out,
        "# ranksim sweep: collective {} ranks {} machine {} warmup iters: {} iters: {} validation: {}",
        c.name(),
        m.ranks,
        cfg.machine.name,
        m.warmup,
        m.iters,
        if m.timing_only { "off (timing-only)" } else { "on" }
    )?;
    writeln!(out, "{}", formats::header())?;
    let mut rows = Vec::new();
    for &size in sizes {
        let p = match point(cfg, c, m, size) {
            Ok(Some(p)) => p,
            Ok(None) => continue,
            // A run that fails (a deadlock, a kernel error) is a FAILED row; the sweep goes on.
            Err(e) => {
                let e = e.to_string();
                let mut lines = e.lines();
                let Some(row) = failed_row(c, m, size, lines.next().unwrap_or("failed").to_string()) else {
                    continue;
                };
                writeln!(out, "{}", formats::row(&row))?;
                for l in lines.filter(|l| !l.trim().is_empty()) {
                    writeln!(out, "#   {}", l.trim_end())?;
                }
                rows.push(row);
                continue;
            }
        };
        for w in &p.report.warnings {
            writeln!(out, "# warning: {w}")?;
        }
        writeln!(out, "{}", formats::row(&p.row))?;
        for x in &p.row.first_wrong {
            writeln!(out, "#   wrong: {x}")?;
        }
        rows.push(p.row);
    }
    let measured: Vec<f64> = rows.iter().filter(|r| r.failed.is_none()).map(|r| r.busbw_gbps).collect();
    let verdict = formats::Verdict::of(&rows);
    writeln!(out, "{}", formats::footer(formats::average_busbw(&measured), verdict))?;
    Ok((rows, verdict.is_failed()))
}

/// The row of `size_bytes` on `m.ranks` ranks whose run gave no measurement, and why (`None`
/// when the size gives no element and `c` needs some).
pub fn failed_row<C: Collective>(c: &C, m: &Measure, size_bytes: u64, why: String) -> Option<ResultRow> {
    let count = elements(c, m.ranks, size_bytes)?;
    let type_name = formats::nccl_type(c.dtype());
    Some(ResultRow::failed(c.bytes(count, m.ranks), count as u64, type_name, &c.redop(), c.root(), why))
}

/// What a sweep of `c` with `m` over `sizes` (`-b`, `-e`, `-f`, in bytes) ran, as its preamble
/// and JSON say it (`mode` and `path` `-`, `core_num` 0: a collective of yours picks its own
/// blocks).
pub fn sweep_config<C: Collective>(cfg: &Config, c: &C, m: &Measure, sizes: (u64, u64, f64)) -> SweepConfig {
    SweepConfig {
        machine: cfg.machine.name.clone(),
        ranks: m.ranks,
        collective: c.name(),
        mode: "-".into(),
        path: "-".into(),
        core_num: 0,
        dtype: formats::nccl_type(c.dtype()).to_string(),
        redop: c.redop(),
        root: c.root(),
        min_bytes: sizes.0,
        max_bytes: sizes.1,
        step_factor: sizes.2,
        warmup: m.warmup,
        iters: m.iters,
        seed: m.jitter.map_or(0, |j| j.seed),
        jitter_op_ns: m.jitter.map(|j| j.op.as_ps() / 1000),
        jitter_dispatch_ns: m.jitter.map(|j| j.dispatch.as_ps() / 1000),
        timing_only: m.timing_only,
    }
}

/// The rows of [`sweep`] as the JSON `sweep -J` writes (nccl-tests' fields, `first_wrong` on a
/// wrong row, `failed` on a row with no measurement), `sizes` being the sweep's `-b -e -f`.
pub fn sweep_json<C: Collective>(
    cfg: &Config,
    c: &C,
    m: &Measure,
    sizes: (u64, u64, f64),
    rows: &[ResultRow],
) -> String {
    formats::to_json_string(&SweepJson::new(sweep_config(cfg, c, m, sizes), rows.to_vec(), Vec::new()))
}

/// PyPTO's `benchmark()` of `c` at `size_bytes`: `m.warmup + m.iters` calls (one timed call at
/// least) on one run, their `[STRACE]` spans folded with PyPTO's L3 rule.
pub fn bench<C: Collective>(cfg: &Config, c: &C, m: &Measure, size_bytes: u64) -> Result<BenchmarkStats, Error> {
    let (rounds, warmup) = (m.iters.max(1) as usize, m.warmup as usize);
    let r = run(cfg, c, m, size_bytes, rounds + warmup)?;
    let mut log = StraceLog::new(&cfg.host);
    log.add_run(&r.report);
    Ok(BenchmarkStats::from_l3(log.invocations().to_vec(), rounds, warmup).with_names(log.names().clone()))
}

/// What the checker found over a program's runs.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The findings of every run, merged with the seed that shows them.
    pub report: CheckReport,
    /// The unperturbed run's timeline, findings as marks, when [`Measure::trace`] asked for it
    /// and that run completed.
    pub timeline: Option<Trace>,
}

/// Runs `calls` calls of `c` at `size_bytes` on `m.ranks` ranks under the protocol checker,
/// through [`check_program`]: unperturbed, then once per seed `1..=opts.seeds` with jitter, each
/// on a fresh world; deadlocks are findings, and a run cut short (a builtin that returned at
/// once) is an error, never a clean report. With `m.trace`, also the unperturbed run's
/// timeline.
pub fn check<C: Collective>(
    cfg: &Config,
    c: &C,
    m: &Measure,
    size_bytes: u64,
    calls: usize,
    opts: &CheckOptions,
) -> Result<Checked, Error> {
    let count = elements(c, m.ranks, size_bytes).ok_or(Error::NoElement { size_bytes })?;
    let machine = cfg.machine.ranks;
    if m.ranks == 0 || m.ranks > machine {
        return Err(Error::Ranks { ranks: m.ranks, machine });
    }
    if m.budgets.max_memory.is_some()
        && let Some(e) = memory::estimate_check(cfg, c, m, size_bytes, calls)?
    {
        memory::refuse(&what(c, m, size_bytes), &e, m, false)?;
    }
    let run = |w: &mut World| {
        queue_elements(w, c, m.ranks, count, calls)?;
        w.run()
    };
    check_program(cfg, &c.name(), m, opts, &run)
}

/// The checker's loop ([`sim_core::check_runs`], written once) for any program `run` sets up
/// and runs on a fresh world of `cfg` (`ranksim check` runs every tutorial, collective and
/// broken protocol through it): the unperturbed run, then one per seed `1..=opts.seeds` with
/// seeded jitter; findings merged with the seed that shows them, deadlocks and livelocks as
/// findings. Of `m`, only `trace` (then the unperturbed run's timeline is kept too, findings
/// as marks), `budgets` and `interrupt` are read. A kernel error is [`Error::Checked`] naming `name`; a run the simulator warned
/// about checked nothing and is [`Error::CutShort`].
///
/// Unlike [`World::check`], which reruns one world's queued dispatches from the state its host
/// set up, each run here starts from a fresh world, so `run` may be a whole program that sets
/// itself up, runs and reads results back.
pub fn check_program(
    cfg: &Config,
    name: &str,
    m: &Measure,
    opts: &CheckOptions,
    run: &dyn Fn(&mut World) -> SimResult<RunReport>,
) -> Result<Checked, Error> {
    cfg.world()?; // a config that builds no world fails here, typed, before any run
    let checked = sim_core::check_runs(opts, |jitter| {
        let mut w = match cfg.world() {
            Ok(w) => w,
            Err(e) => return CheckRun { outcome: Err(SimError::invalid(e.to_string())), findings: Vec::new() },
        };
        w.options_mut().check = true;
        w.options_mut().trace = m.trace && jitter.is_none();
        w.options_mut().jitter = jitter;
        m.budgets.apply(w.options_mut(), m.interrupt.as_ref());
        let outcome = run(&mut w);
        CheckRun { outcome, findings: w.last_findings().to_vec() }
    });
    match checked {
        Ok(c) => Ok(Checked { report: c.report, timeline: c.unperturbed.and_then(|r| r.trace) }),
        Err(SimError::CutShort { warnings }) => Err(Error::CutShort { name: name.to_string(), warnings }),
        Err(source) => Err(Error::Checked { name: name.to_string(), source }),
    }
}

/// The Chrome trace-event JSON (Perfetto, chrome://tracing) of a traced run — a run with
/// [`Measure::trace`] on, e.g. through [`run`] — or `None` when it was not traced: one process
/// per rank (of `ranks`), a thread per core, operation slices, write->notify and notify->wait
/// flows, link busy counters.
pub fn chrome_trace(report: &RunReport, ranks: usize) -> Option<String> {
    report.trace.as_ref().map(|t| formats::to_chrome_json(t, ranks))
}
