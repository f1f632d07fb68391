//! `ranksim run`: the built-in tutorial programs, checked against their goldens.

use super::{CmdResult, Status};
use ranksim::Config;
use ranksim::measure::Budgets;
use ranksim::programs::{self, PROGRAMS};
use std::io::Write;
use std::path::Path;

/// Runs `program` (or every correct program) on `ranks` ranks of the machine.
pub fn run(
    out: &mut dyn Write,
    program: Option<&str>,
    config: Option<&Path>,
    ranks: Option<usize>,
    list: bool,
) -> CmdResult {
    run_with_stats(out, program, config, ranks, list, false, &Budgets::default())
}

/// As [`run`]; with `stats`, also prints the engine's work over the programs and the host
/// time; every run within `budgets`, and stopped by Ctrl-C.
pub fn run_with_stats(
    out: &mut dyn Write,
    program: Option<&str>,
    config: Option<&Path>,
    ranks: Option<usize>,
    list: bool,
    stats: bool,
    budgets: &Budgets,
) -> CmdResult {
    let (mut tally, started) = (crate::run_stats::Tally::default(), std::time::Instant::now());
    let w = |e: std::io::Error| e.to_string();
    if list {
        for p in PROGRAMS {
            writeln!(out, "{:<18} {}", p.name, p.about).map_err(w)?;
        }
        return Ok(Status::Ok);
    }
    let cfg = Config::load_or_default(config).map_err(|e| e.to_string())?;
    let ranks = ranks.unwrap_or(cfg.machine.ranks);
    let chosen: Vec<&programs::Program> = match program {
        Some(name) => {
            vec![programs::find(name).ok_or_else(|| format!("no program `{name}`; `ranksim run --list` names them"))?]
        }
        None => PROGRAMS.iter().filter(|p| p.name != "deadlock").collect(),
    };
    writeln!(
        out,
        "# ranksim: machine `{}` ({} ranks available), running on {ranks} ranks",
        cfg.machine.name, cfg.machine.ranks
    )
    .map_err(w)?;
    if ranks == 0 || ranks > cfg.machine.ranks {
        return Err(format!(
            "--ranks {ranks}: machine `{}` has {} ranks; use 1..={}",
            cfg.machine.name, cfg.machine.ranks, cfg.machine.ranks
        ));
    }
    let mut failed = false;
    for p in chosen {
        if ranks < p.min_ranks {
            if program.is_some() {
                return Err(format!(
                    "program `{}` needs at least {} ranks; got {ranks} (machine `{}` has {})",
                    p.name, p.min_ranks, cfg.machine.name, cfg.machine.ranks
                ));
            }
            // Running every program: one that cannot run on this few ranks is skipped, said so.
            writeln!(out, "SKIP {:<18} needs at least {} ranks; running on {ranks}", p.name, p.min_ranks).map_err(w)?;
            continue;
        }
        let mut world = cfg.world().map_err(|e| e.to_string())?;
        budgets.apply(world.options_mut(), Some(&crate::interrupt::flag()));
        match (p.run)(&mut world, ranks) {
            Ok(o) => {
                tally.add(&o.report);
                // A builtin that returned at once did not do what the program asked.
                let ok = o.ok && o.report.warnings.is_empty();
                let status = if ok { "OK" } else { "FAIL" };
                failed |= !ok;
                for warning in &o.report.warnings {
                    writeln!(out, "# warning: {} : {warning}", p.name).map_err(w)?;
                }
                writeln!(out, "{status:<4} {:<18} {:>10} simulated  {}", p.name, o.report.end.to_string(), o.detail)
                    .map_err(w)?;
                for warning in &o.report.warnings {
                    writeln!(out, "     # warning: {warning}").map_err(w)?;
                }
            }
            Err(e) => {
                failed = true;
                writeln!(out, "FAIL {:<18} {e}", p.name).map_err(w)?;
            }
        }
    }
    if stats {
        writeln!(out, "{}", tally.line(started.elapsed())).map_err(w)?;
    }
    Ok(if failed { Status::Failed } else { Status::Ok })
}
