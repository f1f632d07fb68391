//! `ranksim sweep`: an nccl-tests style bandwidth sweep of one or more collectives (and, for
//! allreduce, algorithms) over message sizes, with JSON, SVG, \[STRACE\] and Chrome trace
//! outputs and CI gates on wrong elements and average bus bandwidth.

use super::{CmdResult, Status};
use crate::Config;
use crate::report::{self, ResultRow, Series, SweepConfig, SweepJson};
use crate::sweep::{Point, SweepSpec, failed_row, nccl_type, run_point};
use collectives::{Kind, Mode, Path};
use sim_core::{DType, Jitter, ReduceOp};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

/// Everything `sweep` is told.
#[derive(Clone, Debug)]
pub struct SweepArgs {
    pub config: Option<PathBuf>,
    pub collectives: Vec<Kind>,
    pub modes: Vec<Mode>,
    pub path: Path,
    pub min_bytes: u64,
    pub max_bytes: u64,
    pub factor: f64,
    pub dtype: DType,
    pub op: ReduceOp,
    pub root: usize,
    pub iters: u32,
    pub warmup: u32,
    pub ranks: Option<usize>,
    pub core_num: usize,
    pub json: Option<PathBuf>,
    pub plot: Option<PathBuf>,
    pub strace: Option<PathBuf>,
    pub trace: Option<PathBuf>,
    pub min_busbw: Option<f64>,
    /// Seeded timing jitter (`None`: deterministic, unperturbed runs).
    pub jitter: Option<Jitter>,
    pub no_data: bool,
}

/// One (collective, mode) series of the sweep.
struct Combo {
    kind: Kind,
    mode: Mode,
}

impl Combo {
    fn label(&self) -> String {
        if self.kind == Kind::AllReduce { format!("{} {}", self.kind, self.mode) } else { self.kind.to_string() }
    }
}

/// Runs the sweep, printing the table to `out` and progress to stderr when it is a terminal.
pub fn sweep(out: &mut dyn Write, a: &SweepArgs) -> CmdResult {
    let io = |e: std::io::Error| e.to_string();
    let cfg = Config::load_or_default(a.config.as_deref()).map_err(|e| e.to_string())?;
    let ranks = a.ranks.unwrap_or(cfg.machine.ranks);
    if ranks == 0 || ranks > cfg.machine.ranks {
        return Err(format!(
            "--ranks {ranks}: machine `{}` has {} ranks; use 1..={}",
            cfg.machine.name, cfg.machine.ranks, cfg.machine.ranks
        ));
    }
    let sizes = report::sweep_sizes(a.min_bytes, a.max_bytes, a.factor)
        .map_err(|e| format!("-b {} -e {} -f {}: {e}", a.min_bytes, a.max_bytes, a.factor))?;
    if let Some(min) = a.min_busbw
        && !(min.is_finite() && min >= 0.0)
    {
        return Err(format!("--min-busbw {min}: must be a finite number of GB/s, 0 or more"));
    }
    let combos = combos(a);
    for combo in &combos {
        let spec = spec(a, combo, ranks);
        spec.validate("-e", a.max_bytes, cfg.machine.ranks)?;
        if !sizes.iter().any(|&s| has_elements(&spec, s)) {
            return Err(format!(
                "{}: no size from -b {} to -e {} gives an element per rank on {ranks} ranks ({}-byte {}); raise -e",
                combo.label(),
                a.min_bytes,
                a.max_bytes,
                a.dtype.size(),
                a.dtype
            ));
        }
    }
    let progress = std::io::stderr().is_terminal();
    let (mut all_rows, mut series, mut failed) = (Vec::new(), Vec::new(), false);
    let mut traced = a.trace.is_none();
    let mut strace = crate::strace::StraceLog::new(&cfg.host);
    for combo in &combos {
        let spec = spec(a, combo, ranks);
        let sc = sweep_config(a, &cfg, &spec, combo);
        writeln!(out, "{}", report::preamble(env!("CARGO_PKG_VERSION"), &sc)).map_err(io)?;
        writeln!(out, "{}", report::header()).map_err(io)?;
        let mut rows: Vec<ResultRow> = Vec::new();
        let mut last_count = None;
        for (i, &size) in sizes.iter().enumerate() {
            // Sizes that round to the element count of the previous one would repeat its row
            // (a barrier moves no data: its one row per size is nccl-tests' too).
            let count = report::count_for(spec.kind, size, spec.dtype.size() as u64, ranks);
            if last_count == Some(count) && spec.kind != Kind::Barrier {
                continue;
            }
            last_count = Some(count);
            if progress {
                eprint!("\r[{}/{}] {} {:>8}  ", i + 1, sizes.len(), combo.label(), report::size_label(size));
            }
            let point = match run_point(&cfg, &spec, size, !traced) {
                Ok(Some(p)) => p,
                Ok(None) => continue,
                // This size cannot run (a dtype the path does not support, a tile that does not
                // fit UB, ...): its row says why and the sweep goes on.
                Err(e) => {
                    let Some(row) = failed_row(&spec, size, e) else { continue };
                    writeln!(out, "{}", report::row(&row)).map_err(io)?;
                    failed = true;
                    rows.push(ResultRow { series: (combos.len() > 1).then(|| combo.label()), ..row });
                    continue;
                }
            };
            failed |= point.row.failed.is_some();
            if !traced {
                write_trace(a, &point, ranks)?;
                traced = true;
            }
            if a.strace.is_some() {
                strace.add_run(&point.report);
            }
            writeln!(out, "{}", report::row(&point.row)).map_err(io)?;
            failed |= point.row.nwrong.is_some_and(|w| w > 0);
            rows.push(ResultRow { series: (combos.len() > 1).then(|| combo.label()), ..point.row });
        }
        if progress {
            eprint!("\r{:60}\r", "");
        }
        let measured: Vec<&ResultRow> = rows.iter().filter(|r| r.failed.is_none()).collect();
        let avg = report::average_busbw(&measured.iter().map(|r| r.busbw_gbps).collect::<Vec<_>>());
        writeln!(out, "{}", report::footer(avg)).map_err(io)?;
        if let Some(min) = a.min_busbw
            && avg < min
        {
            writeln!(out, "# FAILED: average bus bandwidth {avg:.2} GB/s is below --min-busbw {min}").map_err(io)?;
            failed = true;
        }
        if rows.iter().any(|r| r.nwrong.is_some_and(|w| w > 0)) {
            writeln!(out, "# FAILED: {} wrong element(s)", rows.iter().filter_map(|r| r.nwrong).sum::<u64>())
                .map_err(io)?;
        }
        let unmeasured = rows.len() - measured.len();
        if unmeasured > 0 {
            writeln!(out, "# FAILED: {unmeasured} size(s) have no measurement (the FAILED rows say why)")
                .map_err(io)?;
        }
        series.push(Series {
            label: combo.label(),
            points: measured.iter().map(|r| (r.size as f64, r.time_us, r.busbw_gbps)).collect(),
        });
        all_rows.extend(rows);
    }
    write_outputs(a, &cfg, ranks, &combos, all_rows, &series, &strace.text())?;
    Ok(if failed { Status::Failed } else { Status::Ok })
}

/// Whether a size gives at least one element per rank (a barrier always runs).
fn has_elements(spec: &SweepSpec, size: u64) -> bool {
    spec.kind == Kind::Barrier || report::count_for(spec.kind, size, spec.dtype.size() as u64, spec.ranks) > 0
}

fn combos(a: &SweepArgs) -> Vec<Combo> {
    let mut out = Vec::new();
    for &kind in &a.collectives {
        let modes: Vec<Mode> = match kind {
            Kind::AllReduce => a.modes.clone(),
            // The builtin, and the HCCL-class SDMA allgather when asked for.
            Kind::AllGather => a.modes.iter().copied().filter(|m| matches!(m, Mode::Mesh | Mode::SdmaMesh)).collect(),
            _ => Vec::new(),
        };
        if modes.is_empty() {
            out.push(Combo { kind, mode: Mode::Mesh });
        }
        out.extend(modes.into_iter().map(|mode| Combo { kind, mode }));
    }
    out
}

fn spec(a: &SweepArgs, c: &Combo, ranks: usize) -> SweepSpec {
    let jitter = a.jitter;
    SweepSpec {
        kind: c.kind,
        mode: c.mode,
        path: a.path,
        dtype: a.dtype,
        op: a.op,
        root: a.root,
        iters: a.iters,
        warmup: a.warmup,
        ranks,
        core_num: a.core_num,
        jitter,
        timing_only: a.no_data,
    }
}

fn sweep_config(a: &SweepArgs, cfg: &Config, s: &SweepSpec, c: &Combo) -> SweepConfig {
    SweepConfig {
        machine: cfg.machine.name.clone(),
        ranks: s.ranks,
        collective: c.kind.to_string(),
        mode: if c.kind == Kind::AllReduce { c.mode.to_string() } else { "-".into() },
        path: s.path.to_string(),
        dtype: nccl_type(s.dtype).to_string(),
        redop: s.op.to_string(),
        root: i64::try_from(s.root).unwrap_or(i64::MAX),
        min_bytes: a.min_bytes,
        max_bytes: a.max_bytes,
        step_factor: a.factor,
        warmup: a.warmup,
        iters: a.iters,
        seed: a.jitter.map_or(0, |j| j.seed),
        timing_only: a.no_data,
    }
}

fn write_trace(a: &SweepArgs, point: &Point, ranks: usize) -> Result<(), String> {
    let (Some(path), Some(trace)) = (&a.trace, &point.report.trace) else { return Ok(()) };
    let json = sim_core::trace::chrome::to_chrome_json(trace, ranks);
    std::fs::write(path, json).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    eprintln!("# trace of size {} B written to {}", point.row.size, path.display());
    Ok(())
}

fn write_outputs(
    a: &SweepArgs,
    cfg: &Config,
    ranks: usize,
    combos: &[Combo],
    rows: Vec<ResultRow>,
    series: &[Series],
    strace: &str,
) -> Result<(), String> {
    let write = |path: &PathBuf, text: &str| {
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    if let Some(p) = &a.json {
        let first = combos.first().map(|c| spec(a, c, ranks));
        let mut sc = match (&first, combos.first()) {
            (Some(s), Some(c)) => sweep_config(a, cfg, s, c),
            _ => return Err("nothing to sweep".into()),
        };
        sc.collective = a.collectives.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(",");
        sc.mode = a.modes.iter().map(|m| m.to_string()).collect::<Vec<_>>().join(",");
        write(p, &report::to_json_string(&SweepJson::new(sc, rows)))?;
    }
    if let Some(p) = &a.plot {
        let title = format!("ranksim sweep on {} ({} ranks)", cfg.machine.name, ranks);
        write(p, &report::plot_svg(&title, series))?;
    }
    if let Some(p) = &a.strace {
        write(p, strace)?;
    }
    Ok(())
}
