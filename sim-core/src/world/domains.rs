//! Comm domains: creating, sizing and releasing them, and the layout of their window buffers.

use super::domain::{DomainOptions, DomainState};
use super::staging::check_shape;
use super::{WINDOW_ALIGN, World};
use crate::base::dtype::DType;
use crate::base::error::{SimError, SimResult};
use crate::base::tensor::{Domain, DomainInfo, Space, Tensor, TensorMeta};
use std::sync::Arc;
use std::sync::atomic::Ordering;

impl World {
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
    pub(super) fn free_released(&mut self) {
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
    pub(super) fn check_live(
        &self,
        domain: &crate::base::tensor::DomainInfo,
        what: impl FnOnce() -> String,
    ) -> SimResult<()> {
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

    /// Zeroes a domain a previous run used, unless it keeps its contents.
    pub(super) fn prepare_domain(&mut self, i: usize) {
        let ds = &mut self.domains[i];
        if ds.dirty && !ds.opts.keeps_contents() {
            self.mem.zero_window(i);
        }
        ds.dirty = false;
    }

    /// Zeroes the domain of window `t` before the host stages into it, as a run would.
    pub(super) fn prepare(&mut self, t: &Tensor) {
        if let Space::Window { domain } = &t.0.space {
            self.prepare_domain(domain.id);
        }
    }
}
