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
//! The crates: `sim-core` (time, scheduler, program API), `chip-model` (a chip's timing),
//! `interconnect` (the fabric), `collectives` (collectives on the public API). This facade
//! adds configs and presets ([`Config`]), the tutorial programs ([`programs`]) and the CLI.

pub mod calibrate;
pub mod checker;
pub mod commands;
pub mod config;
pub mod measurements;
pub mod programs;
pub mod report;
pub mod strace;
pub mod sweep;
pub mod workload;

pub use chip_model;
pub use collectives;
pub use config::{Config, ConfigError};
pub use interconnect;
pub use sim_core;

/// The names a program needs: the program API, the host API and the value types.
pub mod prelude {
    pub use sim_core::{
        ArgDir, AtomicType, Axis, CheckOptions, CheckReport, CopyOpts, Core, CoreKind, CubeBuf, CubeTile, DType,
        DeferCond, Dispatch, Domain, DomainOptions, Finding, FindingKind, NotifyOp, Ops, Pipe, ReduceOp, RoundMode,
        RunReport, SdmaHandle, SdmaOpts, SimDuration, SimError, SimResult, SimTime, Task, TaskId, Tensor, Tile,
        TileLoad, WaitCmp, World, bf16, f16,
    };
}
