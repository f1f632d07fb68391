//! The retiring [`Fabric`] model: a full mesh of full-duplex links, each direction served first
//! come, first served, whole transfers at a time. Kept until sim-core moves to [`sim_core::Network`];
//! [`build`] reads the new `[fabric]` schema so presets stay loadable meanwhile.

use crate::config::{FabricConfig, FabricConfigError, TopologyConfig, err};
use crate::topology::Topology;
use sim_core::{Bandwidth, Fabric, SimDuration, SimTime, Transfer, TransferTiming};

/// Builds the legacy fabric of `ranks` chips: only `full_mesh` topologies, links at their
/// effective rate (ports are not modelled); the whole config is validated first.
pub fn build(cfg: &FabricConfig, ranks: usize) -> Result<Box<dyn Fabric>, FabricConfigError> {
    cfg.checked_packet_bytes()?;
    cfg.port()?;
    let topo = Topology::new(cfg, ranks)?;
    let TopologyConfig::FullMesh(_) = &cfg.topology else {
        let why = "the legacy Fabric model only has full_mesh; use build_network for the other kinds";
        return Err(err("topology.kind", cfg.topology.kind(), why));
    };
    let (rate, latency) = topo.links().first().map_or((None, SimDuration::ZERO), |l| (l.params.rate, l.params.latency));
    // An unlimited link becomes the fastest representable one.
    match rate.or_else(|| Bandwidth::from_bytes_per_s(u64::MAX)) {
        Some(bw) => Ok(Box::new(FullMesh::new(ranks, bw, latency))),
        None => Err(err("topology.link_gbps", "inf", "cannot be represented")),
    }
}

/// Every chip pair joined by its own link; each direction is an independent FIFO resource.
#[derive(Clone, Debug)]
pub struct FullMesh {
    ranks: usize,
    bw: Bandwidth,
    latency: SimDuration,
    /// `busy[src * ranks + dst]`: when the directed link is free again.
    busy: Vec<SimTime>,
}

impl FullMesh {
    /// A mesh of `ranks` chips with sustained payload rate `bw` and one-way `latency` per link.
    pub fn new(ranks: usize, bw: Bandwidth, latency: SimDuration) -> FullMesh {
        FullMesh { ranks, bw, latency, busy: vec![SimTime::ZERO; ranks * ranks] }
    }
}

impl Fabric for FullMesh {
    fn transfer(&mut self, t: &Transfer) -> TransferTiming {
        let link = &mut self.busy[t.src * self.ranks + t.dst];
        let begin = t.start.max(*link);
        let injected = begin + self.bw.min(t.rate_cap).time_for(t.bytes);
        *link = injected;
        TransferTiming { begin, injected, arrival: injected + self.latency }
    }

    fn reset(&mut self) {
        self.busy.fill(SimTime::ZERO);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim_core::TransferKind;

    fn xfer(src: usize, dst: usize, bytes: u64, start_ns: u64) -> Transfer {
        Transfer {
            src,
            dst,
            core: 0,
            bytes,
            start: SimTime::ZERO + SimDuration::from_ns(start_ns),
            rate_cap: Bandwidth::from_gbps_f64(1000.0).unwrap(),
            kind: TransferKind::Data,
        }
    }

    fn mesh_config(topology: TopologyConfig) -> FabricConfig {
        FabricConfig { packet_bytes: 4096, efficiency: 0.5, port_gbps: 196.0, topology }
    }

    #[test]
    fn build_reads_the_new_schema() {
        let mesh = crate::FullMeshConfig { ranks: None, link_gbps: 20.0, link_latency_ns: 500.0 };
        let mut m = build(&mesh_config(TopologyConfig::FullMesh(mesh)), 2).unwrap();
        // 1000 B at 20 GB/s x 0.5 = 100 ns, plus 500 ns.
        assert_eq!(m.transfer(&xfer(0, 1, 1000, 0)).arrival.as_ps(), 600_000);
        let ring = crate::RingConfig { ranks: None, bidirectional: true, link_gbps: 20.0, link_latency_ns: 500.0 };
        let e = build(&mesh_config(TopologyConfig::Ring(ring)), 4).unwrap_err().to_string();
        assert!(e.starts_with("fabric.topology.kind = ring: the legacy Fabric model only has full_mesh"), "{e}");
    }

    #[test]
    fn latency_plus_serialisation_and_fifo_per_direction() {
        let mut m = FullMesh::new(2, Bandwidth::from_gbps_f64(10.0).unwrap(), SimDuration::from_ns(500));
        // 1000 B at 10 GB/s = 100 ns.
        let a = m.transfer(&xfer(0, 1, 1000, 0));
        assert_eq!(a.arrival.as_ps(), 600_000);
        // Second transfer queues behind the first on the same direction...
        let b = m.transfer(&xfer(0, 1, 1000, 0));
        assert_eq!(b.arrival.as_ps(), 700_000);
        // ...but the reverse direction is independent.
        let c = m.transfer(&xfer(1, 0, 1000, 0));
        assert_eq!(c.arrival.as_ps(), 600_000);
        m.reset();
        assert_eq!(m.transfer(&xfer(0, 1, 1000, 0)).arrival.as_ps(), 600_000);
    }
}
