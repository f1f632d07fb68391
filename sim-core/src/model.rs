//! The traits that timing models implement. sim-core asks them for costs; `chip-model` and
//! `interconnect` answer from their configs. Every cost is an integer [`SimDuration`].

use crate::dtype::DType;
use crate::time::{Bandwidth, Frequency, SimDuration, SimTime};
use std::fmt::Debug;

/// Direction of a core's DMA (MTE) transfer.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DmaDir {
    /// GM (local or remote) into the unified buffer: TLOAD, MTE2.
    GmToUb,
    /// Unified buffer to GM (local or remote): TSTORE, MTE3.
    UbToGm,
}

/// Timing and capacities of one chip. All chips of a machine share one model.
pub trait ChipTiming: Send + Sync + Debug {
    /// Number of AIV (vector) cores that kernels' blocks are placed on.
    fn aiv_cores(&self) -> usize;
    /// Usable unified-buffer bytes per AIV core; a larger tile is an error.
    fn ub_bytes(&self) -> usize;
    /// The AI-core clock (converts `compute(cycles)`).
    fn clock(&self) -> Frequency;
    /// Fixed cost of issuing one DMA transfer.
    fn dma_issue(&self, dir: DmaDir) -> SimDuration;
    /// Sustained per-core DMA rate in `dir`.
    fn dma_rate(&self, dir: DmaDir) -> Bandwidth;
    /// Time one core's DMA engine is busy moving `bytes` in `dir` (issue + serialisation).
    fn dma(&self, dir: DmaDir, bytes: u64) -> SimDuration {
        self.dma_issue(dir) + self.dma_rate(dir).time_for(bytes)
    }
    /// Whether remote atomic Add (remote_store / put with `AtomicType::Add`) supports `dtype`
    /// here (bf16 atomics exist on Ascend 910B but not on every chip).
    fn atomic_add_supported(&self, dtype: DType) -> bool;
    /// Time of one element-wise vector op over `elems` elements of `dtype`.
    fn vector_op(&self, dtype: DType, elems: u64) -> SimDuration;
    /// Time a core spends issuing one notify (atomic or plain 32-bit store plus fences).
    fn notify_issue(&self) -> SimDuration;
    /// Time between a satisfying signal write landing and the waiting core resuming.
    fn wait_poll(&self) -> SimDuration;
    /// Device-side gap between two dispatches on one chip (launch of the next kernel).
    fn dispatch_launch(&self) -> SimDuration;
    /// Time from a task being placed on a core to its kernel starting (task pickup).
    fn task_start(&self) -> SimDuration;
}

/// What a fabric transfer carries; models may treat them differently.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TransferKind {
    /// Payload bytes of a store, put or the returned data of a load.
    Data,
    /// A notify: a small atomic write.
    Signal,
    /// The request packet of a remote read.
    ReadRequest,
}

/// One message across the fabric from `src` to `dst` (world ranks, `src != dst`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub src: usize,
    pub dst: usize,
    /// Core of `src` that drives the transfer (its DMA engine).
    pub core: usize,
    pub bytes: u64,
    /// Earliest instant the first byte may leave the source.
    pub start: SimTime,
    /// The sender's own rate limit (its DMA engine); the path may be slower.
    pub rate_cap: Bandwidth,
    pub kind: TransferKind,
}

/// When a transfer left its source and when its last byte arrived.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TransferTiming {
    /// The first byte left the source (the path was free and the transfer began).
    pub begin: SimTime,
    /// The last byte has left the source: the sender's engine is free again.
    pub injected: SimTime,
    /// The last byte has arrived at the destination memory.
    pub arrival: SimTime,
}

/// The chip-to-chip fabric. Calls arrive in nondecreasing `start` order within a run, from the
/// scheduler only, so a model may keep occupancy state (busy links) and stay deterministic.
pub trait Fabric: Send + Debug {
    /// Times one transfer, reserving whatever resources it holds.
    fn transfer(&mut self, t: &Transfer) -> TransferTiming;
    /// Forgets all occupancy: called at the start of every run.
    fn reset(&mut self);
}
