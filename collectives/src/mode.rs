//! Every algorithm a collective can run, declared once: [`Mode`] and [`MODES`], each mode's
//! names, aliases, origin (PyPTO builtin, reference, HCCL-class) and one line for `--help`.
//! Which collective runs which, and how, is the modes table's (`SERVING` in `modes.rs`).

use crate::names::suggestion;
use std::fmt;
use std::str::FromStr;

/// The algorithm a collective runs ([`MODES`] says what each is; the modes table, `SERVING`,
/// which collective runs which and how).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_and_alias_parses_to_its_mode() {
        for m in MODES {
            for s in std::iter::once(m.name).chain(m.aliases.iter().copied()) {
                assert_eq!(s.parse::<Mode>(), Ok(m.mode), "{s}");
            }
        }
    }
}
