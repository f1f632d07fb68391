//! # sim-core: the deterministic heart of ranksim
//!
//! ranksim simulates a machine of chips running PyPTO L3 programs. This crate holds what does
//! not depend on a particular chip or fabric:
//!
//! - at the root, the everyday types: virtual time ([`SimTime`]), element types and UB tiles
//!   ([`DType`], [`Tile`]), GM tensors and windows ([`Tensor`], [`Domain`]), notify / wait
//!   semantics ([`NotifyOp`], [`WaitCmp`]), dispatches and tasks ([`Dispatch`], [`Task`]), the
//!   program API a kernel calls ([`Core`], [`Ops`]) and the host side ([`World`], [`RunOptions`]);
//! - [`model`]: the traits `chip-model` and `interconnect` implement (`ChipTiming`, `Network`);
//! - [`check`]: the protocol checker's options and report types;
//! - [`stats`] and [`trace`]: what a run records;
//! - the scheduler (`engine`) and the driver (`driver`, thread and async kernels), which are
//!   private, with what they share from below: the requests a core sends (`request`), the
//!   addresses of simulated memory (`addr`: `MemKey`, `Place`, `CellRef`) and the run options
//!   (`options`).
//!
//! Invariants: sim-core never reads the wall clock and does no I/O; every effect one core has
//! on another passes through the scheduler, which applies it in `(time, actor, seq, sub)`
//! order (`sub` numbers the events one request causes). Imports only go down: `world` over
//! `driver` over `engine` over `program` over `kernel_api` (the program API), and all of them over
//! `check`, `request`, `memory`, `addr` and the value types (ARCHITECTURE.md has the layers
//! and the three small circles left inside `kernel_api`, `engine` and `dtype`/`convert`).

#![warn(missing_docs, unreachable_pub)]

mod addr;
pub mod check;
mod convert;
mod dataflow;
mod driver;
mod dtype;
mod engine;
mod error;
mod kernel_api;
mod memory;
pub mod model;
mod options;
mod payload;
mod program;
mod report;
mod request;
mod signal;
pub mod stats;
mod tensor;
mod tile;
mod time;
pub mod trace;
mod world;

pub use convert::{RoundMode, cast_supported};
pub use dtype::{DType, Element};
pub use error::{SimError, SimResult, Site};
pub use half::{bf16, f16};
pub use kernel_api::{
    CopyOpts, Core, CubeBuf, CubeTile, DeferCond, Ops, Pipe, SdmaHandle, SdmaOpts, TileLoad, block_on,
};
pub use program::{ArgDir, AsyncKernel, CoreKind, Dispatch, Kernel, KernelFuture, Task, TaskId};
pub use report::{BlockedWait, CellWrite, DeadlockReport, StuckTask};
pub use signal::{AtomicType, NotifyOp, WaitCmp};
pub use tensor::{Domain, Tensor};
pub use tile::{Axis, ReduceOp, Tile};
pub use time::{Bandwidth, Frequency, SimDuration, SimTime};
pub use world::{DomainOptions, Jitter, MAX_BUFFER_BYTES, Progress, RunOptions, RunReport, WINDOW_ALIGN, World};
