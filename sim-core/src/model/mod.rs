//! The traits that timing models implement. sim-core asks them for costs; `chip-model` and
//! `interconnect` answer from their configs. Every cost is an integer [`SimDuration`].

use crate::base::dtype::DType;
use crate::base::time::{Bandwidth, Frequency, SimDuration, SimTime};
use std::fmt::Debug;

mod costs;
pub mod simple;

pub use costs::{ChipCosts, CostKey};

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
    /// Sustained per-core DMA rate in `dir` (`None`: unlimited).
    fn dma_rate(&self, dir: DmaDir) -> Option<Bandwidth>;
    /// Time one core's DMA engine is busy moving `bytes` in `dir` (issue + serialisation),
    /// without contention: the core's own estimate of a posted store's cost.
    fn dma(&self, dir: DmaDir, bytes: u64) -> SimDuration {
        self.dma_issue(dir) + self.dma_rate(dir).map_or(SimDuration::ZERO, |r| r.time_for(bytes))
    }
    /// Sustained HBM rate of the chip, shared by all its cores (`None`: unlimited).
    fn hbm_rate(&self) -> Option<Bandwidth>;
    /// Whether remote atomic Add (remote_store / put with `AtomicType::Add`) supports `dtype`
    /// here (bf16 atomics exist on Ascend 910B but not on every chip).
    fn atomic_add_supported(&self, dtype: DType) -> bool;
    /// Time of one element-wise vector op over `elems` elements of `dtype`.
    fn vector_op(&self, dtype: DType, elems: u64) -> SimDuration;
    /// Time of vector operation `op` over a tile of `elems` elements of `dtype` in `rows` rows,
    /// for the operations whose cost a model may set apart (transcendentals, divisions,
    /// compares, selects, fills, broadcasts). By default the element-wise cost of
    /// [`ChipTiming::vector_op`].
    fn vector_op_of(&self, op: VecOp, dtype: DType, elems: u64, rows: u64) -> SimDuration {
        let _ = (op, rows);
        self.vector_op(dtype, elems)
    }
    /// The chip's fixed costs: notify, poll, launches, `dcci`, ... (each declared once, in
    /// [`ChipCosts`]; a new one is charged as `chip.costs().name`).
    fn costs(&self) -> &ChipCosts;
    /// Time a core spends issuing one notify ([`ChipCosts::notify_issue`]).
    fn notify_issue(&self) -> SimDuration {
        self.costs().notify_issue
    }
    /// Time between a satisfying signal write landing and the waiting core resuming; also
    /// the time of one signal test ([`ChipCosts::wait_poll`]).
    fn wait_poll(&self) -> SimDuration {
        self.costs().wait_poll
    }
    /// Time of one scalar read or write of a GM element by the scalar unit.
    fn scalar_gm_access(&self) -> SimDuration;
    /// Time of one cache clean-and-invalidate (`dcci`) by the scalar unit ([`ChipCosts::dcci`]).
    fn dcci(&self) -> SimDuration {
        self.costs().dcci
    }
    /// Fixed cost an HCCL-class AIV collective kernel pays on each block before its first
    /// transfer ([`ChipCosts::hccl_aiv_launch`]).
    fn hccl_aiv_launch(&self) -> SimDuration {
        self.costs().hccl_aiv_launch
    }
    /// Bytes of HCCL's communication buffer (`HCCL_BUFFSIZE`), through which the HCCL-class
    /// copy-engine collectives stage user data chunk by chunk (HCCL's default, 200 MiB, by
    /// default).
    fn hccl_buffer_bytes(&self) -> u64 {
        200 << 20
    }
    /// Device-side gap between two dispatches on one chip ([`ChipCosts::dispatch_launch`]).
    fn dispatch_launch(&self) -> SimDuration {
        self.costs().dispatch_launch
    }
    /// Time from a task being placed on a core to its kernel starting ([`ChipCosts::task_start`]).
    fn task_start(&self) -> SimDuration {
        self.costs().task_start
    }
    /// The chip's SDMA copy engines, if it has any configured (`[chip.sdma]`).
    fn sdma(&self) -> Option<&SdmaParams> {
        None
    }
    /// The chip's AIC (cube) cores, if it has any configured (`[chip.cube]`).
    fn cube(&self) -> Option<&CubeParams> {
        None
    }
}

/// A vector operation with a cost of its own ([`ChipTiming::vector_op_of`]); the others
/// (`add`, `sub`, `mul`, `max`, `min`, their scalar forms, `neg`, `cast`, reductions) cost
/// [`ChipTiming::vector_op`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum VecOp {
    /// `e^x` (TEXP).
    Exp,
    /// Natural logarithm (TLOG).
    Log,
    /// Square root (TSQRT).
    Sqrt,
    /// `1 / sqrt(x)` (TRSQRT).
    Rsqrt,
    /// `1 / x` (TRECIP).
    Recip,
    /// Absolute value (TABS).
    Abs,
    /// `max(x, 0)` (TRELU).
    Relu,
    /// Tile-by-tile division (TDIV).
    Div,
    /// Division by a scalar (TDIVS).
    Divs,
    /// Tile-by-tile comparison (TCMP).
    Cmp,
    /// Comparison with a scalar (TCMPS).
    Cmps,
    /// Element-wise select by a mask (TSEL, TSELS).
    Select,
    /// A tile filled with a scalar (TEXPANDS).
    Full,
    /// Each row filled with one value of a column (TROWEXPAND).
    RowExpand,
    /// Each column filled with one value of a row (TCOLEXPAND).
    ColExpand,
}

impl VecOp {
    /// Every operation, in the order of the enum.
    pub const ALL: [VecOp; 15] = [
        VecOp::Exp,
        VecOp::Log,
        VecOp::Sqrt,
        VecOp::Rsqrt,
        VecOp::Recip,
        VecOp::Abs,
        VecOp::Relu,
        VecOp::Div,
        VecOp::Divs,
        VecOp::Cmp,
        VecOp::Cmps,
        VecOp::Select,
        VecOp::Full,
        VecOp::RowExpand,
        VecOp::ColExpand,
    ];

    /// The operation's name in the kernel API and its key in a config's `[chip.vector.ops]`.
    pub const fn name(self) -> &'static str {
        match self {
            VecOp::Exp => "exp",
            VecOp::Log => "log",
            VecOp::Sqrt => "sqrt",
            VecOp::Rsqrt => "rsqrt",
            VecOp::Recip => "recip",
            VecOp::Abs => "abs",
            VecOp::Relu => "relu",
            VecOp::Div => "div",
            VecOp::Divs => "divs",
            VecOp::Cmp => "cmp",
            VecOp::Cmps => "cmps",
            VecOp::Select => "select",
            VecOp::Full => "full",
            VecOp::RowExpand => "row_expand",
            VecOp::ColExpand => "col_expand",
        }
    }
}

/// One DMA path of a core: a fixed issue cost and a sustained rate (`None`: unlimited).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DmaCost {
    /// Fixed cost of issuing one transfer.
    pub issue: SimDuration,
    /// Sustained rate (`None`: unlimited).
    pub rate: Option<Bandwidth>,
}

impl DmaCost {
    /// Issue plus serialisation of `bytes`, without contention.
    pub fn time(&self, bytes: u64) -> SimDuration {
        self.issue + self.rate.map_or(SimDuration::ZERO, |r| r.time_for(bytes))
    }
}

/// The chip's AIC (cube) cores (`[chip.cube]`): L1 and L0 buffers and the matrix unit.
///
/// Convention: the cube does one `m0 x k0 x n0` block of multiply-accumulates per cycle
/// (`fractal[dtype]`, e.g. 16 x 16 x 16 = 4096 MACs = 8192 FLOP for f16 / bf16), so an
/// `M x K` by `K x N` matmul takes `fixed_cycles + ceil(M/m0) ceil(K/k0) ceil(N/n0)` cycles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CubeParams {
    /// AIC cores per chip (actors numbered after the AIV cores).
    pub cores: usize,
    /// L1 bytes per AIC core (one tile must fit).
    pub l1_bytes: usize,
    /// L0A (left operand), L0B (right operand) and L0C (accumulator) bytes per AIC core.
    pub l0a_bytes: usize,
    /// L0B bytes per AIC core.
    pub l0b_bytes: usize,
    /// L0C bytes per AIC core.
    pub l0c_bytes: usize,
    /// Start-up plus drain cycles of one matmul.
    pub fixed_cycles: u64,
    /// `(dtype, [m0, k0, n0])` for each input dtype the cube multiplies.
    pub fractal: Vec<(DType, [u64; 3])>,
    /// L1 -> L0A and L1 -> L0B bytes per cycle (TMOV / TEXTRACT, the MTE1 pipe).
    pub l1_to_l0a: u64,
    /// L1 -> L0B bytes per cycle.
    pub l1_to_l0b: u64,
    /// GM -> L1 (MTE2 of the AIC core) and L0C -> GM (FIXPIPE).
    pub gm_to_l1: DmaCost,
    /// L0C -> GM (FIXPIPE).
    pub l0c_to_gm: DmaCost,
}

impl CubeParams {
    /// The `[m0, k0, n0]` block of input `dtype`, if the cube takes it.
    pub fn fractal(&self, dtype: DType) -> Option<[u64; 3]> {
        self.fractal.iter().find(|(d, _)| *d == dtype).map(|(_, f)| *f)
    }

    /// Cycles of an `m x k` by `k x n` matmul of `dtype` inputs:
    /// `fixed_cycles + ceil(m/m0) ceil(k/k0) ceil(n/n0)`.
    pub fn matmul_cycles(&self, dtype: DType, m: u64, k: u64, n: u64) -> Option<u64> {
        let [m0, k0, n0] = self.fractal(dtype)?;
        Some(self.fixed_cycles + m.div_ceil(m0) * k.div_ceil(k0) * n.div_ceil(n0))
    }

    /// The accumulator dtype of `dtype` inputs: i32 for i8, f32 for the float types.
    pub fn acc_dtype(dtype: DType) -> DType {
        if dtype.is_float() { DType::F32 } else { DType::I32 }
    }
}

/// The chip's SDMA copy engines (`[chip.sdma]`): channels that move GM to GM without UB.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SdmaParams {
    /// Channels per chip; a transfer uses one (block index modulo channels by default).
    pub channels: usize,
    /// Sustained rate of one channel (`None`: unlimited).
    pub rate: Option<Bandwidth>,
    /// Core-side cost of posting one transfer (writing its descriptors, ringing the doorbell).
    pub issue: SimDuration,
    /// Channel-side cost of one descriptor before its first byte moves.
    pub descriptor: SimDuration,
    /// Largest descriptor; a longer transfer is split into several.
    pub max_descriptor_bytes: u64,
    /// Descriptors a channel holds (queued or in progress) at once.
    pub queue_depth: usize,
    /// Cost of one completion poll (`test_async`, and `wait_async` on completion).
    pub poll: SimDuration,
    /// Extra delay of a channel's first descriptor in a run (cold start).
    pub cold_start: SimDuration,
}

/// What a flow of bytes carries, which decides the resources it crosses (see [`Network`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum PathKind {
    /// GM -> UB on the core's own chip (TLOAD): the chip's HBM, then the core's MTE2.
    Load,
    /// UB -> GM on the core's own chip (TSTORE): the core's MTE3, then the chip's HBM.
    Store,
    /// UB -> a peer's GM (remote_store, put chunk): MTE3, the links of the route, the peer's
    /// ingress port, the peer's HBM.
    RemoteWrite,
    /// The request packet of a remote read (0 bytes): the links of the route to the peer.
    ReadRequest,
    /// A peer's GM -> this core's UB (remote_load, get chunk): the peer's HBM, the links of the
    /// route back, this chip's ingress port, this core's MTE2.
    RemoteRead,
    /// A notify to a peer (a 4-byte atomic): the links of the route, the peer's ingress port.
    Signal,
    /// A notify to a peer that lands only after its core's earlier stores (release ordering):
    /// the resources of [`PathKind::RemoteWrite`], so it queues behind them, but it is not
    /// bulk data (a fabric's slower rate for a core's stores does not apply to it).
    OrderedNotify,
    /// An SDMA put (`core` is the channel): this chip's HBM, the channel, the links of the
    /// route, the peer's ingress port, the peer's HBM (HBM, channel, HBM when `peer == chip`).
    SdmaPut,
    /// The request packet of an SDMA get (0 bytes, `core` is the channel): the links of the
    /// route to the peer.
    SdmaRequest,
    /// An SDMA get's data (`core` is the channel): the peer's HBM, this chip's channel (it
    /// paces the pull), the links of the route back, this chip's ingress port, this chip's HBM
    /// (HBM, channel, HBM when `peer == chip`).
    SdmaGet,
}

/// The endpoints of a flow: core `core` of chip `chip` talks to chip `peer` (`peer == chip`
/// for the local kinds).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct Route {
    /// Which kind of path.
    pub kind: PathKind,
    /// The chip that issues the transfer.
    pub chip: usize,
    /// The issuing core (or SDMA channel) on `chip`.
    pub core: usize,
    /// The chip on the other end (`chip` itself for local kinds).
    pub peer: usize,
}

/// A resolved path (an ordered list of resources), as a [`Network`] names it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PathId(pub u32);

/// When one packet crossed its path.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PacketTiming {
    /// It entered the first resource.
    pub begin: SimTime,
    /// The earliest instant the next packet of the same flow may enter the first resource
    /// without queueing anywhere: `max_j(end_j - L_j)`, where `end_j` is when this packet
    /// finished on resource j and `L_j` the latency in front of j. The sender of the last
    /// packet is free from here on.
    pub cleared: SimTime,
    /// Its last byte reached the destination (after the last resource and its latency); with
    /// `onward`, the switch where it waits.
    pub arrival: SimTime,
    /// The rest of its path, when it crosses a switch: booked by [`Network::send_onward`]
    /// when the packet is there (`None` once at the destination).
    pub onward: Option<Onward>,
}

impl PacketTiming {
    /// A packet that took no time and went nowhere: every instant `at`.
    pub fn idle(at: SimTime) -> PacketTiming {
        PacketTiming { begin: at, cleared: at, arrival: at, onward: None }
    }
}

/// A packet at a switch, where its path is split: the resources up to the switch are the
/// sender's side, booked when it is sent; those after it are the receiver's, booked only
/// when the packet gets there. So what a sender books never depends on the receiver's side
/// at the same instant, and each side's bookings happen in its own time order (the ground a
/// simulation split between processes at switches stands on).
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Onward {
    /// The first hop past the switch, as an offset in the path.
    pub hop: u32,
    /// The chip that hop belongs to: the side that books the rest.
    pub chip: u32,
    /// When its first byte is at that hop.
    pub ready: SimTime,
    /// When its last byte is there.
    pub last_in: SimTime,
}

/// One resource busy with one packet (for link-utilisation traces).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Busy {
    /// The resource, as the network numbers it.
    pub resource: u32,
    /// When the packet started on it.
    pub start: SimTime,
    /// When the packet left it.
    pub end: SimTime,
    /// Bytes of the packet.
    pub bytes: u64,
}

/// The machine's data paths: per-core DMA engines (MTE2 in, MTE3 out), per-chip HBM, the
/// chip-to-chip links of a topology, per-chip ingress ports. Bytes move in packets; a packet
/// crosses the resources of its path in order, cut-through. Each resource keeps a booking
/// calendar (its busy intervals): on resource j the packet's first byte is there at
/// `ready_j = start_{j-1} + latency_{j-1}` and its last at `last_j = end_{j-1} + latency_{j-1}`,
/// and it books the earliest burst of `bytes / rate_j` that ends at
/// `end_j >= max(ready_j + bytes / rate_j, last_j)` and overlaps no booking. The burst may take
/// an idle gap before a booking made earlier for a later time, so a packet held up downstream
/// does not block a resource it has not reached. Concurrent flows therefore interleave packet
/// by packet and contention (incast, shared links, HBM) falls out of the model. A path through
/// a switch is booked in two halves ([`Onward`]): the receiver's side when the packet is at
/// the switch, so a sender never books, nor waits for, the receiver's side at its send.
///
/// The scheduler calls [`Network::send`] and [`Network::send_onward`] in nondecreasing time
/// order of its events, so a model may keep occupancy state and stay deterministic.
pub trait Network: Send + Debug {
    /// The path of `route` (resolved once, then cached by id). Ids are dense: the n-th
    /// distinct route gets `PathId(n)`, so the scheduler keeps per-path state in a vector.
    fn path(&mut self, route: &Route) -> PathId;
    /// Bytes per packet.
    fn packet_bytes(&self) -> u64;
    /// Moves one packet of `bytes` (at most `packet_bytes`; 0 for a request) along `path`,
    /// entering no earlier than `at`, and reserves what it crossed: the whole path, or up to
    /// the switch it crosses, where [`PacketTiming::onward`] says how it goes on. With `busy`,
    /// also appends each resource's busy interval.
    fn send(&mut self, path: PathId, bytes: u64, at: SimTime, busy: Option<&mut Vec<Busy>>) -> PacketTiming;
    /// Moves the packet of `bytes` that [`Network::send`] left at a switch (`from`) along the
    /// rest of `path`; the scheduler calls it at `from.ready`. The default, for a network
    /// that never splits a path, delivers it as it is.
    fn send_onward(&mut self, path: PathId, bytes: u64, from: Onward, busy: Option<&mut Vec<Busy>>) -> PacketTiming {
        let _ = (path, bytes, busy);
        PacketTiming { begin: from.ready, cleared: from.ready, arrival: from.last_in, onward: None }
    }
    /// A resource's display name (`link 0->1`, `hbm 3`, `port 5`, `mte3 2.7`).
    fn resource_name(&self, resource: u32) -> String;
    /// The chip whose timeline shows a resource.
    fn resource_chip(&self, resource: u32) -> usize;
    /// Forgets all occupancy: called at the start of every run.
    fn reset(&mut self);
    /// [`Network::reset`] for a run that books only chips `chips`' resources and the links
    /// (a partition of a run split at switches, see [`Network::fork`]; every chip when the
    /// run is not split): a model may hold only those, making any other on demand, so a
    /// process of a split run holds a part of the machine. The default: `reset`.
    fn reset_for(&mut self, chips: std::ops::Range<usize>) {
        let _ = chips;
        self.reset();
    }
    /// Whether notifies may overtake payload (`PathKind::Signal` paths, no release ordering);
    /// see the engine's visibility rules.
    fn relaxed_ordering(&self) -> bool {
        false
    }
    /// How long news of an event on chip `from` takes to reach chip `to`: that a write of a
    /// core of `to` has landed on `from` (the acknowledgement), or that a core of `from` may
    /// release a notify to `to`. Zero when no switch lies between them (the default): such
    /// chips see each other's landings at once, as one machine's shared view. Across a switch,
    /// the one-way latency of the route, so what one side learns of the other always comes
    /// later than it happened — what a run split into processes at switches needs.
    fn news_delay(&mut self, from: usize, to: usize) -> SimDuration {
        let _ = (from, to);
        SimDuration::ZERO
    }
    /// The island of `chip`: chips that reach each other without crossing a switch share
    /// one (numbered by one of its chips). Everything within an island is one shared view;
    /// between islands news takes [`Network::news_delay`]. The default: one island.
    fn island(&self, chip: usize) -> usize {
        let _ = chip;
        0
    }
    /// Time the owner of a remote read takes from the request's arrival to sending the data.
    fn read_turnaround(&self) -> SimDuration {
        SimDuration::ZERO
    }
    /// A copy of this model with no occupancy, for another partition of a run split at
    /// switches (each partition books only its own islands' resources). `None` (the
    /// default): this model cannot be split.
    fn fork(&self) -> Option<Box<dyn Network>> {
        None
    }
    /// [`Network::fork`] for the partition of chips `chips`, holding what
    /// [`Network::reset_for`] holds for them (a copy of its share of the machine, not of the
    /// whole). The default: `fork`.
    fn fork_for(&self, chips: std::ops::Range<usize>) -> Option<Box<dyn Network>> {
        let _ = chips;
        self.fork()
    }
    /// The route `path` was resolved from: a partition names a path to another by its route,
    /// as each copy numbers its paths in the order it first meets them.
    fn route_of(&self, path: PathId) -> Option<Route> {
        let _ = path;
        None
    }
    /// The least latency of a link into a switch, and the link's name: nothing one island
    /// does reaches another sooner, so a run split at switches may advance its partitions
    /// that far apart. `None` without switches (the default).
    fn lookahead(&self) -> Option<(SimDuration, String)> {
        None
    }
    /// What the model holds in memory, for a run's estimate
    /// ([`RunScale`](crate::RunScale)). The default: nothing counted.
    fn footprint(&self) -> NetworkFootprint {
        NetworkFootprint::default()
    }
}

/// The bytes a [`Network`] holds: before any route is resolved (resources, links), and per
/// route it resolves (its hops, its entry in the route tables).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct NetworkFootprint {
    /// Bytes before any route is resolved.
    pub fixed: u64,
    /// Bytes per route resolved.
    pub per_route: u64,
}
