//! The machine's bus-bandwidth bound: what the first links, the ingress port and the NICs
//! between servers allow a rank, per collective.

use super::error::Error;
use crate::Config;
use collectives::Kind;

/// The machine's bus-bandwidth bound for `ranks` ranks: what one rank can push into the
/// fabric (the distinct first links of its routes to the other ranks) and what its ingress
/// port takes, both at the fabric's efficiency, and, on a machine of several servers, what
/// the NICs between rank 0's server and the other ranks carry (a collective's traffic across
/// that cut, per byte of busbw, depends on the collective: an all_to_all sends half its data
/// across it, an allreduce needs only one copy of the result). busbw's factors normalise
/// every collective to per-rank traffic, so no algorithm's busbw exceeds [`Bound::gbps`].
#[derive(Clone, Debug, PartialEq)]
pub struct Bound {
    /// The bound in GB/s (`f64::INFINITY` when nothing on the way is limited).
    pub gbps: f64,
    /// Rank 0's first links as `(count, effective GB/s each)`, fastest first.
    pub links: Vec<(usize, f64)>,
    /// Sum of [`Bound::links`], GB/s.
    pub egress_gbps: f64,
    /// The ingress port's effective rate, GB/s.
    pub port_gbps: f64,
    /// The fabric's efficiency (raw rate -> payload rate).
    pub efficiency: f64,
    /// The narrowest cut between rank 0's server (or group) and the other ranks, when the
    /// ranks span several.
    pub cut: Option<Cut>,
    /// The collective the bound is for (`None`: any; the cut then bounds nothing by itself).
    pub kind: Option<Kind>,
}

/// The NICs between the ranks of rank 0's group at one hierarchy level and the other ranks.
#[derive(Clone, Debug, PartialEq)]
pub struct Cut {
    /// Hierarchy level of the NICs (1: between servers).
    pub level: usize,
    /// Ranks taking part inside rank 0's group.
    pub inside: usize,
    /// Effective GB/s across the cut each way: the group's NIC uplinks, or the other side's
    /// downlinks if fewer.
    pub gbps: f64,
    /// The busbw that traffic across the cut allows the collective of [`Bound::kind`].
    pub busbw_gbps: f64,
}

impl Bound {
    /// `busbw <= 137.20 GB/s: rank 0 sends over 7 link(s) x 19.60 GB/s = 137.20 GB/s (efficiency
    /// 0.7 applied), its ingress port takes 137.20 GB/s`, and the cut when there is one.
    pub fn line(&self) -> String {
        let links: Vec<String> = self.links.iter().map(|(n, g)| format!("{n} link(s) x {}", gb(*g))).collect();
        let out = if links.is_empty() { "no link".to_string() } else { links.join(" + ") };
        let mut line = format!(
            "busbw <= {}: rank 0 sends over {out} = {} (efficiency {} applied), its ingress port takes {}",
            gb(self.gbps),
            gb(self.egress_gbps),
            self.efficiency,
            gb(self.port_gbps)
        );
        if let Some(c) = &self.cut {
            let allows = match self.kind {
                Some(k) if c.busbw_gbps.is_finite() => format!(", which allows {k} busbw <= {}", gb(c.busbw_gbps)),
                _ => String::new(),
            };
            line.push_str(&format!(
                "; the level-{} NICs between rank 0's group ({} of the ranks) and the others carry {} each way{allows}",
                c.level,
                c.inside,
                gb(c.gbps)
            ));
        }
        line
    }
}

fn gb(v: f64) -> String {
    // `+ 0.0` turns -0.0 (Rust's empty f64 sum) into 0.0, so no `-0.00` is printed.
    if v.is_finite() { format!("{:.2} GB/s", v + 0.0) } else { "unlimited".to_string() }
}

/// The bus-bandwidth bound of `cfg` for the first `ranks` ranks running `kind` (see [`Bound`]).
pub fn busbw_bound(cfg: &Config, ranks: usize, kind: Option<Kind>) -> Result<Bound, Error> {
    let topo = interconnect::Topology::new(&cfg.fabric, cfg.machine.ranks)?;
    let ranks = ranks.min(cfg.machine.ranks);
    let mut first: Vec<usize> = (1..ranks).filter_map(|b| topo.route(0, b).first().copied()).collect();
    first.sort_unstable();
    first.dedup();
    let rate = |l: usize| topo.links()[l].params.rate.map_or(f64::INFINITY, |b| b.bytes_per_s() as f64 / 1e9);
    let mut links: Vec<(usize, f64)> = Vec::new();
    let mut rates: Vec<f64> = first.iter().map(|&l| rate(l)).collect();
    rates.sort_by(|a, b| b.total_cmp(a));
    for r in rates {
        match links.last_mut() {
            Some((n, g)) if *g == r => *n += 1,
            _ => links.push((1, r)),
        }
    }
    let egress_gbps = links.iter().fold(0.0, |sum, (n, g)| sum + *n as f64 * g);
    let eff = cfg.fabric.efficiency;
    let port_gbps = if cfg.fabric.port_gbps.is_finite() { cfg.fabric.port_gbps * eff } else { f64::INFINITY };
    let cut = narrowest_cut(&topo, ranks, kind, &rate);
    let cut_gbps = cut.as_ref().map_or(f64::INFINITY, |c| c.busbw_gbps);
    Ok(Bound {
        gbps: egress_gbps.min(port_gbps).min(cut_gbps),
        links,
        egress_gbps,
        port_gbps,
        efficiency: eff,
        cut,
        kind,
    })
}

/// The cut of the lowest NIC level whose group around rank 0 leaves some of the first `ranks`
/// ranks outside, with the busbw it allows `kind` (the tightest over levels).
fn narrowest_cut(
    topo: &interconnect::Topology,
    ranks: usize,
    kind: Option<Kind>,
    rate: &dyn Fn(usize) -> f64,
) -> Option<Cut> {
    use interconnect::LinkKind;
    let levels: Vec<usize> = {
        let mut v: Vec<usize> =
            topo.links().iter().filter_map(|l| if let LinkKind::NicUp(k) = l.kind { Some(k) } else { None }).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let nic = |chip: usize, up: bool, k: usize| {
        topo.links().iter().position(|l| {
            l.chip() == chip && if up { l.kind == LinkKind::NicUp(k) } else { l.kind == LinkKind::NicDown(k) }
        })
    };
    let mut best: Option<Cut> = None;
    for k in levels {
        // Rank 0's group at level k: the ranks it reaches without a NIC of level k or above.
        let inside =
            |b: usize| topo.route(0, b).iter().all(|&l| !matches!(topo.links()[l].kind, LinkKind::NicUp(j) if j >= k));
        let (g, rest): (Vec<usize>, Vec<usize>) = (0..ranks).partition(|&b| inside(b));
        if rest.is_empty() {
            continue;
        }
        let sum = |set: &[usize], up: bool| set.iter().filter_map(|&c| nic(c, up, k)).map(rate).sum::<f64>() + 0.0;
        let gbps = sum(&g, true).min(sum(&rest, false));
        let busbw_gbps = kind.map_or(f64::INFINITY, |kind| cut_busbw(kind, ranks, g.len(), gbps));
        let cut = Cut { level: k, inside: g.len(), gbps, busbw_gbps };
        if best.as_ref().is_none_or(|b| cut.busbw_gbps < b.busbw_gbps) {
            best = Some(cut);
        }
    }
    best
}

/// The busbw a cut of `c` GB/s each way between `k` of `n` ranks and the rest allows `kind`,
/// from the least traffic that must cross it per call (S: the size nccl-tests reports):
/// allreduce one copy of the result, S (busbw factor 2(n-1)/n); reduce_scatter the outside
/// ranks' shards, S (n-k)/n; allgather the inside ranks' parts, S k/n; broadcast from rank 0,
/// S; all_to_all every inside rank's share for every outside rank, S k (n-k)/n.
pub fn cut_busbw(kind: Kind, n: usize, k: usize, c: f64) -> f64 {
    let (n, k) = (n as f64, k as f64);
    match kind {
        Kind::AllReduce => 2.0 * (n - 1.0) / n * c,
        Kind::ReduceScatter => (n - 1.0) / (n - k) * c,
        Kind::AllGather => (n - 1.0) / k * c,
        Kind::Broadcast => c,
        Kind::AllToAll | Kind::AllToAllV => (n - 1.0) * c / (k * (n - k)),
        Kind::Barrier => f64::INFINITY,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_allows_each_collective_what_must_cross_it() {
        // 8 of 16 ranks inside, 140 GB/s each way.
        let b = |k| cut_busbw(k, 16, 8, 140.0);
        assert_eq!(b(Kind::AllReduce), 2.0 * 15.0 / 16.0 * 140.0);
        assert_eq!(b(Kind::ReduceScatter), 15.0 / 8.0 * 140.0);
        assert_eq!(b(Kind::AllGather), 15.0 / 8.0 * 140.0);
        assert_eq!(b(Kind::Broadcast), 140.0);
        assert_eq!(b(Kind::AllToAll), 15.0 * 140.0 / 64.0);
        assert_eq!(b(Kind::AllToAllV), b(Kind::AllToAll));
        assert!(b(Kind::Barrier).is_infinite());
        // A small group of a large machine: its own parts are few, the outside's shards many.
        assert_eq!(cut_busbw(Kind::AllGather, 1024, 8, 140.0), 1023.0 / 8.0 * 140.0);
        assert_eq!(cut_busbw(Kind::ReduceScatter, 1024, 8, 140.0), 1023.0 / 1016.0 * 140.0);
    }
}
