//! `torus2d`: an x-by-y grid with wraparound. Chip `c` sits at column `c % x`, row `c / x` and
//! links to its ±x and ±y neighbours. Routing is dimension-ordered: along x first, then y,
//! each the shorter way round (ties forward).

use super::shape::{Link, LinkKind, Node, Shape, forward_is_shorter, ring_walk};
use crate::config::{FabricConfigError, LinkParams, TorusConfig, err};

/// An x-by-y torus.
#[derive(Debug)]
pub(crate) struct Torus {
    x: usize,
    y: usize,
    link: LinkParams,
}

impl Torus {
    /// Checks `x`, `y` (under `prefix`) and, if `want` is given, that `x * y` equals it.
    pub(crate) fn new(
        cfg: &TorusConfig,
        prefix: &str,
        want: Option<usize>,
        link: LinkParams,
    ) -> Result<Torus, FabricConfigError> {
        for (key, v) in [("x", cfg.x), ("y", cfg.y)] {
            if v == 0 {
                return Err(err(&format!("{prefix}.{key}"), v, "must be at least 1"));
            }
        }
        let keys = format!("{prefix}.x * fabric.{prefix}.y");
        let Some(n) = cfg.x.checked_mul(cfg.y) else {
            return Err(err(&keys, format!("{} * {}", cfg.x, cfg.y), "is too large"));
        };
        if let Some(w) = want.filter(|&w| w != n) {
            return Err(err(&keys, format!("{} * {} = {n}", cfg.x, cfg.y), format!("must equal machine.ranks = {w}")));
        }
        Ok(Torus { x: cfg.x, y: cfg.y, link })
    }

    fn chip(&self, col: usize, row: usize) -> Node {
        Node::Chip(row * self.x + col)
    }

    fn direct(&self, a: usize, b: usize) -> Link {
        Link { kind: LinkKind::Direct, from: Node::Chip(a), to: Node::Chip(b), params: self.link }
    }
}

impl Shape for Torus {
    fn label(&self) -> String {
        format!("torus2d {}x{}", self.x, self.y)
    }

    fn ranks(&self) -> usize {
        self.x * self.y
    }

    fn link_count(&self) -> usize {
        self.ranks().saturating_mul(4)
    }

    /// Per chip: +x, -x, +y, -y neighbours, skipping a dimension of size 1 (a size-2
    /// dimension's two directions coincide and [`super::Topology`] keeps one).
    fn links(&self) -> Vec<Link> {
        let (x, y) = (self.x, self.y);
        let mut links = Vec::new();
        for c in 0..x * y {
            let (col, row) = (c % x, c / x);
            let next = [((col + 1) % x, row), ((col + x - 1) % x, row), (col, (row + 1) % y), (col, (row + y - 1) % y)];
            for (nc, nr) in next {
                let n = nr * x + nc;
                if n != c {
                    links.push(self.direct(c, n));
                }
            }
        }
        links
    }

    fn walk(&self, a: usize, b: usize) -> Vec<Node> {
        let (x, y) = (self.x, self.y);
        let (ac, ar, bc, br) = (a % x, a / x, b % x, b / x);
        let mut nodes = ring_walk(x, ac, bc, forward_is_shorter(x, ac, bc), |c| self.chip(c, ar));
        let along_y = ring_walk(y, ar, br, forward_is_shorter(y, ar, br), |r| self.chip(bc, r));
        nodes.extend(along_y.into_iter().skip(1));
        nodes
    }

    fn diameter(&self) -> usize {
        self.x / 2 + self.y / 2
    }
}
