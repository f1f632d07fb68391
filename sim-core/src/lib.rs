//! # sim-core: the deterministic heart of ranksim
//!
//! ranksim simulates a machine of chips running PyPTO L3 programs. This crate holds what does
//! not depend on a particular chip or fabric:
//!
//! - [`time`]: integer-picosecond virtual time;
//! - [`dtype`], [`tile`], [`tensor`]: element types, UB tiles and their arithmetic, GM tensors
//!   and window buffers;
//! - [`signal`]: notify / wait semantics;
//! - [`program`] and [`core`]: dispatches, tasks, and the program API a kernel calls;
//! - [`model`]: the traits `chip-model` and `interconnect` implement (`ChipTiming`, `Network`);
//! - [`world`]: the host side (domains, buffers, staging, dispatch, run) and
//!   [`RunOptions`] / [`Jitter`], how a run is executed;
//! - [`check`]: the protocol checker the scheduler calls while it applies events;
//! - the scheduler (`engine`) and the driver (`driver`, thread and async kernels), which are
//!   private, with what they share from below: the requests a core sends (`request`), the
//!   addresses of simulated memory (`addr`: `MemKey`, `Place`, `CellRef`) and the run options
//!   (`options`).
//!
//! Invariants: sim-core never reads the wall clock and does no I/O; every effect one core has
//! on another passes through the scheduler, which applies it in `(time, actor, seq, sub)`
//! order (`sub` numbers the events one request causes). Imports only go down: `world` over
//! `driver` over `engine` over `program` over `core` (the program API), and all of them over
//! `check`, `request`, `memory`, `addr` and the value types (ARCHITECTURE.md has the layers
//! and the three small circles left inside `core`, `engine` and `dtype`/`convert`).

mod addr;
pub mod check;
pub mod convert;
pub mod core;
pub mod dataflow;
mod driver;
pub mod dtype;
mod engine;
pub mod error;
mod memory;
pub mod model;
mod options;
mod payload;
pub mod program;
pub mod report;
mod request;
mod round;
pub mod signal;
pub mod stats;
pub mod tensor;
pub mod tile;
pub mod time;
pub mod trace;
pub mod world;

pub use crate::core::{
    CopyOpts, Core, CubeBuf, CubeTile, DeferCond, Ops, Pipe, SdmaHandle, SdmaOpts, TileLoad, block_on,
};
pub use check::{CheckOptions, CheckReport, Finding, FindingKind};
pub use convert::{RoundMode, cast_supported};
pub use dtype::{DType, Element};
pub use error::{SimError, SimResult, Site};
pub use half::{bf16, f16};
pub use model::{
    Busy, ChipTiming, CubeParams, DmaCost, DmaDir, Network, PacketTiming, PathId, PathKind, Route, SdmaParams,
};
pub use program::{ArgDir, AsyncKernel, CoreKind, Dispatch, Kernel, KernelFuture, Task, TaskId};
pub use report::DeadlockReport;
pub use signal::{AtomicType, NotifyOp, WaitCmp};
pub use stats::{DispatchRecord, EngineStats, HostStats, TaskRecord, Traffic};
pub use tensor::{Domain, Tensor};
pub use tile::{Axis, ReduceOp, Tile};
pub use time::{Bandwidth, Frequency, SimDuration, SimTime};
pub use trace::Trace;
pub use world::{DomainOptions, Jitter, Progress, RunOptions, RunReport, World};
