//! The `[fabric]` table of a machine config.

use crate::stopgap::{ChipPaths, MeshNet};
use serde::Deserialize;
use sim_core::{Bandwidth, Network, SimDuration};
use thiserror::Error;

/// A fabric as written in a config; `kind` selects the topology.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum FabricConfig {
    /// Every pair of chips has its own full-duplex link (an 8-card HCCS server).
    FullMesh(FullMeshConfig),
}

/// Link parameters of a full mesh.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FullMeshConfig {
    /// Raw link rate per direction, GB/s.
    pub link_gbps: f64,
    /// Fraction of the raw rate sustained by payload (0 < e <= 1).
    pub link_efficiency: f64,
    /// One-way latency of a link, ns.
    pub link_latency_ns: f64,
}

/// A `[fabric]` value that cannot describe a fabric.
#[derive(Debug, Error, Clone, PartialEq)]
#[error("fabric.{key} = {value}: {why}")]
pub struct FabricConfigError {
    pub key: String,
    pub value: String,
    pub why: String,
}

fn err(key: &str, value: impl ToString, why: &str) -> FabricConfigError {
    FabricConfigError { key: key.to_string(), value: value.to_string(), why: why.to_string() }
}

/// Builds the network of `ranks` chips described by `cfg`, with the chip-side paths `chip`.
pub fn build_network(cfg: &FabricConfig, ranks: usize, chip: &ChipPaths) -> Result<Box<dyn Network>, FabricConfigError> {
    match cfg {
        FabricConfig::FullMesh(m) => {
            if !(m.link_efficiency > 0.0 && m.link_efficiency <= 1.0) {
                return Err(err("link_efficiency", m.link_efficiency, "must be in (0, 1]"));
            }
            let bw = Bandwidth::from_gbps_f64(m.link_gbps * m.link_efficiency)
                .ok_or_else(|| err("link_gbps", m.link_gbps, "must be a positive rate in GB/s"))?;
            if !m.link_latency_ns.is_finite() || m.link_latency_ns < 0.0 {
                return Err(err("link_latency_ns", m.link_latency_ns, "must be a non-negative number of ns"));
            }
            let lat = SimDuration::from_ns_f64(m.link_latency_ns);
            Ok(Box::new(MeshNet::new(ranks, chip, Some(bw), lat, None, 4096)))
        }
    }
}
