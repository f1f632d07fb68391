//! What a run will hold in memory, from counts a host knows before it starts ([`RunScale`]):
//! the bytes per item are the sizes of the engine's own structures (so they follow the code),
//! times the slack their growth leaves; the host compares the total with what its machine has
//! (sim-core reads no system figure). Checked against measured peaks by the `ranksim` library's
//! tests (`memory_estimate_vs_peak`).

use super::Actor;
use super::event::{Event, Key, Pending};
use super::signals::HISTORY_BYTES;
use super::state::flows::Flow;
use crate::base::memory::MemoryEstimate;
use crate::results::stats::{DispatchRecord, TaskRecord};
use std::collections::VecDeque;
use std::mem::size_of;

/// The counts a run's memory grows with, as a host knows them before the run: from a machine
/// config and a collective call (the `ranksim` library's estimate), or from a world's queued
/// dispatches ([`World::run_scale`](crate::World::run_scale)). [`RunScale::estimate`] turns
/// them into bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunScale {
    /// Chips of the machine: each has its scheduler's state, whether it takes part or not.
    pub chips: usize,
    /// Cores (AIV and AIC) per chip: the scheduler's actors.
    pub cores: usize,
    /// Bytes of the network model before any route is resolved (resources, links).
    pub network: u64,
    /// Bytes the network model adds per route it resolves.
    pub network_per_route: u64,
    /// Payload bytes of windows and GM tensors (0 when the run keeps none).
    pub payload: u64,
    /// Bytes the host holds beside them while it writes inputs or reads results back.
    pub host_buffers: u64,
    /// Engines that each hold the memory and the network: one per partition of a split run
    /// (0 or 1: one engine).
    pub copies: usize,
    /// Distinct routes (kind, chip, core or channel, peer) the run's transfers take.
    pub routes: u64,
    /// Transfers and notifies in flight at once, at most.
    pub in_flight: u64,
    /// Signal cells written (counted in whole pages of cells).
    pub cells: u64,
    /// Dispatches run (a record each).
    pub dispatches: u64,
    /// Blocks of synchronous kernels running at once as coroutines (a stack each).
    pub coroutines: u64,
    /// Bytes of each coroutine's stack.
    pub stack_bytes: u64,
    /// Blocks of synchronous kernels running at once on OS threads.
    pub threads: u64,
    /// Operations the run issues (transfers, notifies, waits, ...): what a trace and the
    /// checker record of each.
    pub ops: u64,
    /// Packets times the resources each crosses: a traced run records each as a busy interval.
    pub packet_hops: u64,
    /// The run is traced ([`RunOptions::trace`](crate::RunOptions::trace)).
    pub traced: bool,
    /// The run is checked ([`RunOptions::check`](crate::RunOptions::check)).
    pub checked: bool,
}

/// The process itself: code, libraries, the allocator's arenas, a parsed config (a 2-rank
/// run peaks at 13 MiB).
const PROCESS: u64 = 16 << 20;

/// Bytes per coroutine stack that a block touches (its frames are small: the mapping is
/// large, the resident part a few pages).
const STACK_TOUCHED: u64 = 32 << 10;

/// Resident bytes of a kernel's OS thread (its touched stack, thread-local state).
const THREAD: u64 = 64 << 10;

/// Bytes a trace keeps per operation (its span, its flow arrows, names).
const TRACED_OP: u64 = 256;

/// Bytes a busy-link interval of a trace keeps (with the resource's name).
const BUSY_LINK: u64 = 96;

/// Bytes the checker keeps per operation (shadow ranges, vector clocks of strands, cells).
const CHECKED_OP: u64 = 512;

/// Growth slack of vectors and tables that double: on average half again what they hold.
fn slack(bytes: u64) -> u64 {
    bytes.saturating_add(bytes / 2)
}

/// Bytes of one actor's state: the actor, its visibility state (writes in flight, held reads
/// and notifies, fences), its request lane in the queue, its bound, its core's busy flag.
fn actor_bytes() -> u64 {
    let vecs = 6 * size_of::<Vec<u64>>() + size_of::<u64>() + 2 * size_of::<bool>();
    let finishing = size_of::<Option<Result<(), crate::base::error::SimError>>>();
    let lane = size_of::<VecDeque<(Key, Pending)>>();
    (size_of::<Actor>() + vecs + finishing + lane + 3 * size_of::<u64>()) as u64
}

/// Bytes of one chip's own state beside its actors: its dispatch queue and scheduler, its
/// traffic counters, its island, its derived-event counter, its SDMA channels.
const CHIP: u64 = 1 << 10;

/// Bytes per route the engine keeps: the route's flow queue, allocated at its first flow with
/// room for four (and the allocator's header).
fn route_bytes() -> u64 {
    (size_of::<VecDeque<usize>>() + 4 * size_of::<usize>() + 16) as u64
}

/// Bytes per transfer or notify in flight: its two event slots (cleared and end) in a slot
/// vector that doubles, and a share of the flows' own slots (most of what is in flight at
/// once are notifies waiting their turn, which hold no flow yet).
fn in_flight_bytes() -> u64 {
    (2 * size_of::<Option<Event>>() + size_of::<Option<Flow>>()) as u64
}

/// Bytes per signal cell written: its value and its write history (the last writers, for
/// deadlock and livelock reports), in pages that grow by doubling (a quarter more, measured).
fn cell_bytes() -> u64 {
    let cell = (size_of::<i32>() + HISTORY_BYTES) as u64;
    cell + cell / 4
}

/// Bytes per dispatch: its record, one task's record and their names.
fn dispatch_bytes() -> u64 {
    (size_of::<DispatchRecord>() + size_of::<TaskRecord>() + 64) as u64
}

impl RunScale {
    /// What a run of this scale will hold, part by part: `process`, `machine` (every chip's
    /// scheduler state and the network model), `payload`, `host buffers`, `routes`, `in
    /// flight`, `signal cells`, `records`, `stacks`, `trace`, `checker`. A split run holds the
    /// machine and the payload once per partition.
    pub fn estimate(&self) -> MemoryEstimate {
        let mut e = MemoryEstimate::new();
        let copies = self.copies.max(1) as u64;
        let actors = (self.chips as u64).saturating_mul(self.cores as u64);
        let engine = actors.saturating_mul(actor_bytes()).saturating_add((self.chips as u64).saturating_mul(CHIP));
        e.add("process", PROCESS);
        e.add("machine", engine.saturating_add(self.network).saturating_mul(copies));
        e.add("payload", self.payload.saturating_mul(copies));
        e.add("host buffers", self.host_buffers);
        let per_route = route_bytes().saturating_add(self.network_per_route);
        e.add("routes", self.routes.saturating_mul(per_route));
        e.add("in flight", self.in_flight.saturating_mul(in_flight_bytes()));
        e.add("signal cells", self.cells.saturating_mul(cell_bytes()));
        e.add("records", slack(self.dispatches.saturating_mul(dispatch_bytes())));
        let stacks = self.coroutines.saturating_mul(STACK_TOUCHED.min(self.stack_bytes.max(4096)));
        e.add("stacks", stacks.saturating_add(self.threads.saturating_mul(THREAD)));
        if self.traced {
            let spans = self.ops.saturating_mul(TRACED_OP);
            e.add("trace", spans.saturating_add(self.packet_hops.saturating_mul(BUSY_LINK)));
        }
        if self.checked {
            e.add("checker", self.ops.saturating_mul(CHECKED_OP));
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_count_adds_its_part_and_copies_repeat_the_machine_and_the_payload() {
        let one = RunScale { chips: 8, cores: 72, network: 1 << 20, payload: 1 << 30, ..RunScale::default() };
        let e = one.estimate();
        assert_eq!(e.bytes_of("process"), PROCESS);
        assert_eq!(e.bytes_of("payload"), 1 << 30);
        let machine = 8 * 72 * actor_bytes() + 8 * CHIP + (1 << 20);
        assert_eq!(e.bytes_of("machine"), machine);
        assert_eq!(e.total(), PROCESS + machine + (1 << 30));
        let split = RunScale { copies: 3, ..one.clone() }.estimate();
        assert_eq!((split.bytes_of("machine"), split.bytes_of("payload")), (3 * machine, 3 << 30));
        let busy = RunScale { routes: 1000, in_flight: 10, cells: 128, dispatches: 4, ..one.clone() }.estimate();
        assert_eq!(busy.bytes_of("routes"), 1000 * route_bytes());
        assert_eq!(busy.bytes_of("in flight"), 10 * in_flight_bytes());
        assert_eq!(busy.bytes_of("signal cells"), 128 * cell_bytes());
        assert!(busy.bytes_of("records") > 0 && busy.bytes_of("trace") == 0);
        let traced = RunScale { ops: 10, traced: true, checked: true, ..one }.estimate();
        assert_eq!((traced.bytes_of("trace"), traced.bytes_of("checker")), (10 * TRACED_OP, 10 * CHECKED_OP));
    }

    /// The per-item sizes stay near what the measured peaks imply (an actor about 600 bytes,
    /// a transfer in flight about 300, a cell about 170, a route's queue about 70): a
    /// structure that grows moves them.
    #[test]
    fn item_sizes_are_those_the_peaks_were_measured_with() {
        assert!((300..=900).contains(&actor_bytes()), "{}", actor_bytes());
        assert!((250..=500).contains(&in_flight_bytes()), "{}", in_flight_bytes());
        assert!((100..=300).contains(&cell_bytes()), "{}", cell_bytes());
        assert!((40..=200).contains(&route_bytes()), "{}", route_bytes());
    }
}
