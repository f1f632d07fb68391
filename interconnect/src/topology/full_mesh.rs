//! `full_mesh`: every chip pair has its own full-duplex link (an 8-card HCCS server).

use super::shape::{Link, LinkKind, Node, Shape};
use crate::config::LinkParams;

/// `ranks` chips, one directed link per ordered pair; a route is the single direct link.
#[derive(Debug)]
pub(crate) struct FullMesh {
    ranks: usize,
    link: LinkParams,
}

impl FullMesh {
    pub(crate) fn new(ranks: usize, link: LinkParams) -> FullMesh {
        FullMesh { ranks, link }
    }
}

impl Shape for FullMesh {
    fn label(&self) -> String {
        "full_mesh".to_string()
    }

    fn ranks(&self) -> usize {
        self.ranks
    }

    fn link_count(&self) -> usize {
        self.ranks.saturating_mul(self.ranks.saturating_sub(1))
    }

    fn links(&self) -> Vec<Link> {
        let n = self.ranks;
        let pairs = (0..n).flat_map(|a| (0..n).filter(move |&b| b != a).map(move |b| (a, b)));
        pairs
            .map(|(a, b)| Link { kind: LinkKind::Direct, from: Node::Chip(a), to: Node::Chip(b), params: self.link })
            .collect()
    }

    fn walk(&self, a: usize, b: usize) -> Vec<Node> {
        if a == b { vec![Node::Chip(a)] } else { vec![Node::Chip(a), Node::Chip(b)] }
    }

    fn diameter(&self) -> usize {
        usize::from(self.ranks > 1)
    }
}
