//! Names and shapes shared by the API, the CLI and outputs: which collective, which lowering,
//! how an allreduce or a copy collective runs, and the signal each needs (the algorithms
//! themselves are the modes table's, [`crate::modes`]).

use crate::modes::SignalOf;
pub(crate) use crate::modes::{Mode, max_ranks, modes};
use sim_core::ReduceOp;
use std::fmt;
use std::str::FromStr;

/// A collective operation.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// Every rank ends with the reduction of every rank's buffer.
    AllReduce,
    /// Every rank ends with every rank's part, in rank order.
    AllGather,
    /// Every rank ends with its slice of the reduction.
    ReduceScatter,
    /// Every rank ends with the root's buffer.
    Broadcast,
    /// Rank `r` sends its `p`-th block to rank `p`, which keeps it as its `r`-th.
    AllToAll,
    /// All-to-all with per-peer counts.
    AllToAllV,
    /// No data: every rank waits until every rank has arrived.
    Barrier,
}

impl Kind {
    /// Every collective, in the CLI's order.
    pub const ALL: [Kind; 7] = [
        Kind::AllReduce,
        Kind::AllGather,
        Kind::ReduceScatter,
        Kind::Broadcast,
        Kind::AllToAll,
        Kind::AllToAllV,
        Kind::Barrier,
    ];

    /// The snake_case name used by the CLI and JSON.
    pub const fn name(self) -> &'static str {
        match self {
            Kind::AllReduce => "allreduce",
            Kind::AllGather => "allgather",
            Kind::ReduceScatter => "reduce_scatter",
            Kind::Broadcast => "broadcast",
            Kind::AllToAll => "all_to_all",
            Kind::AllToAllV => "all_to_all_v",
            Kind::Barrier => "barrier",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Kind {
    type Err = String;
    fn from_str(s: &str) -> Result<Kind, String> {
        Kind::ALL.into_iter().find(|k| k.name() == s.replace('-', "_")).ok_or_else(|| {
            let names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
            format!("unknown collective `{s}`: {}expected one of {}", suggestion(s, &names), names.join(", "))
        })
    }
}

/// How far apart two names are: the edit distance (insertions, deletions, substitutions of
/// one character) after lower-casing both and dropping `_` and `-`, so `alltoall` is 0 away
/// from `all_to_all` and `allreduc` 1 away from `allreduce`.
pub fn name_distance(a: &str, b: &str) -> usize {
    let norm =
        |s: &str| -> Vec<char> { s.chars().filter(|c| !matches!(c, '_' | '-')).flat_map(char::to_lowercase).collect() };
    let (a, b) = (norm(a), norm(b));
    // One row of the dynamic-programming table at a time: row[j] = distance(a[..i], b[..j]).
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = (diag + usize::from(ca != cb)).min(row[j] + 1).min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = here;
        }
    }
    row[b.len()]
}

/// The candidate a mistyped `input` most likely meant, for a "did you mean" hint: the nearest by
/// [`name_distance`] (the first of equals), if it is at most a third of the input's length
/// away (and at least one edit is allowed), else `None`.
///
/// ```
/// assert_eq!(collectives::did_you_mean("alltoall", ["allreduce", "all_to_all", "all_to_all_v"]), Some("all_to_all"));
/// assert_eq!(collectives::did_you_mean("a2a4", ["a2a3", "a5"]), Some("a2a3"));
/// assert_eq!(collectives::did_you_mean("nope", ["a2a3", "a5"]), None);
/// ```
pub fn did_you_mean<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (input.chars().filter(|c| !matches!(c, '_' | '-')).count() / 3).max(1);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = name_distance(input, c);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// `did you mean `x`? ` when one name is close to `input`, else nothing.
pub(crate) fn suggestion(input: &str, names: &[&str]) -> String {
    did_you_mean(input, names.iter().copied()).map(|n| format!("did you mean `{n}`? ")).unwrap_or_default()
}

/// Which lowering runs a collective.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum Path {
    /// The HOST builtin kernel: its own chip dispatch per rank (reference §3.3-3.11).
    #[default]
    Host,
    /// The InCore composite lowering (reference §3.12), one block, `[NR, 1]` signals.
    InCore,
}

impl Path {
    /// `host` or `incore`.
    pub const fn name(self) -> &'static str {
        match self {
            Path::Host => "host",
            Path::InCore => "incore",
        }
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Path {
    type Err = String;
    fn from_str(s: &str) -> Result<Path, String> {
        match s {
            "host" => Ok(Path::Host),
            "incore" | "in-core" | "in_core" => Ok(Path::InCore),
            _ => Err(format!("unknown path `{s}`: expected host or incore")),
        }
    }
}

/// How an allgather runs: PyPTO's builtin (`Mode::Mesh`, HOST or InCore) or the HCCL-class
/// copy-engine allgather (`Mode::SdmaMesh`, on `core_num` blocks and SDMA channels).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct AllGather {
    /// The algorithm: the builtin or the SDMA mesh.
    pub mode: Mode,
    /// HOST builtin or InCore lowering.
    pub path: Path,
    /// Blocks (and SDMA channels) per rank for `sdma-mesh`; 1 for the builtin.
    pub core_num: usize,
}

impl Default for AllGather {
    fn default() -> AllGather {
        AllGather { mode: Mode::Mesh, path: Path::Host, core_num: 1 }
    }
}

/// How an allreduce runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct AllReduce {
    /// The reduction.
    pub op: ReduceOp,
    /// The algorithm.
    pub mode: Mode,
    /// HOST builtin or InCore lowering.
    pub path: Path,
    /// AIV blocks per rank (HOST mesh and two-shot only; 1 elsewhere).
    pub core_num: usize,
}

impl Default for AllReduce {
    fn default() -> AllReduce {
        AllReduce { op: ReduceOp::Sum, mode: Mode::Mesh, path: Path::Host, core_num: 1 }
    }
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
    crate::modes::row_or_builtin(kind, mode).map_or_else(|| vec![nranks, 1], |row| row.signal.shape(&of))
}

/// What HCCL runs for one call on one 910B server (a full HCCS mesh) with
/// `HCCL_OP_EXPANSION_MODE=AIV`, op-base, non-deterministic, its default 200 MB buffer: the
/// mode of ours that models it and the vendor library's executor, for `data_bytes` as HCCL
/// counts a call's data (`count x` the element size, `count` being nccl-tests' and hccl_test's
/// count column: the whole buffer for allreduce and broadcast, one rank's part for allgather,
/// reduce_scatter and all_to_all). The rules are the selector's in CANN's open-source hcomm
/// (`SelectAlgfor910B` of each operator; docs/references/hardware.md §4.2): allreduce, all_to_all and
/// broadcast take their AIV kernels at every size (small-count below 16 MiB for allreduce);
/// allgather and reduce_scatter theirs up to `AIV_BIG_SIZE` = 256 MiB (small-count up to
/// 700 KiB and 2 MiB), the copy-engine path above; a reduction AIV cannot do (`prod`) takes
/// the copy-engine path; all_to_all_v, which has no AIV form here, `sdma-mesh`; a barrier
/// PyPTO's builtin. `None` where no mode of ours models HCCL's choice (a `prod` allreduce or
/// reduce_scatter: ours reduce `prod` on no copy engine).
pub fn hccl_aiv_pick(kind: Kind, op: ReduceOp, data_bytes: u64) -> Option<(Mode, &'static str)> {
    const MIB: u64 = 1 << 20;
    const AIV_BIG: u64 = 256 * MIB;
    let aiv_reduce = op != ReduceOp::Prod;
    Some(match kind {
        Kind::AllReduce if !aiv_reduce => return None,
        Kind::AllReduce if data_bytes < 16 * MIB => (Mode::AivMesh, "AllReduceMeshAivSmallCountExecutor"),
        Kind::AllReduce => (Mode::AivMesh, "AllReduceMeshAivExecutor"),
        Kind::AllGather if data_bytes <= 700 * 1024 => (Mode::AivMesh, "AllGatherMeshAivSmallCountExecutor"),
        Kind::AllGather if data_bytes <= AIV_BIG => (Mode::AivMesh, "AllGatherMeshAivExecutor"),
        Kind::AllGather => (Mode::SdmaMesh, "AllGatherMeshOpbaseExecutor"),
        Kind::ReduceScatter if !aiv_reduce => return None,
        Kind::ReduceScatter if data_bytes <= 2 * MIB => (Mode::AivMesh, "ReduceScatterMeshAivSmallCountExecutor"),
        Kind::ReduceScatter if data_bytes <= AIV_BIG => (Mode::AivMesh, "ReduceScatterMeshAivExecutor"),
        Kind::ReduceScatter => (Mode::SdmaMesh, "ReduceScatterMeshDmaEliminationExecutor"),
        Kind::AllToAll => (Mode::AivMesh, "AlltoAllMeshAivExecutor"),
        Kind::AllToAllV => (Mode::SdmaMesh, "AlltoAllVMeshAivExecutor, modelled by the copy-engine mesh"),
        Kind::Broadcast => (Mode::AivMesh, "BroadcastMeshAivExecutor"),
        Kind::Barrier => (Mode::Mesh, "PyPTO's builtin barrier"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::variant;
    use sim_core::DType;

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
    fn names_round_trip() {
        for k in Kind::ALL {
            assert_eq!(k.name().parse::<Kind>().unwrap(), k);
        }
        for m in Mode::ALL {
            assert_eq!(m.name().parse::<Mode>().unwrap(), m);
        }
        assert!("allgatherv".parse::<Kind>().unwrap_err().contains("all_to_all_v"));
    }

    #[test]
    fn a_near_miss_name_gets_a_suggestion() {
        assert_eq!(
            "alltoall".parse::<Kind>().unwrap_err(),
            "unknown collective `alltoall`: did you mean `all_to_all`? expected one of allreduce, allgather, \
             reduce_scatter, broadcast, all_to_all, all_to_all_v, barrier"
        );
        assert!("allreduc".parse::<Kind>().unwrap_err().contains("did you mean `allreduce`?"));
        assert!("AllGather".parse::<Kind>().unwrap_err().contains("did you mean `allgather`?"));
        assert_eq!(
            "aivmesh".parse::<Mode>().unwrap_err(),
            "unknown mode `aivmesh`: did you mean `aiv-mesh`? expected mesh, ring, two-shot, aiv-mesh, sdma-mesh, rhd, \
             hier or grouped-mesh"
        );
        assert!("sdmamesh".parse::<Mode>().unwrap_err().contains("did you mean `sdma-mesh`?"));
        // Nothing close: no guess.
        assert_eq!(
            "fast".parse::<Mode>().unwrap_err(),
            "unknown mode `fast`: expected mesh, ring, two-shot, aiv-mesh, sdma-mesh, rhd, hier or grouped-mesh"
        );
        assert!(!"gather_all".parse::<Kind>().unwrap_err().contains("did you mean"));
    }

    #[test]
    fn name_distance_ignores_case_and_separators() {
        assert_eq!(name_distance("alltoall", "all_to_all"), 0);
        assert_eq!(name_distance("aiv_mesh", "AIV-MESH"), 0);
        assert_eq!(name_distance("allreduc", "allreduce"), 1);
        assert_eq!(name_distance("a2a4", "a2a3"), 1);
        assert_eq!(name_distance("", "abc"), 3);
        assert_eq!(name_distance("kitten", "sitting"), 3);
        assert_eq!(did_you_mean("alltoall", ["all_to_all_v", "all_to_all"]), Some("all_to_all"));
        assert_eq!(did_you_mean("rign", ["mesh", "ring"]), None, "two edits are too many for four letters");
        assert_eq!(did_you_mean("x", ["y", "z"]), Some("y"), "one edit is always allowed; ties go to the first");
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
