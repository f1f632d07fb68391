//! The subcommands of the `ranksim` binary, as library code so they can be tested: each takes
//! its parsed arguments, writes its output to a `Write`, and returns the exit status.

pub mod bench;
pub mod calibrate;
pub mod check;
pub mod custom;
pub mod hccl_test;
pub mod run;
pub mod sweep;
pub mod topo;
pub mod validate;

use ranksim::formats::parse_size;
use ranksim::measure::Budgets;
use ranksim::measure::memory::MemoryLimit;
use sim_core::{Jitter, RunOptions, SimDuration, SimTime};

/// Seeded timing jitter of `sweep` and `bench`, as the command line gives it.
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct JitterFlags {
    /// Turn on seeded timing jitter (the same seed gives the same run; repeated calls differ).
    #[arg(long)]
    seed: Option<u64>,
    /// Largest jitter added to a transfer or memory access, ns (with --seed; at most 1e9).
    #[arg(long, default_value_t = 20)]
    jitter_op_ns: u64,
    /// Largest jitter added to a dispatch start, ns (with --seed; at most 1e9).
    #[arg(long, default_value_t = 1000)]
    jitter_dispatch_ns: u64,
}

impl JitterFlags {
    /// The jitter asked for: `None` without `--seed`.
    pub fn jitter(&self) -> Option<Jitter> {
        self.seed.map(|seed| Jitter {
            seed,
            op: SimDuration::from_ns(self.jitter_op_ns),
            dispatch: SimDuration::from_ns(self.jitter_dispatch_ns),
        })
    }
}

/// What ends a run that would never end, as the command line gives it (every command that
/// runs programs takes these).
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct BudgetFlags {
    /// End a run whose simulated time passes this many microseconds (a FAILED row in a
    /// sweep, naming the limit and what each core was doing). Default: one simulated hour.
    #[arg(long, default_value_t = RunOptions::DEFAULT_MAX_SIM_TIME.as_ps() as f64 / 1e6, value_parser = parse_sim_time_us)]
    max_sim_time_us: f64,
    /// End a run after this many engine events. Default: 2^32.
    #[arg(long, default_value_t = RunOptions::DEFAULT_MAX_EVENTS)]
    max_events: u64,
    /// A run in which every running core has polled this many times with nothing else
    /// happening ends as a livelock (0: never).
    #[arg(long, default_value_t = RunOptions::DEFAULT_LIVELOCK_POLLS)]
    livelock_polls: u64,
    /// Refuse, before it starts, what would hold more memory than this many bytes (K/M/G
    /// suffixes): a run, or a sweep's sizes run at once; the refusal gives the estimate, its
    /// largest part and what to change. Default: the memory this host has available
    /// (MemAvailable).
    #[arg(long, value_parser = parse_memory)]
    max_memory: Option<u64>,
}

impl BudgetFlags {
    /// The budgets asked for.
    pub fn budgets(&self) -> Budgets {
        Budgets {
            max_sim_time: SimTime::from_ps((self.max_sim_time_us * 1e6).round() as u64),
            max_events: self.max_events,
            livelock_polls: self.livelock_polls,
            max_memory: self.max_memory.map(MemoryLimit::Given).or_else(MemoryLimit::host),
        }
    }
}

/// Parses `--max-memory`: a size (K/M/G suffixes) above zero.
fn parse_memory(s: &str) -> Result<u64, String> {
    match parse_size(s)? {
        0 => Err("must be more than 0 bytes (K/M/G suffixes, e.g. 4G)".into()),
        n => Ok(n),
    }
}

/// Parses `--max-sim-time-us`: a positive, finite number of microseconds the clock can hold.
fn parse_sim_time_us(s: &str) -> Result<f64, String> {
    let us: f64 = s.parse().map_err(|e| format!("{e}"))?;
    let max = SimTime::NEVER.as_ps() as f64 / 1e6;
    if us.is_finite() && us > 0.0 && us < max {
        Ok(us)
    } else {
        Err(format!("must be a positive number of microseconds below {max:.0}"))
    }
}

/// A command's outcome: success, findings (wrong results, too slow), or a usage error.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Everything passed (exit code 0).
    Ok,
    /// The run completed but something was wrong (exit code 1).
    Failed,
}

/// A usage or setup error: printed as `error: ...`, exit code 2.
pub type CmdResult = Result<Status, String>;
