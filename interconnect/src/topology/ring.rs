//! `ring`: chip i links to i+1 (and to i-1 when bidirectional), wrapping around.

use super::shape::{Link, LinkKind, Node, Shape, forward_is_shorter, ring_walk};
use crate::config::LinkParams;

/// A ring of `ranks` chips. Bidirectional routes take the shorter way (ties forward);
/// unidirectional routes always go forward.
#[derive(Debug)]
pub(crate) struct Ring {
    ranks: usize,
    bidirectional: bool,
    link: LinkParams,
}

impl Ring {
    pub(crate) fn new(ranks: usize, bidirectional: bool, link: LinkParams) -> Ring {
        Ring { ranks, bidirectional, link }
    }

    fn direct(&self, a: usize, b: usize) -> Link {
        Link { kind: LinkKind::Direct, from: Node::Chip(a), to: Node::Chip(b), params: self.link }
    }
}

impl Shape for Ring {
    fn label(&self) -> String {
        let dir = if self.bidirectional { "bidirectional" } else { "unidirectional" };
        format!("ring ({dir})")
    }

    fn ranks(&self) -> usize {
        self.ranks
    }

    fn link_count(&self) -> usize {
        self.ranks.saturating_mul(if self.bidirectional { 2 } else { 1 })
    }

    /// Per chip: its forward link, then its backward link (a 2-ring's two directions coincide
    /// and [`super::Topology`] keeps one).
    fn links(&self) -> Vec<Link> {
        let n = self.ranks;
        if n < 2 {
            return Vec::new();
        }
        let mut links = Vec::new();
        for c in 0..n {
            links.push(self.direct(c, (c + 1) % n));
            if self.bidirectional {
                links.push(self.direct(c, (c + n - 1) % n));
            }
        }
        links
    }

    fn walk(&self, a: usize, b: usize) -> Vec<Node> {
        let forward = !self.bidirectional || forward_is_shorter(self.ranks, a, b);
        ring_walk(self.ranks, a, b, forward, Node::Chip)
    }

    fn diameter(&self) -> usize {
        if self.bidirectional { self.ranks / 2 } else { self.ranks.saturating_sub(1) }
    }
}
