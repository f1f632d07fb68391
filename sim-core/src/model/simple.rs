//! A minimal chip and fabric with small round costs, for examples, doctests and unit tests
//! that need a machine but not a calibrated one (`chip-model` and `interconnect` build real
//! ones from a config).
//!
//! [`SimpleChip`]: one AIV core, a 64 KiB UB, a 1 GHz clock, 1 ns per DMA issue, notify,
//! vector op, scalar access and task start, a 2 ns wait poll, a 10 ns dispatch launch, and
//! unlimited DMA and HBM rates. [`SimpleNet`]: every packet (4 KiB at most) arrives 1 ns
//! after it enters, with no contention.

use crate::base::dtype::DType;
use crate::base::time::{Bandwidth, Frequency, SimDuration, SimTime};
use crate::model::{Busy, ChipCosts, ChipTiming, DmaDir, Network, PacketTiming, PathId, Route};

/// A chip with one AIV core and fixed small costs (see the module docs).
#[derive(Debug, Default, Clone, Copy)]
pub struct SimpleChip;

impl ChipTiming for SimpleChip {
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
    fn costs(&self) -> &ChipCosts {
        const COSTS: ChipCosts = ChipCosts {
            notify_issue: SimDuration::from_ns(1),
            wait_poll: SimDuration::from_ns(2),
            dispatch_launch: SimDuration::from_ns(10),
            task_start: SimDuration::from_ns(1),
            dcci: SimDuration::ZERO,
            hccl_aiv_launch: SimDuration::ZERO,
        };
        &COSTS
    }
    fn scalar_gm_access(&self) -> SimDuration {
        SimDuration::from_ns(1)
    }
}

/// A fabric that delivers every packet 1 ns after it enters, on one shared path that never
/// queues (see the module docs).
#[derive(Debug, Default, Clone, Copy)]
pub struct SimpleNet;

impl Network for SimpleNet {
    fn path(&mut self, _: &Route) -> PathId {
        PathId(0)
    }
    fn packet_bytes(&self) -> u64 {
        4096
    }
    fn send(&mut self, _: PathId, _: u64, at: SimTime, _: Option<&mut Vec<Busy>>) -> PacketTiming {
        PacketTiming { arrival: at + SimDuration::from_ns(1), ..PacketTiming::idle(at) }
    }
    fn resource_name(&self, resource: u32) -> String {
        format!("resource {resource}")
    }
    fn resource_chip(&self, _: u32) -> usize {
        0
    }
    fn reset(&mut self) {}
}
