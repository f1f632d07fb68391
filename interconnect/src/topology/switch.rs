//! `switch`: a star through one non-blocking switch, the abstraction of a Clos network. Each
//! chip owns an uplink into the switch and a downlink out of it, so incast serialises on the
//! destination's downlink while disjoint pairs run in parallel.

use super::shape::{Link, LinkKind, Node, Shape};
use crate::config::LinkParams;

/// The switch every chip hangs off.
const SWITCH: Node = Node::Switch { level: 0, group: 0 };

/// `ranks` chips around one switch; a route is `[up src, down dst]`.
#[derive(Debug)]
pub(crate) struct Switch {
    ranks: usize,
    link: LinkParams,
}

impl Switch {
    pub(crate) fn new(ranks: usize, link: LinkParams) -> Switch {
        Switch { ranks, link }
    }
}

impl Shape for Switch {
    fn label(&self) -> String {
        "switch".to_string()
    }

    fn ranks(&self) -> usize {
        self.ranks
    }

    fn link_count(&self) -> usize {
        self.ranks.saturating_mul(2)
    }

    /// Per chip: its uplink, then its downlink.
    fn links(&self) -> Vec<Link> {
        let p = self.link;
        (0..self.ranks)
            .flat_map(|c| {
                [
                    Link { kind: LinkKind::Up, from: Node::Chip(c), to: SWITCH, params: p },
                    Link { kind: LinkKind::Down, from: SWITCH, to: Node::Chip(c), params: p },
                ]
            })
            .collect()
    }

    fn walk(&self, a: usize, b: usize) -> Vec<Node> {
        if a == b { vec![Node::Chip(a)] } else { vec![Node::Chip(a), SWITCH, Node::Chip(b)] }
    }

    fn diameter(&self) -> usize {
        if self.ranks > 1 { 2 } else { 0 }
    }

    /// Every chip is an island: any two talk through the switch.
    fn island(&self, chip: usize) -> usize {
        chip
    }
}
