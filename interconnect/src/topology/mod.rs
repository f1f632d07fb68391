//! Topologies: the directed links between chips (and switches) and the route between any two
//! chips. Each kind lives in its own module and describes itself as a [`Shape`]; [`Topology`]
//! validates the config, lists the links once and maps routes to link indices.

mod flat;
mod full_mesh;
mod hierarchical;
mod ring;
mod shape;
mod switch;
mod torus;

use crate::config::{FabricConfig, FabricConfigError, NodeConfig, TopologyConfig, err};
use std::collections::BTreeMap;
use std::fmt::Debug;

use flat::flat;
pub(crate) use hierarchical::Hierarchical;
pub(crate) use shape::Shape;
pub use shape::{Link, LinkKind, Node};

/// The most directed links a topology may have (keeps a mistyped rank count from exhausting
/// memory).
const MAX_LINKS: usize = 1 << 24;

/// A validated topology: its links (indexed in a fixed order) and routing between chips.
#[derive(Debug)]
pub struct Topology {
    shape: Box<dyn Shape>,
    links: Vec<Link>,
    index: BTreeMap<(Node, Node), usize>,
}

impl FabricConfig {
    /// Checks every value for a machine of `ranks` chips (the same checks
    /// `build_network` makes). It lives with the topology because building one is the last check.
    pub fn validate(&self, ranks: usize) -> Result<(), FabricConfigError> {
        self.checked_packet_bytes()?;
        self.port()?;
        self.read_turnaround()?;
        self.checked_core_write_efficiency()?;
        Topology::new(self, ranks).map(|_| ())
    }
}

impl Topology {
    /// The topology of `cfg` for a machine of `ranks` chips; checks rates, latencies and rank
    /// counts.
    pub fn new(cfg: &FabricConfig, ranks: usize) -> Result<Topology, FabricConfigError> {
        let eff = cfg.checked_efficiency()?;
        let shape = top_shape(&cfg.topology, ranks, eff)?;
        if shape.ranks() != ranks {
            return Err(err(
                "topology",
                shape.label(),
                format!("joins {} chips, not machine.ranks = {ranks}", shape.ranks()),
            ));
        }
        if shape.link_count() > MAX_LINKS {
            return Err(err("topology", shape.label(), format!("has more than {MAX_LINKS} links for {ranks} chips")));
        }
        let mut links = Vec::new();
        let mut index = BTreeMap::new();
        for link in shape.links() {
            if let std::collections::btree_map::Entry::Vacant(e) = index.entry((link.from, link.to)) {
                e.insert(links.len());
                links.push(link);
            }
        }
        Ok(Topology { shape, links, index })
    }

    /// The directed links and the diameter (the most links a route crosses) of the topology
    /// of `cfg` for `ranks` chips, worked out without building its links (what building them
    /// would cost: a memory estimate asks before it builds).
    pub fn count(cfg: &FabricConfig, ranks: usize) -> Result<(usize, usize), FabricConfigError> {
        let shape = top_shape(&cfg.topology, ranks, cfg.checked_efficiency()?)?;
        Ok((shape.link_count(), shape.diameter()))
    }

    /// Short description of the kind and shape.
    pub fn label(&self) -> String {
        self.shape.label()
    }

    /// Chips joined.
    pub fn ranks(&self) -> usize {
        self.shape.ranks()
    }

    /// Every directed link; [`Topology::route`] returns indices into this.
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// The links, in order, that a packet from chip `a` to chip `b` crosses; empty if `a == b`
    /// or either is not a chip of this topology.
    pub fn route(&self, a: usize, b: usize) -> Vec<usize> {
        let n = self.ranks();
        if a >= n || b >= n || a == b {
            return Vec::new();
        }
        let walk = self.shape.walk(a, b);
        walk.windows(2).filter_map(|w| self.index.get(&(w[0], w[1])).copied()).collect()
    }

    /// How much longer a written packet (an SDMA put, a core's remote store) holds link `l`
    /// than a read one: a level's `efficiency / write_efficiency`, 1 elsewhere (and for an
    /// unknown link).
    pub fn write_scale(&self, l: usize) -> f64 {
        self.links.get(l).map_or(1.0, |link| self.shape.write_scale(link))
    }

    /// The most links any route crosses.
    pub fn diameter(&self) -> usize {
        self.shape.diameter()
    }

    /// The island of `chip`: the chips it reaches without crossing a switch share it (it is
    /// one of them). Switches are where a path is split and where news of a landed write
    /// takes the route's latency to come back (see `NetworkModel`).
    pub fn island(&self, chip: usize) -> usize {
        self.shape.island(chip)
    }

    /// How many islands the chips form (1 without switches).
    pub fn island_count(&self) -> usize {
        (0..self.ranks()).filter(|&c| self.island(c) == c).count().max(1)
    }

    /// The least latency of a link into a switch, and that link: how far ahead of its own
    /// events an island's events on another island always lie (a packet reaches the switch
    /// no sooner, news crosses no sooner), so the lookahead of a run split at switches.
    /// `None` without switches.
    pub fn lookahead(&self) -> Option<(crate::config::LinkParams, usize)> {
        let into_switch = self.links.iter().enumerate().filter(|(_, l)| matches!(l.to, Node::Switch { .. }));
        into_switch.min_by_key(|(_, l)| l.params.latency).map(|(i, l)| (l.params, i))
    }
}

/// The shape of `[fabric.topology]`; `ranks` is the machine's.
fn top_shape(cfg: &TopologyConfig, ranks: usize, eff: f64) -> Result<Box<dyn Shape>, FabricConfigError> {
    let want = Some(ranks);
    match cfg {
        TopologyConfig::FullMesh(c) => flat(&NodeConfig::FullMesh(c.clone()), "topology", want, eff),
        TopologyConfig::Ring(c) => flat(&NodeConfig::Ring(c.clone()), "topology", want, eff),
        TopologyConfig::Torus2d(c) => flat(&NodeConfig::Torus2d(c.clone()), "topology", want, eff),
        TopologyConfig::Switch(c) => flat(&NodeConfig::Switch(c.clone()), "topology", want, eff),
        TopologyConfig::Hierarchical(h) => Ok(Box::new(Hierarchical::new(h, ranks, eff)?)),
    }
}

#[cfg(test)]
mod tests;
