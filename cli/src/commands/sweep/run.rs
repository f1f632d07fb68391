//! Running a sweep's series: each size measured (several at once when they fit), rows and
//! failed rows gathered, the progress bar moved, and an interrupt ending it cleanly.

use super::flags::SweepArgs;
use super::output::{summary, write_outputs};
use crate::commands::{CmdResult, Status};
use crate::progress::RowsBar;
use ranksim::Config;
use ranksim::formats::{self, ResultRow, Series, SeriesSummary, SweepConfig};
use ranksim::measure::Point;
use sim_core::Progress;
use std::io::Write;

/// What one series of a sweep prints and runs.
pub struct SeriesPlan {
    /// The legend / JSON label.
    pub label: String,
    /// What the preamble line and the JSON say was run.
    pub config: SweepConfig,
    /// `# ` lines between the preamble and the header (what it models, the bound, caps).
    pub notes: Vec<String>,
    /// The sizes to run, in order.
    pub sizes: Vec<u64>,
    /// Sizes run at once on host threads.
    pub threads: usize,
    /// The busbw bound its summary compares with (`None`: no bound applies).
    pub bound: Option<f64>,
    /// How far such numbers are from measurements: a line after the footer (`None`: none).
    pub trust: Option<String>,
}

/// The error a sweep stops with when Ctrl-C or SIGTERM arrived (the exit code is 130).
pub(super) const INTERRUPTED: &str = "interrupted";

/// Measures one size of a series: `(size, traced, progress)`; `Ok(None)` when the size gives
/// no element.
pub type MeasureFn<'a> = dyn Fn(u64, bool, Option<&Progress>) -> Result<Option<Point>, String> + Sync + 'a;

/// The FAILED row of a size whose run gave no measurement, and why (`None`: no row at all).
pub type FailedRowFn<'a> = dyn Fn(u64, String) -> Option<ResultRow> + 'a;

/// Everything a sweep gathers over its series: rows, plot series, summaries, STRACE, engine
/// work, warnings already printed, whether anything failed.
pub struct SweepRun {
    multi: bool,
    rows: Vec<ResultRow>,
    series: Vec<Series>,
    summaries: Vec<SeriesSummary>,
    strace: formats::StraceLog,
    tally: crate::run_stats::Tally,
    started: std::time::Instant,
    traced: Option<(String, u64)>,
    warned: Vec<String>,
    failed: bool,
}

impl SweepRun {
    /// A sweep of one series, or of several (`multi`: rows carry their series, a summary
    /// closes the output), on the machine of `cfg`.
    pub fn new(multi: bool, cfg: &Config) -> SweepRun {
        SweepRun {
            multi,
            rows: Vec::new(),
            series: Vec::new(),
            summaries: Vec::new(),
            strace: formats::StraceLog::new(&cfg.host),
            tally: crate::run_stats::Tally::default(),
            started: std::time::Instant::now(),
            traced: None,
            warned: Vec::new(),
            failed: false,
        }
    }

    /// Prints `# warning: w` once per sweep.
    pub fn warn(&mut self, out: &mut dyn Write, w: String) -> Result<(), String> {
        if !self.warned.contains(&w) {
            writeln!(out, "# warning: {w}").map_err(io)?;
            self.warned.push(w);
        }
        Ok(())
    }

    /// Runs one series: its preamble, notes and header, a row per size (FAILED rows for sizes
    /// that gave no measurement, with the first wrong elements of a wrong row), the footer,
    /// and the lines that say why it failed.
    pub fn series(
        &mut self,
        out: &mut dyn Write,
        a: &SweepArgs,
        plan: SeriesPlan,
        measure: &MeasureFn<'_>,
        failed_row: &FailedRowFn<'_>,
    ) -> Result<(), String> {
        writeln!(out, "{}", formats::preamble(env!("CARGO_PKG_VERSION"), &plan.config)).map_err(io)?;
        for n in &plan.notes {
            writeln!(out, "# {n}").map_err(io)?;
        }
        writeln!(out, "{}", formats::header()).map_err(io)?;
        let trace_first = a.trace.is_some() && self.traced.is_none();
        let bar = RowsBar::on_terminal(&plan.label, plan.sizes.len());
        let work = |k: usize, &size: &u64| measure(size, trace_first && k == 0, Some(bar.counter()));
        let mut rows: Vec<ResultRow> = Vec::new();
        let mut take = |k: usize, result: Result<Option<Point>, String>| -> Result<(), String> {
            bar.row_done();
            bar.suspend(|| self.take_row(out, a, &plan, &mut rows, failed_row, plan.sizes[k], result))
        };
        let taken = crate::parallel::in_order(&plan.sizes, plan.threads, work, &mut take);
        drop(bar);
        if crate::interrupt::raised() {
            // Ctrl-C: the rows so far are the partial table; no footer, no files.
            writeln!(out, "# interrupted: {} of {} size(s) of this series done", rows.len(), plan.sizes.len())
                .map_err(io)?;
            return Err(INTERRUPTED.into());
        }
        taken?;
        self.close_series(out, a, plan, rows)
    }

    /// Prints and keeps the row of one size.
    #[allow(clippy::too_many_arguments)]
    fn take_row(
        &mut self,
        out: &mut dyn Write,
        a: &SweepArgs,
        plan: &SeriesPlan,
        rows: &mut Vec<ResultRow>,
        failed_row: &FailedRowFn<'_>,
        size: u64,
        result: Result<Option<Point>, String>,
    ) -> Result<(), String> {
        let series = self.multi.then(|| plan.label.clone());
        if crate::interrupt::raised() {
            // The run was stopped, not failed: no row, and no further size.
            return Err(INTERRUPTED.into());
        }
        let point = match result {
            Ok(Some(p)) => p,
            Ok(None) => return Ok(()),
            // This size cannot run (a tile that does not fit UB, a deadlock, ...): its row says
            // why, the details follow as notes, and the sweep goes on.
            Err(e) => {
                let mut lines = e.lines();
                let Some(row) = failed_row(size, lines.next().unwrap_or("failed").to_string()) else { return Ok(()) };
                match &row.algorithm {
                    Some(alg) => writeln!(out, "{}  ({alg})", formats::row(&row)),
                    None => writeln!(out, "{}", formats::row(&row)),
                }
                .map_err(io)?;
                for l in lines.filter(|l| !l.trim().is_empty()) {
                    writeln!(out, "#   {}", l.trim_end()).map_err(io)?;
                }
                rows.push(ResultRow { series, ..row });
                return Ok(());
            }
        };
        self.tally.add(&point.report);
        if self.traced.is_none()
            && let (Some(path), Some(trace)) = (&a.trace, &point.report.trace)
        {
            if !a.no_trace_file {
                let json = ranksim::formats::to_chrome_json(trace, plan.config.ranks);
                std::fs::write(path, json).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            }
            self.traced = Some((plan.label.clone(), point.row.size));
        }
        if a.strace.is_some() {
            self.strace.add_run(&point.report);
        }
        for w in &point.report.warnings {
            self.warn(out, w.clone())?;
        }
        match &point.row.algorithm {
            Some(alg) => writeln!(out, "{}  {alg}", formats::row(&point.row)),
            None => writeln!(out, "{}", formats::row(&point.row)),
        }
        .map_err(io)?;
        for m in &point.row.first_wrong {
            writeln!(out, "#   wrong: {m}").map_err(io)?;
        }
        rows.push(ResultRow { series, ..point.row });
        Ok(())
    }

    /// The footer of a series and the lines that say why it failed; its summary and plot line.
    fn close_series(
        &mut self,
        out: &mut dyn Write,
        a: &SweepArgs,
        plan: SeriesPlan,
        rows: Vec<ResultRow>,
    ) -> Result<(), String> {
        let lbl = plan.label;
        let measured: Vec<&ResultRow> = rows.iter().filter(|r| r.failed.is_none()).collect();
        let avg = formats::average_busbw(&measured.iter().map(|r| r.busbw_gbps).collect::<Vec<_>>());
        let verdict = formats::Verdict::of(&rows);
        writeln!(out, "{}", formats::footer(avg, verdict)).map_err(io)?;
        self.failed |= verdict.is_failed();
        if let Some(min) = a.min_busbw
            && avg < min
        {
            writeln!(out, "# FAILED: {lbl}: average bus bandwidth {avg:.2} GB/s is below --min-busbw {min}")
                .map_err(io)?;
            self.failed = true;
        }
        if verdict.wrong > 0 {
            writeln!(out, "# FAILED: {} wrong element(s)", verdict.wrong).map_err(io)?;
        }
        if let Some(t) = &plan.trust {
            writeln!(out, "# measured: {t}").map_err(io)?;
        }
        if verdict.failed > 0 {
            writeln!(out, "# FAILED: {} size(s) have no measurement (the FAILED rows say why)", verdict.failed)
                .map_err(io)?;
        }
        self.series.push(Series {
            label: lbl.clone(),
            points: measured.iter().map(|r| (r.size as f64, r.time_us, r.busbw_gbps)).collect(),
        });
        let peak = measured.iter().map(|r| r.busbw_gbps).fold(0.0, f64::max);
        self.summaries.push(SeriesSummary {
            label: lbl,
            config: plan.config,
            average_bus_bandwidth: avg,
            peak_bus_bandwidth: peak,
            bound_gbps: plan.bound,
        });
        self.rows.extend(rows);
        Ok(())
    }

    /// The summary of several series, the output files, the trace line and `--stats`; the
    /// sweep's status.
    pub fn finish(self, out: &mut dyn Write, a: &SweepArgs, ranks: usize) -> CmdResult {
        if self.multi {
            summary(out, &self.summaries, &self.rows).map_err(io)?;
        }
        if let Some(path) = &a.trace {
            match &self.traced {
                Some((series, size)) => writeln!(
                    out,
                    "# trace: {series} at {size} B (the first size that ran; one run per sweep) written to {}",
                    path.display()
                ),
                None => writeln!(out, "# warning: no trace written: the first size of the sweep did not run"),
            }
            .map_err(io)?;
        }
        write_outputs(a, &self.machine_title(ranks), self.rows, self.summaries, &self.series, &self.strace.text())?;
        if a.stats {
            writeln!(out, "{}", self.tally.line(self.started.elapsed())).map_err(io)?;
        }
        Ok(if self.failed { Status::Failed } else { Status::Ok })
    }

    fn machine_title(&self, ranks: usize) -> String {
        let machine = self.summaries.first().map_or("?", |s| s.config.machine.as_str());
        format!("ranksim sweep on {machine} ({ranks} ranks)")
    }
}

pub(super) fn io(e: std::io::Error) -> String {
    e.to_string()
}
