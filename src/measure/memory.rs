//! Memory: what a measurement's runs will hold, estimated before they start from the config
//! and the call, what the host has, and the refusal of what does not fit.
//!
//! The estimate is sim-core's [`RunScale`] (the bytes per item are the sizes of the engine's
//! structures) filled with what the config and the collective say: the machine's chips and
//! cores, the network model's bytes ([`NetworkModel::footprint_of`], without building it), the
//! payload, and the collective's [`Traffic`] (routes, transfers in flight, signal cells,
//! operations). It is within a factor of two of the measured peak on the presets
//! (`cli/tests/sim/memory.rs` measures both). The host's memory is `MemAvailable` of
//! `/proc/meminfo`; a [`Budgets::max_memory`](super::Budgets::max_memory) sets the limit
//! instead.

use super::collective::{Collective, elements};
use super::error::Error;
pub use super::host_memory::{MemoryLimit, available};
use super::options::Measure;
use crate::Config;
use collectives::Traffic;
use interconnect::NetworkModel;
use sim_core::{MemoryEstimate, MemoryReport, RunScale, human_bytes};

/// Signal cells are kept in pages of this many (see sim-core's memory).
const CELL_PAGE: u64 = 128;

/// One run of `calls` calls of `c` with `count` elements per rank on `m.ranks` ranks of `cfg`,
/// keeping payload or not, as a [`RunScale`].
fn run_scale<C: Collective>(
    cfg: &Config,
    c: &C,
    m: &Measure,
    count: usize,
    calls: usize,
    payload: bool,
) -> Result<RunScale, Error> {
    let paths = cfg.chip_paths().map_err(sim_core::SimError::invalid)?;
    let net = NetworkModel::footprint_of(&cfg.fabric, cfg.machine.ranks, &paths)?;
    let ranks = m.ranks as u64;
    let calls = calls.max(1) as u64;
    let t: Traffic = c.traffic(count, m.ranks, cfg.server_ranks());
    let blocks = t.blocks as u64;
    // Each block's routes: its notifies', its data's, and its local loads and stores.
    let per_block = (t.signal_peers + t.data_peers.saturating_mul(t.routes_per_peer) + 2) as u64;
    let (held, sync_blocks) = match c.payload_bytes(count, m.ranks) {
        Some(b) => (b, 0),
        None => held_by_setup(cfg, c, m.ranks, count)?,
    };
    let per_rank = held / ranks.max(1);
    let ops = ranks.saturating_mul(blocks).saturating_mul(t.ops).saturating_mul(calls);
    let packet = cfg.fabric.packet_bytes.max(1);
    Ok(RunScale {
        chips: cfg.machine.ranks,
        cores: paths.cores + paths.cube_cores,
        network: net.fixed,
        network_per_route: net.per_route,
        payload: if payload { held } else { 0 },
        // Inputs are written and results read back one rank at a time, as bytes and as f64.
        host_buffers: if payload { per_rank.saturating_mul(3) } else { 0 },
        // Each process of a run over processes holds its own partition only.
        copies: if m.processes { 1 } else { m.partitions.max(1) },
        routes: ranks.saturating_mul(blocks).saturating_mul(per_block),
        in_flight: ranks.saturating_mul(blocks).saturating_mul(t.in_flight as u64),
        cells: ranks.saturating_mul((t.cells as u64).div_ceil(CELL_PAGE) * CELL_PAGE),
        dispatches: ranks.saturating_mul(calls),
        coroutines: sync_blocks,
        stack_bytes: 64 << 10,
        ops,
        packet_hops: (held / packet).saturating_add(ops).saturating_mul(calls).saturating_mul(6),
        traced: m.trace,
        checked: false,
        ..RunScale::default()
    })
}

/// The payload bytes `c` holds at `count` elements on `ranks` ranks and its synchronous
/// kernels' blocks, learnt by setting it up and queueing one call on a timing-only world
/// (a collective that does not say its [`Collective::payload_bytes`]).
fn held_by_setup<C: Collective>(cfg: &Config, c: &C, ranks: usize, count: usize) -> Result<(u64, u64), Error> {
    let mut w = cfg.world()?;
    w.set_timing_only()?;
    let members: Vec<usize> = (0..ranks).collect();
    let dom = w.create_domain("comm_d0", &members, sim_core::DomainOptions::default())?;
    let b = c.setup(&mut w, &dom, count)?;
    c.call(&mut w, &b)?;
    Ok((w.payload_bytes(), w.run_scale().coroutines))
}

/// What [`super::point`] of `c` at `size_bytes` with `m` holds at its peak: the larger of its
/// one-call run with payload (unless `m.timing_only`) and its timing-only run of every call;
/// `None` when the size gives no element and `c` needs some.
pub fn estimate<C: Collective>(
    cfg: &Config,
    c: &C,
    m: &Measure,
    size_bytes: u64,
) -> Result<Option<MemoryEstimate>, Error> {
    let Some(count) = elements(c, m.ranks, size_bytes) else { return Ok(None) };
    let timed = run_scale(cfg, c, m, count, m.calls(), false)?.estimate();
    if m.timing_only {
        return Ok(Some(timed));
    }
    let checked = run_scale(cfg, c, m, count, 1, true)?.estimate();
    Ok(Some(if checked.total() >= timed.total() { checked } else { timed }))
}

/// The engine's work for [`super::point`] of `c` at `size_bytes` with `m`, in operations and
/// packet hops of its runs (every timed call, and the one call with payload unless
/// `m.timing_only`), as the memory estimate counts them: what a default series budgets its
/// host time by, deterministically. `None` when the size gives no element and `c` needs some.
pub fn estimate_work<C: Collective>(cfg: &Config, c: &C, m: &Measure, size_bytes: u64) -> Result<Option<u64>, Error> {
    let Some(count) = elements(c, m.ranks, size_bytes) else { return Ok(None) };
    let work = |s: RunScale| s.ops.saturating_add(s.packet_hops);
    let timed = work(run_scale(cfg, c, m, count, m.calls(), false)?);
    let checked = if m.timing_only { 0 } else { work(run_scale(cfg, c, m, count, 1, true)?) };
    Ok(Some(timed.saturating_add(checked)))
}

/// What one run of `calls` calls of `c` at `size_bytes` with `m` (payload unless
/// `m.timing_only`) holds; `None` when the size gives no element and `c` needs some.
pub fn estimate_run<C: Collective>(
    cfg: &Config,
    c: &C,
    m: &Measure,
    size_bytes: u64,
    calls: usize,
) -> Result<Option<MemoryEstimate>, Error> {
    let Some(count) = elements(c, m.ranks, size_bytes) else { return Ok(None) };
    Ok(Some(run_scale(cfg, c, m, count, calls, !m.timing_only)?.estimate()))
}

/// What a checked run of `calls` calls of `c` at `size_bytes` holds (the checker's records
/// of every operation beside the run; its reruns come one after another).
pub fn estimate_check<C: Collective>(
    cfg: &Config,
    c: &C,
    m: &Measure,
    size_bytes: u64,
    calls: usize,
) -> Result<Option<MemoryEstimate>, Error> {
    let Some(count) = elements(c, m.ranks, size_bytes) else { return Ok(None) };
    let s = RunScale { checked: true, ..run_scale(cfg, c, m, count, calls, true)? };
    Ok(Some(s.estimate()))
}

/// Refuses `estimate` of `what` when it exceeds `m`'s memory limit, with the estimate, its
/// largest part and what to change (timing-only among it when `payload_optional`: a
/// measurement, not a checked run).
pub fn refuse(what: &str, estimate: &MemoryEstimate, m: &Measure, payload_optional: bool) -> Result<(), Error> {
    let Some(l) = m.budgets.max_memory else { return Ok(()) };
    let (limit, source) = (l.bytes(), l.source().to_string());
    if estimate.total() <= limit {
        return Ok(());
    }
    Err(Error::Sim(sim_core::SimError::Memory(Box::new(MemoryReport {
        what: what.to_string(),
        estimate: estimate.clone(),
        limit,
        limit_source: source,
        advice: advice(estimate, limit, m.timing_only || !payload_optional),
    }))))
}

/// What to change so that `estimate` fits in `limit`: the parts that could (timing-only,
/// unless `timing_only` already or not an option), then a larger limit.
pub fn advice(estimate: &MemoryEstimate, limit: u64, timing_only: bool) -> String {
    let mut out = Vec::new();
    let payload = estimate.bytes_of("payload");
    let without = estimate.total().saturating_sub(payload + estimate.bytes_of("host buffers"));
    if !timing_only && payload > 0 && without <= limit {
        out.push(format!(
            "timing-only (--no-data, Measure::timing_only: the same times, no payload; about {})",
            human_bytes(without)
        ));
    }
    let comm = ["routes", "in flight", "signal cells"].iter().map(|w| estimate.bytes_of(w)).sum::<u64>();
    if comm > limit / 4 {
        out.push(format!(
            "{} of it grows with blocks x ranks x peers: fewer blocks (--core-num), fewer ranks (-g) or an \
             algorithm that talks to fewer peers at once (rhd, hier, grouped-mesh)",
            human_bytes(comm)
        ));
    }
    if estimate.bytes_of("trace") > limit / 4 {
        out.push("no trace, or a smaller size to trace".to_string());
    }
    out.push("a larger limit (--max-memory, Budgets::max_memory, max_memory= in Python)".to_string());
    format!("To fit: {}.", out.join("; or "))
}
