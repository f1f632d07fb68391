//! The flat kinds built from a `[fabric.topology]` table or a hierarchical node's: full mesh,
//! ring, switch, 2-D torus, each with its rank count checked against the machine's.

use super::full_mesh::FullMesh;
use super::ring::Ring;
use super::shape::Shape;
use super::switch::Switch;
use super::torus::Torus;
use crate::config::{FabricConfigError, LinkParams, NodeConfig, err};

/// A flat shape configured under `prefix`; `want` is the rank count it must have, if known.
pub(crate) fn flat(
    cfg: &NodeConfig,
    prefix: &str,
    want: Option<usize>,
    eff: f64,
) -> Result<Box<dyn Shape>, FabricConfigError> {
    let link =
        |gbps, ns| LinkParams::new(&format!("{prefix}.link_gbps"), gbps, &format!("{prefix}.link_latency_ns"), ns, eff);
    Ok(match cfg {
        NodeConfig::FullMesh(c) => {
            Box::new(FullMesh::new(ranks(prefix, c.ranks, want)?, link(c.link_gbps, c.link_latency_ns)?))
        }
        NodeConfig::Ring(c) => {
            Box::new(Ring::new(ranks(prefix, c.ranks, want)?, c.bidirectional, link(c.link_gbps, c.link_latency_ns)?))
        }
        NodeConfig::Switch(c) => {
            Box::new(Switch::new(ranks(prefix, c.ranks, want)?, link(c.link_gbps, c.link_latency_ns)?))
        }
        NodeConfig::Torus2d(c) => Box::new(Torus::new(c, prefix, want, link(c.link_gbps, c.link_latency_ns)?)?),
    })
}

/// The rank count of a flat shape: its own `ranks` key, else the machine's.
fn ranks(prefix: &str, given: Option<usize>, want: Option<usize>) -> Result<usize, FabricConfigError> {
    let key = format!("{prefix}.ranks");
    match (given, want) {
        (Some(r), Some(w)) if r != w => Err(err(&key, r, format!("must equal machine.ranks = {w} (or be left out)"))),
        (Some(0), _) => Err(err(&key, 0, "must be at least 1")),
        (Some(r), _) => Ok(r),
        (None, Some(w)) => Ok(w),
        (None, None) => Err(err(&key, "(missing)", "a hierarchical node must say how many chips it holds")),
    }
}
