//! The subcommands of the `ranksim` binary, as library code so they can be tested: each takes
//! its parsed arguments, writes its output to a `Write`, and returns the exit status.

pub mod bench;
pub mod calibrate;
pub mod check;
pub mod run;
pub mod sweep;
pub mod topo;
pub mod validate;

/// A command's outcome: success, findings (wrong results, too slow), or a usage error.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Status {
    Ok,
    /// The run completed but something was wrong (exit code 1).
    Failed,
}

/// A usage or setup error: printed as `error: ...`, exit code 2.
pub type CmdResult = Result<Status, String>;
