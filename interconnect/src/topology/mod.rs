//! Topologies: the directed links between chips (and switches) and the route between any two
//! chips. Each kind lives in its own module and describes itself as a [`Shape`]; [`Topology`]
//! validates the config, lists the links once and maps routes to link indices.

mod full_mesh;
mod hierarchical;
mod ring;
mod switch;
mod torus;

use crate::config::{FabricConfig, FabricConfigError, LinkParams, NodeConfig, TopologyConfig, err};
use std::collections::BTreeMap;
use std::fmt::Debug;

pub(crate) use full_mesh::FullMesh;
pub(crate) use hierarchical::Hierarchical;
pub(crate) use ring::Ring;
pub(crate) use switch::Switch;
pub(crate) use torus::Torus;

/// The most directed links a topology may have (keeps a mistyped rank count from exhausting
/// memory).
const MAX_LINKS: usize = 1 << 24;

/// An end of a link: a chip, or a switch (`level` 0 is a node's own switch, `k >= 1` the
/// switch of group `group` at hierarchy level `k`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Node {
    /// A chip, by world rank.
    Chip(usize),
    /// A switch.
    Switch {
        /// 0: a node's own switch; `k >= 1`: hierarchy level `k`.
        level: usize,
        /// Which group's switch at that level.
        group: usize,
    },
}

/// What a link is, which decides its name.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LinkKind {
    /// Chip to chip: `link {a}->{b}`.
    Direct,
    /// Chip into its switch: `up {chip}`.
    Up,
    /// Switch out to a chip: `down {chip}`.
    Down,
    /// Chip into the switch of hierarchy level k: `nic{k}-up {chip}`.
    NicUp(usize),
    /// Switch of hierarchy level k out to a chip: `nic{k}-down {chip}`.
    NicDown(usize),
}

/// One directed link.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// What the link is (its name follows).
    pub kind: LinkKind,
    /// Where its bytes come from.
    pub from: Node,
    /// Where its bytes go.
    pub to: Node,
    /// Rate and latency.
    pub params: LinkParams,
}

impl Link {
    /// The chip this link belongs to (its chip end; the sender of a direct link).
    pub fn chip(&self) -> usize {
        match (self.from, self.to) {
            (Node::Chip(c), _) => c,
            (_, Node::Chip(c)) => c,
            _ => 0,
        }
    }

    /// Display name: `link 0->1`, `up 3`, `down 3`, `nic1-up 3`, `nic1-down 3`.
    pub fn name(&self) -> String {
        let c = self.chip();
        match self.kind {
            LinkKind::Direct => match self.to {
                Node::Chip(b) => format!("link {c}->{b}"),
                Node::Switch { .. } => format!("link {c}->switch"),
            },
            LinkKind::Up => format!("up {c}"),
            LinkKind::Down => format!("down {c}"),
            LinkKind::NicUp(k) => format!("nic{k}-up {c}"),
            LinkKind::NicDown(k) => format!("nic{k}-down {c}"),
        }
    }
}

/// A topology kind: its links and its routes, on chips `0..ranks()`.
pub(crate) trait Shape: Debug + Send + Sync {
    /// Short description for `topo` output (`ring (bidirectional)`, `torus2d 4x4`, ...).
    fn label(&self) -> String;
    /// Chips joined.
    fn ranks(&self) -> usize;
    /// Directed links `links()` will return, computed without building them.
    fn link_count(&self) -> usize;
    /// Every directed link, in a fixed order.
    fn links(&self) -> Vec<Link>;
    /// The nodes a packet visits from chip `a` to chip `b`, both included (`[a]` if `a == b`);
    /// `a` and `b` are below `ranks()`.
    fn walk(&self, a: usize, b: usize) -> Vec<Node>;
    /// The most links any route crosses.
    fn diameter(&self) -> usize;
}

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

    /// The most links any route crosses.
    pub fn diameter(&self) -> usize {
        self.shape.diameter()
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

/// Walks from position `a` to `b` of a ring of `n` positions (`at(i)` names position i), one
/// step at a time forward (+1) or backward (-1): the nodes visited, both ends included.
pub(crate) fn ring_walk(n: usize, a: usize, b: usize, forward: bool, at: impl Fn(usize) -> Node) -> Vec<Node> {
    let mut nodes = vec![at(a)];
    let mut cur = a;
    while cur != b && nodes.len() <= n {
        cur = if forward { (cur + 1) % n } else { (cur + n - 1) % n };
        nodes.push(at(cur));
    }
    nodes
}

/// Whether the shortest way from `a` to `b` on a ring of `n` is forward (ties go forward).
pub(crate) fn forward_is_shorter(n: usize, a: usize, b: usize) -> bool {
    let d = (b + n - a) % n;
    2 * d <= n
}

#[cfg(test)]
mod tests;
