//! The subcommands of the `ranksim` binary, as library code so they can be tested: each takes
//! its parsed arguments, writes its output to a `Write`, and returns the exit status.

pub mod bench;
pub mod calibrate;
pub mod check;
pub mod custom;
pub mod run;
pub mod sweep;
pub mod topo;
pub mod validate;

use sim_core::{Jitter, ReduceOp, SimDuration};

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

/// Parses `-o`: a reduction; nccl-tests' `avg` (and `all`) are named and refused.
pub fn parse_op(s: &str) -> Result<ReduceOp, String> {
    match s {
        "avg" => Err("PyPTO's collectives have no avg; use -o sum (avg is sum / ranks and takes the same time)".into()),
        "all" => Err("-o takes one reduction (sum, max, min or prod); run one sweep per op".into()),
        _ => s.parse(),
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
