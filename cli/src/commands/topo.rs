//! `ranksim topo`: the machine a config describes — chips, cores, memory paths, its links by
//! class (each link with `--links`) with rates and latency, ports — and the route between two
//! ranks; or the config itself, resolved, each value with its source (`--resolved`).

use super::{CmdResult, Status};
use chip_model::ChipModel;
use ranksim::Config;
use sim_core::model::{ChipTiming, DmaDir};
use std::io::Write;
use std::path::Path;

/// Prints the machine (every link and port with `links`, else a summary by class); with
/// `route`, also the path from rank `a` to rank `b`.
pub fn topo(out: &mut dyn Write, config: Option<&Path>, route: Option<(usize, usize)>, links: bool) -> CmdResult {
    let io = |e: std::io::Error| e.to_string();
    let cfg = Config::load_or_default(config).map_err(|e| e.to_string())?;
    let chip = ChipModel::from_config(&cfg.chip).map_err(|e| e.to_string())?;
    let paths = cfg.chip_paths()?;
    let ranks = cfg.machine.ranks;
    let c = &cfg.chip;
    writeln!(out, "machine: {} ({ranks} ranks)", cfg.machine.name).map_err(io)?;
    writeln!(
        out,
        "chip: {}: {} AIV + {} AIC cores at {} GHz; UB {} B per AIV; L1 {} B per AIC; HBM {} GB/s x {} efficiency",
        c.name, c.aiv_cores, c.aic_cores, c.clock_ghz, c.ub_bytes, c.l1_bytes, c.hbm_gbps, c.hbm_efficiency
    )
    .map_err(io)?;
    let dma = |d: DmaDir| {
        let rate =
            chip.dma_rate(d).map_or("unlimited".to_string(), |r| format!("{:.2} GB/s", r.bytes_per_s() as f64 / 1e9));
        format!("{rate} + {:.1} ns issue", chip.dma_issue(d).as_ps() as f64 / 1000.0)
    };
    writeln!(out, "dma per core: GM->UB {}; UB->GM {}", dma(DmaDir::GmToUb), dma(DmaDir::UbToGm)).map_err(io)?;
    writeln!(
        out,
        "signals: notify {} ns, wait poll {} ns; dispatch launch {} ns, task start {} ns; host bind {} us, finalize {} us",
        c.notify_issue_ns, c.wait_poll_ns, c.dispatch_launch_ns, c.task_start_ns, cfg.host.bind_us, cfg.host.finalize_us
    )
    .map_err(io)?;
    let text = if links {
        interconnect::describe(&cfg.fabric, ranks, &paths)
    } else {
        interconnect::describe_summary(&cfg.fabric, ranks, &paths)
    }
    .map_err(|e| e.to_string())?;
    write!(out, "{text}").map_err(io)?;
    if let Some((a, b)) = route {
        if a >= ranks || b >= ranks {
            return Err(format!("--route {a} {b}: ranks must be in 0..={}", ranks - 1));
        }
        let line = interconnect::route_line(&cfg.fabric, ranks, &paths, a, b).map_err(|e| e.to_string())?;
        writeln!(out, "route {a} -> {b}: {line}").map_err(io)?;
    }
    Ok(Status::Ok)
}

/// Prints the config `config` names resolved (its bases merged, defaults filled in), as TOML
/// with each value's source: `file:line`, or `default`.
pub fn resolved(out: &mut dyn Write, config: Option<&Path>) -> CmdResult {
    let layers = Config::layers(config).map_err(|e| e.to_string())?;
    let cfg = Config::from_merged(&layers).map_err(|e| e.to_string())?;
    write!(out, "{}", layers.listing(&cfg)?).map_err(|e| e.to_string())?;
    Ok(Status::Ok)
}
