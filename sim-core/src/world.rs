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

use crate::addr::MemKey;
use crate::check::{CheckOptions, CheckReport, Finding, deadlock_findings};
use crate::dataflow;
use crate::driver;
use crate::dtype::{DType, Element, from_bytes, to_bytes};
use crate::engine::Engine;
use crate::error::{SimError, SimResult};
use crate::memory::Memory;
use crate::model::{ChipTiming, Network};
pub use crate::options::{Jitter, Progress, RunOptions};
use crate::program::{ArgDir, Dispatch};
use crate::stats::{DispatchRecord, EngineStats, HostStats, Traffic};
use crate::tensor::{Domain, DomainInfo, Space, Tensor, TensorMeta, resolve_region};
use crate::time::{SimDuration, SimTime};
use crate::trace::{Mark, Trace};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Window-buffer sizes are rounded up to this many bytes (`kCommBufferAlignmentBytes`).
pub const WINDOW_ALIGN: usize = 32;

/// Lifetime of a comm domain's windows across runs (reference §1.7).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct DomainOptions {
    /// Keep the windows across runs (`persistent=True`).
    pub persistent: bool,
    /// Zero a persistent domain's windows before each reuse. `None` means "same as
    /// `persistent`"; `Some(true)` without `persistent` is an error, as in PyPTO.
    pub reset: Option<bool>,
}

impl DomainOptions {
    /// Persistent windows, zeroed before each reuse (PyPTO's default for `persistent=True`).
    pub fn persistent() -> DomainOptions {
        DomainOptions { persistent: true, reset: None }
    }

    /// Persistent windows that keep their contents across runs (epoch protocols).
    pub fn persistent_no_reset() -> DomainOptions {
        DomainOptions { persistent: true, reset: Some(false) }
    }

    /// Whether contents survive from one run to the next.
    fn keeps_contents(self) -> bool {
        self.persistent && self.reset == Some(false)
    }
}

pub(crate) struct DomainState {
    domain: Domain,
    opts: DomainOptions,
    names: Vec<String>,
    bytes: usize,
    /// A run has used the windows since they were last zeroed.
    pub(crate) dirty: bool,
    /// `window_size` of [`World::allocate_domain`]: the windows may hold at most this many bytes.
    limit: Option<usize>,
    /// [`World::release_domain`] was called; the windows are freed at the next run fence.
    released: bool,
}

/// What one run did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunReport {
    /// When the last dispatch ended.
    pub end: SimTime,
    /// Every dispatch, in completion order.
    pub dispatches: Vec<DispatchRecord>,
    /// The scheduler's work counters (deterministic).
    pub stats: EngineStats,
    /// How the host ran it (thread hand-offs; not deterministic).
    pub host: HostStats,
    /// What each chip (world rank) moved.
    pub traffic: Vec<Traffic>,
    /// Warnings raised while the run was set up (e.g. a builtin that silently does nothing).
    pub warnings: Vec<String>,
    /// The timeline, when [`RunOptions::trace`] was on.
    pub trace: Option<Trace>,
    /// What the protocol checker found, when [`RunOptions::check`] was on.
    pub findings: Vec<Finding>,
}

impl RunReport {
    /// Dispatches of one chip, in order.
    pub fn of_chip(&self, chip: usize) -> impl Iterator<Item = &DispatchRecord> {
        self.dispatches.iter().filter(move |d| d.chip == chip)
    }

    /// Per call — the `i`-th dispatch of every chip that ran one — the slowest chip's device
    /// wall ([`DispatchRecord::device_wall`]): the time PyPTO's benchmark and `ranksim sweep`
    /// report for that call.
    pub fn device_time_per_call(&self) -> Vec<SimDuration> {
        let calls = self.dispatches.iter().map(|d| d.index + 1).max().unwrap_or(0);
        let mut per_call = vec![SimDuration::ZERO; calls];
        for d in &self.dispatches {
            per_call[d.index] = per_call[d.index].max(d.device_wall());
        }
        per_call
    }

    /// The device time of the run: [`RunReport::device_time_per_call`] summed over the calls.
    /// For a run of one collective call it is that call's time as `ranksim sweep` prints it.
    pub fn device_time(&self) -> SimDuration {
        self.device_time_per_call().into_iter().fold(SimDuration::ZERO, |a, b| a + b)
    }
}

/// A simulated machine and everything the host has set up on it.
pub struct World {
    chip: Arc<dyn ChipTiming>,
    net: Option<Box<dyn Network>>,
    size: usize,
    pub(crate) domains: Vec<DomainState>,
    gm_names: Vec<String>,
    pub(crate) mem: Memory,
    pub(crate) queues: Vec<Vec<Dispatch>>,
    pub(crate) warnings: Vec<String>,
    pub(crate) options: RunOptions,
    /// The checker's findings of the last run, whatever its outcome.
    pub(crate) findings: Vec<Finding>,
    /// `gm_written[buf][chip]`: the host staged, or a queued task declared writing, some of
    /// that chip's copy of GM buffer `buf`.
    gm_written: Vec<Vec<bool>>,
    /// `opaque[chip]`: a task that declares no tensor was queued on the chip (it may have
    /// written any of its GM buffers).
    opaque: Vec<bool>,
}

impl World {
    /// A machine of `size` identical chips joined by `net`.
    pub fn new(size: usize, chip: Arc<dyn ChipTiming>, net: Box<dyn Network>) -> SimResult<World> {
        if size == 0 {
            return Err(SimError::invalid("a world needs at least one rank (chip); got 0"));
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
            mem: Memory::default(),
            queues: vec![Vec::new(); size],
            warnings: Vec::new(),
            options: RunOptions::default(),
            findings: Vec::new(),
            gm_written: Vec::new(),
            opaque: vec![false; size],
        })
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

    /// A comm domain over every chip, in world order.
    pub fn world_domain(&mut self, name: &str) -> SimResult<Domain> {
        let all: Vec<usize> = (0..self.size).collect();
        self.create_domain(name, &all, DomainOptions::default())
    }

    /// A comm domain over `members` (world ranks; dense rank = position in the list).
    pub fn create_domain(&mut self, name: &str, members: &[usize], opts: DomainOptions) -> SimResult<Domain> {
        if opts.reset == Some(true) && !opts.persistent {
            return Err(SimError::invalid(format!(
                "domain `{name}`: reset_persistent_windows=true requires persistent=true (non-persistent windows are always fresh)"
            )));
        }
        if members.is_empty() {
            return Err(SimError::invalid(format!("domain `{name}` has no members; list at least one rank")));
        }
        if let Some(&bad) = members.iter().find(|&&m| m >= self.size) {
            return Err(SimError::invalid(format!(
                "domain `{name}`: rank {bad} does not exist; the world has ranks 0..={}",
                self.size - 1
            )));
        }
        let mut sorted = members.to_vec();
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(SimError::invalid(format!(
                "domain `{name}` lists rank {} twice; members must be distinct",
                w[0]
            )));
        }
        if self.domains.iter().any(|d| d.domain.0.name == name && !d.released) {
            return Err(SimError::invalid(format!(
                "a domain named `{name}` already exists; domain names must be unique among live domains (release_domain frees a name)"
            )));
        }
        let info = Arc::new(DomainInfo::new(self.domains.len(), name, members));
        self.mem.add_domain(members.len());
        let domain = Domain(info);
        self.domains.push(DomainState {
            domain: domain.clone(),
            opts,
            names: Vec::new(),
            bytes: 0,
            dirty: false,
            limit: None,
            released: false,
        });
        Ok(domain)
    }

    /// A comm domain over `members` whose windows may hold at most `window_size` bytes per
    /// rank (simpler's `orch.allocate_domain(name, workers, window_size, buffers)`): a window
    /// buffer that would not fit is refused by [`World::alloc_window`], naming the sizes.
    /// Release it with [`World::release_domain`] when done.
    pub fn allocate_domain(
        &mut self,
        name: &str,
        members: &[usize],
        window_size: usize,
        opts: DomainOptions,
    ) -> SimResult<Domain> {
        let d = self.create_domain(name, members, opts)?;
        self.domains[d.0.id].limit = Some(window_size);
        Ok(d)
    }

    /// Releases `domain` (the end of simpler's `with orch.allocate_domain(...)` block): from
    /// now on nothing new may use it (no dispatch in it, no task declaring its windows, no
    /// window allocation, no host read or write), and its name is free again. Dispatches
    /// queued before still run: the windows are freed at the next run's end (the run fence),
    /// or at once when nothing is queued. A kernel that touches a window after it was freed
    /// fails with an error naming the window and the domain.
    pub fn release_domain(&mut self, domain: &Domain) -> SimResult<()> {
        let ds = self.domain_state(domain)?;
        if ds.released {
            return Err(SimError::invalid(format!("domain `{}` was already released", domain.0.name)));
        }
        ds.released = true;
        if self.queues.iter().all(Vec::is_empty) {
            self.free_released();
        }
        Ok(())
    }

    /// Frees the windows of every released domain (after a run fence).
    pub(crate) fn free_released(&mut self) {
        for (i, d) in self.domains.iter_mut().enumerate() {
            if d.released && !d.domain.0.is_freed() {
                self.mem.free_window(i);
                d.bytes = 0;
                d.domain.0.freed.store(true, Ordering::Release);
            }
        }
    }

    /// The host state of `domain`, if it belongs to this world.
    fn domain_state(&mut self, domain: &Domain) -> SimResult<&mut DomainState> {
        self.domains
            .get_mut(domain.0.id)
            .filter(|d| d.domain == *domain)
            .ok_or_else(|| SimError::invalid(format!("domain `{}` does not belong to this world", domain.0.name)))
    }

    /// An error if `domain` was released.
    fn check_live(&self, domain: &crate::tensor::DomainInfo, what: impl FnOnce() -> String) -> SimResult<()> {
        if self.domains.get(domain.id).is_some_and(|d| d.released) {
            return Err(SimError::invalid(format!(
                "{}: domain `{}` was released (World::release_domain){}; allocate a new domain for new work",
                what(),
                domain.name,
                if domain.is_freed() { " and its windows freed" } else { "" }
            )));
        }
        Ok(())
    }

    /// Allocates a zeroed window buffer of `dtype` and `shape` in every member of `domain`
    /// (`pld.alloc_window_buffer` + `pld.window`). Buffers are 32-byte rounded and laid out
    /// consecutively, so a buffer has the same window offset on every rank.
    pub fn alloc_window(&mut self, domain: &Domain, name: &str, dtype: DType, shape: &[usize]) -> SimResult<Tensor> {
        let nbytes = check_shape(name, dtype, shape)?;
        let id = domain.0.id;
        self.domain_state(domain)?;
        self.check_live(&domain.0, || format!("window `{name}` cannot be allocated"))?;
        let ds = &mut self.domains[id];
        if ds.names.iter().any(|n| n == name) {
            return Err(SimError::invalid(format!(
                "domain `{}` already has a buffer named `{name}`; names must be unique within a domain",
                domain.0.name
            )));
        }
        let capacity = nbytes.div_ceil(WINDOW_ALIGN) * WINDOW_ALIGN;
        let base = ds.bytes;
        if let Some(limit) = ds.limit
            && base + capacity > limit
        {
            return Err(SimError::invalid(format!(
                "domain `{}` has a window_size of {limit} bytes, but window `{name}` ({dtype} {shape:?}: {nbytes} bytes, {capacity} rounded up to {WINDOW_ALIGN}) after the {base} bytes already allocated needs {}; enlarge window_size or shrink the windows",
                domain.0.name,
                base + capacity
            )));
        }
        ds.bytes += capacity;
        ds.names.push(name.to_string());
        self.mem.grow_window(id, base + capacity);
        let space = Space::Window { domain: domain.0.clone() };
        Ok(Tensor(Arc::new(TensorMeta::dense(name.into(), space, base, capacity, dtype, shape))))
    }

    /// Total window bytes of a domain (the sum of its 32-byte-rounded buffers; 0 once freed).
    pub fn window_size(&self, domain: &Domain) -> usize {
        self.domains.get(domain.0.id).map_or(0, |d| d.bytes)
    }

    /// The `window_size` limit of a domain made by [`World::allocate_domain`].
    pub fn window_limit(&self, domain: &Domain) -> Option<usize> {
        self.domains.get(domain.0.id).and_then(|d| d.limit)
    }

    /// Allocates a zeroed GM tensor on every chip; each chip's kernels see their own copy.
    pub fn alloc_tensor(&mut self, name: &str, dtype: DType, shape: &[usize]) -> SimResult<Tensor> {
        let nbytes = check_shape(name, dtype, shape)?;
        let buf = self.gm_names.len();
        self.gm_names.push(name.to_string());
        self.gm_written.push(vec![false; self.size]);
        self.mem.add_gm(nbytes, self.size);
        Ok(Tensor(Arc::new(TensorMeta::dense(name.into(), Space::Gm { buf }, 0, nbytes, dtype, shape))))
    }

    /// Copies host data into rank `rank`'s copy of `t` (the dense domain rank for a window,
    /// the world rank for a GM tensor). `data` must fill the whole view.
    pub fn write<T: Element>(&mut self, t: &Tensor, rank: usize, data: &[T]) -> SimResult<()> {
        self.check_host_io("write", t, rank, T::DTYPE, data.len())?;
        self.prepare(t);
        self.host_write(t, rank, &to_bytes(data));
        Ok(())
    }

    /// Copies rank `rank`'s copy of `t` back to the host.
    pub fn read<T: Element>(&self, t: &Tensor, rank: usize) -> SimResult<Vec<T>> {
        self.check_host_io("read", t, rank, T::DTYPE, t.numel())?;
        Ok(from_bytes(&self.host_read(t, rank)))
    }

    /// As [`World::write`], with values given as f64 and converted to `t`'s dtype (floats
    /// rounded to nearest, integers saturated): for code generic over dtypes.
    pub fn write_f64(&mut self, t: &Tensor, rank: usize, data: &[f64]) -> SimResult<()> {
        let dt = t.dtype();
        self.check_host_io("write", t, rank, dt, data.len())?;
        self.prepare(t);
        let mut bytes = vec![0u8; data.len() * dt.size()];
        for (i, &v) in data.iter().enumerate() {
            dt.write_f64(&mut bytes, i, v);
        }
        self.host_write(t, rank, &bytes);
        Ok(())
    }

    /// As [`World::read`], every element converted to f64 (exact for every dtype).
    pub fn read_f64(&self, t: &Tensor, rank: usize) -> SimResult<Vec<f64>> {
        let dt = t.dtype();
        self.check_host_io("read", t, rank, dt, t.numel())?;
        let bytes = self.host_read(t, rank);
        Ok((0..t.numel()).map(|i| dt.read_f64(&bytes, i)).collect())
    }

    /// As [`World::write`], from raw little-endian bytes of `t`'s dtype (`t.nbytes()` of
    /// them): for host code generic over dtypes that encodes its values itself.
    pub fn write_bytes(&mut self, t: &Tensor, rank: usize, bytes: &[u8]) -> SimResult<()> {
        let dt = t.dtype();
        if !bytes.len().is_multiple_of(dt.size()) {
            return Err(SimError::invalid(format!(
                "host write of `{}`: {} bytes is not a whole number of {dt} elements",
                t.name(),
                bytes.len()
            )));
        }
        self.check_host_io("write", t, rank, dt, bytes.len() / dt.size())?;
        self.prepare(t);
        self.host_write(t, rank, bytes);
        Ok(())
    }

    /// As [`World::read`], as raw little-endian bytes of `t`'s dtype.
    pub fn read_bytes(&self, t: &Tensor, rank: usize) -> SimResult<Vec<u8>> {
        self.check_host_io("read", t, rank, t.dtype(), t.numel())?;
        Ok(self.host_read(t, rank))
    }

    /// The byte runs of the whole view `t` (one for a dense tensor, one per row of a slice).
    fn runs(t: &Tensor) -> Vec<(usize, usize)> {
        let zeros = vec![0; t.shape().len()];
        resolve_region(t, &zeros, t.shape()).map_or_else(|_| vec![(t.0.base, t.nbytes())], |r| r.runs)
    }

    /// Writes `bytes` (the view's elements in row-major order) into rank `rank`'s copy of `t`.
    fn host_write(&mut self, t: &Tensor, rank: usize, bytes: &[u8]) {
        if let Space::Gm { buf } = &t.0.space {
            self.gm_written[*buf][rank] = true;
        }
        let mut at = 0;
        for (off, len) in World::runs(t) {
            self.mem.host_write(mem_key(t, rank), off, &bytes[at..at + len]);
            at += len;
        }
    }

    /// Reads rank `rank`'s copy of the view `t`, its elements in row-major order.
    fn host_read(&self, t: &Tensor, rank: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(t.nbytes());
        for (off, len) in World::runs(t) {
            self.mem.host_read(mem_key(t, rank), off, len, &mut out);
        }
        out
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

    /// Queues a dispatch on chip `chip`. Chips run their dispatches one at a time, in order.
    ///
    /// Each task starts after the tasks of [`crate::Task::after`] and after those its declared
    /// tensors imply (see [`ArgDir`](crate::ArgDir)). Refused: a declared window of a domain the chip is
    /// not a member of or that was released, and a declared read (`input`, `inout`) of a GM
    /// tensor nothing can have produced on this chip: no earlier task of the dispatch declares
    /// writing it, no earlier dispatch on the chip did (nor ran a task declaring nothing), and
    /// the host never staged it.
    pub fn dispatch(&mut self, chip: usize, mut d: Dispatch) -> SimResult<()> {
        if chip >= self.size {
            return Err(SimError::invalid(format!(
                "dispatch `{}` to rank {chip}, but the world has ranks 0..={}",
                d.name,
                self.size - 1
            )));
        }
        if let Some(dom) = &d.domain {
            self.check_live(&dom.0, || format!("dispatch `{}` to rank {chip}", d.name))?;
        }
        if let Some(dom) = &d.domain
            && dom.0.rank_of(chip).is_none()
        {
            return Err(SimError::invalid(format!(
                "dispatch `{}` to rank {chip}, which is not a member of its domain `{}` (members {:?})",
                d.name, dom.0.name, dom.0.members
            )));
        }
        if d.tasks.is_empty() {
            return Err(SimError::invalid(format!("dispatch `{}` has no tasks; add one with Dispatch::add", d.name)));
        }
        let cores = self.chip.aiv_cores();
        for (i, t) in d.tasks.iter().enumerate() {
            if t.kind == crate::program::CoreKind::Cube {
                self.cube_task_fits(&d, t)?;
            } else if t.blocks == 0 || t.blocks > cores {
                return Err(SimError::invalid(format!(
                    "task `{}` of dispatch `{}` asks for {} blocks; a chip has {cores} AIV cores, so use 1..={cores} (core_num <= AIV count)",
                    t.name, d.name, t.blocks
                )));
            }
            if let Some(bad) = t.deps.iter().find(|dep| dep.0 >= i) {
                return Err(SimError::invalid(format!(
                    "task `{}` depends on task #{}, which is not an earlier task of dispatch `{}`",
                    t.name, bad.0, d.name
                )));
            }
        }
        let written = self.check_args(chip, &d)?;
        let data = dataflow::derive(&d).map_err(SimError::invalid)?;
        for (t, deps) in d.tasks.iter_mut().zip(data) {
            t.deps.extend(deps);
            t.deps.sort_unstable();
            t.deps.dedup();
        }
        for buf in written {
            self.gm_written[buf][chip] = true;
        }
        self.opaque[chip] |= d.tasks.iter().any(|t| t.args.is_empty());
        self.queues[chip].push(d);
        Ok(())
    }

    /// Checks the tensors `d`'s tasks declare for `chip`; returns the GM buffers they may write.
    fn check_args(&self, chip: usize, d: &Dispatch) -> SimResult<Vec<usize>> {
        let mut written: Vec<usize> = Vec::new();
        let mut opaque = self.opaque[chip];
        for t in &d.tasks {
            for (dir, x) in &t.args {
                let who = || format!("task `{}` of dispatch `{}` on rank {chip} declares {x:?}", t.name, d.name);
                match &x.0.space {
                    Space::Window { domain } => {
                        self.check_live(domain, who)?;
                        if domain.rank_of(chip).is_none() {
                            return Err(SimError::invalid(format!(
                                "{}, a window of domain `{}` (members {:?}): rank {chip} is not a member, so its kernels cannot reach it",
                                who(),
                                domain.name,
                                domain.members
                            )));
                        }
                    }
                    Space::Gm { buf } => {
                        if dir.reads() && !opaque && !self.gm_written[*buf][chip] && !written.contains(buf) {
                            return Err(SimError::invalid(format!(
                                "{} as {}, but nothing produces it: no earlier task of the dispatch declares writing it (output, inout, output_existing), no earlier dispatch on rank {chip} did, and the host never staged it (World::write); declare its producer or stage the data",
                                who(),
                                dir.pypto_name()
                            )));
                        }
                    }
                }
            }
            for (dir, x) in &t.args {
                if let Space::Gm { buf } = &x.0.space
                    && *dir != ArgDir::Input
                {
                    written.push(*buf);
                }
            }
            opaque |= t.args.is_empty();
        }
        Ok(written)
    }

    /// Checks a cube task of `d` against the chip's AIC cores.
    fn cube_task_fits(&self, d: &Dispatch, t: &crate::program::Task) -> SimResult<()> {
        let Some(cube) = self.chip.cube() else {
            return Err(SimError::invalid(format!(
                "task `{}` of dispatch `{}` runs on cube cores (Task::on_cube), but the chip config has no \
                 [chip.cube] table (chip.cube), so the chip has no AIC cores; add [chip.cube] or make it an AIV task",
                t.name, d.name
            )));
        };
        let aic = cube.cores;
        if t.blocks == 0 || t.blocks > aic {
            return Err(SimError::invalid(format!(
                "task `{}` of dispatch `{}` asks for {} blocks on cube cores; a chip has {aic} AIC cores (chip.aic_cores), \
                 so use 1..={aic}",
                t.name, d.name, t.blocks
            )));
        }
        if t.lanes != 1 {
            return Err(SimError::invalid(format!(
                "task `{}` of dispatch `{}` asks for {} lanes on cube cores; an AIC block is one core (lanes are AIV \
                 sub-blocks): put the vector lanes in an AIV task after it",
                t.name, d.name, t.lanes
            )));
        }
        Ok(())
    }

    /// Queues `d` on every member of `domain`, with ranks answered for that domain.
    pub fn dispatch_all(&mut self, domain: &Domain, d: Dispatch) -> SimResult<()> {
        let d = d.in_domain(domain);
        for &chip in domain.members() {
            self.dispatch(chip, d.clone())?;
        }
        Ok(())
    }

    /// The checker's findings of the last run (empty unless [`RunOptions::check`] was on),
    /// also when the run failed.
    pub fn last_findings(&self) -> &[Finding] {
        &self.findings
    }

    /// Runs every queued dispatch to completion and returns its timing. On failure (bad
    /// kernel argument, panic, deadlock) the memory is left as the run left it.
    /// The windows of domains released before the run are freed at its end, whatever its
    /// outcome.
    pub fn run(&mut self) -> SimResult<RunReport> {
        let r = self.run_once();
        self.free_released();
        r
    }

    /// [`World::run`] without freeing released domains (the checker reruns a program).
    pub(crate) fn run_once(&mut self) -> SimResult<RunReport> {
        for i in 0..self.domains.len() {
            self.prepare_domain(i);
        }
        let queues = std::mem::replace(&mut self.queues, vec![Vec::new(); self.size]);
        let mem = std::mem::take(&mut self.mem);
        let net =
            self.net.take().ok_or_else(|| SimError::invalid("the network model was lost by an earlier failed run"))?;
        let engine = Engine::new(self.chip.clone(), net, mem, queues, &self.options);
        let (mut engine, host) = driver::run(engine, self.chip.clone());
        let outcome =
            engine.outcome().cloned().unwrap_or_else(|| Err(SimError::invalid("the run ended without an outcome")));
        let mut dispatches = engine.records.clone();
        dispatches.sort_by_key(|d| (d.end, d.chip, d.index));
        let findings = engine.take_findings();
        self.findings = findings.clone();
        let mut trace = engine.take_trace();
        if let Some(tr) = trace.as_mut() {
            tr.marks = findings
                .iter()
                .map(|f| Mark { chip: f.rank, time: f.time, name: f.kind.name().to_string(), detail: f.to_string() })
                .collect();
        }
        let report = RunReport {
            end: engine.now(),
            dispatches,
            stats: engine.stats.clone(),
            host,
            traffic: engine.traffic().to_vec(),
            findings,
            trace,
            warnings: std::mem::take(&mut self.warnings),
        };
        let (mem, net) = engine.into_parts();
        self.mem = mem;
        self.net = Some(net);
        for d in &mut self.domains {
            d.dirty = true;
        }
        outcome.map(|()| RunReport {
            end: report.dispatches.iter().map(|d| d.end).max().unwrap_or(SimTime::ZERO),
            ..report
        })
    }

    /// Zeroes a domain a previous run used, unless it keeps its contents.
    fn prepare_domain(&mut self, i: usize) {
        let ds = &mut self.domains[i];
        if ds.dirty && !ds.opts.keeps_contents() {
            self.mem.zero_window(i);
        }
        ds.dirty = false;
    }

    fn prepare(&mut self, t: &Tensor) {
        if let Space::Window { domain } = &t.0.space {
            self.prepare_domain(domain.id);
        }
    }

    fn check_host_io(&self, what: &str, t: &Tensor, rank: usize, dtype: DType, len: usize) -> SimResult<()> {
        if let Space::Window { domain } = &t.0.space {
            self.check_live(domain, || format!("host {what} of window `{}`", t.name()))?;
        }
        if dtype != t.dtype() {
            return Err(SimError::invalid(format!(
                "host {what} of `{}` with {dtype} data, but the tensor is {}",
                t.name(),
                t.dtype()
            )));
        }
        if len != t.numel() {
            return Err(SimError::invalid(format!(
                "host {what} of `{}`: {len} elements given, the tensor {:?} holds {}",
                t.name(),
                t.shape(),
                t.numel()
            )));
        }
        let n = match &t.0.space {
            Space::Gm { .. } => self.size,
            Space::Window { domain } => domain.size(),
        };
        if rank >= n {
            return Err(SimError::invalid(format!(
                "host {what} of `{}` on rank {rank}, but it exists on ranks 0..={}",
                t.name(),
                n - 1
            )));
        }
        Ok(())
    }
}

/// The memory holding rank `rank`'s copy of `t`.
fn mem_key(t: &Tensor, rank: usize) -> MemKey {
    match &t.0.space {
        Space::Gm { buf } => MemKey::Gm { buf: *buf, chip: rank },
        Space::Window { domain } => MemKey::Win { domain: domain.id, member: rank },
    }
}

/// The byte size of a buffer of `dtype` and `shape`: positive dimensions, and a size that fits
/// the address space ([`MAX_BUFFER_BYTES`]) without overflowing.
fn check_shape(name: &str, dtype: DType, shape: &[usize]) -> SimResult<usize> {
    if shape.is_empty() || shape.contains(&0) {
        return Err(SimError::invalid(format!(
            "buffer `{name}`: shape {shape:?} must be non-empty with positive dimensions"
        )));
    }
    shape
        .iter()
        .try_fold(dtype.size(), |n, &d| n.checked_mul(d))
        .filter(|&n| n <= MAX_BUFFER_BYTES)
        .ok_or_else(|| {
            SimError::invalid(format!(
                "buffer `{name}`: {dtype} {shape:?} is more than {MAX_BUFFER_BYTES} bytes (2^48), the most one buffer may hold"
            ))
        })
}

/// The largest buffer (window or GM tensor) in bytes: 2^48, far above any chip's memory and
/// far below where window offsets could overflow.
pub const MAX_BUFFER_BYTES: usize = 1 << 48;

impl World {
    /// Runs the queued dispatches under the protocol checker: once unperturbed, then once per
    /// seed with seeded timing jitter, each from the state the host set up. Deadlocks become
    /// findings; a kernel error (bad argument, panic) is returned as the error. The world is
    /// left as the last run left it; the queue is consumed.
    pub fn check(&mut self, opts: &CheckOptions) -> SimResult<CheckReport> {
        let (queues, mem, warnings, saved) =
            (self.queues.clone(), self.mem.clone(), self.warnings.clone(), self.options.clone());
        let dirty: Vec<bool> = self.domains.iter().map(|d| d.dirty).collect();
        let mut report = CheckReport::default();
        for i in 0..=opts.seeds {
            (self.queues, self.mem, self.warnings) = (queues.clone(), mem.clone(), warnings.clone());
            for (d, &was) in self.domains.iter_mut().zip(&dirty) {
                d.dirty = was;
            }
            self.options.check = true;
            self.options.jitter =
                (i > 0).then_some(Jitter { seed: i, op: opts.op_jitter, dispatch: opts.dispatch_jitter });
            let outcome = self.run_once();
            report.runs += 1;
            let seed = (i > 0).then_some(i);
            let mut found = std::mem::take(&mut self.findings);
            match outcome {
                Ok(_) => {}
                Err(SimError::Deadlock(d)) => found.extend(deadlock_findings(&d)),
                Err(e) => {
                    self.options = saved;
                    self.free_released();
                    return Err(e);
                }
            }
            report.merge(found, seed);
        }
        self.options = saved;
        self.free_released();
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::testkit::{TestChip, TestNet, ns};
    use crate::program::Task;
    use crate::signal::{NotifyOp, WaitCmp};
    use parking_lot::Mutex;

    /// Rank 0 notifies rank 1's cell 0 (AtomicAdd 3); rank 1 waits for `>= 3`, as a thread
    /// kernel or as an async kernel the driver polls. Returns what
    /// each rank saw of its clock (at its start, and rank 1's after the wait), the cell, and
    /// the run's end.
    fn notify_then_wait(options: RunOptions, async_kernel: bool) -> (Vec<(usize, SimTime, SimTime)>, i32, SimTime) {
        let mut world = World::new(2, Arc::new(TestChip), Box::new(TestNet)).expect("a world of 2");
        *world.options_mut() = options;
        let all = world.create_domain("d", &[0, 1], DomainOptions::default()).expect("a domain");
        let sig = world.alloc_window(&all, "sig", DType::I32, &[1, 8]).expect("a window");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (s, log) = (sig.clone(), seen.clone());
        let kernel = if async_kernel {
            let mut d = Dispatch::new("ping");
            d.add(Task::new_async("ping", 1, move |mut ops| {
                let (s, log) = (s.clone(), log.clone());
                async move {
                    let start = ops.now();
                    let r = if ops.rank() == 0 {
                        ops.notify(&s, 1, &[0, 0], 3, NotifyOp::AtomicAdd)
                    } else {
                        ops.wait(&s, &[0, 0], 3, WaitCmp::Ge).await
                    };
                    log.lock().push((ops.rank(), start, ops.now()));
                    (ops, r)
                }
            }));
            d
        } else {
            Dispatch::kernel("ping", 1, move |core| {
                let start = core.now();
                if core.rank() == 0 {
                    core.notify(&s, 1, &[0, 0], 3, NotifyOp::AtomicAdd)?;
                } else {
                    core.wait(&s, &[0, 0], 3, WaitCmp::Ge)?;
                }
                log.lock().push((core.rank(), start, core.now()));
                Ok(())
            })
        };
        world.dispatch_all(&all, kernel.in_domain(&all)).expect("queued");
        let report = world.run().expect("the run ends");
        let cell = world.read::<i32>(&sig, 1).expect("rank 1's window")[0];
        let mut seen = std::mem::take(&mut *seen.lock());
        seen.sort();
        (seen, cell, report.end)
    }

    #[test]
    fn a_wait_returns_a_poll_after_the_notify_lands() {
        let (seen, cell, end) = notify_then_wait(RunOptions::default(), false);
        assert_eq!(cell, 3);
        let [(0, start0, after0), (1, start1, after1)] = seen[..] else { panic!("two ranks ran: {seen:?}") };
        assert_eq!(start0, start1, "both chips start their dispatch together");
        // The notify takes its issue cost (1 ns) on the sender's clock and enters the fabric
        // after it; the test fabric lands it 1 ns later and the waiter sees it one poll (2 ns)
        // after that.
        assert_eq!(after0 - start0, SimDuration::from_ns(1));
        assert_eq!(after1 - start1, SimDuration::from_ns(1 + 1 + 2));
        assert!(end >= after1 && end > ns(0));
    }

    #[test]
    fn a_checked_run_computes_the_same_bytes_at_the_same_times() {
        let plain = notify_then_wait(RunOptions::default(), false);
        let checked = notify_then_wait(RunOptions { check: true, ..RunOptions::default() }, false);
        assert_eq!(plain, checked);
    }

    #[test]
    fn an_async_kernel_sends_the_same_requests_at_the_same_times_as_a_thread_kernel() {
        let thread = notify_then_wait(RunOptions::default(), false);
        let polled = notify_then_wait(RunOptions::default(), true);
        assert_eq!(thread, polled);
    }

    #[test]
    fn a_run_publishes_its_events_and_time_to_its_progress() {
        let p = Progress::new();
        let watched = RunOptions { progress: Some(p.clone()), ..RunOptions::default() };
        let first = notify_then_wait(watched.clone(), false);
        let events = p.events();
        assert!(events > 0, "a run of two dispatches applies events");
        assert!(p.now() > SimTime::ZERO && p.now() <= first.2, "published {:?}, end {:?}", p.now(), first.2);
        // Watching changes nothing, and a second run adds exactly as many events again.
        assert_eq!(first, notify_then_wait(RunOptions::default(), false));
        assert_eq!(first, notify_then_wait(watched, false));
        assert_eq!(p.events(), 2 * events);
    }
}
