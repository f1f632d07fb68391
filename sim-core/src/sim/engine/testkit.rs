//! A chip and a fabric for the engine's unit tests (the public `model::simple`): one AIV core per chip, small fixed costs,
//! and a network that delivers every packet 1 ns after it enters. The engine's tests drive its
//! parts directly, without a driver or kernel threads; the host's tests run a `World` on them.

use super::Engine;
use crate::api::program::Dispatch;
use crate::base::addr::{CellRef, Coords, MemKey, Place};
use crate::base::dtype::DType;
use crate::base::tensor::{Region, Runs, Space, Tensor, TensorMeta};
use crate::base::time::{SimDuration, SimTime};
use crate::model::{Busy, Network, PacketTiming, PathId, Route};
use crate::sim::memory::Memory;
use crate::sim::options::RunOptions;
use std::sync::Arc;

/// The engine's tests run on the public minimal model.
pub(crate) use crate::model::simple::{SimpleChip as TestChip, SimpleNet as TestNet};

/// An engine over `chips` chips (one actor each) and one comm domain whose window is 64
/// bytes per member, with no dispatches queued.
pub(crate) fn engine(chips: usize, relaxed_ordering: bool) -> Engine {
    engine_running((0..chips).map(|_| Vec::new()).collect(), relaxed_ordering)
}

/// An engine like [`engine`] (one chip per entry of `queues`) that will run `queues[chip]`
/// in order on each chip once started.
pub(crate) fn engine_running(queues: Vec<Vec<Dispatch>>, relaxed_ordering: bool) -> Engine {
    engine_on(Box::new(TestNet), queues, relaxed_ordering)
}

/// An engine like [`engine`] whose chips are each an island of their own, news between them
/// taking 1 us (as if every pair talked through a switch).
pub(crate) fn islands_engine(chips: usize) -> Engine {
    engine_on(Box::new(IslandNet), (0..chips).map(|_| Vec::new()).collect(), false)
}

/// An engine like [`engine`] (one chip per entry of `owner`) that runs partition `id` of a
/// split run, `owner[chip]` being each chip's partition.
pub(crate) fn partition_engine(owner: &[u32], id: usize) -> Engine {
    let queues = owner.iter().map(|_| Vec::new()).collect();
    engine_for(Box::new(TestNet), queues, false, Some((id, Arc::from(owner))))
}

fn engine_on(net: Box<dyn Network>, queues: Vec<Vec<Dispatch>>, relaxed_ordering: bool) -> Engine {
    engine_for(net, queues, relaxed_ordering, None)
}

fn engine_for(
    net: Box<dyn Network>,
    queues: Vec<Vec<Dispatch>>,
    relaxed_ordering: bool,
    part: Option<(usize, Arc<[u32]>)>,
) -> Engine {
    let mut mem = Memory::new(true);
    let domain = mem.add_domain(queues.len());
    mem.grow_window(domain, 64);
    let options = RunOptions { relaxed_ordering, ..RunOptions::default() };
    Engine::new(Arc::new(TestChip), net, mem, queues, &options, part)
}

/// [`TestNet`] with every chip an island: news between chips takes 1 us.
#[derive(Debug)]
struct IslandNet;

impl Network for IslandNet {
    fn path(&mut self, route: &Route) -> PathId {
        TestNet.path(route)
    }
    fn packet_bytes(&self) -> u64 {
        TestNet.packet_bytes()
    }
    fn send(&mut self, path: PathId, bytes: u64, at: SimTime, busy: Option<&mut Vec<Busy>>) -> PacketTiming {
        TestNet.send(path, bytes, at, busy)
    }
    fn resource_name(&self, resource: u32) -> String {
        TestNet.resource_name(resource)
    }
    fn resource_chip(&self, resource: u32) -> usize {
        TestNet.resource_chip(resource)
    }
    fn reset(&mut self) {}
    fn island(&self, chip: usize) -> usize {
        chip
    }
    fn news_delay(&mut self, from: usize, to: usize) -> SimDuration {
        if from == to { SimDuration::ZERO } else { SimDuration::from_ns(1000) }
    }
}

/// [`TestNet`] with chips in islands of `per` and a lookahead of `lookahead_ns`, for split
/// runs; a packet sent by chip `dies` panics (a partition that dies). Its paths never split
/// at a switch, so a write to another island is an event that may not cross partitions.
#[derive(Clone, Debug)]
pub(crate) struct SplitNet {
    pub(crate) per: usize,
    pub(crate) lookahead_ns: u64,
    pub(crate) dies: Option<usize>,
}

impl Network for SplitNet {
    fn path(&mut self, route: &Route) -> PathId {
        PathId(u32::try_from(route.chip).unwrap_or(0))
    }
    fn packet_bytes(&self) -> u64 {
        TestNet.packet_bytes()
    }
    fn send(&mut self, path: PathId, bytes: u64, at: SimTime, busy: Option<&mut Vec<Busy>>) -> PacketTiming {
        assert!(self.dies != Some(path.0 as usize), "the model failed on chip {}", path.0);
        TestNet.send(path, bytes, at, busy)
    }
    fn resource_name(&self, r: u32) -> String {
        TestNet.resource_name(r)
    }
    fn resource_chip(&self, r: u32) -> usize {
        TestNet.resource_chip(r)
    }
    fn reset(&mut self) {}
    fn island(&self, chip: usize) -> usize {
        chip - chip % self.per
    }
    fn fork(&self) -> Option<Box<dyn Network>> {
        Some(Box::new(self.clone()))
    }
    fn lookahead(&self) -> Option<(SimDuration, String)> {
        Some((SimDuration::from_ns(self.lookahead_ns), "uplink 0".into()))
    }
}

/// `len` bytes at `offset` of `member`'s window.
pub(crate) fn window(member: usize, offset: usize, len: usize) -> Place {
    // Named `win`, of bytes, at the start of its memory (what reports print).
    let meta = TensorMeta::dense(Arc::from("win"), Space::Gm { buf: 0 }, 0, 64, DType::I8, &[64]);
    Place {
        mem: MemKey::win(0, member, member),
        region: Region { runs: Runs::one(offset, len), rows: 1, cols: len },
        tensor: Tensor(Arc::new(meta)),
    }
}

/// The INT32 signal cell at `offset` of `member`'s window.
pub(crate) fn cell(member: usize, offset: usize) -> CellRef {
    CellRef {
        mem: MemKey::win(0, member, member),
        offset,
        buffer: Arc::from("sig"),
        coords: Coords::new(&[offset / 4]),
    }
}

/// Simulated time `ns` nanoseconds after zero.
pub(crate) fn ns(ns: u64) -> SimTime {
    SimTime::from_ps(ns * 1000)
}
