//! # ranksim-cli
//!
//! The `ranksim` command line over the [`ranksim`] library: the binary's subcommands
//! ([`commands`]: run, sweep, bench, check, calibrate, validate, topo) with their plumbing
//! (clap flags, progress bars, `-j` parallelism, the printed tables), and [`main_for`], which
//! gives a collective of yours the `sweep`, `bench` and `check` commands of `ranksim`.
//!
//! The library part exists for two users: the example binaries (`examples/my_allgather.rs`
//! measures its own collective through [`main_for`], the tutorial examples run a program
//! through [`example_main`]), and the integration tests, which call the
//! commands as functions writing to a `Write`. Measuring itself (the `Collective` trait,
//! `point`, `sweep`, `bench`, `check`, the busbw bound) is the library's
//! [`ranksim::measure`]; this crate decides what to run, from flags, and prints it.
//!
//! - [`commands`]: each subcommand, taking its parsed arguments and returning its
//!   [`commands::Status`];
//! - [`sweep`]: one series of a built-in sweep ([`sweep::SweepSpec`]), its value ranges and
//!   notes;
//! - [`checker`]: what `ranksim check` checks (tutorials, every collective, the broken zoo);
//! - [`measurements`]: the measured tables `validate` and `calibrate` read;
//! - [`workload`]: the simulated programs those tables name; [`calibrate`]: the fit;
//! - [`hccl_test`]: hccl_test's logs, read, and its loop of host-launched ops, modelled.

pub mod calibrate;
pub mod checker;
pub mod commands;
mod gemm_ar;
pub mod hccl_test;
pub mod interrupt;
pub mod measurements;
mod os;
mod parallel;
pub mod processes;
mod progress;
mod run_stats;
pub mod sweep;
pub mod transfer_batch;
pub mod workload;

use ranksim::measure::Collective;
use ranksim::{Config, programs};

/// Your collective's command line: `sweep` (the default), `bench` and `check` with the flags,
/// outputs and exit codes of `ranksim`'s (0 ok; 1 a wrong element, a checker finding, a FAILED
/// row, or an average busbw below `--min-busbw`; 2 a usage error). Call it from your example's
/// `main`:
///
/// ```no_run
/// # use ranksim::measure::{Collective, Wrong};
/// # use ranksim::prelude::*;
/// # struct Mine;
/// # impl Collective for Mine {
/// #     type Buffers = ();
/// #     fn name(&self) -> String { "mine".into() }
/// #     fn dtype(&self) -> DType { DType::F32 }
/// #     fn bus_factor(&self, _: usize) -> f64 { 1.0 }
/// #     fn setup(&self, _: &mut World, _: &Domain, _: usize) -> SimResult<()> { Ok(()) }
/// #     fn stage(&self, _: &mut World, _: &(), _: usize) -> SimResult<()> { Ok(()) }
/// #     fn call(&self, _: &mut World, _: &()) -> SimResult<()> { Ok(()) }
/// #     fn wrong(&self, _: &World, _: &(), _: usize) -> SimResult<Wrong> { Ok(Wrong::new()) }
/// # }
/// fn main() -> std::process::ExitCode {
///     ranksim_cli::main_for(&Mine)
/// }
/// ```
///
/// then `cargo run --release --example mine -- sweep -b 1K -e 1M --min-busbw 20`, or
/// `... -- check --seeds 20`, or `... -- bench -b 1M`; `-- --help` lists every flag.
pub fn main_for<C: Collective + Sync>(c: &C) -> std::process::ExitCode {
    use std::process::ExitCode;
    restore_sigpipe();
    interrupt::install();
    // Under mpirun a sweep or a check is split over the processes; the session ends MPI when
    // dropped.
    let (place, _session) = match processes::join(std::env::args().nth(1).is_none_or(|a| a == "sweep" || a == "check"))
    {
        Ok(s) => s,
        Err(e) => return exit_code(Err(e)),
    };
    let (mut stdout, mut sink) = (std::io::stdout().lock(), std::io::sink());
    let out = processes::output(place, &mut stdout, &mut sink);
    match commands::custom::run_over(c, std::env::args(), out, place) {
        Ok(result) => exit_code(result),
        // --help and --version print and exit 0; a usage error prints and exits 2.
        Err(e) => {
            let _ = e.print();
            ExitCode::from(if e.use_stderr() { 2 } else { 0 })
        }
    }
}

/// [`main_for`] for a host that is not a Rust `main` (the Python package's `python -m
/// ranksim`): runs the command line `args` (`args[0]` names the program) in this process, no
/// MPI, and returns the exit code (0 ok; 1 a wrong element, a finding, a FAILED row or busbw
/// below `--min-busbw`; 2 a usage error, printed on stderr).
pub fn run_for<C: Collective + Sync>(c: &C, args: Vec<String>) -> u8 {
    let mut stdout = std::io::stdout().lock();
    match commands::custom::run_over(c, args, &mut stdout, None) {
        Ok(Ok(commands::Status::Ok)) => 0,
        Ok(Ok(commands::Status::Failed)) => 1,
        Ok(Err(msg)) => {
            eprintln!("error: {msg}");
            2
        }
        Err(e) => {
            let _ = e.print();
            if e.use_stderr() { 2 } else { 0 }
        }
    }
}

/// Entry point of the cargo examples: runs program `name` on the default preset with the rank
/// count given as the first argument (default 2, as PyPTO's `-d 0,1`), prints `OK` when it
/// matches its golden, and the report when it fails.
pub fn example_main(name: &str) -> std::process::ExitCode {
    use std::process::ExitCode;
    let ranks = match std::env::args().nth(1).map(|a| a.parse::<usize>()) {
        None => 2,
        Some(Ok(n)) => n,
        Some(Err(_)) => {
            eprintln!("usage: cargo run --example {name} [RANKS]");
            return ExitCode::from(2);
        }
    };
    let Some(p) = programs::find(name) else {
        eprintln!("no built-in program `{name}`");
        return ExitCode::from(2);
    };
    let cfg = Config::default_preset();
    if ranks < p.min_ranks || ranks > cfg.machine.ranks {
        eprintln!("{name} needs {}..={} ranks, got {ranks}", p.min_ranks, cfg.machine.ranks);
        return ExitCode::from(2);
    }
    let mut world = match cfg.world() {
        Ok(w) => w,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    match (p.run)(&mut world, ranks) {
        Ok(out) if out.ok => {
            println!("{name}: {} (simulated {})", out.detail, out.report.end);
            println!("OK");
            ExitCode::SUCCESS
        }
        Ok(out) => {
            println!("{name}: FAIL: {}", out.detail);
            ExitCode::FAILURE
        }
        Err(e) => {
            println!("{name}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Like other Unix tools, end quietly when the reader of stdout goes away (`| head`): restores
/// the default SIGPIPE disposition. Called from `main`, before any run.
pub fn restore_sigpipe() {
    // SAFETY: restoring the default SIGPIPE disposition before any thread starts.
    #[cfg(unix)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// A command's outcome as the process's exit code: 0 ok, 1 failed, 2 an error (printed as
/// `error: ...` on stderr), 130 when Ctrl-C or SIGTERM ended it (its output is partial).
pub fn exit_code(result: commands::CmdResult) -> std::process::ExitCode {
    use std::process::ExitCode;
    if interrupt::raised() {
        // What was printed is what had finished: a sweep's rows so far.
        eprintln!("interrupted: the output above is partial");
        return ExitCode::from(interrupt::EXIT_CODE);
    }
    match result {
        Ok(commands::Status::Ok) => ExitCode::SUCCESS,
        Ok(commands::Status::Failed) => ExitCode::FAILURE,
        Err(msg) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
    }
}
