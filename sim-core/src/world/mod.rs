//! The host side of a simulation: a machine of chips, its comm domains and buffers, the data
//! staged in and out, and the dispatches each chip runs.
//!
//! ```text
//! let mut world = World::new(8, chip_model, fabric)?;
//! let all = world.create_domain("comm_d0", &[0, 1, 2, 3, 4, 5, 6, 7], DomainOptions::default())?;
//! let x = world.alloc_window(&all, "x", DType::F32, &[1, 256])?;
//! world.write(&x, 0, &data)?;
//! world.dispatch_all(&all, Dispatch::kernel("k", 1, |core| { ... }))?;
//! let report = world.run()?;
//! let y: Vec<f32> = world.read(&x, 0)?;
//! ```
//!
//! The files: `domains` (comm domains and their window layout), `staging` (GM tensors and the
//! host's reads and writes), `dispatch` (the checks and dataflow a queued dispatch goes
//! through), `run` (running the queues, and the checker's reruns through `check`'s loop) and
//! `observers` (the user's observers of its runs) add to [`World`] here;
//! below it, `domain` holds a comm domain's options and state, and `report` [`RunReport`],
//! what a run leaves behind.

mod check;
mod dispatch;
mod domain;
mod domains;
mod memory;
mod observers;
mod run;
mod run_report;
mod split;
mod staging;

use crate::api::program::Dispatch;
use crate::base::error::{SimError, SimResult};
use crate::model::{ChipTiming, Network};
use crate::sim::check::Finding;
use crate::sim::memory::Memory;
use std::sync::Arc;

pub use crate::sim::options::{Interrupt, Jitter, KernelExec, Progress, RunOptions};
pub use check::{CheckRun, CheckedRuns, check_runs};
pub use domain::DomainOptions;
use domain::DomainState;
pub use run_report::RunReport;

/// Window-buffer sizes are rounded up to this many bytes (`kCommBufferAlignmentBytes`).
pub const WINDOW_ALIGN: usize = 32;

/// The largest buffer (window or GM tensor) in bytes: 2^48, far above any chip's memory and
/// far below where window offsets could overflow.
pub const MAX_BUFFER_BYTES: usize = 1 << 48;

/// A simulated machine and everything the host has set up on it.
pub struct World {
    chip: Arc<dyn ChipTiming>,
    net: Option<Box<dyn Network>>,
    size: usize,
    domains: Vec<DomainState>,
    gm_names: Vec<String>,
    /// Bytes of each GM tensor on one chip.
    gm_bytes: Vec<usize>,
    mem: Memory,
    queues: Vec<Vec<Dispatch>>,
    warnings: Vec<String>,
    options: RunOptions,
    /// The checker's findings of the last run, whatever its outcome.
    findings: Vec<Finding>,
    /// Ranks per server (see [`World::server_ranks`]).
    server_ranks: usize,
    /// `gm_written[buf][chip]`: the host staged, or a queued task declared writing, some of
    /// that chip's copy of GM buffer `buf`.
    gm_written: Vec<Vec<bool>>,
    /// `opaque[chip]`: a task that declares no tensor was queued on the chip (it may have
    /// written any of its GM buffers).
    opaque: Vec<bool>,
    /// The user's observers, lent to every run ([`World::observe`]).
    observers: Vec<Box<dyn crate::sim::observe::Observe + Send>>,
}

/// The most ranks a world may have: the scheduler keys events of fewer than 2^24 cores, and
/// memory addresses hold ranks in 32 bits.
const MAX_WORLD: usize = 1 << 23;

impl World {
    /// A machine of `size` identical chips joined by `net`.
    pub fn new(size: usize, chip: Arc<dyn ChipTiming>, net: Box<dyn Network>) -> SimResult<World> {
        if size == 0 {
            return Err(SimError::invalid("a world needs at least one rank (chip); got 0"));
        }
        if size > MAX_WORLD {
            return Err(SimError::invalid(format!("a world has at most {MAX_WORLD} ranks (chips); got {size}")));
        }
        if chip.aiv_cores() == 0 {
            return Err(SimError::invalid("the chip model has 0 AIV cores; kernels need at least one"));
        }
        Ok(World {
            chip,
            net: Some(net),
            size,
            domains: Vec::new(),
            gm_names: Vec::new(),
            gm_bytes: Vec::new(),
            mem: Memory::default(),
            queues: vec![Vec::new(); size],
            warnings: Vec::new(),
            options: RunOptions::default(),
            findings: Vec::new(),
            gm_written: Vec::new(),
            opaque: vec![false; size],
            observers: Vec::new(),
            server_ranks: size,
        })
    }

    /// Ranks per server: world ranks `s * k .. (s + 1) * k` form server `s`, the group the
    /// server-level hierarchical collectives reduce within before they go between servers
    /// (HCCL's level 0). A machine config sets it (its `[machine] server_ranks`, else the node of
    /// a hierarchical fabric); a world built directly is one server of all its ranks.
    pub fn server_ranks(&self) -> usize {
        self.server_ranks
    }

    /// Sets the ranks per server ([`World::server_ranks`]); `k` must divide the world's size.
    pub fn set_server_ranks(&mut self, k: usize) -> SimResult<()> {
        if k == 0 || !self.size.is_multiple_of(k) {
            return Err(SimError::invalid(format!(
                "server_ranks {k} must divide the machine's {} ranks (whole servers)",
                self.size
            )));
        }
        self.server_ranks = k;
        Ok(())
    }

    /// Stops storing payload bytes (timing-only mode): reads give zeros, writes are dropped,
    /// signal cells stay real, and times are unchanged. Must be called before anything is
    /// allocated.
    pub fn set_timing_only(&mut self) -> SimResult<()> {
        if !self.domains.is_empty() || !self.gm_names.is_empty() {
            return Err(SimError::invalid("set_timing_only must be called before any domain or buffer is created"));
        }
        self.mem = Memory::new(false);
        Ok(())
    }

    /// Whether payload bytes are stored (false in timing-only mode).
    pub fn has_payload(&self) -> bool {
        self.mem.has_payload()
    }

    /// How the next runs are executed (tracing, jitter).
    pub fn options_mut(&mut self) -> &mut RunOptions {
        &mut self.options
    }

    /// Number of chips (world ranks).
    pub fn size(&self) -> usize {
        self.size
    }

    /// The chip model shared by every chip.
    pub fn chip(&self) -> &dyn ChipTiming {
        &*self.chip
    }

    /// Records a warning about the next run (a builtin that will silently do nothing, say);
    /// it is returned in that run's [`RunReport::warnings`].
    pub fn warn(&mut self, msg: impl Into<String>) {
        self.warnings.push(msg.into());
    }

    /// Warnings recorded for the next run so far.
    pub fn pending_warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The checker's findings of the last run (empty unless [`RunOptions::check`] was on),
    /// also when the run failed.
    pub fn last_findings(&self) -> &[Finding] {
        &self.findings
    }
}
