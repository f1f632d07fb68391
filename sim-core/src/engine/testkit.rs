//! A chip and a fabric for the engine's unit tests: one AIV core per chip, small fixed costs,
//! and a network that delivers every packet 1 ns after it enters. The engine's tests drive its
//! parts directly, without a driver or kernel threads; the host's tests run a `World` on them.

use super::Engine;
use crate::addr::{CellRef, MemKey, Place};
use crate::dtype::DType;
use crate::memory::Memory;
use crate::model::{Busy, ChipTiming, DmaDir, Network, PacketTiming, PathId, Route};
use crate::options::RunOptions;
use crate::program::Dispatch;
use crate::tensor::Region;
use crate::time::{Bandwidth, Frequency, SimDuration, SimTime};
use std::sync::Arc;

#[derive(Debug)]
pub(crate) struct TestChip;

impl ChipTiming for TestChip {
    fn aiv_cores(&self) -> usize {
        1
    }
    fn ub_bytes(&self) -> usize {
        1 << 16
    }
    fn clock(&self) -> Frequency {
        Frequency::from_hz(1_000_000_000).expect("1 GHz")
    }
    fn dma_issue(&self, _: DmaDir) -> SimDuration {
        SimDuration::from_ns(1)
    }
    fn dma_rate(&self, _: DmaDir) -> Option<Bandwidth> {
        None
    }
    fn hbm_rate(&self) -> Option<Bandwidth> {
        None
    }
    fn atomic_add_supported(&self, _: DType) -> bool {
        true
    }
    fn vector_op(&self, _: DType, _: u64) -> SimDuration {
        SimDuration::from_ns(1)
    }
    fn notify_issue(&self) -> SimDuration {
        SimDuration::from_ns(1)
    }
    fn wait_poll(&self) -> SimDuration {
        SimDuration::from_ns(2)
    }
    fn scalar_gm_access(&self) -> SimDuration {
        SimDuration::from_ns(1)
    }
    fn dispatch_launch(&self) -> SimDuration {
        SimDuration::from_ns(10)
    }
    fn task_start(&self) -> SimDuration {
        SimDuration::from_ns(1)
    }
}

#[derive(Debug, Default)]
pub(crate) struct TestNet;

impl Network for TestNet {
    fn path(&mut self, _: &Route) -> PathId {
        PathId(0)
    }
    fn packet_bytes(&self) -> u64 {
        4096
    }
    fn send(&mut self, _: PathId, _: u64, at: SimTime, _: Option<&mut Vec<Busy>>) -> PacketTiming {
        PacketTiming { begin: at, cleared: at, arrival: at + SimDuration::from_ns(1) }
    }
    fn resource_name(&self, resource: u32) -> String {
        format!("resource {resource}")
    }
    fn resource_chip(&self, _: u32) -> usize {
        0
    }
    fn reset(&mut self) {}
}

/// An engine over `chips` chips (one actor each) and one comm domain whose window is 64
/// bytes per member, with no dispatches queued.
pub(crate) fn engine(chips: usize, relaxed_ordering: bool) -> Engine {
    engine_running((0..chips).map(|_| Vec::new()).collect(), relaxed_ordering)
}

/// An engine like [`engine`] (one chip per entry of `queues`) that will run `queues[chip]`
/// in order on each chip once started.
pub(crate) fn engine_running(queues: Vec<Vec<Dispatch>>, relaxed_ordering: bool) -> Engine {
    let mut mem = Memory::new(true);
    let domain = mem.add_domain(queues.len());
    mem.grow_window(domain, 64);
    let options = RunOptions { relaxed_ordering, ..RunOptions::default() };
    Engine::new(Arc::new(TestChip), Box::new(TestNet), mem, queues, &options)
}

/// `len` bytes at `offset` of `member`'s window.
pub(crate) fn window(member: usize, offset: usize, len: usize) -> Place {
    Place {
        mem: MemKey::Win { domain: 0, member },
        chip: member,
        region: Region { runs: vec![(offset, len)], rows: 1, cols: len },
        buffer: Arc::from("win"),
        base: 0,
        esize: 1,
    }
}

/// The INT32 signal cell at `offset` of `member`'s window.
pub(crate) fn cell(member: usize, offset: usize) -> CellRef {
    CellRef {
        mem: MemKey::Win { domain: 0, member },
        chip: member,
        offset,
        buffer: Arc::from("sig"),
        coords: vec![offset / 4],
    }
}

/// Simulated time `ns` nanoseconds after zero.
pub(crate) fn ns(ns: u64) -> SimTime {
    SimTime::from_ps(ns * 1000)
}
