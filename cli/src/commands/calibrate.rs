//! `ranksim calibrate`: fit a link class's latency and bandwidth to one or more measured tables
//! at once, show how well the re-simulation matches each point and each table, warn when it
//! does not, and print the config snippet.

use super::{CmdResult, Status};
use crate::calibrate::{Fit, LinkClass, Measured, Point, crossing_peer, fit};
use crate::hccl_test::Overrides;
use crate::measurements::{self, WorkloadLine};
use crate::workload::Workload;
use ranksim::Config;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Above this rms relative error (a fraction) the fit prints a warning.
const WARN_RMS: f64 = 0.10;

/// Everything `calibrate` is told.
#[derive(Clone, Debug)]
pub struct CalibrateArgs {
    /// Machine config (TOML) or preset name; `None`: the embedded a2a3.
    pub config: Option<PathBuf>,
    /// The measured tables (CSV files).
    pub tables: Vec<PathBuf>,
    /// Workloads given on the command line, paired with `tables` in order; a table without one
    /// (past the end, or `None`) uses its own `# workload:` line.
    pub workloads: Vec<Option<WorkloadLine>>,
    /// `node` or `levelK`.
    pub link: String,
    /// An hccl_test log to fit as well, its rows' `aveg_time` as hccl_test times it.
    pub hccl_test: Option<PathBuf>,
    /// What the command line says about that log's run, over what the log says.
    pub hccl: Overrides,
}

/// Parses `node` / `level2` into a link class.
fn link_class(s: &str) -> Result<LinkClass, String> {
    if s == "node" {
        return Ok(LinkClass::Node);
    }
    s.strip_prefix("level")
        .and_then(|k| k.parse::<usize>().ok())
        .filter(|&k| k >= 1)
        .map(LinkClass::Level)
        .ok_or_else(|| format!("--link `{s}`: expected node or level1, level2, ..."))
}

/// Runs the fit and prints it.
pub fn calibrate(out: &mut dyn Write, a: &CalibrateArgs) -> CmdResult {
    let io = |e: std::io::Error| e.to_string();
    let cfg = Config::load_or_default(a.config.as_deref()).map_err(|e| e.to_string())?;
    let class = link_class(&a.link)?;
    if a.workloads.len() > a.tables.len() {
        return Err(format!(
            "{} --workload for {} --table; give at most one --workload per --table, in the same order",
            a.workloads.len(),
            a.tables.len()
        ));
    }
    let peer = crossing_peer(&cfg, class)?;
    let mut series = Vec::new();
    writeln!(out, "# calibrate {} links of `{}`", a.link, cfg.machine.name).map_err(io)?;
    for (i, path) in a.tables.iter().enumerate() {
        let s = load_series(out, path, a.workloads.get(i).and_then(Option::as_ref), &cfg, peer)?;
        writeln!(out, "# {}: {} points of {}", s.name, s.points.len(), s.workload.describe()).map_err(io)?;
        series.push(s);
    }
    if let Some(path) = &a.hccl_test {
        let s = hccl_test_series(path, &a.hccl, &cfg)?;
        writeln!(out, "# {}: {} rows of {}", s.name, s.points.len(), s.workload.describe()).map_err(io)?;
        series.push(s);
    }
    let f = fit(&cfg, class, &series)?;
    print_fit(out, &f).map_err(io)?;
    writeln!(out, "# config snippet").map_err(io)?;
    let (table, rate, latency) = match class {
        LinkClass::Node => (node_table(&cfg), "link_gbps", "link_latency_ns"),
        LinkClass::Level(k) => (format!("[[fabric.topology.levels]]   # level {k}"), "nic_gbps", "nic_latency_ns"),
    };
    writeln!(out, "{table}\n{rate} = {:.3}\n{latency} = {:.1}", f.gbps, f.latency_ns).map_err(io)?;
    Ok(Status::Ok)
}

/// Reads one table and pairs it with its workload: the command line's, else its own line.
fn load_series(
    out: &mut dyn Write,
    path: &Path,
    given: Option<&WorkloadLine>,
    cfg: &Config,
    peer: usize,
) -> Result<Measured, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let table = measurements::parse(&path.display().to_string(), &text)?;
    let line = match (given, &table.workload) {
        (Some(g), Some(own)) if g != own => {
            writeln!(out, "# {}: --workload `{g}` replaces the table's `# workload: {own}`", table.name)
                .map_err(|e| e.to_string())?;
            g
        }
        (Some(g), _) => g,
        (None, Some(own)) => own,
        (None, None) => {
            return Err(format!(
                "{}: no `# workload:` line and no --workload for it; add e.g. `# workload: get` to the file or pass \
                 --workload get",
                table.name
            ));
        }
    };
    let workload = Workload::resolve(line, cfg, peer).map_err(|e| format!("{}: {e}", table.name))?;
    Measured::from_table(&table, workload)
}

/// An hccl_test log as a measured series: each row's `aveg_time` at its `data_size`, the
/// workload hccl_test's loop on the run the log and the flags describe.
fn hccl_test_series(path: &Path, flags: &Overrides, cfg: &Config) -> Result<Measured, String> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {name}: {e}"))?;
    let log = crate::hccl_test::parse_log(&name, &text)?;
    let run = crate::hccl_test::run_of(&log, flags, cfg)?;
    let points = log.rows.iter().map(|r| Point { size: r.size, time_us: r.time_us }).collect();
    Ok(Measured { name, workload: Workload::HcclTest(run), points })
}

/// The fitted values, every table's points and rms, the overall rms and a warning above
/// [`WARN_RMS`].
fn print_fit(out: &mut dyn Write, f: &Fit) -> std::io::Result<()> {
    writeln!(
        out,
        "fitted: latency {:.1} ns, raw rate {:.3} GB/s (effective {:.3} GB/s at efficiency {})",
        f.latency_ns,
        f.gbps,
        f.gbps * f.efficiency,
        f.efficiency
    )?;
    for t in &f.tables {
        if f.tables.len() > 1 {
            writeln!(out, "## {}", t.name)?;
        }
        writeln!(out, "{:>12} {:>14} {:>14} {:>9}", "size(B)", "measured(us)", "simulated(us)", "error(%)")?;
        for (size, m, s) in &t.points {
            writeln!(out, "{size:>12} {m:>14.3} {s:>14.3} {:>9.2}", (s - m) / m * 100.0)?;
        }
        if f.tables.len() > 1 {
            writeln!(out, "rms relative error of {}: {:.2}%", t.name, t.rms_error() * 100.0)?;
        }
    }
    for w in &f.warnings {
        writeln!(out, "WARNING: {w}")?;
    }
    let rms = f.rms_error();
    writeln!(out, "rms relative error: {:.2}%", rms * 100.0)?;
    if rms > WARN_RMS {
        writeln!(
            out,
            "WARNING: rms relative error {:.2}% is above {:.0}%: the link's latency and bandwidth alone do not explain \
             these measurements (another part of the model differs); the fitted values are a compromise",
            rms * 100.0,
            WARN_RMS * 100.0
        )?;
    }
    Ok(())
}

fn node_table(cfg: &Config) -> String {
    match cfg.fabric.topology {
        interconnect::TopologyConfig::Hierarchical(_) => "[fabric.topology.node]".into(),
        _ => "[fabric.topology]".into(),
    }
}
