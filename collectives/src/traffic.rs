//! What one call of a collective keeps the simulator busy with on each rank ([`Traffic`]): the
//! counts a run's memory grows with beside its payload, per algorithm, written next to the
//! algorithms' block rules ([`Call::blocks`]) so an estimate knows them before any run.

use crate::all_to_all::GROUP_PEERS;
use crate::call::Call;
use crate::modes::max_ranks;
use crate::spec::{Kind, Mode};

/// One call's work on each rank, as a memory estimate counts it: the blocks, whom each block
/// signals and moves data with, over how many routes, how much it has in flight at once, how
/// many operations it issues.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Traffic {
    /// Blocks per rank that take part.
    pub blocks: usize,
    /// Peers each block notifies (its credit barriers' fan-out).
    pub signal_peers: usize,
    /// Peers each block moves data to or from.
    pub data_peers: usize,
    /// Routes each data peer takes: a remote read its request and its data, a put its load
    /// and its remote write, an SDMA put one.
    pub routes_per_peer: usize,
    /// Transfers and notifies one block may have in flight at once (a barrier posts a notify
    /// to every peer before it waits).
    pub in_flight: usize,
    /// Operations one block issues per call (transfers, notifies, waits): what a trace or the
    /// checker records of each.
    pub ops: u64,
    /// Signal cells of each rank the call writes.
    pub cells: usize,
}

impl Traffic {
    /// Nothing: a call that returns at once.
    pub const NONE: Traffic =
        Traffic { blocks: 0, signal_peers: 0, data_peers: 0, routes_per_peer: 0, in_flight: 0, ops: 0, cells: 0 };

    /// A full mesh on `blocks` blocks of `ranks` ranks: every block signals and moves data with
    /// every peer, over two routes each, posting to all of them at once; `ops` operations per
    /// block. What an estimate assumes of a collective that does not say.
    pub fn mesh(ranks: usize, blocks: usize, ops: u64) -> Traffic {
        let peers = ranks.saturating_sub(1);
        Traffic {
            blocks,
            signal_peers: peers,
            data_peers: peers,
            routes_per_peer: 2,
            in_flight: 2 * peers,
            ops: ops.max(4 * peers as u64),
            cells: ranks.saturating_mul(blocks),
        }
    }
}

/// Elements per transfer of the HOST builtins' tiles, the InCore composites' chunks and the
/// HCCL-class modes' UB tiles or SDMA descriptors, in bytes: how finely a block's data is cut
/// into operations.
fn chunk_bytes(call: &Call) -> u64 {
    match call.mode {
        Mode::SdmaMesh | Mode::GroupedMesh => 1 << 20,
        Mode::Hier if call.kind != Kind::AllReduce => 1 << 20,
        Mode::AivMesh | Mode::Rhd | Mode::Hier => 64 << 10,
        _ => 1 << 10,
    }
}

impl Call {
    /// What one call of `count` elements per segment does on each rank, on a machine of
    /// `server_ranks` ranks per server (only `hier` depends on it): see [`Traffic`]. A HOST
    /// builtin above its rank cap returns at once and does nothing.
    pub fn traffic(&self, count: usize, server_ranks: usize) -> Traffic {
        let n = self.ranks;
        if max_ranks(self.kind, self.mode, self.path).is_some_and(|max| n > max) || n < 2 {
            return Traffic::NONE;
        }
        let peers = n - 1;
        let blocks = self.blocks().max(1);
        let log = (usize::BITS - peers.leading_zeros()) as usize; // ceil(log2 n) for n >= 2
        // One block's share of the rank's data, cut into chunks.
        let bytes = self.data_elems(count as u64).saturating_mul(self.dtype.size() as u64) / blocks as u64;
        let chunks = bytes.div_ceil(chunk_bytes(self)).max(1);
        let barrier_ops = 2 * peers as u64;
        let (signal_peers, data_peers, routes_per_peer, in_flight, barriers) = match (self.kind, self.mode) {
            (Kind::Barrier, _) => (peers, 0, 0, peers, 1),
            (Kind::AllReduce, Mode::Rhd) => (log + 1, log + 1, 3, 4, 0),
            (Kind::AllReduce, Mode::Hier) => {
                let g = server_ranks.clamp(1, n);
                let between = (usize::BITS - (n / g).leading_zeros()) as usize;
                (g + between, g + between, 3, g + 8, 2)
            }
            (Kind::AllGather | Kind::ReduceScatter, Mode::Hier) => {
                let g = server_ranks.clamp(1, n);
                let between = 2 * (usize::BITS - (n / g).leading_zeros()) as usize;
                (g + between, g + between, 1, g + between, 1)
            }
            (Kind::AllToAll, Mode::Hier) => (peers, peers, 1, peers + server_ranks.clamp(1, n), 1),
            (_, Mode::GroupedMesh) => (peers, peers.div_ceil(blocks) + 1, 1, peers + GROUP_PEERS, 1),
            (_, Mode::SdmaMesh) => (peers, n, 1, peers + n, 2),
            (_, Mode::AivMesh) => (peers, peers, 2, peers + 2, 3),
            (Kind::AllReduce, Mode::Ring) => (peers, 2, 2, peers + 1, 2 * peers as u64),
            _ => (peers, peers, 2, peers + 1, 2),
        };
        let ops = barriers * barrier_ops + chunks.max(data_peers as u64) + 2 * signal_peers as u64;
        let cells = self.signal_shape_on(server_ranks).iter().product();
        Traffic { blocks, signal_peers, data_peers, routes_per_peer, in_flight, ops, cells }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Path;

    #[test]
    fn meshes_reach_every_peer_and_rhd_a_logarithm_of_them() {
        let aiv = Call::new(Kind::AllReduce, 16).with_mode(Mode::AivMesh).with_core_num(48).traffic(1 << 20, 16);
        assert_eq!((aiv.blocks, aiv.signal_peers, aiv.data_peers, aiv.in_flight, aiv.cells), (48, 15, 15, 17, 16 * 48));
        // Above 16 ranks the HOST aiv-mesh allreduce returns at once, as the builtins do.
        assert_eq!(Call::new(Kind::AllReduce, 64).with_mode(Mode::AivMesh).traffic(1 << 20, 64), Traffic::NONE);
        let rhd = Call::new(Kind::AllReduce, 1024).with_mode(Mode::Rhd).traffic(1 << 20, 8);
        assert_eq!((rhd.blocks, rhd.signal_peers, rhd.data_peers), (1, 11, 11));
        let grouped = Call::new(Kind::AllToAll, 1024).with_mode(Mode::GroupedMesh).with_core_num(8).traffic(16, 8);
        assert_eq!((grouped.blocks, grouped.data_peers, grouped.in_flight), (8, 129, 1023 + GROUP_PEERS));
        let hier = Call::new(Kind::AllReduce, 1024).with_mode(Mode::Hier).traffic(1 << 20, 8);
        assert_eq!((hier.signal_peers, hier.data_peers), (8 + 8, 16));
    }

    #[test]
    fn a_builtin_above_its_cap_does_nothing() {
        assert_eq!(Call::new(Kind::AllGather, 32).traffic(1024, 32), Traffic::NONE);
        assert_ne!(Call::new(Kind::AllGather, 32).with_path(Path::InCore).traffic(1024, 32), Traffic::NONE);
        assert_eq!(Call::new(Kind::Barrier, 16).traffic(0, 16).signal_peers, 15);
    }

    #[test]
    fn more_data_is_more_operations() {
        let c = Call::new(Kind::AllReduce, 8);
        assert!(c.traffic(1 << 20, 8).ops > c.traffic(1 << 10, 8).ops);
        assert_eq!(Traffic::mesh(8, 1, 0).ops, 28);
    }
}
