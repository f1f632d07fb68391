//! Built-in programs: the PyPTO distributed tutorial examples (reference §7, "Companion
//! examples") and a deliberately broken protocol. Each builds its buffers on a fresh world,
//! runs, and compares the result with its golden.

mod barrier;
pub mod broken;
pub mod broken_polls;
mod common;
mod deadlock;
pub mod gemm_ar;
mod hello_rank;
mod put_get;
mod remote_load_store;
mod signal_exchange;
mod window_round_trip;

pub use common::Outcome;
use sim_core::{SimResult, World};

/// Every entry of the broken zoo: the protocol bugs, then the polls that never end.
pub fn broken_zoo() -> impl Iterator<Item = &'static broken::Broken> {
    broken::BROKEN.iter().chain(broken_polls::BROKEN_POLLS)
}

/// The broken-zoo entry called `name`.
pub fn find_broken(name: &str) -> Option<&'static broken::Broken> {
    broken_zoo().find(|b| b.name == name)
}

/// A named program that can run on any world with at least `min_ranks` ranks.
pub struct Program {
    /// Name used by the CLI and the cargo examples.
    pub name: &'static str,
    /// One line on what it shows.
    pub about: &'static str,
    /// Fewest ranks it needs.
    pub min_ranks: usize,
    /// Runs it on the first `ranks` chips of `world`.
    pub run: fn(&mut World, usize) -> SimResult<Outcome>,
}

/// Every built-in program, in tutorial order.
pub const PROGRAMS: &[Program] = &[
    Program { name: "hello_rank", about: "y[r] = x[r] + r on every rank", min_ranks: 1, run: hello_rank::run },
    Program {
        name: "programming_model",
        about: "y[r] = x[r] * (r + 1) on the vector unit",
        min_ranks: 1,
        run: window_round_trip::run_scale,
    },
    Program {
        name: "window_buffer",
        about: "round trip through this rank's window: y = x",
        min_ranks: 1,
        run: window_round_trip::run_round_trip,
    },
    Program {
        name: "signal_exchange",
        about: "AtomicAdd r+1 into the next rank's cell, wait, read it back",
        min_ranks: 2,
        run: signal_exchange::run,
    },
    Program {
        name: "barrier",
        about: "hand-rolled barrier; each rank's signal row reads 1 except its own cell",
        min_ranks: 2,
        run: barrier::run,
    },
    Program {
        name: "remote_load",
        about: "stage, barrier, remote_load the next rank: y[r] = x[(r+1)%N]",
        min_ranks: 2,
        run: remote_load_store::run_load,
    },
    Program {
        name: "remote_store",
        about: "remote_store to the next rank, notify, wait: y[r] = x[(r-1)%N]",
        min_ranks: 2,
        run: remote_load_store::run_store,
    },
    Program {
        name: "put",
        about: "put to the next rank, notify, wait: y[r] = x[(r-1)%N]",
        min_ranks: 2,
        run: put_get::run_put,
    },
    Program {
        name: "get",
        about: "stage, barrier, get from the next rank: y[r] = x[(r+1)%N]",
        min_ranks: 2,
        run: put_get::run_get,
    },
    Program {
        name: "deadlock",
        about: "every rank waits before it notifies: shows the deadlock report",
        min_ranks: 2,
        run: deadlock::run,
    },
];

/// The program called `name`.
pub fn find(name: &str) -> Option<&'static Program> {
    PROGRAMS.iter().find(|p| p.name == name)
}
