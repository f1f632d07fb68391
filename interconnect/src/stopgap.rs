//! A minimal full-mesh `Network` used while the topology models are being built.

use sim_core::{Bandwidth, Busy, Network, PacketTiming, PathId, PathKind, Route, SimDuration, SimTime};
use std::collections::BTreeMap;

/// Per-chip paths that come from the chip model (None = unlimited).
#[derive(Copy, Clone, Debug)]
pub struct ChipPaths {
    pub cores: usize,
    pub mte2: Option<Bandwidth>,
    pub mte3: Option<Bandwidth>,
    pub hbm: Option<Bandwidth>,
}

#[derive(Clone, Debug)]
struct Res {
    name: String,
    chip: usize,
    rate: Option<Bandwidth>,
    latency: SimDuration,
    busy: SimTime,
}

/// A full mesh with per-chip HBM and ports and per-core DMA engines.
#[derive(Clone, Debug)]
pub struct MeshNet {
    res: Vec<Res>,
    paths: Vec<Vec<u32>>,
    cache: BTreeMap<Route, PathId>,
    ranks: usize,
    cores: usize,
    packet: u64,
}

impl MeshNet {
    pub fn new(ranks: usize, chip: &ChipPaths, link: Option<Bandwidth>, latency: SimDuration, port: Option<Bandwidth>, packet: u64) -> MeshNet {
        let mut res = Vec::new();
        let mut add = |name: String, chip: usize, rate, latency| res.push(Res { name, chip, rate, latency, busy: SimTime::ZERO });
        for c in 0..ranks {
            add(format!("hbm {c}"), c, chip.hbm, SimDuration::ZERO);
            add(format!("port {c}"), c, port, SimDuration::ZERO);
            for k in 0..chip.cores {
                add(format!("mte2 {c}.{k}"), c, chip.mte2, SimDuration::ZERO);
                add(format!("mte3 {c}.{k}"), c, chip.mte3, SimDuration::ZERO);
            }
        }
        for a in 0..ranks {
            for b in 0..ranks {
                add(format!("link {a}->{b}"), a, link, latency);
            }
        }
        MeshNet { res, paths: Vec::new(), cache: BTreeMap::new(), ranks, cores: chip.cores, packet: packet.max(1) }
    }

    fn per_chip(&self) -> usize {
        2 + 2 * self.cores
    }
    fn hbm(&self, c: usize) -> u32 {
        (c * self.per_chip()) as u32
    }
    fn port(&self, c: usize) -> u32 {
        (c * self.per_chip() + 1) as u32
    }
    fn mte2(&self, c: usize, k: usize) -> u32 {
        (c * self.per_chip() + 2 + 2 * k) as u32
    }
    fn mte3(&self, c: usize, k: usize) -> u32 {
        (c * self.per_chip() + 3 + 2 * k) as u32
    }
    fn link(&self, a: usize, b: usize) -> u32 {
        (self.ranks * self.per_chip() + a * self.ranks + b) as u32
    }

    fn resolve(&self, r: &Route) -> Vec<u32> {
        let (c, k, p) = (r.chip, r.core, r.peer);
        match r.kind {
            PathKind::Load => vec![self.hbm(c), self.mte2(c, k)],
            PathKind::Store => vec![self.mte3(c, k), self.hbm(c)],
            PathKind::RemoteWrite => vec![self.mte3(c, k), self.link(c, p), self.port(p), self.hbm(p)],
            PathKind::ReadRequest => vec![self.link(c, p)],
            PathKind::RemoteRead => vec![self.hbm(p), self.link(p, c), self.port(c), self.mte2(c, k)],
            PathKind::Signal => vec![self.link(c, p), self.port(p)],
        }
    }
}

impl Network for MeshNet {
    fn path(&mut self, route: &Route) -> PathId {
        if let Some(&p) = self.cache.get(route) {
            return p;
        }
        let id = PathId(self.paths.len() as u32);
        let path = self.resolve(route);
        self.paths.push(path);
        self.cache.insert(*route, id);
        id
    }

    fn packet_bytes(&self) -> u64 {
        self.packet
    }

    fn send(&mut self, path: PathId, bytes: u64, at: SimTime, mut busy: Option<&mut Vec<Busy>>) -> PacketTiming {
        let ids = self.paths[path.0 as usize].clone();
        let (mut prev_start, mut prev_end, mut prev_lat) = (at, at, SimDuration::ZERO);
        let (mut begin, mut cleared, mut lat_sum) = (at, at, 0u64);
        for (j, &r) in ids.iter().enumerate() {
            let res = &mut self.res[r as usize];
            let ser = res.rate.map_or(SimDuration::ZERO, |b| b.time_for(bytes));
            let start = (prev_start + prev_lat).max(res.busy);
            let end = (start + ser).max(prev_end + prev_lat);
            res.busy = end;
            if j == 0 {
                begin = start;
            }
            cleared = cleared.max(SimTime::from_ps(end.as_ps().saturating_sub(lat_sum)));
            if let Some(b) = busy.as_deref_mut() {
                b.push(Busy { resource: r, start, end, bytes });
            }
            lat_sum += res.latency.as_ps();
            (prev_start, prev_end, prev_lat) = (start, end, res.latency);
        }
        PacketTiming { begin, cleared, arrival: prev_end + prev_lat }
    }

    fn resource_name(&self, r: u32) -> String {
        self.res.get(r as usize).map_or_else(|| format!("resource {r}"), |x| x.name.clone())
    }

    fn resource_chip(&self, r: u32) -> usize {
        self.res.get(r as usize).map_or(0, |x| x.chip)
    }

    fn reset(&mut self) {
        self.res.iter_mut().for_each(|r| r.busy = SimTime::ZERO);
    }
}
