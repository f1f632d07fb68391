//! The table of collective modes: every collective each algorithm ([`Mode`], named in
//! [`MODES`](crate::mode::MODES)) serves and how it runs there ([`SERVING`]: blocks, signal, engines,
//! rank cap, PyPTO variant name, the sweep's default series and the note a sweep prints), and
//! what reads it directly ([`modes`], [`max_ranks`], [`signal_shape`]). The host API,
//! `Call`, the CLI's sweep, the checker's catalogue and the Python bindings read this
//! table instead of matching on modes themselves; a new algorithm adds a [`Mode`] variant and
//! its [`MODES`](crate::mode::MODES) entry in `mode.rs`, its [`SERVING`] rows here, and its kernel in
//! its own file. The table sits above the algorithms it names; they import only the words
//! below it (`spec.rs`, `mode.rs`).

use crate::algorithm::Algorithm;
use crate::allreduce;
use crate::mode::Origin;
use crate::mode::{MODES, Mode};
use crate::spec::{Kind, Path, SignalOf};

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
    /// Whose algorithm this row is: its mode's origin, unless the row says otherwise (PyPTO's
    /// builtin ring allreduce is one thing, the vendor library's ring allgather another).
    pub origin: Origin,
    /// Its operand check and kernels, from its own file: what the host API runs.
    pub(crate) algorithm: &'static Algorithm,
}

/// A row with the common defaults: one block on the AIV cores, capped at kMaxSupportedRanks,
/// signal `[NR, 1]`, no default series.
const fn row(
    kind: Kind,
    mode: Mode,
    algorithm: &'static Algorithm,
    variant: &'static str,
    note: &'static str,
) -> Serving {
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
        origin: mode.origin(),
        algorithm,
    }
}

/// A copy-engine row: `core_num` blocks, any size, signal `[NR, core_num]`, a default series
/// on one server.
const fn copy_row(
    kind: Kind,
    mode: Mode,
    algorithm: &'static Algorithm,
    variant: &'static str,
    note: &'static str,
) -> Serving {
    Serving {
        blocks: Blocks::CoreNum,
        engine: Engine::CopyEngines,
        any_size: true,
        signal: Signal::Lanes,
        default_series: DefaultSeries::OneServer,
        ..row(kind, mode, algorithm, variant, note)
    }
}

/// An AIV row on `core_num` blocks, any size, signal `[NR, core_num]`, a default series on one
/// server.
const fn aiv_row(
    kind: Kind,
    mode: Mode,
    algorithm: &'static Algorithm,
    variant: &'static str,
    note: &'static str,
) -> Serving {
    Serving { engine: Engine::Aiv, ..copy_row(kind, mode, algorithm, variant, note) }
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
        ..row(Kind::AllReduce, mode, algorithm, variant, note)
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
const fn hier_copy_row(
    kind: Kind,
    algorithm: &'static Algorithm,
    variant: &'static str,
    note: &'static str,
) -> Serving {
    Serving {
        default_series: DefaultSeries::AcrossServers,
        default_blocks: DefaultBlocks::Fixed(4),
        ..copy_row(kind, Mode::Hier, algorithm, variant, note)
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
    row(
        Kind::AllGather,
        Mode::Mesh,
        &crate::allgather::MESH,
        "builtin.tensor.allgather__{dt}",
        "PyPTO's builtin allgather kernel as written",
    ),
    copy_row(
        Kind::AllGather,
        Mode::SdmaMesh,
        &crate::allgather::SDMA_MESH,
        "hccl.allgather_sdma_mesh__{dt}",
        "HCCL-class, not a PyPTO builtin: the vendor library's copy-engine (SDMA) allgather path",
    ),
    Serving {
        signal: Signal::Flag,
        ..aiv_row(
            Kind::AllGather,
            Mode::AivMesh,
            &crate::allgather::AIV_MESH,
            "hccl.allgather_aiv_mesh__{dt}",
            "HCCL-class, not a PyPTO builtin: the vendor library's one-shot AIV allgather (what HCCL runs with \
             HCCL_OP_EXPANSION_MODE=AIV up to 256 MiB): a block per peer writes this rank's row into the peer's \
             window through UB, then one ready flag; chip.hccl_aiv_launch_ns of fixed start-up",
        )
    },
    // Only on request: on a full mesh HCCL's selector picks the mesh (`hccl_aiv_pick`).
    Serving {
        signal: Signal::Own(crate::allgather::ring_signal),
        origin: Origin::HcclClass,
        default_series: DefaultSeries::Never,
        ..copy_row(
            Kind::AllGather,
            Mode::Ring,
            &crate::allgather::RING,
            "hccl.allgather_ring__{dt}",
            "HCCL-class, not a PyPTO builtin: the vendor library's ring allgather (copy-engine puts to the right \
             neighbour, NR - 1 steps each forwarding the row received last, a signal per step; one link busy per \
             rank)",
        )
    },
    hier_copy_row(
        Kind::AllGather,
        &crate::hier::ALLGATHER,
        "hccl.allgather_hier__{dt}",
        "HCCL-class, not a PyPTO builtin: the vendor library's two-level allgather (copy-engine puts: a full mesh \
         inside each server, halving-doubling between servers, a ring when their count is not a power of two; \
         servers of the machine's server_ranks)",
    ),
    row(
        Kind::ReduceScatter,
        Mode::Mesh,
        &crate::reduce_scatter::MESH,
        "builtin.tensor.reduce_scatter__{op}__{dt}",
        "PyPTO's builtin reduce_scatter kernel as written",
    ),
    copy_row(
        Kind::ReduceScatter,
        Mode::SdmaMesh,
        &crate::reduce_scatter::SDMA_MESH,
        "hccl.reduce_scatter_sdma_mesh__{op}__{dt}",
        sdma_note!("reduce_scatter", "inline-reduce SDMA puts to every peer at once"),
    ),
    aiv_row(
        Kind::ReduceScatter,
        Mode::AivMesh,
        &crate::reduce_scatter::AIV_MESH,
        "hccl.reduce_scatter_aiv_mesh__{op}__{dt}",
        "HCCL-class, not a PyPTO builtin: the vendor library's AIV full-mesh reduce-scatter (each block pulls its \
         large UB tiles of this rank's row from every peer and adds them, pipes overlapping); \
         chip.hccl_aiv_launch_ns of fixed start-up",
    ),
    hier_copy_row(
        Kind::ReduceScatter,
        &crate::hier::REDUCE_SCATTER,
        "hccl.reduce_scatter_hier__{op}__{dt}",
        "HCCL-class, not a PyPTO builtin: the vendor library's two-level reduce-scatter (inline-reduce copy-engine \
         puts: a full mesh inside each server, halving-doubling between servers, a ring when their count is not a \
         power of two; servers of the machine's server_ranks)",
    ),
    row(
        Kind::Broadcast,
        Mode::Mesh,
        &crate::broadcast::MESH,
        "builtin.tensor.broadcast__root{root}__{dt}",
        "PyPTO's builtin broadcast kernel as written",
    ),
    copy_row(
        Kind::Broadcast,
        Mode::SdmaMesh,
        &crate::broadcast::SDMA_MESH,
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
            &crate::broadcast::AIV_MESH,
            "hccl.broadcast_aiv_mesh__root{root}__{dt}",
            "HCCL-class, not a PyPTO builtin: the vendor library's AIV broadcast (one shot up to 190 KiB: the root \
             flags every peer, which pulls the buffer through UB; above, a relay on ranks-1 blocks, each 190 KiB step \
             pulled from the root by one rank and from it by the others); chip.hccl_aiv_launch_ns of fixed start-up",
        )
    },
    row(
        Kind::AllToAll,
        Mode::Mesh,
        &crate::all_to_all::MESH,
        "builtin.tensor.all_to_all__{dt}",
        "PyPTO's builtin all_to_all kernel as written; it pushes one count-element block to every rank, as the \
         builtin allgather does, so at the same size their times are the same",
    ),
    copy_row(
        Kind::AllToAll,
        Mode::SdmaMesh,
        &crate::all_to_all::SDMA_MESH,
        "hccl.all_to_all_sdma_mesh__{dt}",
        sdma_note!("all_to_all", "SDMA puts to every peer at once"),
    ),
    aiv_row(
        Kind::AllToAll,
        Mode::AivMesh,
        &crate::all_to_all::AIV_MESH,
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
            &crate::all_to_all::GROUPED_MESH,
            "hccl.all_to_all_grouped_mesh__{dt}",
            "HCCL-class, not a PyPTO builtin: the vendor library's grouped full-mesh all_to_all (copy-engine puts to 8 \
             peers at a time, nearest first, each round waited for)",
        )
    },
    hier_copy_row(
        Kind::AllToAll,
        &crate::hier::ALL_TO_ALL,
        "hccl.all_to_all_hier__{dt}",
        "HCCL-class, not a PyPTO builtin: the vendor library's two-level all_to_all (copy-engine puts: a full mesh \
         inside each server, pairwise exchanges between servers; servers of the machine's server_ranks)",
    ),
    row(
        Kind::AllToAllV,
        Mode::Mesh,
        &crate::all_to_all::MESH_V,
        "builtin.tensor.all_to_all_v__{dt}",
        "PyPTO's builtin all_to_all_v kernel as written",
    ),
    copy_row(
        Kind::AllToAllV,
        Mode::SdmaMesh,
        &crate::all_to_all::SDMA_MESH_V,
        "hccl.all_to_all_v_sdma_mesh__{dt}",
        sdma_note!("all_to_all_v", "SDMA puts to every peer at once"),
    ),
    Serving {
        signal: Signal::Ranks,
        ..row(
            Kind::Barrier,
            Mode::Mesh,
            &crate::barrier::ALGORITHM,
            "builtin.tensor.barrier__{dt}",
            "PyPTO's builtin barrier kernel as written",
        )
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
/// ([`MAX_BUILTIN_RANKS`](crate::validate::MAX_BUILTIN_RANKS)); the InCore lowerings and the rows marked
/// [`Serving::any_size`] run at any size; a mode the collective does not run counts as its
/// builtin. The host API, the sweep's defaults and the checker's catalogue all ask this.
pub fn max_ranks(kind: Kind, mode: Mode, path: Path) -> Option<usize> {
    let capped = path == Path::Host && row_or_builtin(kind, mode).is_some_and(|s| !s.any_size);
    capped.then_some(crate::validate::MAX_BUILTIN_RANKS)
}

/// The signal shape a collective call needs on `nranks` ranks (the shape PyPTO synthesizes or
/// validates): HOST mesh and two-shot `[NR]` for one block or `[NR, core_num]`; HOST ring
/// `[2(NR-1)+1, NR]`; InCore ring `[2(NR-1), NR]`; rhd `[2 + 3 log2(NR), core_num]` (one row
/// per fold and step signal, one column per block); hier `[NR + 2, core_num]` here, the ranks
/// taken as one server (on a machine of smaller servers use [`signal_shape_on`]); HOST
/// barrier `[NR]`; broadcast aiv-mesh `[NR, NR - 1]` (`[2, 1]` on two ranks); everything else
/// (allgather aiv-mesh too) `[NR, 1]`.
pub fn signal_shape(kind: Kind, mode: Mode, path: Path, nranks: usize, core_num: usize) -> Vec<usize> {
    signal_shape_on(kind, mode, path, nranks, core_num, nranks)
}

/// [`signal_shape`] on a machine whose servers hold `server_ranks` ranks
/// ([`World::server_ranks`](sim_core::World::server_ranks)): only `hier` depends on it, with
/// `[g + 2 + 3 log2(NR / g), core_num]` for servers of `g = min(server_ranks, NR)` (a credit
/// row per rank of a server, then the RHD rows between servers).
pub fn signal_shape_on(
    kind: Kind,
    mode: Mode,
    path: Path,
    nranks: usize,
    core_num: usize,
    server_ranks: usize,
) -> Vec<usize> {
    let of = SignalOf { nranks, blocks: core_num, server_ranks, path };
    row_or_builtin(kind, mode).map_or_else(|| vec![nranks, 1], |row| row.signal.shape(&of))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::hccl_aiv_pick;
    use sim_core::{DType, ReduceOp};

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
    fn only_the_hier_rows_need_the_servers_a_composite_is_not_given() {
        let needs: Vec<(Kind, Mode)> =
            SERVING.iter().filter(|s| s.algorithm.needs_server).map(|s| (s.kind, s.mode)).collect();
        let kinds = [Kind::AllReduce, Kind::AllGather, Kind::ReduceScatter, Kind::AllToAll];
        assert_eq!(needs, kinds.map(|k| (k, Mode::Hier)));
    }

    #[test]
    fn a_row_is_its_modes_origin_unless_it_says_otherwise() {
        for s in SERVING {
            // PyPTO's ring is an allreduce; the ring allgather is the vendor library's.
            let own =
                if (s.kind, s.mode) == (Kind::AllGather, Mode::Ring) { Origin::HcclClass } else { s.mode.origin() };
            assert_eq!(s.origin, own, "{} {}", s.kind, s.mode);
        }
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
    fn default_series_follow_where_the_ranks_are() {
        let runs =
            |d: DefaultSeries| [(false, false), (true, false), (false, true), (true, true)].map(|(s, b)| d.runs(s, b));
        assert_eq!(runs(DefaultSeries::OneServer), [true, false, false, false]);
        assert_eq!(runs(DefaultSeries::AcrossServers), [false, true, false, true]);
        assert_eq!(runs(DefaultSeries::AcrossServersOrBeyond), [false, true, true, true]);
        assert_eq!(runs(DefaultSeries::Beyond), [false, false, true, false]);
        assert_eq!(runs(DefaultSeries::Never), [false; 4]);
    }

    #[test]
    fn hccl_picks_its_aiv_kernels_up_to_its_thresholds_and_the_copy_engines_above() {
        let pick = |k, b| hccl_aiv_pick(k, ReduceOp::Sum, b).map(|(m, e)| (m.name(), e));
        let mib = 1u64 << 20;
        assert_eq!(pick(Kind::AllGather, 700 * 1024), Some(("aiv-mesh", "AllGatherMeshAivSmallCountExecutor")));
        assert_eq!(pick(Kind::AllGather, 700 * 1024 + 1), Some(("aiv-mesh", "AllGatherMeshAivExecutor")));
        assert_eq!(pick(Kind::AllGather, 256 * mib + 1), Some(("sdma-mesh", "AllGatherMeshOpbaseExecutor")));
        assert_eq!(pick(Kind::ReduceScatter, 2 * mib).map(|p| p.1), Some("ReduceScatterMeshAivSmallCountExecutor"));
        assert_eq!(pick(Kind::ReduceScatter, 256 * mib + 1).map(|p| p.0), Some("sdma-mesh"));
        assert_eq!(pick(Kind::AllReduce, 16 * mib - 1).map(|p| p.1), Some("AllReduceMeshAivSmallCountExecutor"));
        assert_eq!(pick(Kind::AllReduce, 16 * mib).map(|p| p.1), Some("AllReduceMeshAivExecutor"));
        assert_eq!(pick(Kind::AllReduce, 1 << 40).map(|p| p.0), Some("aiv-mesh"));
        assert_eq!(pick(Kind::Broadcast, 1 << 32).map(|p| p.0), Some("aiv-mesh"));
        assert_eq!(pick(Kind::AllToAll, 1 << 32).map(|p| p.0), Some("aiv-mesh"));
        assert_eq!(hccl_aiv_pick(Kind::AllReduce, ReduceOp::Prod, 64), None);
        // Every pick is a mode the collective runs.
        for kind in Kind::ALL {
            for b in [0, 1 << 10, 1 << 30, 1 << 40] {
                if let Some((m, _)) = hccl_aiv_pick(kind, ReduceOp::Max, b) {
                    assert!(modes(kind).contains(&m), "{kind} {b}: {m}");
                }
            }
        }
    }

    #[test]
    fn only_the_host_builtins_and_their_neighbours_stop_at_kmaxsupportedranks() {
        assert_eq!(max_ranks(Kind::AllReduce, Mode::Mesh, Path::Host), Some(16));
        assert_eq!(max_ranks(Kind::AllReduce, Mode::AivMesh, Path::Host), Some(16));
        assert_eq!(max_ranks(Kind::AllReduce, Mode::Rhd, Path::Host), None);
        assert_eq!(max_ranks(Kind::AllReduce, Mode::Hier, Path::Host), None);
        assert_eq!(max_ranks(Kind::AllToAll, Mode::GroupedMesh, Path::Host), None);
        assert_eq!(max_ranks(Kind::AllGather, Mode::Mesh, Path::Host), Some(16));
        assert_eq!(max_ranks(Kind::AllGather, Mode::SdmaMesh, Path::Host), None);
        assert_eq!(max_ranks(Kind::Barrier, Mode::Mesh, Path::Host), Some(16));
        assert_eq!(max_ranks(Kind::AllReduce, Mode::Mesh, Path::InCore), None);
    }

    #[test]
    fn signal_shapes_follow_pypto() {
        assert_eq!(signal_shape(Kind::AllReduce, Mode::Ring, Path::Host, 4, 1), vec![7, 4]);
        assert_eq!(signal_shape(Kind::AllReduce, Mode::Rhd, Path::Host, 12, 3), vec![11, 3]);
        assert_eq!(signal_shape(Kind::AllReduce, Mode::Rhd, Path::InCore, 1024, 1), vec![32, 1]);
        assert_eq!(signal_shape(Kind::AllReduce, Mode::Ring, Path::InCore, 4, 1), vec![6, 4]);
        // hier: one server of 8 by default; 768 ranks in servers of 16 (48 servers, 5 steps).
        assert_eq!(signal_shape(Kind::AllReduce, Mode::Hier, Path::Host, 8, 4), vec![10, 4]);
        assert_eq!(signal_shape_on(Kind::AllReduce, Mode::Hier, Path::Host, 768, 2, 16), vec![33, 2]);
        assert_eq!(signal_shape_on(Kind::AllReduce, Mode::Hier, Path::InCore, 8, 1, 16), vec![10, 1]);
        assert_eq!(signal_shape(Kind::AllToAll, Mode::GroupedMesh, Path::Host, 8, 4), vec![8, 4]);
        assert_eq!(signal_shape(Kind::AllToAll, Mode::GroupedMesh, Path::InCore, 8, 1), vec![8, 1]);
        assert_eq!(signal_shape(Kind::AllReduce, Mode::Mesh, Path::Host, 4, 6), vec![4, 6]);
        assert_eq!(signal_shape(Kind::AllReduce, Mode::Mesh, Path::Host, 4, 1), vec![4]);
        assert_eq!(signal_shape(Kind::Barrier, Mode::Mesh, Path::InCore, 4, 1), vec![4, 1]);
        assert_eq!(signal_shape(Kind::AllGather, Mode::AivMesh, Path::Host, 8, 48), vec![8, 1]);
        assert_eq!(
            variant(Kind::AllReduce, Mode::Ring, ReduceOp::Sum, DType::F32, 0),
            "builtin.tensor.allreduce_ring__sum__fp32"
        );
        assert_eq!(
            variant(Kind::Broadcast, Mode::Mesh, ReduceOp::Sum, DType::F32, 2),
            "builtin.tensor.broadcast__root2__fp32"
        );
    }
}
