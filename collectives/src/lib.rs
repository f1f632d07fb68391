//! # collectives: PyPTO's collectives, on ranksim's public program API
//!
//! Every collective of PyPTO's L3 model, moving the same bytes in the same order with the same
//! signals as the real kernels ("reference §3.x" is `docs/references/semantics.md`, after
//! PyPTO's kernel templates at hw-native-sys/pypto@e2d0f78ae):
//!
//! - **HOST builtins** (`Path::Host`): one chip dispatch per rank running the builtin kernel
//!   (`builtin.tensor.allreduce__sum__fp32`, ...), exactly as §3.3-3.11 describe them.
//! - **InCore composites** (`Path::InCore`): the lowerings of §3.12 (16 KiB chunks, `[NR, 1]`
//!   signals), callable from a user's own kernel through [`incore`], or dispatched on their own.
//! - **two-shot** allreduce ([`Mode::TwoShot`]): the vendor library's large-message algorithm
//!   (direct reduce-scatter then direct allgather, split across AIV blocks), for comparison
//!   with measured hardware tables.
//! - **aiv-mesh** allreduce ([`Mode::AivMesh`]): HCCL-class, the vendor library's AIV
//!   full-mesh allreduce — the same two phases with large double-buffered UB tiles over many
//!   cores and overlapping pipes, which reaches the links' bandwidth; reduce_scatter and
//!   all_to_all have the same AIV form (every block pulls its tiles from every peer).
//! - **sdma-mesh** allreduce ([`Mode::SdmaMesh`]): HCCL-class, the vendor library's copy-engine
//!   allreduce — inline-reduce SDMA puts into each slice's owner, then SDMA puts of the reduced
//!   slices; the cores only post and wait.
//! - **rhd** allreduce ([`Mode::Rhd`]): HCCL-class, recursive halving-doubling (Rabenseifner),
//!   the vendor library's algorithm between servers: `2 log2 NR` steps, each signalling one
//!   partner, so it runs on a thousand ranks where the builtins stop at 16.
//! - **hier** allreduce ([`Mode::Hier`]): HCCL-class, the server-level hierarchy — a
//!   reduce-scatter inside each server, RHD between servers among the ranks holding the same
//!   slice, an allgather inside each server; the server size is the machine's
//!   ([`sim_core::World::server_ranks`], from its config).
//! - the copy-engine all_to_all and reduce_scatter (`sdma-mesh`) stage user data
//!   through HCCL's communication buffer, a buffer-full (`chip.hccl_buffsize_mb`) at a time,
//!   copying in and out with the copy engines and handshaking around each transfer, as the
//!   vendor library's op-base executors do.
//! - **grouped-mesh** all_to_all ([`Mode::GroupedMesh`]): HCCL-class, the grouped full mesh the
//!   vendor library runs on A3 — copy-engine puts to 8 peers at a time, nearest first, round
//!   after round, so not all `NR^2` flows are live at once.
//!
//! Kernels are written once against [`sim_core::Ops`] and run as async tasks inside the
//! scheduler (no host threads), or on a user's kernel thread via `core.run(..)`. This crate
//! uses nothing but sim-core's public API.
//!
//! [`Call`] describes one call as a workload (which collective, mode, path, dtype, op, root,
//! ranks, blocks), lays out its window buffers and queues it, for sweeps and benchmarks.
//!
//! Every `pld.tensor.*` collective ends with the self-clearing credit barrier (§3.2): signals
//! are all zero after a call and can be reused back to back.

mod aiv;
mod algorithm;
mod all_to_all;
mod allgather;
mod allreduce;
mod barrier;
mod broadcast;
mod call;
mod hier;
mod host;
pub mod incore;
mod lanes;
mod mode;
mod modes;
mod names;
mod reduce_scatter;
mod sdma;
mod spec;
mod staging;
mod traffic;
mod validate;

pub use call::{Call, CallBuffers, sweep_note};
pub use host::{
    all_to_all, all_to_all_v, all_to_all_v_with, all_to_all_with, allgather, allgather_with, allreduce, barrier,
    broadcast, broadcast_with, reduce_scatter, reduce_scatter_with,
};
pub use mode::{MODES, Mode, ModeInfo, Origin};
pub use modes::{
    Blocks, DefaultBlocks, DefaultSeries, Engine, SERVING, Serving, Signal, max_ranks, modes, serving, signal_shape,
    signal_shape_on,
};
pub use names::{did_you_mean, name_distance};
pub use spec::{AllGather, AllReduce, Kind, Path, SignalOf, hccl_aiv_pick};
pub use traffic::Traffic;
pub use validate::MAX_BUILTIN_RANKS;
