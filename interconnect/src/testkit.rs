//! What the unit tests build fabrics from: a `[fabric]` table around a topology, and the
//! full-mesh table most of them take.

use crate::config::{FabricConfig, FullMeshConfig, NotifyOrdering, TopologyConfig};

/// `topology` in a fabric of `packet_bytes` packets at `efficiency` with ingress ports of
/// `port_gbps`; no port latency or read turnaround, cores write at the full rate, release
/// ordering.
pub(crate) fn fabric(topology: TopologyConfig, packet_bytes: u64, efficiency: f64, port_gbps: f64) -> FabricConfig {
    FabricConfig {
        packet_bytes,
        efficiency,
        port_gbps,
        port_latency_ns: 0.0,
        read_turnaround_ns: 0.0,
        core_write_efficiency: 1.0,
        topology,
        ordering: NotifyOrdering::Release,
    }
}

/// A full mesh of 28 GB/s, 500 ns links, of `ranks` chips when given.
pub(crate) fn mesh(ranks: Option<usize>) -> FullMeshConfig {
    FullMeshConfig { ranks, link_gbps: 28.0, link_latency_ns: 500.0 }
}
