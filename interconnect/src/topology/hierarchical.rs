//! `hierarchical`: nodes of a flat topology (level 0) joined by levels of non-blocking
//! switches. At level k >= 1 each group joins `groups` groups of level k-1, and every chip owns
//! an uplink (`nic{k}-up`) into and a downlink (`nic{k}-down`) out of its level-k switch. Two
//! chips of one node talk over the node's topology; otherwise "up/down through switches": the
//! packet goes up the sender's NIC and down the receiver's NIC at the lowest level whose group
//! holds both.

use super::flat::flat;
use super::shape::{Link, LinkKind, Node, Shape};
use crate::config::{FabricConfigError, HierarchicalConfig, LinkParams, err};

/// One level above the nodes.
#[derive(Debug)]
struct Level {
    /// Chips per group at this level.
    span: usize,
    nic: LinkParams,
    /// How much longer a written packet holds this level's NICs (see
    /// [`crate::config::LevelConfig::write_efficiency`]).
    write_scale: f64,
}

/// Nodes of `node` joined by `levels` (innermost first).
#[derive(Debug)]
pub(crate) struct Hierarchical {
    node: Box<dyn Shape>,
    levels: Vec<Level>,
    ranks: usize,
}

impl Hierarchical {
    /// Checks the node and every level, and that `node.ranks * groups...` equals `ranks`.
    pub(crate) fn new(cfg: &HierarchicalConfig, ranks: usize, eff: f64) -> Result<Hierarchical, FabricConfigError> {
        let node = flat(&cfg.node, "topology.node", None, eff)?;
        let mut span = node.ranks();
        let mut levels = Vec::new();
        for (i, l) in cfg.levels.iter().enumerate() {
            let key = |k: &str| format!("topology.levels[{i}].{k}");
            if l.groups == 0 {
                return Err(err(&key("groups"), 0, "must be at least 1"));
            }
            span = span.checked_mul(l.groups).ok_or_else(|| {
                err(
                    &key("groups"),
                    l.groups,
                    format!(
                        "times the {span} chips below it (topology.node.ranks = {} x the earlier levels' groups) overflows; the product must equal machine.ranks = {ranks}",
                        node.ranks()
                    ),
                )
            })?;
            let level_eff = l.checked_efficiency(&key("efficiency"), eff)?;
            let nic =
                LinkParams::new(&key("nic_gbps"), l.nic_gbps, &key("nic_latency_ns"), l.nic_latency_ns, level_eff)?;
            let write_scale = l.write_scale(&format!("topology.levels[{i}]"), eff)?;
            levels.push(Level { span, nic, write_scale });
        }
        if span != ranks {
            let groups: Vec<String> = cfg.levels.iter().map(|l| l.groups.to_string()).collect();
            let value = format!("{} * {} = {span}", node.ranks(), groups.join(" * "));
            let key = "topology.node.ranks * fabric.topology.levels[].groups";
            return Err(err(key, value, format!("must equal machine.ranks = {ranks}")));
        }
        Ok(Hierarchical { node, levels, ranks })
    }

    /// How much longer a written packet holds the NICs of level `k` (1-based) than a read
    /// one (1 for a level that does not exist).
    pub(crate) fn write_scale(&self, k: usize) -> f64 {
        self.levels.get(k.wrapping_sub(1)).map_or(1.0, |l| l.write_scale)
    }

    /// Chips per node.
    fn node_ranks(&self) -> usize {
        self.node.ranks()
    }

    /// Moves a node-local [`Node`] into node `n`.
    fn shift(&self, local: Node, n: usize) -> Node {
        match local {
            Node::Chip(c) => Node::Chip(n * self.node_ranks() + c),
            Node::Switch { level, group } => Node::Switch { level, group: group + n },
        }
    }
}

impl Shape for Hierarchical {
    fn label(&self) -> String {
        let levels: Vec<String> =
            self.levels.iter().enumerate().map(|(i, l)| format!("level {} = {} chips", i + 1, l.span)).collect();
        format!("hierarchical (node = {} of {} chips; {})", self.node.label(), self.node_ranks(), levels.join("; "))
    }

    fn ranks(&self) -> usize {
        self.ranks
    }

    fn link_count(&self) -> usize {
        let nodes = self.ranks / self.node_ranks().max(1);
        let nics = self.ranks.saturating_mul(2).saturating_mul(self.levels.len());
        nodes.saturating_mul(self.node.link_count()).saturating_add(nics)
    }

    /// Every node's links (node by node), then per level, per chip: NIC uplink, NIC downlink.
    fn links(&self) -> Vec<Link> {
        let nodes = self.ranks / self.node_ranks().max(1);
        let local = self.node.links();
        let mut links = Vec::new();
        for n in 0..nodes {
            links.extend(local.iter().map(|l| Link { from: self.shift(l.from, n), to: self.shift(l.to, n), ..*l }));
        }
        for (i, l) in self.levels.iter().enumerate() {
            let k = i + 1;
            for c in 0..self.ranks {
                let switch = Node::Switch { level: k, group: c / l.span };
                links.push(Link { kind: LinkKind::NicUp(k), from: Node::Chip(c), to: switch, params: l.nic });
                links.push(Link { kind: LinkKind::NicDown(k), from: switch, to: Node::Chip(c), params: l.nic });
            }
        }
        links
    }

    fn walk(&self, a: usize, b: usize) -> Vec<Node> {
        let nr = self.node_ranks();
        if a / nr == b / nr {
            let n = a / nr;
            return self.node.walk(a % nr, b % nr).into_iter().map(|v| self.shift(v, n)).collect();
        }
        let Some((i, l)) = self.levels.iter().enumerate().find(|(_, l)| a / l.span == b / l.span) else {
            return vec![Node::Chip(a)];
        };
        vec![Node::Chip(a), Node::Switch { level: i + 1, group: a / l.span }, Node::Chip(b)]
    }

    fn diameter(&self) -> usize {
        let across = if self.ranks > self.node_ranks() { 2 } else { 0 };
        self.node.diameter().max(across)
    }

    fn write_scale(&self, link: &Link) -> f64 {
        match link.kind {
            LinkKind::NicUp(k) | LinkKind::NicDown(k) => Hierarchical::write_scale(self, k),
            _ => 1.0,
        }
    }

    /// Nodes talk through the levels' switches, so an island lies within a node: the node's
    /// own (all of it, or one chip if the node is a switch).
    fn island(&self, chip: usize) -> usize {
        let nr = self.node_ranks().max(1);
        (chip / nr) * nr + self.node.island(chip % nr)
    }
}
