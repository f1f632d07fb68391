//! What a run of this world will hold: its [`RunScale`] as the world knows it before the run,
//! and the refusal of a run whose estimate exceeds [`RunOptions::max_memory`].

use super::World;
use crate::api::program::Body;
use crate::base::error::{SimError, SimResult};
use crate::base::memory::{MemoryReport, human_bytes};
use crate::sim::engine::footprint::RunScale;
use crate::sim::options::KernelExec;

impl World {
    /// Payload bytes a run of this world holds when it keeps payload: every window of a domain
    /// not freed (per member) and every GM tensor (per chip). Counted whether or not this
    /// world keeps payload ([`World::has_payload`]).
    pub fn payload_bytes(&self) -> u64 {
        let windows = self
            .domains
            .iter()
            .filter(|d| !d.domain.0.is_freed())
            .fold(0u64, |s, d| s.saturating_add((d.bytes as u64).saturating_mul(d.domain.size() as u64)));
        let gm = self.gm_bytes.iter().fold(0u64, |s, &b| s.saturating_add(b as u64));
        windows.saturating_add(gm.saturating_mul(self.size as u64))
    }

    /// The scale of the next run as this world knows it before the run: its chips and cores,
    /// the network model's own bytes, the payload it keeps (once per partition of a split
    /// run), the queued dispatches and the synchronous kernels' blocks that run at once (a
    /// stack or a thread each). What the kernels will do (their routes, transfers in flight,
    /// signal cells) is not known here and counts as none, so the estimate of
    /// [`RunScale::estimate`] is what the run holds at least; a host that knows the program's
    /// traffic (the `ranksim` library for a collective) adds it.
    pub fn run_scale(&self) -> RunScale {
        let cores = self.chip.aiv_cores() + self.chip.cube().map_or(0, |c| c.cores);
        let net = self.net.as_ref().map(|n| n.footprint()).unwrap_or_default();
        // Blocks of synchronous kernels that may run at once on a chip: the most any of its
        // dispatches holds, at most one per core.
        let sync_blocks: u64 = self
            .queues
            .iter()
            .map(|q| {
                let most = q.iter().map(|d| {
                    d.tasks.iter().filter(|t| matches!(t.body, Body::Thread(_))).map(|t| t.blocks).sum::<usize>()
                });
                most.max().unwrap_or(0).min(cores) as u64
            })
            .sum();
        let (coroutines, threads, stack_bytes) = match self.options.kernel_exec {
            // A host's fibers keep their stacks themselves (a greenlet's is the part of the
            // thread's stack it saves); counted as coroutines without a stack of sim-core's.
            KernelExec::Coroutines { .. } if self.options.fibers.is_some() => (sync_blocks, 0, 0),
            KernelExec::Coroutines { stack_bytes } => (sync_blocks, 0, stack_bytes as u64),
            KernelExec::Threads => (0, sync_blocks, 0),
        };
        let dispatches = self.queues.iter().map(|q| q.len() as u64).sum();
        RunScale {
            chips: self.size,
            cores,
            network: net.fixed,
            network_per_route: net.per_route,
            payload: if self.has_payload() { self.payload_bytes() } else { 0 },
            // Each process of a run over processes holds its own partition only.
            copies: if self.options.processes { 1 } else { self.options.partitions.max(1) },
            dispatches,
            coroutines,
            stack_bytes,
            threads,
            traced: self.options.trace,
            checked: self.options.check,
            ..RunScale::default()
        }
    }

    /// The refusal of the next run when [`RunOptions::max_memory`] is set and the estimate of
    /// [`World::run_scale`] exceeds it.
    pub(super) fn refuse_if_too_big(&self) -> SimResult<()> {
        let Some(limit) = self.options.max_memory else { return Ok(()) };
        let estimate = self.run_scale().estimate();
        if estimate.total() <= limit {
            return Ok(());
        }
        let mut advice = Vec::new();
        if estimate.bytes_of("payload") > limit / 2 {
            advice.push("keep no payload (World::set_timing_only: the same times)".to_string());
        }
        if self.options.partitions > 1 {
            advice.push(format!("split it into fewer than {} partitions (each holds a copy)", self.options.partitions));
        }
        if estimate.bytes_of("stacks") > limit / 2 {
            advice.push("run fewer blocks at once".to_string());
        }
        advice.push(format!("a larger limit (RunOptions::max_memory, now {})", human_bytes(limit)));
        Err(SimError::Memory(Box::new(MemoryReport {
            what: "this run".into(),
            estimate,
            limit,
            limit_source: "RunOptions::max_memory, which the command line and Python set from --max-memory, \
                           max_memory= or what the host has available"
                .into(),
            advice: format!("To fit: {}.", advice.join("; or ")),
        })))
    }
}
