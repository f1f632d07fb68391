//! The `ranksim` command line.

use clap::{Parser, Subcommand};
use ranksim::Config;
use ranksim::programs::{self, PROGRAMS};
use std::path::PathBuf;
use std::process::ExitCode;

/// ranksim: a cycle-approximate multi-chip simulator for PyPTO L3 collectives.
#[derive(Parser)]
#[command(version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run built-in programs (the PyPTO distributed tutorial examples) and check their goldens.
    ///
    /// With no program name, runs every correct program. `ranksim run deadlock` shows the
    /// report of a deliberately broken protocol (and exits non-zero).
    Run {
        /// Program to run; `ranksim run --list` names them.
        program: Option<String>,
        /// Machine config (TOML); default: the embedded a2a3 preset.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Ranks taking part (default: every rank of the machine).
        #[arg(long)]
        ranks: Option<usize>,
        /// List the programs and exit.
        #[arg(long)]
        list: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command.unwrap_or(Command::Run { program: None, config: None, ranks: None, list: false }) {
        Command::Run { program, config, ranks, list } => run(program, config, ranks, list),
    };
    match result {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
    }
}

fn run(program: Option<String>, config: Option<PathBuf>, ranks: Option<usize>, list: bool) -> Result<ExitCode, String> {
    if list {
        for p in PROGRAMS {
            println!("{:<16} {}", p.name, p.about);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let cfg = Config::load_or_default(config.as_deref()).map_err(|e| e.to_string())?;
    let ranks = ranks.unwrap_or(cfg.machine.ranks);
    let chosen: Vec<&programs::Program> = match &program {
        Some(name) => {
            vec![programs::find(name).ok_or_else(|| format!("no program `{name}`; `ranksim run --list` names them"))?]
        }
        None => PROGRAMS.iter().filter(|p| p.name != "deadlock").collect(),
    };
    println!(
        "# ranksim: machine `{}` ({} ranks available), running on {ranks} ranks",
        cfg.machine.name, cfg.machine.ranks
    );
    let mut failed = false;
    for p in chosen {
        if ranks < p.min_ranks || ranks > cfg.machine.ranks {
            return Err(format!(
                "program `{}` needs {}..={} ranks on this machine; got --ranks {ranks}",
                p.name, p.min_ranks, cfg.machine.ranks
            ));
        }
        let mut world = cfg.world().map_err(|e| e.to_string())?;
        match (p.run)(&mut world, ranks) {
            Ok(out) => {
                let status = if out.ok { "OK" } else { "FAIL" };
                failed |= !out.ok;
                println!("{status:<4} {:<16} {:>10} simulated  {}", p.name, out.report.end.to_string(), out.detail);
            }
            Err(e) => {
                failed = true;
                println!("FAIL {:<16} {e}", p.name);
            }
        }
    }
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}
