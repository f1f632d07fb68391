//! The words of a call, shared by the API, the CLI and outputs: which collective ([`Kind`]),
//! which lowering ([`Path`]), how an allreduce or a copy collective runs ([`AllReduce`],
//! [`AllGather`]), what a signal shape depends on ([`SignalOf`]) and which mode HCCL's selector
//! picks ([`hccl_aiv_pick`]). Nothing here names an algorithm's code: the modes table
//! (`modes.rs`) sits above the algorithms, and this below them all.

pub(crate) use crate::mode::Mode;
use crate::names::suggestion;
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
}
