//! `ranksim validate`: compare the simulator with measured tables. For every point it prints
//! the measured value, the model's and the relative error; for every table the rms and worst
//! error; at the end the worst error overall. Nothing is fitted or tuned here: the numbers
//! are the config's as it stands. Tables whose workload the simulator cannot run yet are
//! listed as not run, with what they need, and no numbers.

use super::{CmdResult, Status};
use crate::hccl_test::{self, Overrides};
use crate::measurements::{self, Table, Unit};
use crate::workload::Workload;
use ranksim::Config;
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;

/// Everything `validate` is told.
#[derive(Clone, Debug)]
pub struct ValidateArgs {
    /// Machine config (TOML) or preset name; `None`: the embedded a2a3.
    pub config: Option<PathBuf>,
    /// Shipped table names or CSV files; empty: every shipped table.
    pub tables: Vec<String>,
    /// Largest |error| (percent) a point may have before the status is `Failed`.
    pub tolerance_pct: f64,
    /// Where to write the report as JSON.
    pub json: Option<PathBuf>,
    /// An hccl_test log to compare row by row (then the shipped tables only with `tables`).
    pub hccl_test: Option<PathBuf>,
    /// What the command line says about that log's run, over what the log says.
    pub hccl: Overrides,
}

impl ValidateArgs {
    /// The defaults of `ranksim validate` (every shipped table, 10 %), on `config`.
    pub fn new(config: Option<PathBuf>) -> ValidateArgs {
        ValidateArgs {
            config,
            tables: Vec::new(),
            tolerance_pct: 10.0,
            json: None,
            hccl_test: None,
            hccl: Overrides::default(),
        }
    }
}

/// One compared point.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PointResult {
    /// Message size in bytes.
    pub size: u64,
    /// The table's value.
    pub measured: f64,
    /// The model's value, same unit.
    pub model: f64,
    /// `(model - measured) / measured`, percent.
    pub error_pct: f64,
    /// What the model ran at this size, when a row says (an hccl_test log's rows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<String>,
}

/// One table's comparison.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TableResult {
    /// The table's name.
    pub name: String,
    /// Its `# source:` lines.
    pub source: Vec<String>,
    /// Its `# workload:` line.
    pub workload: String,
    /// `time_us` or `busbw_gbps`.
    pub unit: String,
    /// Why the table was not run (what the simulator needs), or `None` when it was.
    pub not_run: Option<String>,
    /// Every row compared.
    pub points: Vec<PointResult>,
    /// Root mean square of the points' errors, percent.
    pub rms_error_pct: Option<f64>,
    /// The error of largest magnitude, with its sign.
    pub worst_error_pct: Option<f64>,
    /// For a table whose source gives no message size: the model over the plausible sizes.
    /// Such a table's points are shown at their assumed size but never gate.
    pub size_unknown: Option<SizeRange>,
    /// The table's `# uncertainty:` (0 when exact): its points gate at the tolerance plus this.
    pub uncertainty_pct: f64,
}

impl TableResult {
    /// For an unsized table: the model's best value over the plausible sizes (largest busbw,
    /// shortest time), its size, and its error against the measured figure, which the sources
    /// give as the best of a sweep.
    pub fn best_of_range(&self) -> Option<(u64, f64, f64)> {
        let r = self.size_unknown.as_ref()?;
        let best = if self.unit == "time_us" {
            r.model.iter().min_by(|a, b| a.1.total_cmp(&b.1))
        } else {
            r.model.iter().max_by(|a, b| a.1.total_cmp(&b.1))
        }?;
        let measured = self.points.first()?.measured;
        Some((best.0, best.1, error_pct(measured, best.1)))
    }

    /// How far the model is from the table, in a few words: its rms error, or for an
    /// unsized table the model's best against the measured best.
    pub fn error_summary(&self) -> String {
        let range =
            |r: &SizeRange| format!("{}..{}", ranksim::formats::size_label(r.lo), ranksim::formats::size_label(r.hi));
        match (&self.size_unknown, self.best_of_range(), self.rms_error_pct) {
            (Some(r), Some((_, _, e)), _) => {
                format!(
                    "{e:+.1}% (the source gives no size: the model's best over {} against the measured best)",
                    range(r)
                )
            }
            (Some(r), None, Some(rms)) => format!(
                "{rms:.1}% at an assumed size (the source gives none: `ranksim validate --table {}` shows the model over {})",
                self.name,
                range(r)
            ),
            (None, _, Some(rms)) => format!("{rms:.1}% rms (`ranksim validate --table {}`)", self.name),
            _ => "not run".to_string(),
        }
    }
}

/// The model of an unsized table over the sizes its measurement may come from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SizeRange {
    /// Smallest and largest plausible size, bytes.
    pub lo: u64,
    /// Largest plausible size, bytes.
    pub hi: u64,
    /// `(size, model value)` from `lo` to `hi` by factors of 4.
    pub model: Vec<(u64, f64)>,
    /// Whether every measured value lies between the model's smallest and largest there
    /// (`None`: the range was not run).
    pub measured_inside: Option<bool>,
}

/// The whole report, as `--json` writes it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ValidateReport {
    /// The machine compared.
    pub machine: String,
    /// Largest |error| a sized point may have, percent.
    pub tolerance_pct: f64,
    /// Every table, in order.
    pub tables: Vec<TableResult>,
    /// The error of largest magnitude over every point run, with its table and size.
    pub worst_error_pct: Option<f64>,
    /// The table of the worst point.
    pub worst_table: Option<String>,
    /// The size of the worst point.
    pub worst_size: Option<u64>,
    /// Points whose |error| exceeds the tolerance.
    pub points_outside: usize,
    /// Sized points compared.
    pub points_run: usize,
}

/// The relative error of `model` against `measured`, in percent (positive: the model is higher).
fn error_pct(measured: f64, model: f64) -> f64 {
    (model - measured) / measured * 100.0
}

/// Root mean square of errors; 0 for none.
fn rms(errors: &[f64]) -> f64 {
    if errors.is_empty() {
        return 0.0;
    }
    (errors.iter().map(|e| e * e).sum::<f64>() / errors.len() as f64).sqrt()
}

/// The index of the error of largest magnitude (the first on ties).
fn worst(errors: &[f64]) -> Option<usize> {
    (0..errors.len()).fold(None, |best, i| match best {
        Some(b) if errors[b].abs() >= errors[i].abs() => Some(b),
        _ => Some(i),
    })
}

/// The tables `names` names (shipped names or CSV files), or every shipped table.
fn load_tables(names: &[String]) -> Result<Vec<Table>, String> {
    if names.is_empty() {
        return measurements::SHIPPED.iter().map(|(n, _)| measurements::shipped(n)).collect();
    }
    names
        .iter()
        .map(|n| {
            let path = std::path::Path::new(n);
            if measurements::SHIPPED.iter().any(|(s, _)| s == n) || !path.exists() {
                return measurements::shipped(n);
            }
            let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {n}: {e}"))?;
            measurements::parse(n, &text)
        })
        .collect()
}

/// Compares one table with the model on `cfg`.
fn run_table(cfg: &Config, t: &Table) -> Result<TableResult, String> {
    run_table_with(cfg, t, true)
}

/// [`run_table`]; an unsized table's plausible sizes are run only with `range`.
fn run_table_with(cfg: &Config, t: &Table, range: bool) -> Result<TableResult, String> {
    if t.source.is_empty() {
        return Err(format!("{}: no `# source:` line; add one saying where the numbers come from", t.name));
    }
    let line = t.require_workload()?;
    let mut res = TableResult {
        name: t.name.clone(),
        source: t.source.clone(),
        workload: line.to_string(),
        unit: t.unit.column().to_string(),
        not_run: Workload::needs(line, cfg),
        points: Vec::new(),
        rms_error_pct: None,
        worst_error_pct: None,
        size_unknown: None,
        uncertainty_pct: t.uncertainty_pct,
    };
    if res.not_run.is_some() {
        return Ok(res);
    }
    let w = Workload::resolve(line, cfg, 1).map_err(|e| format!("{}: {e}", t.name))?;
    if let Some((lo, hi)) = t.size_unknown.filter(|_| !range) {
        res.size_unknown = Some(SizeRange { lo, hi, model: Vec::new(), measured_inside: None });
    }
    if let Some((lo, hi)) = t.size_unknown.filter(|_| range) {
        let mut model = Vec::new();
        let mut size = lo;
        while size <= hi {
            let at = |e: String| format!("{} at {size} B: {e}", t.name);
            let time = w.time_us(cfg, size).map_err(at)?;
            model.push((size, w.value_from(t.unit, size, time).map_err(at)?));
            size = size.saturating_mul(4);
        }
        let (min, max) = model.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.1), b.max(p.1)));
        let measured_inside = t.rows.iter().all(|r| r.value >= min && r.value <= max);
        res.size_unknown = Some(SizeRange { lo, hi, model, measured_inside: Some(measured_inside) });
    }
    for r in &t.rows {
        let at = |e: String| format!("{} line {}: {e}", t.name, r.line);
        let time = w.time_us(cfg, r.size).map_err(at)?;
        let model = w.value_from(t.unit, r.size, time).map_err(at)?;
        res.points.push(PointResult {
            size: r.size,
            measured: r.value,
            model,
            error_pct: error_pct(r.value, model),
            algorithm: None,
        });
    }
    let errors: Vec<f64> = res.points.iter().map(|p| p.error_pct).collect();
    res.rms_error_pct = Some(rms(&errors));
    res.worst_error_pct = worst(&errors).map(|i| errors[i]);
    Ok(res)
}

/// The shipped table measured on the collective and algorithm of a series, nearest in rank
/// count to `ranks` (ties: the first shipped), compared with the model on `cfg` at its rows'
/// sizes (an unsized table's plausible range is left to `validate`); `None` when no table
/// measures that collective with that algorithm (or it cannot run on `cfg`).
pub fn nearest_table(
    cfg: &Config,
    kind: collectives::Kind,
    mode: collectives::Mode,
    ranks: usize,
) -> Option<TableResult> {
    let mut best: Option<(usize, Table)> = None;
    for (name, _) in measurements::SHIPPED {
        let Ok(t) = measurements::shipped(name) else { continue };
        let Some(w) = &t.workload else { continue };
        if w.program != measurements::Program::Collective(kind) || w.mode.unwrap_or(collectives::Mode::Mesh) != mode {
            continue;
        }
        let d = w.ranks.unwrap_or(cfg.machine.ranks).abs_diff(ranks);
        if best.as_ref().is_none_or(|(bd, _)| d < *bd) {
            best = Some((d, t));
        }
    }
    let (_, t) = best?;
    // The table's own rows only: a sweep names it in a line, validate shows the range.
    run_table_with(cfg, &t, false).ok().filter(|r| r.not_run.is_none())
}

/// Compares an hccl_test log's `aveg_time` with the model, row by row, each row naming the
/// algorithm the model ran; rows hccl_test marked `failed` are compared and noted.
fn run_hccl_test(cfg: &Config, path: &std::path::Path, flags: &Overrides) -> Result<TableResult, String> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {name}: {e}"))?;
    let log = hccl_test::parse_log(&name, &text)?;
    let run = hccl_test::run_of(&log, flags, cfg)?;
    let mut source = vec![format!("hccl_test log {name}")];
    for (line, printed, computed) in &log.inconsistent {
        source.push(format!(
            "line {line}: alg_bandwidth {printed} is not data_size / aveg_time = {computed:.5} GB/s, as hccl_test prints it; the times are compared"
        ));
    }
    for r in log.rows.iter().filter(|r| r.check == "failed") {
        source.push(format!(
            "line {}: hccl_test's check failed at {} B; its time is compared all the same",
            r.line, r.size
        ));
    }
    let mut points = Vec::new();
    for r in &log.rows {
        let model = run.time_us(cfg, r.size).map_err(|e| format!("{name} line {}: {e}", r.line))?;
        let algorithm = Some(run.spec_at(r.size).1);
        points.push(PointResult {
            size: r.size,
            measured: r.time_us,
            model,
            error_pct: error_pct(r.time_us, model),
            algorithm,
        });
    }
    let errors: Vec<f64> = points.iter().map(|p| p.error_pct).collect();
    Ok(TableResult {
        name,
        source,
        workload: run.describe(),
        unit: Unit::TimeUs.column().to_string(),
        not_run: None,
        rms_error_pct: Some(rms(&errors)),
        worst_error_pct: worst(&errors).map(|i| errors[i]),
        points,
        size_unknown: None,
        uncertainty_pct: 0.0,
    })
}

/// Runs every table and summarises.
fn compare(cfg: &Config, tables: &[Table], tolerance_pct: f64) -> Result<ValidateReport, String> {
    let results = tables.iter().map(|t| run_table(cfg, t)).collect::<Result<Vec<_>, String>>()?;
    Ok(summarise(cfg, results, tolerance_pct))
}

/// The report of compared tables.
fn summarise(cfg: &Config, results: Vec<TableResult>, tolerance_pct: f64) -> ValidateReport {
    // A guessed size must not decide the verdict: only sized tables count.
    let all: Vec<(&TableResult, &PointResult)> = results
        .iter()
        .filter(|t| t.size_unknown.is_none())
        .flat_map(|t| t.points.iter().map(move |p| (t, p)))
        .collect();
    let errors: Vec<f64> = all.iter().map(|(_, p)| p.error_pct).collect();
    let w = worst(&errors).map(|i| all[i]);
    ValidateReport {
        machine: cfg.machine.name.clone(),
        tolerance_pct,
        worst_error_pct: w.map(|(_, p)| p.error_pct),
        worst_table: w.map(|(t, _)| t.name.clone()),
        worst_size: w.map(|(_, p)| p.size),
        points_outside: all.iter().filter(|(t, p)| p.error_pct.abs() > tolerance_pct + t.uncertainty_pct).count(),
        points_run: errors.len(),
        tables: results,
    }
}

/// Runs `validate`.
pub fn validate(out: &mut dyn Write, a: &ValidateArgs) -> CmdResult {
    if !(a.tolerance_pct.is_finite() && a.tolerance_pct >= 0.0) {
        return Err(format!("--tolerance {}: give a percentage of 0 or more, e.g. 10", a.tolerance_pct));
    }
    let cfg = Config::load_or_default(a.config.as_deref()).map_err(|e| e.to_string())?;
    let report = match &a.hccl_test {
        None => compare(&cfg, &load_tables(&a.tables)?, a.tolerance_pct)?,
        Some(log) => {
            let tables = if a.tables.is_empty() { Vec::new() } else { load_tables(&a.tables)? };
            let mut results = tables.iter().map(|t| run_table(&cfg, t)).collect::<Result<Vec<_>, String>>()?;
            results.push(run_hccl_test(&cfg, log, &a.hccl)?);
            summarise(&cfg, results, a.tolerance_pct)
        }
    };
    print_report(out, &report).map_err(|e| e.to_string())?;
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(&report).map_err(|e| format!("cannot encode the JSON: {e}"))?;
        std::fs::write(path, text + "\n").map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(if report.points_outside > 0 { Status::Failed } else { Status::Ok })
}

/// The text report.
fn print_report(out: &mut dyn Write, r: &ValidateReport) -> std::io::Result<()> {
    writeln!(
        out,
        "# validate `{}` against {} measured table(s); tolerance {}%",
        r.machine,
        r.tables.len(),
        r.tolerance_pct
    )?;
    for t in &r.tables {
        print_table(out, t, r.tolerance_pct)?;
    }
    writeln!(out, "#")?;
    let not_run = r.tables.iter().filter(|t| t.not_run.is_some()).count();
    let unsized_tables = r.tables.iter().filter(|t| t.size_unknown.is_some()).count();
    // A plot-read table gates at the tolerance plus its stated uncertainty: say so.
    let widened =
        if r.tables.iter().any(|t| t.uncertainty_pct > 0.0) { " (plus a table's stated uncertainty)" } else { "" };
    match (r.worst_error_pct, &r.worst_table, r.worst_size) {
        (Some(e), Some(t), Some(s)) => writeln!(
            out,
            "# worst error overall: {e:+.2}% ({t} at {s} B); {} of {} sized point(s) outside {}%{widened}; {unsized_tables} unsized table(s), not gated; {not_run} table(s) not run",
            r.points_outside, r.points_run, r.tolerance_pct
        ),
        _ => writeln!(
            out,
            "# no sized point was run; {unsized_tables} unsized table(s), not gated; {not_run} table(s) not run"
        ),
    }
}

/// One table: its source, its points and its summary, or why it was not run.
fn print_table(out: &mut dyn Write, t: &TableResult, tolerance: f64) -> std::io::Result<()> {
    writeln!(out, "#\n## {}: {} of `{}`", t.name, t.unit, t.workload)?;
    for s in &t.source {
        writeln!(out, "# source: {s}")?;
    }
    if let Some(needs) = &t.not_run {
        return writeln!(out, "not run: needs {needs}");
    }
    if t.uncertainty_pct > 0.0 {
        let (u, gate) = (t.uncertainty_pct, tolerance + t.uncertainty_pct);
        writeln!(out, "# the values are approximate (+-{u}% by the source's reading): gated at {gate}%")?;
    }
    let u = if t.unit == "time_us" { "us" } else { "GB/s" };
    let (m, s) = (format!("measured({u})"), format!("model({u})"));
    let alg = if t.points.iter().any(|p| p.algorithm.is_some()) { "  algorithm" } else { "" };
    writeln!(out, "{:>12} {m:>16} {s:>16} {:>10}{alg}", "size(B)", "error(%)")?;
    for p in &t.points {
        let flag = match &t.size_unknown {
            Some(_) => "  (assumed size)",
            None if p.error_pct.abs() > tolerance + t.uncertainty_pct => "  over",
            None => "",
        };
        let alg = p.algorithm.as_deref().map(|a| format!("  {a}")).unwrap_or_default();
        writeln!(out, "{:>12} {:>16.4} {:>16.4} {:>+10.2}{alg}{flag}", p.size, p.measured, p.model, p.error_pct)?;
    }
    if let Some(r) = &t.size_unknown {
        let model: Vec<String> =
            r.model.iter().map(|(s, v)| format!("{} {v:.2}", ranksim::formats::size_label(*s))).collect();
        writeln!(
            out,
            "# the source gives no message size: the model from {} to {}: {}",
            ranksim::formats::size_label(r.lo),
            ranksim::formats::size_label(r.hi),
            model.join(", ")
        )?;
        let verdict = if r.measured_inside == Some(true) { "inside" } else { "outside" };
        if let Some((size, v, err)) = t.best_of_range() {
            writeln!(
                out,
                "# the model's best there: {v:.2} at {} ({err:+.1}% against the measured figure, itself the best of a sweep)",
                ranksim::formats::size_label(size)
            )?;
        }
        writeln!(
            out,
            "{}: unsized, so not gated (an error at a guessed size says little): the measurement lies {verdict} the model's range over those sizes",
            t.name
        )?;
    } else if let (Some(rms), Some(w)) = (t.rms_error_pct, t.worst_error_pct) {
        writeln!(out, "{}: rms error {rms:.2}%, worst {w:+.2}%", t.name)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_relative_to_the_measurement_with_rms_and_signed_worst() {
        assert_eq!(error_pct(2.0, 3.0), 50.0);
        assert_eq!(error_pct(4.0, 1.0), -75.0);
        assert_eq!(rms(&[]), 0.0);
        assert!((rms(&[3.0, -4.0]) - (12.5f64).sqrt()).abs() < 1e-12);
        assert_eq!(worst(&[10.0, -30.0, 30.0, 5.0]), Some(1));
        assert_eq!(worst(&[]), None);
    }

    #[test]
    fn a_table_the_machine_cannot_run_has_no_numbers() {
        let t = measurements::shipped("t3-tget-async").unwrap();
        let mut bare = Config::default_preset();
        bare.chip.sdma = None;
        let r = run_table(&bare, &t).unwrap();
        assert!(r.not_run.as_deref().unwrap_or("").contains("SDMA"), "{r:?}");
        assert!(r.points.is_empty() && r.rms_error_pct.is_none() && r.worst_error_pct.is_none());
    }

    #[test]
    fn a_table_needs_a_source_and_a_workload() {
        let cfg = Config::default_preset();
        let t = measurements::parse("x", "# workload: get\n4K,1\n").unwrap();
        assert!(run_table(&cfg, &t).unwrap_err().contains("x: no `# source:` line"));
        let t = measurements::parse("x", "# source: me\n4K,1\n").unwrap();
        assert!(run_table(&cfg, &t).unwrap_err().contains("x: no `# workload:` line"));
        assert!(load_tables(&["nope".into()]).unwrap_err().contains("no shipped table `nope`; the tables are t3-tget"));
    }
}
