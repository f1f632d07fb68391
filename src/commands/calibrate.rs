//! `ranksim calibrate`: fit a link class's latency and bandwidth to measured (size, time)
//! points, show how well the re-simulation matches each point, and print the config snippet.

use super::{CmdResult, Status};
use crate::Config;
use crate::calibrate::{LinkClass, Workload, fit, parse_table};
use std::io::Write;
use std::path::PathBuf;

/// Everything `calibrate` is told.
#[derive(Clone, Debug)]
pub struct CalibrateArgs {
    pub config: Option<PathBuf>,
    pub table: PathBuf,
    pub workload: Workload,
    /// `node` or `levelK`.
    pub link: String,
}

/// Parses `node` / `level2` into a link class.
pub fn link_class(s: &str) -> Result<LinkClass, String> {
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
    let text = std::fs::read_to_string(&a.table).map_err(|e| format!("cannot read {}: {e}", a.table.display()))?;
    let points = parse_table(&text).map_err(|e| format!("{}: {e}", a.table.display()))?;
    let class = link_class(&a.link)?;
    let f = fit(&cfg, class, &a.workload, &points)?;
    let what = match &a.workload {
        Workload::Get { peer } => format!("get (one core, rank 0 <- rank {peer})"),
        Workload::Put { peer } => format!("put + notify (one core, rank 0 -> rank {peer})"),
        Workload::Collective(s) => format!("{} {} {} on {} ranks", s.kind, s.mode, s.path, s.ranks),
    };
    writeln!(out, "# calibrate {} links of `{}` to {} points of {what}", a.link, cfg.machine.name, points.len())
        .map_err(io)?;
    writeln!(
        out,
        "fitted: latency {:.1} ns, raw rate {:.3} GB/s (effective {:.3} GB/s at efficiency {})",
        f.latency_ns,
        f.gbps,
        f.gbps * f.efficiency,
        f.efficiency
    )
    .map_err(io)?;
    writeln!(out, "{:>12} {:>14} {:>14} {:>9}", "size(B)", "measured(us)", "simulated(us)", "error(%)").map_err(io)?;
    for (size, m, s) in &f.points {
        writeln!(out, "{size:>12} {m:>14.3} {s:>14.3} {:>9.2}", (s - m) / m * 100.0).map_err(io)?;
    }
    writeln!(out, "rms relative error: {:.2}%", f.rms_error() * 100.0).map_err(io)?;
    writeln!(out, "# config snippet").map_err(io)?;
    let (table, rate, latency) = match class {
        LinkClass::Node => (node_table(&cfg), "link_gbps", "link_latency_ns"),
        LinkClass::Level(k) => (format!("[[fabric.topology.levels]]   # level {k}"), "nic_gbps", "nic_latency_ns"),
    };
    writeln!(out, "{table}\n{rate} = {:.3}\n{latency} = {:.1}", f.gbps, f.latency_ns).map_err(io)?;
    Ok(Status::Ok)
}

fn node_table(cfg: &Config) -> String {
    match cfg.fabric.topology {
        interconnect::TopologyConfig::Hierarchical(_) => "[fabric.topology.node]".into(),
        _ => "[fabric.topology]".into(),
    }
}
