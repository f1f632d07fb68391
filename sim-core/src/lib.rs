//! # sim-core: the deterministic heart of ranksim
//!
//! ranksim simulates a machine of chips running PyPTO L3 programs. This crate holds what does
//! not depend on a particular chip or fabric: virtual time, the program API kernels are written
//! against, the host side that queues them, and the one scheduler that runs them in a total
//! order. `chip-model` and `interconnect` supply the timing; the `ranksim` facade adds configs,
//! collectives and the CLI. A comment citing "reference §x.y" means that section of
//! `docs/references/semantics.md` in the repository (PyPTO's semantics, with their sources).
//!
//! ## A tour
//!
//! Everyday names live at the root, one path each:
//!
//! - **Host side.** A [`World`] of `n` chips holds comm [`Domain`]s, their window buffers and
//!   GM [`Tensor`]s ([`World::alloc_window`], [`World::alloc_tensor`]), staged data
//!   ([`World::write`] / [`World::read`]) and queued [`Dispatch`]es of [`Task`]s;
//!   [`World::run`] runs them and returns a [`RunReport`]; [`RunOptions`] say how (timing
//!   only, traced, checked, [`Jitter`]ed).
//! - **Kernels.** A synchronous kernel is a closure over a [`Core`], run as a coroutine on the
//!   scheduler's thread (or on OS threads: [`KernelExec`]); an async kernel is a future over
//!   [`Ops`], the same operations with blocking ones as `async fn`s. Both offer loads and
//!   stores of UB [`Tile`]s, `put` / `get` with [`CopyOpts`], SDMA ([`SdmaOpts`],
//!   [`SdmaHandle`]), signals ([`NotifyOp`], [`WaitCmp`], [`Ops::defer_wait`]) and, on AIC
//!   cores, cube work ([`CubeTile`]).
//! - **Values.** [`SimTime`] / [`SimDuration`] (integer picoseconds), [`DType`] and
//!   [`Element`], [`ReduceOp`], [`SimError`] (every failure, with a [`DeadlockReport`] when
//!   nothing can progress).
//!
//! Five public modules group what only some users need: [`model`] (the traits a chip and a
//! fabric implement, and [`model::simple`], a minimal machine for examples and tests),
//! [`check`] (the protocol checker's options and findings), [`observe`] (the facts of a run
//! and the [`observe::Observe`] trait, for observers of your own, attached with
//! [`World::observe`]), [`stats`] (per-dispatch and per-rank records of a run) and [`trace`]
//! (a traced run's timeline).
//!
//! Rank 0 notifies a signal cell in rank 1's window; rank 1 waits for it:
//!
//! ```
//! use sim_core::model::simple::{SimpleChip, SimpleNet};
//! use sim_core::{DType, Dispatch, DomainOptions, NotifyOp, WaitCmp, World};
//! use std::sync::Arc;
//!
//! let mut world = World::new(2, Arc::new(SimpleChip), Box::new(SimpleNet))?;
//! let all = world.create_domain("all", &[0, 1], DomainOptions::default())?;
//! let sig = world.alloc_window(&all, "sig", DType::I32, &[1, 8])?;
//! let s = sig.clone();
//! let ping = Dispatch::kernel("ping", 1, move |core| {
//!     if core.rank() == 0 {
//!         core.notify(&s, 1, &[0, 0], 3, NotifyOp::AtomicAdd)
//!     } else {
//!         core.wait(&s, &[0, 0], 3, WaitCmp::Ge)
//!     }
//! });
//! world.dispatch_all(&all, ping.in_domain(&all))?;
//! world.run()?;
//! assert_eq!(world.read::<i32>(&sig, 1)?[0], 3);
//! # Ok::<(), sim_core::SimError>(())
//! ```
//!
//! A timing-only run keeps no payload bytes, only times: here rank 0 puts 64 KiB into rank
//! 1's window, and [`RunReport::end`] says when the last dispatch ended.
//!
//! ```
//! use sim_core::model::simple::{SimpleChip, SimpleNet};
//! use sim_core::{CopyOpts, DType, Dispatch, DomainOptions, SimTime, World};
//! use std::sync::Arc;
//!
//! let mut world = World::new(2, Arc::new(SimpleChip), Box::new(SimpleNet))?;
//! world.set_timing_only()?;
//! let all = world.create_domain("all", &[0, 1], DomainOptions::default())?;
//! let data = world.alloc_window(&all, "data", DType::F32, &[128, 128])?;
//! let d = data.clone();
//! let put = Dispatch::kernel("put", 1, move |core| {
//!     if core.rank() == 0 { core.put(&d, 1, &d, &CopyOpts::default()) } else { Ok(()) }
//! });
//! world.dispatch_all(&all, put.in_domain(&all))?;
//! let report = world.run()?;
//! assert!(report.end > SimTime::ZERO);
//! assert_eq!(report.dispatches.len(), 2);
//! # Ok::<(), sim_core::SimError>(())
//! ```
//!
//! ## Inside
//!
//! The source is in six folders, each importing only from the ones before it:
//!
//! - `base/`: the vocabulary (time, element types, tiles, tensors and the addresses they
//!   resolve to, signal semantics, errors and the deadlock report);
//! - `model/` (public): the timing traits; `results/`: `stats` and `trace` (public);
//! - `api/`: what users write: the kernel API (`api/kernel`), dispatches and tasks, the
//!   dependencies their tensors imply, and `request`, the one interface into the scheduler;
//! - `sim/`: simulated memory, the scheduler (`sim/engine`), the facts it reports (`observe`,
//!   public) to the checker (`check`, public) and other observers, the driver (coroutine,
//!   thread and async kernels) and the run options;
//! - `world/`: the host side, which sets a run up, drives it and reruns it for the checker.
//!
//! Invariants: sim-core never reads the wall clock and does no I/O; every effect one core has
//! on another passes through the scheduler, which applies it in `(time, actor, seq, sub)` order
//! (`sub` numbers the events one request causes). ARCHITECTURE.md maps every file.

#![warn(missing_docs, unreachable_pub)]

mod api;
mod base;
pub mod model;
mod results;
mod sim;
mod world;

pub use results::{stats, trace};
pub use sim::{check, observe};

pub use api::kernel::{
    CopyOpts, Core, CubeBuf, CubeTile, DeferCond, Ops, Pipe, SdmaHandle, SdmaOpts, TileLoad, block_on,
};
pub use api::program::{ArgDir, AsyncKernel, CoreKind, Dispatch, Kernel, KernelFuture, Task, TaskId};
pub use base::budget::{BudgetReport, CoreActivity, Limit};
pub use base::convert::{RoundMode, cast_supported};
pub use base::deadlock::{BlockedWait, CellWrite, DeadlockReport, StuckTask};
pub use base::dtype::{DType, Element};
pub use base::error::{SimError, SimResult, Site};
pub use base::livelock::{LivelockReport, SpinningPoll};
pub use base::memory::{MemoryEstimate, MemoryItem, MemoryReport, human_bytes};
pub use base::signal::{AtomicType, Cond, NotifyOp, WaitCmp};
pub use base::tensor::{Domain, Tensor};
pub use base::tile::math::{BinaryOp, CmpOp, UnaryOp};
pub use base::tile::{Axis, ReduceOp, Tile};
pub use base::time::{Bandwidth, Frequency, SimDuration, SimTime};
pub use half::{bf16, f16};
pub use sim::engine::footprint::RunScale;
pub use sim::fibers::{Fiber, FiberBody, FiberHost, Fibers, Suspend};
pub use sim::split::{LocalGroup, ProcessGroup, join_processes};
pub use world::{
    CheckRun, CheckedRuns, DomainOptions, Interrupt, Jitter, KernelExec, MAX_BUFFER_BYTES, Progress, RunOptions,
    RunReport, WINDOW_ALIGN, World, check_runs,
};
