//! The table of collective modes, declared once: every algorithm ([`Mode`]) with its names and
//! origin ([`MODES`]), and every collective it serves with how it runs there ([`SERVING`]:
//! blocks, signal, engines, rank cap, PyPTO variant name, the sweep's default series and the
//! note a sweep prints). The host API, [`crate::Call`], the CLI's sweep, the checker's
//! catalogue and the Python bindings read this table instead of matching on modes themselves;
//! a new algorithm adds a [`Mode`] variant, its [`MODES`] entry and its [`SERVING`] rows here,
//! and its kernel in its own file.

use crate::allreduce::{self, algorithm::Algorithm};
use crate::spec::{Kind, Path, suggestion};
use std::fmt;
use std::str::FromStr;

/// The algorithm a collective runs ([`modes`] says which collective runs which; [`MODES`] and
/// [`SERVING`] say what each is).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// PyPTO's one-shot pull: every rank reads every peer's chunk and reduces it.
    #[default]
    Mesh,
    /// Reduce-scatter then allgather around the ring, pulling from the left neighbour.
    Ring,
    /// Direct reduce-scatter then direct allgather (the vendor library's large-message
    /// full-mesh allreduce).
    TwoShot,
    /// HCCL-class: the vendor library's AIV allreduce on a full mesh, a direct reduce-scatter
    /// and allgather with large double-buffered UB tiles over many cores and overlapping
    /// pipes; for allgather its one-shot AIV kernel (a block per peer writing this rank's row
    /// straight into the peer's window, then one ready flag); for reduce_scatter and all_to_all its AIV pulls
    /// (not a PyPTO builtin).
    AivMesh,
    /// HCCL-class: the vendor library's SDMA full-mesh allreduce, a reduce-scatter of
    /// inline-reduce copy-engine puts then an allgather of puts, no UB (not a PyPTO builtin;
    /// needs `[chip.sdma]`, sum only).
    SdmaMesh,
    /// HCCL-class: recursive halving-doubling (Rabenseifner; HCCL's RHD, its algorithm
    /// between servers), `2 log2 NR` steps that each signal one partner, so it runs on
    /// thousands of ranks (not a PyPTO builtin, not capped at kMaxSupportedRanks).
    Rhd,
    /// HCCL-class allreduce: the server-level hierarchy (the vendor library's two-level
    /// allreduce): a reduce-scatter inside each server, an RHD allreduce between servers
    /// among the ranks holding the same slice, an allgather inside each server. The server
    /// size is the machine's ([`World::server_ranks`](sim_core::World::server_ranks), from the
    /// config); the ranks must be whole servers. Signal `[g + 2 + 3 log2(NR / g), core_num]`
    /// for servers of `g` ranks; runs at any size (not a PyPTO builtin). For allgather,
    /// reduce_scatter and all_to_all the same two levels with copy-engine puts: a mesh inside
    /// each server and, between servers, halving-doubling (for 4, 8, ... servers; otherwise a
    /// ring) or, for all_to_all, pairwise; signal `[NR, core_num]`, needs `[chip.sdma]`.
    Hier,
    /// HCCL-class all_to_all: the grouped full mesh the vendor library runs on A3 — copy-engine
    /// puts to the peers a group of 8 at a time, nearest first on both sides, the group's
    /// peers spread over the blocks' channels, each round waited for before the next, so not
    /// all `NR^2` flows are live at once (not a PyPTO builtin; needs `[chip.sdma]`; runs at
    /// any size).
    GroupedMesh,
}

/// Whose algorithm a mode is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// PyPTO's builtin kernel as written (and, on the InCore path, its composite lowering).
    Builtin,
    /// A textbook form of a vendor algorithm, modelled beside the builtins for comparison.
    Reference,
    /// HCCL-class: the vendor library's algorithm, not a PyPTO builtin.
    HcclClass,
}

/// One mode's names and origin: a row of [`MODES`].
#[derive(Copy, Clone, Debug)]
pub struct ModeInfo {
    /// The mode.
    pub mode: Mode,
    /// Its name everywhere (API, CLI, JSON, Python).
    pub name: &'static str,
    /// Other spellings the parser takes.
    pub aliases: &'static [&'static str],
    /// Whose algorithm it is.
    pub origin: Origin,
    /// One line on what it is, for `--help`.
    pub about: &'static str,
}

/// Every mode, in [`Mode`]'s order (a test holds it): the CLI's order of `--mode` names.
pub const MODES: [ModeInfo; 8] = [
    ModeInfo {
        mode: Mode::Mesh,
        name: "mesh",
        aliases: &[],
        origin: Origin::Builtin,
        about: "PyPTO's builtin: its HOST kernel as written, or with --path incore its InCore lowering",
    },
    ModeInfo {
        mode: Mode::Ring,
        name: "ring",
        aliases: &[],
        origin: Origin::Builtin,
        about: "PyPTO's builtin ring allreduce: reduce-scatter then allgather around the ring, one block",
    },
    ModeInfo {
        mode: Mode::TwoShot,
        name: "two-shot",
        aliases: &["two_shot", "twoshot"],
        origin: Origin::Reference,
        about: "a direct reduce-scatter + allgather in small UB tiles",
    },
    ModeInfo {
        mode: Mode::AivMesh,
        name: "aiv-mesh",
        aliases: &["aiv_mesh"],
        origin: Origin::HcclClass,
        about: "HCCL-class: the vendor library's AIV full-mesh kernels (large double-buffered UB tiles, pipes \
                overlapping); give it many cores, e.g. --core-num 48",
    },
    ModeInfo {
        mode: Mode::SdmaMesh,
        name: "sdma-mesh",
        aliases: &["sdma_mesh"],
        origin: Origin::HcclClass,
        about: "HCCL-class: its copy-engine (SDMA) full mesh, one channel per block (reductions: sum only); the \
                first call pays the channels' cold start unless -w >= 1",
    },
    ModeInfo {
        mode: Mode::Rhd,
        name: "rhd",
        aliases: &["halving-doubling", "halving_doubling"],
        origin: Origin::HcclClass,
        about: "HCCL-class: recursive halving-doubling, its algorithm between servers: 2 log2(NR) steps with one \
                partner each, at any rank count",
    },
    ModeInfo {
        mode: Mode::Hier,
        name: "hier",
        aliases: &["hierarchical"],
        origin: Origin::HcclClass,
        about: "HCCL-class: its two levels, inside each server then between servers; servers of the config's \
                [machine] server_ranks, the ranks whole servers",
    },
    ModeInfo {
        mode: Mode::GroupedMesh,
        name: "grouped-mesh",
        aliases: &["grouped_mesh"],
        origin: Origin::HcclClass,
        about: "HCCL-class: its grouped full mesh on A3 (copy-engine puts to 8 peers at a time, each round \
                waited for)",
    },
];

/// How many AIV blocks a call of a mode runs on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Blocks {
    /// One block, whatever `core_num` says.
    One,
    /// `core_num` on the HOST path, one block on the InCore path.
    HostCoreNum,
    /// `core_num` on either path.
    CoreNum,
    /// At least one per rank: `max(core_num, NR)`.
    AtLeastRanks,
}

impl Blocks {
    /// The blocks a call asking for `core_num` on `nranks` ranks runs on, on `path`.
    pub fn of(self, path: Path, core_num: usize, nranks: usize) -> usize {
        match self {
            Blocks::One => 1,
            Blocks::HostCoreNum if path == Path::InCore => 1,
            Blocks::HostCoreNum | Blocks::CoreNum => core_num,
            Blocks::AtLeastRanks => core_num.max(nranks),
        }
    }
}

/// What moves a mode's data.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Engine {
    /// The AIV cores' own loads and stores.
    Aiv,
    /// The chip's copy engines (SDMA): needs `[chip.sdma]`, and the first call pays their cold
    /// start.
    CopyEngines,
}

/// Which default sweep (no `--mode`) runs a row as one of its HCCL-class series, by where the
/// ranks are: on one server within kMaxSupportedRanks, across servers, or on one server beyond
/// kMaxSupportedRanks (where PyPTO's HOST builtins return at once).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DefaultSeries {
    /// Never (the builtin's own series, or only on request).
    Never,
    /// On one server within kMaxSupportedRanks.
    OneServer,
    /// Across servers.
    AcrossServers,
    /// Across servers, or on one server beyond kMaxSupportedRanks.
    AcrossServersOrBeyond,
    /// On one server beyond kMaxSupportedRanks.
    Beyond,
}

impl DefaultSeries {
    /// Whether a default sweep on ranks that span several servers (`servers`) or exceed
    /// kMaxSupportedRanks (`beyond`) runs this row.
    pub fn runs(self, servers: bool, beyond: bool) -> bool {
        match self {
            DefaultSeries::Never => false,
            DefaultSeries::OneServer => !servers && !beyond,
            DefaultSeries::AcrossServers => servers,
            DefaultSeries::AcrossServersOrBeyond => servers || beyond,
            DefaultSeries::Beyond => beyond && !servers,
        }
    }
}

/// The blocks a default sweep's series of a row runs on when `--core-num` is not given.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DefaultBlocks {
    /// Every AIV core of the chip.
    AllCores,
    /// This many.
    Fixed(usize),
}

/// What a signal shape depends on: the ranks, the blocks the call runs on, the machine's ranks
/// per server and the path.
#[derive(Copy, Clone, Debug)]
pub struct SignalOf {
    /// Ranks taking part.
    pub nranks: usize,
    /// Blocks the call runs on.
    pub blocks: usize,
    /// The machine's ranks per server.
    pub server_ranks: usize,
    /// HOST or InCore.
    pub path: Path,
}

/// The INT32 signal a row's call needs.
#[derive(Copy, Clone, Debug)]
pub enum Signal {
    /// `[NR]` on the HOST path, `[NR, 1]` InCore (PyPTO's barrier).
    Ranks,
    /// HOST `[NR]` on one block or `[NR, blocks]`; InCore `[NR, 1]` (PyPTO's allreduce).
    RanksOrLanes,
    /// `[NR, blocks]` on several blocks, `[NR, 1]` on one.
    Lanes,
    /// `[NR, 1]` whatever the blocks.
    Flag,
    /// A shape of the algorithm's own, from its file.
    Own(fn(&SignalOf) -> Vec<usize>),
}

impl Signal {
    /// The shape for `of`.
    pub fn shape(self, of: &SignalOf) -> Vec<usize> {
        let n = of.nranks;
        match self {
            Signal::Ranks if of.path == Path::Host => vec![n],
            Signal::RanksOrLanes if of.path == Path::Host && of.blocks > 1 => vec![n, of.blocks],
            Signal::RanksOrLanes if of.path == Path::Host => vec![n],
            Signal::Lanes if of.blocks > 1 => vec![n, of.blocks],
            Signal::Own(f) => f(of),
            _ => vec![n, 1],
        }
    }
}

/// What one mode does for one collective: a row of [`SERVING`].
#[derive(Copy, Clone, Debug)]
pub struct Serving {
    /// The collective.
    pub kind: Kind,
    /// The algorithm.
    pub mode: Mode,
    /// Blocks a call runs on.
    pub blocks: Blocks,
    /// What moves its data.
    pub engine: Engine,
    /// Whether it runs above kMaxSupportedRanks on the HOST path (PyPTO's HOST kernels, and
    /// the algorithms modelled beside them there, return at once).
    pub any_size: bool,
    /// The signal a call needs.
    pub signal: Signal,
    /// The name of a call's dispatch, PyPTO's variant name for a builtin:
    /// `{op}`, `{dt}` and `{root}` are filled in.
    pub variant: &'static str,
    /// When a default sweep runs it as an HCCL-class series.
    pub default_series: DefaultSeries,
    /// Blocks of that series when `--core-num` is not given.
    pub default_blocks: DefaultBlocks,
    /// What a sweep's note says it models.
    pub note: &'static str,
    /// An allreduce's algorithm: its operand check and kernels, from its own file.
    pub(crate) allreduce: Option<&'static Algorithm>,
}

/// A row with the common defaults: one block on the AIV cores, capped at kMaxSupportedRanks,
/// signal `[NR, 1]`, no default series.
const fn row(kind: Kind, mode: Mode, variant: &'static str, note: &'static str) -> Serving {
    Serving {
        kind,
        mode,
        blocks: Blocks::One,
        engine: Engine::Aiv,
        any_size: false,
        signal: Signal::Flag,
        variant,
        default_series: DefaultSeries::Never,
        default_blocks: DefaultBlocks::AllCores,
        note,
        allreduce: None,
    }
}

/// A copy-engine row: `core_num` blocks, any size, signal `[NR, core_num]`, a default series
/// on one server.
const fn copy_row(kind: Kind, mode: Mode, variant: &'static str, note: &'static str) -> Serving {
    Serving {
        blocks: Blocks::CoreNum,
        engine: Engine::CopyEngines,
        any_size: true,
        signal: Signal::Lanes,
        default_series: DefaultSeries::OneServer,
        ..row(kind, mode, variant, note)
    }
}

/// An AIV row on `core_num` blocks, any size, signal `[NR, core_num]`, a default series on one
/// server.
const fn aiv_row(kind: Kind, mode: Mode, variant: &'static str, note: &'static str) -> Serving {
    Serving { engine: Engine::Aiv, ..copy_row(kind, mode, variant, note) }
}

/// An allreduce `algorithm` on `core_num` blocks on the HOST path (one InCore), signal `[NR]`
/// or `[NR, core_num]`, capped at kMaxSupportedRanks.
const fn allreduce_row(
    mode: Mode,
    algorithm: &'static Algorithm,
    variant: &'static str,
    note: &'static str,
) -> Serving {
    Serving {
        blocks: Blocks::HostCoreNum,
        signal: Signal::RanksOrLanes,
        allreduce: Some(algorithm),
        ..row(Kind::AllReduce, mode, variant, note)
    }
}

/// The copy-engine rows' note on a full mesh.
macro_rules! sdma_note {
    ($kind:literal, $how:literal) => {
        concat!(
            "HCCL-class, not a PyPTO builtin: the vendor library's copy-engine (SDMA) ",
            $kind,
            " on a full mesh (",
            $how,
            ", one channel per block)"
        )
    };
}

/// The server-level two-level copy-engine rows (`hier` for allgather, reduce_scatter and
/// all_to_all): a default series across servers on 4 blocks, since each block puts to every
/// peer of a step on channels of its own, so a few keep the links busy while their handshakes
/// stay few.
const fn hier_copy_row(kind: Kind, variant: &'static str, note: &'static str) -> Serving {
    Serving {
        default_series: DefaultSeries::AcrossServers,
        default_blocks: DefaultBlocks::Fixed(4),
        ..copy_row(kind, Mode::Hier, variant, note)
    }
}

/// What every mode does for every collective it serves, grouped by collective in the CLI's
/// order ([`Kind::ALL`]), each collective's modes in the order the sweep and the checker list
/// them. [`modes`] reads the collectives a mode serves from here.
pub const SERVING: &[Serving] = &[
    allreduce_row(
        Mode::Mesh,
        &allreduce::mesh::ALGORITHM,
        "builtin.tensor.allreduce__{op}__{dt}",
        "PyPTO's builtin mesh allreduce as written: every rank pulls each peer's whole buffer and reduces it, step \
         by step (each load, add and store waits for the previous one)",
    ),
    Serving {
        blocks: Blocks::One,
        signal: Signal::Own(allreduce::ring::signal),
        ..allreduce_row(
            Mode::Ring,
            &allreduce::ring::ALGORITHM,
            "builtin.tensor.allreduce_ring__{op}__{dt}",
            "PyPTO's builtin ring allreduce as written: reduce-scatter then allgather around the ring",
        )
    },
    allreduce_row(
        Mode::TwoShot,
        &allreduce::two_shot::ALGORITHM,
        "builtin.tensor.allreduce_two_shot__{op}__{dt}",
        "a direct reduce-scatter + allgather in small UB tiles",
    ),
    Serving {
        default_series: DefaultSeries::OneServer,
        ..allreduce_row(
            Mode::AivMesh,
            &allreduce::aiv_mesh::ALGORITHM,
            "hccl.allreduce_aiv_mesh__{op}__{dt}",
            "HCCL-class, not a PyPTO builtin: the vendor library's AIV full-mesh allreduce (large double-buffered UB \
             tiles, pipes overlapping, three flag barriers; up to 64 KiB on a block per rank its one-shot \
             kernel); chip.hccl_aiv_launch_ns of fixed start-up",
        )
    },
    Serving {
        engine: Engine::CopyEngines,
        default_series: DefaultSeries::OneServer,
        ..allreduce_row(
            Mode::SdmaMesh,
            &allreduce::sdma_mesh::ALGORITHM,
            "hccl.allreduce_sdma_mesh__{op}__{dt}",
            "HCCL-class, not a PyPTO builtin: the vendor library's copy-engine (SDMA) allreduce path",
        )
    },
    // One partner at a time: one block already fills that link.
    Serving {
        any_size: true,
        signal: Signal::Own(allreduce::rhd::signal),
        default_series: DefaultSeries::AcrossServersOrBeyond,
        default_blocks: DefaultBlocks::Fixed(1),
        ..allreduce_row(
            Mode::Rhd,
            &allreduce::rhd::ALGORITHM,
            "hccl.allreduce_rhd__{op}__{dt}",
            "HCCL-class, not a PyPTO builtin: recursive halving-doubling (the vendor library's algorithm between \
             servers), 2 log2(ranks) steps with one partner each, so one link busy at a time",
        )
    },
    Serving {
        any_size: true,
        signal: Signal::Own(allreduce::hier::signal),
        ..allreduce_row(
            Mode::Hier,
            &allreduce::hier::ALGORITHM,
            "hccl.allreduce_hier__{op}__{dt}",
            "HCCL-class, not a PyPTO builtin: the server-level hierarchical allreduce (reduce-scatter inside each \
             server, RHD between servers on the ranks holding the same slice, allgather inside each server; servers \
             of the machine's server_ranks)",
        )
    },
    row(Kind::AllGather, Mode::Mesh, "builtin.tensor.allgather__{dt}", "PyPTO's builtin allgather kernel as written"),
    copy_row(
        Kind::AllGather,
        Mode::SdmaMesh,
        "hccl.allgather_sdma_mesh__{dt}",
        "HCCL-class, not a PyPTO builtin: the vendor library's copy-engine (SDMA) allgather path",
    ),
    Serving {
        signal: Signal::Flag,
        ..aiv_row(
            Kind::AllGather,
            Mode::AivMesh,
            "hccl.allgather_aiv_mesh__{dt}",
            "HCCL-class, not a PyPTO builtin: the vendor library's one-shot AIV allgather (what HCCL runs with \
             HCCL_OP_EXPANSION_MODE=AIV up to 256 MiB): a block per peer writes this rank's row into the peer's \
             window through UB, then one ready flag; chip.hccl_aiv_launch_ns of fixed start-up",
        )
    },
    hier_copy_row(
        Kind::AllGather,
        "hccl.allgather_hier__{dt}",
        "HCCL-class, not a PyPTO builtin: the vendor library's two-level allgather (copy-engine puts: a full mesh \
         inside each server, halving-doubling between servers, a ring when their count is not a power of two; \
         servers of the machine's server_ranks)",
    ),
    row(
        Kind::ReduceScatter,
        Mode::Mesh,
        "builtin.tensor.reduce_scatter__{op}__{dt}",
        "PyPTO's builtin reduce_scatter kernel as written",
    ),
    copy_row(
        Kind::ReduceScatter,
        Mode::SdmaMesh,
        "hccl.reduce_scatter_sdma_mesh__{op}__{dt}",
        sdma_note!("reduce_scatter", "inline-reduce SDMA puts to every peer at once"),
    ),
    aiv_row(
        Kind::ReduceScatter,
        Mode::AivMesh,
        "hccl.reduce_scatter_aiv_mesh__{op}__{dt}",
        "HCCL-class, not a PyPTO builtin: the vendor library's AIV full-mesh reduce-scatter (each block pulls its \
         large UB tiles of this rank's row from every peer and adds them, pipes overlapping); \
         chip.hccl_aiv_launch_ns of fixed start-up",
    ),
    hier_copy_row(
        Kind::ReduceScatter,
        "hccl.reduce_scatter_hier__{op}__{dt}",
        "HCCL-class, not a PyPTO builtin: the vendor library's two-level reduce-scatter (inline-reduce copy-engine \
         puts: a full mesh inside each server, halving-doubling between servers, a ring when their count is not a \
         power of two; servers of the machine's server_ranks)",
    ),
    row(
        Kind::Broadcast,
        Mode::Mesh,
        "builtin.tensor.broadcast__root{root}__{dt}",
        "PyPTO's builtin broadcast kernel as written",
    ),
    copy_row(
        Kind::Broadcast,
        Mode::SdmaMesh,
        "hccl.broadcast_sdma_mesh__root{root}__{dt}",
        sdma_note!("broadcast", "the root scatters a slice to each rank, which puts it to every peer"),
    ),
    Serving {
        blocks: Blocks::AtLeastRanks,
        signal: Signal::Own(crate::broadcast::aiv_signal),
        default_series: DefaultSeries::Never,
        ..aiv_row(
            Kind::Broadcast,
            Mode::AivMesh,
            "hccl.broadcast_aiv_mesh__root{root}__{dt}",
            "HCCL-class, not a PyPTO builtin: the vendor library's AIV broadcast (one shot up to 190 KiB: the root \
             flags every peer, which pulls the buffer through UB; above, a relay on ranks-1 blocks, each 190 KiB step \
             pulled from the root by one rank and from it by the others); chip.hccl_aiv_launch_ns of fixed start-up",
        )
    },
    row(
        Kind::AllToAll,
        Mode::Mesh,
        "builtin.tensor.all_to_all__{dt}",
        "PyPTO's builtin all_to_all kernel as written; it pushes one count-element block to every rank, as the \
         builtin allgather does, so at the same size their times are the same",
    ),
    copy_row(
        Kind::AllToAll,
        Mode::SdmaMesh,
        "hccl.all_to_all_sdma_mesh__{dt}",
        sdma_note!("all_to_all", "SDMA puts to every peer at once"),
    ),
    aiv_row(
        Kind::AllToAll,
        Mode::AivMesh,
        "hccl.all_to_all_aiv_mesh__{dt}",
        "HCCL-class, not a PyPTO builtin: the vendor library's AIV full-mesh all_to_all (each block pulls its large \
         UB tiles of this rank's row from every rank's input, pipes overlapping); chip.hccl_aiv_launch_ns of fixed \
         start-up",
    ),
    // Its rounds of 8 peers go through one channel at that channel's rate: one block.
    Serving {
        default_series: DefaultSeries::Beyond,
        default_blocks: DefaultBlocks::Fixed(1),
        ..copy_row(
            Kind::AllToAll,
            Mode::GroupedMesh,
            "hccl.all_to_all_grouped_mesh__{dt}",
            "HCCL-class, not a PyPTO builtin: the vendor library's grouped full-mesh all_to_all (copy-engine puts to 8 \
             peers at a time, nearest first, each round waited for)",
        )
    },
    hier_copy_row(
        Kind::AllToAll,
        "hccl.all_to_all_hier__{dt}",
        "HCCL-class, not a PyPTO builtin: the vendor library's two-level all_to_all (copy-engine puts: a full mesh \
         inside each server, pairwise exchanges between servers; servers of the machine's server_ranks)",
    ),
    row(
        Kind::AllToAllV,
        Mode::Mesh,
        "builtin.tensor.all_to_all_v__{dt}",
        "PyPTO's builtin all_to_all_v kernel as written",
    ),
    copy_row(
        Kind::AllToAllV,
        Mode::SdmaMesh,
        "hccl.all_to_all_v_sdma_mesh__{dt}",
        sdma_note!("all_to_all_v", "SDMA puts to every peer at once"),
    ),
    Serving {
        signal: Signal::Ranks,
        ..row(Kind::Barrier, Mode::Mesh, "builtin.tensor.barrier__{dt}", "PyPTO's builtin barrier kernel as written")
    },
];

/// The row of `mode` for `kind`, if the collective runs it.
pub fn serving(kind: Kind, mode: Mode) -> Option<&'static Serving> {
    SERVING.iter().find(|s| s.kind == kind && s.mode == mode)
}

/// The row of `mode` for `kind`, or, for a mode the collective does not run, its builtin's
/// (how such a call is laid out before the host API refuses it).
pub(crate) fn row_or_builtin(kind: Kind, mode: Mode) -> Option<&'static Serving> {
    serving(kind, mode).or_else(|| serving(kind, Mode::Mesh))
}

/// The modes of each collective, in [`SERVING`]'s order, worked out once at compile time.
const BY_KIND: [([Mode; MODES.len()], usize); Kind::ALL.len()] = {
    let mut out = [([Mode::Mesh; MODES.len()], 0); Kind::ALL.len()];
    let mut i = 0;
    while i < SERVING.len() {
        let k = SERVING[i].kind as usize;
        out[k].0[out[k].1] = SERVING[i].mode;
        out[k].1 += 1;
        i += 1;
    }
    out
};

/// The algorithms (`--mode`) a collective runs, in the order the sweep and the checker list
/// them: its [`SERVING`] rows. The host API, the sweep and the checker all ask this.
pub fn modes(kind: Kind) -> &'static [Mode] {
    let (all, n) = &BY_KIND[kind as usize];
    &all[..*n]
}

/// The most ranks a call does anything on, if it is capped: PyPTO's HOST kernels, and the
/// algorithms modelled beside them on the HOST path, return at once above kMaxSupportedRanks
/// ([`MAX_BUILTIN_RANKS`](crate::MAX_BUILTIN_RANKS)); the InCore lowerings and the rows marked
/// [`Serving::any_size`] run at any size; a mode the collective does not run counts as its
/// builtin. The host API, the sweep's defaults and the checker's catalogue all ask this.
pub fn max_ranks(kind: Kind, mode: Mode, path: Path) -> Option<usize> {
    let capped = path == Path::Host && row_or_builtin(kind, mode).is_some_and(|s| !s.any_size);
    capped.then_some(crate::validate::MAX_BUILTIN_RANKS)
}

impl Mode {
    /// Every mode, in [`MODES`]' order.
    pub const ALL: [Mode; MODES.len()] = {
        let mut out = [Mode::Mesh; MODES.len()];
        let mut i = 0;
        while i < MODES.len() {
            out[i] = MODES[i].mode;
            i += 1;
        }
        out
    };

    /// The mode's row of [`MODES`].
    pub const fn info(self) -> &'static ModeInfo {
        &MODES[self as usize]
    }

    /// `mesh`, `ring`, `two-shot`, `aiv-mesh`, `sdma-mesh`, `rhd`, `hier` or `grouped-mesh`,
    /// everywhere (API, CLI, JSON).
    pub const fn name(self) -> &'static str {
        self.info().name
    }

    /// Whose algorithm it is.
    pub const fn origin(self) -> Origin {
        self.info().origin
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Mode, String> {
        if let Some(m) = MODES.iter().find(|m| m.name == s || m.aliases.contains(&s)) {
            return Ok(m.mode);
        }
        let names = Mode::ALL.map(Mode::name);
        let (last, rest) = names.split_last().unwrap_or((&"", &[]));
        Err(format!("unknown mode `{s}`: {}expected {} or {last}", suggestion(s, &names), rest.join(", ")))
    }
}

/// The name of one call's dispatch ([`Serving::variant`] with its blanks filled): PyPTO's
/// variant name for a builtin (`builtin.tensor.allreduce__sum__fp32`). A mode the collective
/// does not run is named as its builtin.
pub(crate) fn variant(kind: Kind, mode: Mode, op: sim_core::ReduceOp, dtype: sim_core::DType, root: usize) -> String {
    let dt = match dtype {
        sim_core::DType::F32 => "fp32".to_string(),
        sim_core::DType::F16 => "fp16".to_string(),
        d => d.name().to_string(),
    };
    let template = row_or_builtin(kind, mode).map_or("", |s| s.variant);
    template.replace("{op}", &op.to_string()).replace("{dt}", &dt).replace("{root}", &root.to_string())
}

/// The note a sweep prints under a series of `call` (with `warmup` untimed calls first): what
/// it models, PyPTO's builtin as written or the vendor library's algorithm, and on how many
/// blocks; a builtin on the InCore path is PyPTO's composite lowering.
pub fn sweep_note(call: &crate::Call, warmup: u32) -> String {
    let (kind, row) = (call.kind, serving(call.kind, call.mode));
    if call.path == Path::InCore && call.mode.origin() == Origin::Builtin {
        return format!("the InCore lowering of PyPTO's {kind} (one block, called from a kernel)");
    }
    let Some(row) = row else {
        return format!("PyPTO's builtin {kind} kernel as written, on {} block(s) per rank", call.blocks());
    };
    let cold = if row.engine == Engine::CopyEngines && warmup == 0 {
        "; its first call pays the channels' cold start (add -w 1)"
    } else {
        ""
    };
    format!("{}{cold}, on {} block(s) per rank", row.note, call.blocks())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_mode_order_and_every_row_names_a_mode_once_per_collective() {
        for (i, m) in MODES.iter().enumerate() {
            assert_eq!(m.mode as usize, i, "{}", m.name);
        }
        for (i, a) in SERVING.iter().enumerate() {
            assert!(SERVING[..i].iter().all(|b| (b.kind, b.mode) != (a.kind, a.mode)), "{} {}", a.kind, a.mode);
        }
        // Every collective has its builtin, first; every mode serves some collective.
        for k in Kind::ALL {
            assert_eq!(modes(k).first(), Some(&Mode::Mesh), "{k}");
        }
        for m in Mode::ALL {
            assert!(SERVING.iter().any(|s| s.mode == m), "{m}");
        }
        // Rows are grouped by collective in the CLI's order.
        let kinds: Vec<usize> = SERVING.iter().map(|s| s.kind as usize).collect();
        assert!(kinds.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn every_allreduce_row_and_only_those_carry_an_allreduce_algorithm() {
        for s in SERVING {
            assert_eq!(s.allreduce.is_some(), s.kind == Kind::AllReduce, "{} {}", s.kind, s.mode);
        }
        // Only hier needs the servers a composite called from a kernel is not given.
        let needs: Vec<Mode> =
            SERVING.iter().filter(|s| s.allreduce.is_some_and(|a| a.needs_server)).map(|s| s.mode).collect();
        assert_eq!(needs, [Mode::Hier]);
    }

    #[test]
    fn the_kinds_index_the_per_kind_lists_in_order() {
        for (i, k) in Kind::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i, "{k}");
        }
        assert_eq!(modes(Kind::AllToAll), [Mode::Mesh, Mode::SdmaMesh, Mode::AivMesh, Mode::GroupedMesh, Mode::Hier]);
        assert_eq!(modes(Kind::Barrier), [Mode::Mesh]);
    }

    #[test]
    fn every_name_and_alias_parses_to_its_mode() {
        for m in MODES {
            for s in std::iter::once(m.name).chain(m.aliases.iter().copied()) {
                assert_eq!(s.parse::<Mode>(), Ok(m.mode), "{s}");
            }
        }
    }

    #[test]
    fn default_series_follow_where_the_ranks_are() {
        let runs =
            |d: DefaultSeries| [(false, false), (true, false), (false, true), (true, true)].map(|(s, b)| d.runs(s, b));
        assert_eq!(runs(DefaultSeries::OneServer), [true, false, false, false]);
        assert_eq!(runs(DefaultSeries::AcrossServers), [false, true, false, true]);
        assert_eq!(runs(DefaultSeries::AcrossServersOrBeyond), [false, true, true, true]);
        assert_eq!(runs(DefaultSeries::Beyond), [false, false, true, false]);
        assert_eq!(runs(DefaultSeries::Never), [false; 4]);
    }
}
