//! What every topology kind is made of: the ends of links ([`Node`]), the links themselves
//! ([`Link`], named by their [`LinkKind`]), the [`Shape`] a kind describes itself as, and the
//! ring walks that rings and tori share.

use crate::config::LinkParams;
use std::fmt::Debug;

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
    /// The island of `chip`: chips of one island reach each other without crossing a switch
    /// (numbered by one chip of it). A shape without switches is one island.
    fn island(&self, chip: usize) -> usize {
        let _ = chip;
        0
    }
    /// How much longer a written packet holds `link` than a read one (1: no difference; a
    /// hierarchical level's NICs may say more).
    fn write_scale(&self, link: &Link) -> f64 {
        let _ = link;
        1.0
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
