//! The packet-level machine model: a table of resources (per-core DMA engines, per-chip HBM and
//! ingress port, the topology's links), paths through them by [`PathKind`], and the
//! cut-through timing of one packet along a path.

use crate::config::{FabricConfig, FabricConfigError, err};
use crate::topology::Node;
use crate::topology::Topology;
pub use chip_model::ChipPaths;
use chip_model::EngineKind;
use resource::Resource;
use rustc_hash::FxHashMap;
use sim_core::{
    Bandwidth, SimDuration, SimTime,
    model::{Busy, Network, NetworkFootprint, Onward, PacketTiming, PathId, PathKind, Route},
};
use std::ops::Range;
use std::sync::Arc;
use table::ResourceTable;

mod resource;
mod table;

/// The machine's data paths, implementing [`Network`]. Resources are numbered chip by chip
/// (`hbm c`, `port c`, then the chip's engines as [`ChipPaths::engines`] lists them, indexed
/// through [`ChipPaths::engine_offset`]: the one layout, written once in chip-model), then the
/// topology's links in its order.
#[derive(Clone, Debug)]
pub struct NetworkModel {
    packet_bytes: u64,
    read_turnaround: SimDuration,
    relaxed: bool,
    ranks: usize,
    /// The chip's engines: how many of each, and where each sits in a chip's block.
    chip: ChipPaths,
    /// Shared by the copies of a split run (see [`Network::fork`]): it never changes.
    topology: Arc<Topology>,
    /// The booking state of each resource (hot: `send` walks it per packet): of every chip,
    /// or of a partition's chips only (see [`ResourceTable`]).
    resources: ResourceTable,
    /// The name and index of each chip-side engine after the HBM and the port, in resource
    /// order: a resource's name is made from it (or from its link) only when asked for (traces
    /// and reports), so building the model formats no string.
    engines: Vec<(&'static str, usize)>,
    /// The resources of every path, path after path (each id below `resources.len()`), so a
    /// packet's walk reads one contiguous run.
    hops: Vec<u32>,
    /// Each path's run of `hops` and what a packet's walk needs of it, by id (one load a
    /// packet).
    paths: Vec<PathRun>,
    /// `1 / core_write_efficiency`, when it is below 1.
    core_write_scale: Option<f64>,
    /// Each chip's island (see [`Topology::island`]), as a chip number.
    islands: Vec<u32>,
    /// Path ids by route (looked up, never iterated: a hash map keeps runs deterministic).
    ids: FxHashMap<Route, PathId>,
    /// The route of each path, by id.
    routes: Vec<Route>,
    /// The link resources from chip `a` to chip `b`, by `(a, b)`, as a run of `link_runs`:
    /// the routes of a chip pair are walked once, not once per core and kind.
    link_memo: FxHashMap<(usize, usize), (usize, usize)>,
    link_runs: Vec<u32>,
    /// `1 + id` by dense route index (0: not resolved yet), when the machine is small enough
    /// (see [`RouteIndex`]); otherwise the rows of `rows`, one after another.
    dense: Vec<u32>,
    /// On a machine too large for a flat table (the 1024-rank cluster), `1 +` the row of
    /// `dense` that holds the routes of each (chip, core, kind) to [`ROW`] peers, allocated at
    /// the first such route (0: none yet); empty on a small machine. A core talks to few
    /// kinds, so the rows in use are few, and a lookup is two loads where the hash map's probe
    /// missed the cache.
    rows: Vec<u32>,
    index: RouteIndex,
}

/// A path: its run `hops[lo..hi]`, its hops `[wire.0, wire.1)` (offsets in the run) that a
/// packet holds for its wire bytes, `scale` times its payload, rather than its payload (a
/// core's remote store's links and port, when `core_write_efficiency` is below 1 or a level
/// it crosses writes slower than it reads; an SDMA put's NIC links on such a level; `(0, 0)`
/// for every other path), and its
/// first hop past a switch (`split`, an offset in the run), where a packet waits for the rest
/// of its path to be booked (see [`Onward`]; 0 for a path through no switch), with the chip
/// that hop belongs to (`past`).
#[derive(Copy, Clone, Debug, Default)]
struct PathRun {
    lo: u32,
    hi: u32,
    wire: (u32, u32),
    scale: f64,
    split: u32,
    past: u32,
}

/// Route numbering for the dense path table, by chip, then core, then kind, then peer
/// (`((chip * slots + core) * KINDS + kind) * ranks + peer`). A flow asks for its path once, and the hash probe missed the cache half the time
/// on the 8-block mesh (a core cycles through two dozen routes); a core's routes of one kind
/// are adjacent here, and the lookup is one load.
#[derive(Copy, Clone, Debug)]
struct RouteIndex {
    ranks: usize,
    /// Core numbers per chip: AIV then AIC cores, or SDMA channels, whichever is more.
    slots: usize,
}

/// How many [`PathKind`]s there are.
const KINDS: usize = 10;

/// The largest dense table, in entries (16 MiB; zeroed pages cost nothing until touched).
/// Bigger machines (the 1024-rank cluster) use rows per (chip, core, kind).
const DENSE_MAX: usize = 1 << 22;

/// The most (chip, core, kind) rows a large machine's table indexes (64 MiB of row numbers,
/// zeroed pages that cost nothing until touched); beyond, the hash map alone.
const ROWS_MAX: usize = 1 << 24;

/// The most entries the rows of a large machine's table hold in all (64 MiB); routes of rows
/// past it go to the hash map.
const ROW_ENTRIES_MAX: usize = 1 << 24;

/// Peers a row of a large machine's table covers: a core that talks to a few peers (a
/// recursive halving-doubling step's one partner) makes a few rows of 256 bytes, not one of
/// 4 KiB per (chip, core, kind).
const ROW: usize = 64;

impl RouteIndex {
    /// Entries a dense table needs, if within [`DENSE_MAX`].
    fn size(&self) -> Option<usize> {
        self.rows()?.checked_mul(self.ranks).filter(|&n| n <= DENSE_MAX)
    }

    /// The (chip, core, kind) rows of the table, if within [`ROWS_MAX`].
    fn rows(&self) -> Option<usize> {
        self.ranks.checked_mul(self.slots)?.checked_mul(KINDS).filter(|&n| n <= ROWS_MAX)
    }

    /// The rows of a large machine's table: [`ROW`] peers of each (chip, core, kind), if
    /// within [`ROWS_MAX`].
    fn row_blocks(&self) -> Option<usize> {
        self.rows()?.checked_mul(self.ranks.div_ceil(ROW)).filter(|&n| n <= ROWS_MAX)
    }

    /// The row and the column (the peer) of `r`, if its chip, core and peer exist: its dense
    /// index is `row * ranks + peer`.
    #[inline]
    fn of(&self, r: &Route) -> Option<(usize, usize)> {
        if r.chip >= self.ranks || r.core >= self.slots || r.peer >= self.ranks {
            return None;
        }
        Some(((r.chip * self.slots + r.core) * KINDS + kind_index(r.kind), r.peer))
    }
}

/// A [`PathKind`]'s place in the dense table: a `match`, so a new kind does not compile until
/// it has one (and [`KINDS`] grows).
fn kind_index(kind: PathKind) -> usize {
    match kind {
        PathKind::Load => 0,
        PathKind::Store => 1,
        PathKind::RemoteWrite => 2,
        PathKind::ReadRequest => 3,
        PathKind::RemoteRead => 4,
        PathKind::Signal => 5,
        PathKind::SdmaPut => 6,
        PathKind::SdmaRequest => 7,
        PathKind::SdmaGet => 8,
        PathKind::OrderedNotify => 9,
    }
}

/// Bytes a link holds: itself, its entry in the topology's index of links by their ends, and
/// its copy in the list the shape makes, which lives while the topology is built (the peak).
const LINK_BYTES: u64 = (2 * std::mem::size_of::<crate::topology::Link>() + 64) as u64;

/// Bytes of a model's resources, links and per-chip tables, and per route it resolves (its
/// run of hops, its entry in the path and route tables, a share of its chip pair's link
/// run), for `resources` resources, `links` links, `ranks` chips and routes crossing at most
/// `diameter` links.
fn footprint(resources: u64, links: u64, ranks: u64, diameter: u64) -> NetworkFootprint {
    use std::mem::size_of;
    let fixed = resources * size_of::<Resource>() as u64 + links * LINK_BYTES + ranks * 8;
    // A route's hops (its engines, HBM and port ends and its links), its path run, its route
    // and its slot in the dense table, in vectors that double (half again on average).
    let hops = (diameter + 4) * size_of::<u32>() as u64;
    let tables = (size_of::<PathRun>() + size_of::<Route>() + size_of::<u32>() * 2) as u64;
    NetworkFootprint { fixed, per_route: (hops + tables) * 3 / 2 }
}

/// Where a resource sits (see [`NetworkModel::locate`]).
enum Located {
    /// Chip-side: the chip, and the offset in its block (0 HBM, 1 port, then engines).
    Chip(usize, usize),
    /// The topology's link of this index.
    Link(usize),
}

/// Builds the [`Network`] of `ranks` chips described by `cfg`, with chip-side paths `chip`.
pub fn build_network(
    cfg: &FabricConfig,
    ranks: usize,
    chip: &ChipPaths,
) -> Result<Box<dyn Network>, FabricConfigError> {
    Ok(Box::new(NetworkModel::new(cfg, ranks, chip)?))
}

impl NetworkModel {
    /// The model of `cfg` for `ranks` chips; fails on any invalid value (naming its key).
    pub fn new(cfg: &FabricConfig, ranks: usize, chip: &ChipPaths) -> Result<NetworkModel, FabricConfigError> {
        let packet_bytes = cfg.checked_packet_bytes()?;
        let port = cfg.port()?;
        let topology = Topology::new(cfg, ranks)?;
        let count = ranks
            .checked_mul(chip.engine_count().saturating_add(2))
            .and_then(|n| n.checked_add(topology.links().len()))
            .filter(|&n| u32::try_from(n).is_ok());
        if count.is_none() {
            let value = format!("{ranks} chips x {} cores", chip.cores);
            return Err(err("topology", value, "needs more than 2^32 resources"));
        }
        let mut block = vec![Resource::new(chip.hbm, SimDuration::ZERO), Resource::new(port.rate, port.latency)];
        block.extend(chip.engines().map(|e| Resource::new(e.rate, SimDuration::ZERO)));
        let links = topology.links().iter().map(|l| Resource::new(l.params.rate, l.params.latency)).collect();
        let resources = ResourceTable::new(block, ranks, links, 0..ranks);
        let engines = chip.engines().map(|e| (e.name, e.index)).collect();
        let (hops, paths, ids) = (Vec::new(), Vec::new(), FxHashMap::default());
        let relaxed = cfg.ordering == crate::config::NotifyOrdering::Relaxed;
        let read_turnaround = cfg.read_turnaround()?;
        let e = cfg.checked_core_write_efficiency()?;
        let core_write_scale = (e < 1.0).then(|| 1.0 / e);
        let index = RouteIndex { ranks, slots: (chip.cores + chip.cube_cores).max(chip.sdma_channels) };
        let (dense, rows) = match (index.size(), index.rows()) {
            (Some(n), _) => (vec![0; n], Vec::new()),
            (None, _) => (Vec::new(), index.row_blocks().map_or_else(Vec::new, |n| vec![0; n])),
        };
        let islands = (0..ranks).map(|c| u32::try_from(topology.island(c)).unwrap_or(u32::MAX)).collect();
        Ok(NetworkModel {
            packet_bytes,
            read_turnaround,
            relaxed,
            ranks,
            chip: *chip,
            topology: Arc::new(topology),
            resources,
            engines,
            hops,
            paths,
            core_write_scale,
            islands,
            ids,
            routes: Vec::new(),
            link_memo: FxHashMap::default(),
            link_runs: Vec::new(),
            dense,
            rows,
            index,
        })
    }

    /// What a model of `ranks` chips with `chip`'s paths on `cfg` holds (see
    /// [`Network::footprint`]), worked out without building it.
    pub fn footprint_of(
        cfg: &FabricConfig,
        ranks: usize,
        chip: &ChipPaths,
    ) -> Result<NetworkFootprint, FabricConfigError> {
        let (links, diameter) = Topology::count(cfg, ranks)?;
        let resources = (ranks as u64).saturating_mul(chip.engine_count() as u64 + 2).saturating_add(links as u64);
        Ok(footprint(resources, links as u64, ranks as u64, diameter as u64))
    }

    /// The topology the links come from.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// The resources of a path, in order (empty for an unknown id).
    pub fn path_resources(&self, path: PathId) -> &[u32] {
        self.paths.get(path.0 as usize).and_then(|p| self.hops.get(p.lo as usize..p.hi as usize)).unwrap_or(&[])
    }

    /// A resource's effective rate (`None` = unlimited) and latency, if it exists.
    pub fn resource_timing(&self, resource: u32) -> Option<(Option<Bandwidth>, SimDuration)> {
        self.resources.get(resource).map(|r| (r.rate(), r.latency))
    }

    /// The chips whose resources this model holds (the rest it makes only if a path books
    /// one), and how many resources it holds: every chip's, or a partition's (see
    /// [`Network::reset_for`]).
    pub fn held(&self) -> (Range<usize>, usize) {
        (self.resources.held(), self.resources.holding())
    }

    /// This model with `resources` in place of its own (whose copy would cost as much as
    /// the model).
    fn copy_with(&self, resources: ResourceTable) -> NetworkModel {
        NetworkModel {
            packet_bytes: self.packet_bytes,
            read_turnaround: self.read_turnaround,
            relaxed: self.relaxed,
            ranks: self.ranks,
            chip: self.chip,
            topology: self.topology.clone(),
            resources,
            engines: self.engines.clone(),
            hops: self.hops.clone(),
            paths: self.paths.clone(),
            core_write_scale: self.core_write_scale,
            islands: self.islands.clone(),
            ids: self.ids.clone(),
            routes: self.routes.clone(),
            link_memo: self.link_memo.clone(),
            link_runs: self.link_runs.clone(),
            dense: self.dense.clone(),
            rows: self.rows.clone(),
            index: self.index,
        }
    }

    /// Where resource `r` sits: chip-side (chip, offset in the chip's block) or the `l`-th link.
    fn locate(&self, r: u32) -> Option<Located> {
        let (r, chip_side) = (r as usize, self.ranks * self.per_chip());
        if r < chip_side {
            return Some(Located::Chip(r / self.per_chip(), r % self.per_chip()));
        }
        let l = r - chip_side;
        (l < self.topology.links().len()).then_some(Located::Link(l))
    }

    /// Resources per chip: HBM, port, then the engines in `ChipPaths::engines` order.
    fn per_chip(&self) -> usize {
        2 + self.chip.engine_count()
    }

    /// Index of chip-side resource `offset` of `chip`, if both exist.
    fn chip_res(&self, chip: usize, offset: usize) -> Option<u32> {
        (chip < self.ranks).then(|| u32::try_from(chip * self.per_chip() + offset).ok()).flatten()
    }

    fn hbm(&self, chip: usize) -> Option<u32> {
        self.chip_res(chip, 0)
    }

    fn port(&self, chip: usize) -> Option<u32> {
        self.chip_res(chip, 1)
    }

    /// Engine `index` of `kind` on `chip`, if both exist: the offset chip-model gives, after
    /// the chip's HBM and port.
    fn engine(&self, chip: usize, kind: EngineKind, index: usize) -> Option<u32> {
        self.chip_res(chip, 2 + self.chip.engine_offset(kind, index)?)
    }

    /// The core's GM-side input engine: MTE2 of an AIV core (GM -> UB) or of an AIC core
    /// (GM -> L1).
    fn mte2(&self, chip: usize, core: usize) -> Option<u32> {
        let kind = if core < self.chip.cores { EngineKind::Mte2 } else { EngineKind::L1Load };
        self.engine(chip, kind, core)
    }

    /// The core's GM-side output engine: MTE3 of an AIV core (UB -> GM) or the FIXPIPE of an
    /// AIC core (L0C -> GM).
    fn mte3(&self, chip: usize, core: usize) -> Option<u32> {
        let kind = if core < self.chip.cores { EngineKind::Mte3 } else { EngineKind::Fixpipe };
        self.engine(chip, kind, core)
    }

    fn sdma(&self, chip: usize, channel: usize) -> Option<u32> {
        self.engine(chip, EngineKind::Sdma, channel)
    }

    /// Appends the link resources from chip `a` to chip `b` to `out` (none for an unknown
    /// chip or `a == b`).
    fn push_links(&mut self, a: usize, b: usize, out: &mut Vec<u32>) {
        let (lo, hi) = self.link_run(a, b);
        out.extend_from_slice(&self.link_runs[lo..hi]);
    }

    /// Where the link resources from chip `a` to chip `b` are in `link_runs`, walking the
    /// topology the first time the pair is asked for.
    fn link_run(&mut self, a: usize, b: usize) -> (usize, usize) {
        if let Some(&run) = self.link_memo.get(&(a, b)) {
            return run;
        }
        let base = self.ranks * self.per_chip();
        let lo = self.link_runs.len();
        let links = self.topology.route(a, b).into_iter().filter_map(|i| u32::try_from(base + i).ok());
        self.link_runs.extend(links);
        let run = (lo, self.link_runs.len());
        self.link_memo.insert((a, b), run);
        run
    }

    /// Where `route`'s entry is in `dense`, if the table has one for it: in the flat table, or
    /// in its (chip, core, kind) row, allocated now if it is the row's first route.
    #[inline]
    fn dense_slot(&mut self, route: &Route) -> Option<usize> {
        if !self.rows.is_empty() {
            return self.row_slot(route);
        }
        let (row, peer) = self.index.of(route)?;
        let at = row * self.index.ranks + peer;
        (at < self.dense.len()).then_some(at)
    }

    /// [`NetworkModel::dense_slot`] on a large machine: in the route's row, made now if it is
    /// the row's first route. Out of line, so that a small machine's lookup stays short.
    #[inline(never)]
    fn row_slot(&mut self, route: &Route) -> Option<usize> {
        let (row, peer) = self.index.of(route)?;
        let row = row * self.index.ranks.div_ceil(ROW) + peer / ROW;
        let base = match self.rows.get(row)?.checked_sub(1) {
            Some(base) => base as usize,
            None => self.new_row(row)?,
        };
        Some(base * ROW + peer % ROW)
    }

    /// Appends a zeroed row to `dense` for row `row` of a large machine's table and returns
    /// its number, unless the rows have reached [`ROW_ENTRIES_MAX`] entries.
    #[cold]
    #[inline(never)]
    fn new_row(&mut self, row: usize) -> Option<usize> {
        let len = self.dense.len();
        if len + ROW > ROW_ENTRIES_MAX {
            return None;
        }
        let base = len / ROW;
        self.rows[row] = u32::try_from(base + 1).ok()?;
        self.dense.resize(len + ROW, 0);
        Some(base)
    }

    /// Resolves `route`, the first time it is asked for, into the next id (ids follow first
    /// use); `dense`: the caller keeps the id in the dense table, so the hash map need not
    /// (unless the id is too large for it). Out of line so that `path`, run per flow, stays a
    /// load without the frame `resolve` needs.
    #[cold]
    #[inline(never)]
    fn new_path(&mut self, route: &Route, dense: bool) -> PathId {
        let id = PathId(u32::try_from(self.paths.len()).unwrap_or(u32::MAX));
        let mut hops = std::mem::take(&mut self.hops);
        let lo = hops.len();
        self.resolve(route, &mut hops);
        // `resolve` only names resources that exist; the filter keeps the walk in `send` from
        // ever missing one. Past 2^32 hops in all (never in practice) a path stays empty.
        let n = self.resources.len();
        let mut kept = lo;
        for i in lo..hops.len() {
            if (hops[i] as usize) < n {
                hops[kept] = hops[i];
                kept += 1;
            }
        }
        hops.truncate(kept);
        let run = match (u32::try_from(lo), u32::try_from(hops.len())) {
            (Ok(lo), Ok(hi)) => (lo, hi),
            _ => {
                hops.truncate(lo);
                (0, 0)
            }
        };
        let (wire, scale) = self.wire_run(route, &hops[run.0 as usize..run.1 as usize]);
        let split = self.split_at(&hops[run.0 as usize..run.1 as usize]);
        let past = hops.get((run.0 + split) as usize).filter(|_| split > 0).map_or(0, |&r| self.resource_chip(r));
        self.hops = hops;
        let past = u32::try_from(past).unwrap_or(u32::MAX);
        self.paths.push(PathRun { lo: run.0, hi: run.1, wire, scale, split, past });
        self.routes.push(*route);
        if !dense || id.0.checked_add(1).is_none() {
            self.ids.insert(*route, id);
        }
        id
    }

    /// The offsets `[a, b)` of `hops` (the resolved path of `route`) that hold a packet for its
    /// wire bytes, and how many times its payload those are: a core's remote store's links and
    /// ingress port, scaled by `1 / core_write_efficiency` and by the slowest writing level it
    /// crosses; an SDMA put's links on levels that write slower than they read, scaled by the
    /// slowest. `((0, 0), 1)` for every other path.
    fn wire_run(&self, route: &Route, hops: &[u32]) -> ((u32, u32), f64) {
        let level = |r: &u32| match self.locate(*r) {
            Some(Located::Link(l)) => self.topology.write_scale(l),
            _ => 1.0,
        };
        let levels = hops.iter().map(level).fold(1.0, f64::max);
        let (run, scale): (&dyn Fn(&u32) -> bool, f64) = match route.kind {
            PathKind::RemoteWrite => (
                &|r: &u32| matches!(self.locate(*r), Some(Located::Link(_) | Located::Chip(_, 1))),
                levels * self.core_write_scale.unwrap_or(1.0),
            ),
            PathKind::SdmaPut if route.peer != route.chip => (&|r: &u32| level(r) != 1.0, levels),
            _ => return ((0, 0), 1.0),
        };
        if scale == 1.0 {
            return ((0, 0), 1.0);
        }
        let a = hops.iter().position(run).unwrap_or(0);
        let b = hops.iter().rposition(run).map_or(a, |b| b + 1);
        ((a as u32, b as u32), scale)
    }

    /// The offset in `hops` of the first link out of a switch (0: the path crosses none).
    fn split_at(&self, hops: &[u32]) -> u32 {
        let leaves_switch = |r: &u32| match self.locate(*r) {
            Some(Located::Link(l)) => matches!(self.topology.links()[l].from, Node::Switch { .. }),
            _ => false,
        };
        hops.iter().position(leaves_switch).map_or(0, |i| i as u32)
    }

    /// Books hops `[from, to)` of `path` for a packet of `bytes` whose first byte is at hop
    /// `from` at `ready` and its last at `last_in`, at event time `now`: cut-through, as
    /// [`Network::send`] documents. Past the last hop the packet is at its destination, or at
    /// the switch before hop `to` when `to` is the path's split.
    #[allow(clippy::too_many_arguments)]
    fn walk(
        &mut self,
        path: PathId,
        (from, to): (u32, u32),
        bytes: u64,
        (ready, last_in): (SimTime, SimTime),
        now: SimTime,
        mut busy: Option<&mut Vec<Busy>>,
    ) -> PacketTiming {
        let mut timing = PacketTiming::idle(ready);
        let Some(&PathRun { lo, wire: (wa, wb), scale, split, past, .. }) = self.paths.get(path.0 as usize) else {
            return timing;
        };
        let Some(ids) = self.hops.get((lo + from) as usize..(lo + to) as usize) else { return timing };
        let wire = if wa < wb { (bytes as f64 * scale).ceil() as u64 } else { bytes };
        let resources = &mut self.resources;
        // Each hop's state and calendar are read before any is booked: the loads do not
        // depend on each other, so their cache misses overlap instead of coming one per hop.
        let mut warm = 0;
        for &id in ids {
            if let Some(r) = resources.get(id) {
                warm ^= r.warm();
            }
        }
        std::hint::black_box(warm);
        // First and last byte at the next resource, and the latency in front of it (from the
        // walk's first hop).
        let (mut ready, mut last_in, mut ahead) = (ready, last_in, SimDuration::ZERO);
        for (j, &id) in (from..).zip(ids) {
            // Never skips: every hop names an existing resource (see `path`).
            let Some(res) = resources.get_mut(id) else { continue };
            let held = if j >= wa && j < wb { wire } else { bytes };
            let slot = res.book(held, ready, last_in, now);
            if j == from {
                timing.begin = slot.start;
            }
            let cleared = slot.end.as_ps().saturating_sub(ahead.as_ps());
            timing.cleared = timing.cleared.max(SimTime::from_ps(cleared));
            timing.arrival = slot.end + res.latency;
            if let Some(b) = busy.as_deref_mut() {
                b.push(Busy { resource: id, start: slot.start, end: slot.end, bytes });
            }
            ahead += res.latency;
            (ready, last_in) = (slot.start + res.latency, slot.end + res.latency);
        }
        if to > from && split == to {
            timing.onward = Some(Onward { hop: to, chip: past, ready, last_in });
        }
        timing
    }

    /// Appends the resources of `route` to `out`, as documented on [`PathKind`]; those that do
    /// not exist (a chip or core out of range) are left out, so a bad route gives a short or
    /// empty path.
    fn resolve(&mut self, r: &Route, out: &mut Vec<u32>) {
        let (chip, core, peer) = (r.chip, r.core, r.peer);
        let put = |out: &mut Vec<u32>, rs: &[Option<u32>]| out.extend(rs.iter().flatten());
        match r.kind {
            PathKind::Load => put(out, &[self.hbm(chip), self.mte2(chip, core)]),
            PathKind::Store => put(out, &[self.mte3(chip, core), self.hbm(chip)]),
            PathKind::RemoteWrite | PathKind::OrderedNotify => {
                put(out, &[self.mte3(chip, core)]);
                self.push_links(chip, peer, out);
                put(out, &[self.port(peer), self.hbm(peer)]);
            }
            PathKind::ReadRequest | PathKind::SdmaRequest => self.push_links(chip, peer, out),
            PathKind::RemoteRead => {
                put(out, &[self.hbm(peer)]);
                self.push_links(peer, chip, out);
                put(out, &[self.port(chip), self.mte2(chip, core)]);
            }
            PathKind::Signal => {
                self.push_links(chip, peer, out);
                put(out, &[self.port(peer)]);
            }
            // A local SDMA copy reads and writes the same HBM and crosses no port.
            PathKind::SdmaPut | PathKind::SdmaGet if peer == chip => {
                put(out, &[self.hbm(chip), self.sdma(chip, core), self.hbm(chip)]);
            }
            PathKind::SdmaPut => {
                put(out, &[self.hbm(chip), self.sdma(chip, core)]);
                self.push_links(chip, peer, out);
                put(out, &[self.port(peer), self.hbm(peer)]);
            }
            // The channel paces the pull right after the source HBM: booked after the port, a
            // channel about as fast as the links would not overlap its packets with theirs
            // (the port compresses each packet to its end) and would halve the rate.
            PathKind::SdmaGet => {
                put(out, &[self.hbm(peer), self.sdma(chip, core)]);
                self.push_links(peer, chip, out);
                put(out, &[self.port(chip), self.hbm(chip)]);
            }
        }
    }
}

impl Network for NetworkModel {
    #[inline]
    fn path(&mut self, route: &Route) -> PathId {
        let Some(slot) = self.dense_slot(route) else {
            return match self.ids.get(route) {
                Some(&id) => id,
                None => self.new_path(route, false),
            };
        };
        if let Some(id) = self.dense[slot].checked_sub(1) {
            return PathId(id);
        }
        // First use (or id `u32::MAX`, past 2^32 paths, which only the hash map holds).
        let id = match self.ids.get(route) {
            Some(&id) => id,
            None => self.new_path(route, true),
        };
        if let Some(stored) = id.0.checked_add(1) {
            self.dense[slot] = stored;
        }
        id
    }

    fn packet_bytes(&self) -> u64 {
        self.packet_bytes
    }

    /// Cut-through along the path: the packet's first byte reaches resource j one latency
    /// after it left resource j-1 (`at` for the first), its last byte one latency after the
    /// last left j-1, and j books the earliest slot that fits (see `Resource::book`).
    /// `cleared = max_j(end_j - L_j)`, with L_j the latency in front of j: when the sender may
    /// send again without queueing behind itself. A path through a switch is booked up to the
    /// switch (its sender's side: `cleared` counts only those hops); the rest waits for
    /// [`Network::send_onward`]. With `busy`, appends one entry per resource booked
    /// (zero-length ones included). An unknown or empty path takes no time.
    #[inline]
    fn send(&mut self, path: PathId, bytes: u64, at: SimTime, busy: Option<&mut Vec<Busy>>) -> PacketTiming {
        let Some(&PathRun { lo, hi, split, .. }) = self.paths.get(path.0 as usize) else {
            return PacketTiming::idle(at);
        };
        let to = if split > 0 { split } else { hi - lo };
        self.walk(path, (0, to), bytes, (at, at), at, busy)
    }

    fn send_onward(&mut self, path: PathId, bytes: u64, from: Onward, busy: Option<&mut Vec<Busy>>) -> PacketTiming {
        let Some(&PathRun { lo, hi, .. }) = self.paths.get(path.0 as usize) else {
            return PacketTiming::idle(from.ready);
        };
        let mut timing = self.walk(path, (from.hop, hi - lo), bytes, (from.ready, from.last_in), from.ready, busy);
        timing.onward = None;
        timing
    }

    fn resource_name(&self, resource: u32) -> String {
        match self.locate(resource) {
            Some(Located::Chip(c, 0)) => format!("hbm {c}"),
            Some(Located::Chip(c, 1)) => format!("port {c}"),
            Some(Located::Chip(c, k)) => match self.engines.get(k - 2) {
                Some((name, index)) => format!("{name} {c}.{index}"),
                None => format!("resource {resource}"),
            },
            Some(Located::Link(l)) => self.topology.links()[l].name(),
            None => format!("resource {resource}"),
        }
    }

    fn resource_chip(&self, resource: u32) -> usize {
        match self.locate(resource) {
            Some(Located::Chip(c, _)) => c,
            Some(Located::Link(l)) => self.topology.links()[l].chip(),
            None => 0,
        }
    }

    fn relaxed_ordering(&self) -> bool {
        self.relaxed
    }

    fn island(&self, chip: usize) -> usize {
        self.islands.get(chip).map_or(chip, |&i| i as usize)
    }

    /// Zero within an island; across a switch, the latency of the links from `from` to `to`.
    fn news_delay(&mut self, from: usize, to: usize) -> SimDuration {
        match (self.islands.get(from), self.islands.get(to)) {
            (Some(a), Some(b)) if a != b => {}
            _ => return SimDuration::ZERO,
        }
        let (lo, hi) = self.link_run(from, to);
        let links = &self.link_runs[lo..hi];
        links.iter().filter_map(|&r| self.resources.get(r)).fold(SimDuration::ZERO, |d, r| d + r.latency)
    }

    fn read_turnaround(&self) -> SimDuration {
        self.read_turnaround
    }

    fn reset(&mut self) {
        self.resources.reset();
    }

    /// Holds chips `chips`' resources and the links only (the others made on demand).
    fn reset_for(&mut self, chips: Range<usize>) {
        if self.resources.held() == chips {
            self.resources.reset();
        } else {
            self.resources.hold(chips);
        }
    }

    fn fork(&self) -> Option<Box<dyn Network>> {
        let mut copy = self.clone();
        copy.reset();
        Some(Box::new(copy))
    }

    fn fork_for(&self, chips: Range<usize>) -> Option<Box<dyn Network>> {
        Some(Box::new(self.copy_with(self.resources.fresh_for(chips))))
    }

    fn route_of(&self, path: PathId) -> Option<Route> {
        self.routes.get(path.0 as usize).copied()
    }

    fn footprint(&self) -> NetworkFootprint {
        let links = self.topology.links().len() as u64;
        footprint(self.resources.len() as u64, links, self.ranks as u64, self.topology.diameter() as u64)
    }

    fn lookahead(&self) -> Option<(SimDuration, String)> {
        self.topology.lookahead().map(|(params, link)| (params.latency, self.topology.links()[link].name()))
    }
}

#[cfg(test)]
mod tests;
