//! # ranksim
//!
//! A cycle-approximate simulator of a multi-chip machine running PyPTO L3 programs: symmetric
//! window buffers, INT32 signals with notify / wait, one-sided remote load / store, chunked
//! put / get, and the collectives built from them.
//!
//! ```
//! use ranksim::prelude::*;
//!
//! let mut world = ranksim::Config::default_preset().world()?;
//! let all = world.world_domain("comm_d0")?;
//! let x = world.alloc_window(&all, "x", DType::F32, &[1, 4])?;
//! world.dispatch_all(&all, Dispatch::kernel("hello", 1, move |core| {
//!     let t = core.load(&x, &[0, 0], &[1, 4])?;
//!     let y = core.adds(&t, core.rank() as f64)?;
//!     core.store(&y, &x, &[0, 0])
//! }))?;
//! let report = world.run()?;
//! assert!(report.end > SimTime::ZERO);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## A tour
//!
//! - **The machine.** [`Config`] loads a machine (a TOML file or an embedded preset such as
//!   `a2a3`) and builds a [`World`](sim_core::World) from it: chips from [`chip_model`], the
//!   fabric from [`interconnect`].
//! - **Programs.** A [`World`](sim_core::World) holds comm domains, window buffers and queued
//!   dispatches; kernels are closures over a [`Core`](sim_core::Core), the program API
//!   (load / store, notify / wait, remote_store, put / get, SDMA, cube). [`prelude`] has the
//!   names; [`programs`] the tutorial programs; the README's "Writing a program" a first one.
//! - **Built-in collectives.** [`collectives`] holds PyPTO's builtin kernels and the
//!   HCCL-class algorithms, written on the public program API only.
//! - **Measuring.** [`measure`] measures any collective the way nccl-tests and PyPTO's
//!   `benchmark()` do, and checks it: [`measure::Collective`] describes one you write
//!   (buffers, inputs, golden, bytes, busbw factor), [`measure::Builtin`] is the built-in ones
//!   as such; [`measure::point`] is one size (nccl-tests' row), [`measure::sweep`] many,
//!   [`measure::bench()`] PyPTO's `BenchmarkStats`, [`measure::check`] the protocol checker
//!   ([`CheckReport`](sim_core::check::CheckReport)) and [`measure::busbw_bound`] the machine's
//!   bus-bandwidth bound. Sizes are in bytes, options a [`measure::Measure`], errors
//!   [`measure::Error`]. The guide is `docs/your-collective.md`, with
//!   `examples/my_allgather.rs`. [`RunReport::device_time`](sim_core::RunReport::device_time)
//!   is a run's device time.
//! - **Output formats.** [`formats`] writes them all: the nccl-tests table, JSON and SVG of a
//!   sweep, PyPTO's `[STRACE]` spans and the `BenchmarkStats` folded from them, and a traced
//!   run's Chrome trace (Perfetto).
//!
//! The crates: `sim-core` (time, scheduler, program API), `chip-model` (a chip's timing),
//! `interconnect` (the fabric), `collectives` (collectives on the public API). This library
//! adds configs and presets ([`Config`]), the tutorial programs ([`programs`]), measuring
//! ([`measure`]) and the output formats ([`formats`]). The `ranksim` command line (sweep,
//! bench, check, calibrate, validate, topo, run) is the `ranksim-cli` crate (`cli/`), which
//! also gives a collective of yours that command line (`ranksim_cli::main_for`).

pub mod config;
pub mod formats;
pub mod measure;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod programs;

pub use chip_model;
pub use collectives;
pub use config::{Config, ConfigError};
pub use interconnect;
pub use sim_core;

/// The names a program needs: the program API, the host API and the value types.
pub mod prelude {
    pub use sim_core::{
        ArgDir, AtomicType, Axis, BinaryOp, CmpOp, CopyOpts, Core, CoreKind, CubeBuf, CubeTile, DType, DeferCond,
        Dispatch, Domain, DomainOptions, NotifyOp, Ops, Pipe, ReduceOp, RoundMode, RunReport, SdmaHandle, SdmaOpts,
        SimDuration, SimError, SimResult, SimTime, Task, TaskId, Tensor, Tile, TileLoad, UnaryOp, WaitCmp, World, bf16,
        check::{CheckOptions, CheckReport, Finding, FindingKind},
        f16,
    };
}
