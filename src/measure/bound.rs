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
    /// The efficiency of each group of [`Bound::links`] (a NIC level may have its own).
    pub link_efficiency: Vec<f64>,
    /// Sum of [`Bound::links`], GB/s.
    pub egress_gbps: f64,
    /// The ingress port's effective rate, GB/s.
    pub port_gbps: f64,
    /// The efficiency of rank 0's first links and its port (raw rate -> payload rate): the
    /// fabric's (a NIC level may have its own, [`Cut::efficiency`]).
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
    /// The efficiency that scales this level's NICs (its own, else the fabric's).
    pub efficiency: f64,
    /// The busbw that traffic across the cut allows the collective of [`Bound::kind`].
    pub busbw_gbps: f64,
}

impl Bound {
    /// `busbw <= 137.20 GB/s: rank 0 sends over 7 link(s) x 19.60 GB/s = 137.20 GB/s (efficiency
    /// 0.7 applied), its ingress port takes 137.20 GB/s`, and the cut when there is one, with
    /// its level's own efficiency.
    pub fn line(&self) -> String {
        // One efficiency for every link: said once; several (a NIC among HCCS links): each.
        let mixed = self.link_efficiency.iter().any(|&e| e != self.efficiency);
        let links: Vec<String> = (self.links.iter().zip(&self.link_efficiency))
            .map(|((n, g), e)| match mixed {
                true => format!("{n} link(s) x {} (efficiency {e})", gb(*g)),
                false => format!("{n} link(s) x {}", gb(*g)),
            })
            .collect();
        let out = if links.is_empty() { "no link".to_string() } else { links.join(" + ") };
        let (links_eff, port_eff) = match mixed {
            true => (String::new(), format!(" (efficiency {})", self.efficiency)),
            false => (format!(" (efficiency {} applied)", self.efficiency), String::new()),
        };
        let mut line = format!(
            "busbw <= {}: rank 0 sends over {out} = {}{links_eff}, its ingress port takes {}{port_eff}",
            gb(self.gbps),
            gb(self.egress_gbps),
            gb(self.port_gbps)
        );
        if let Some(c) = &self.cut {
            let allows = match self.kind {
                Some(k) if c.busbw_gbps.is_finite() => format!(", which allows {k} busbw <= {}", gb(c.busbw_gbps)),
                _ => String::new(),
            };
            line.push_str(&format!(
                "; the level-{} NICs between rank 0's group ({} of the ranks) and the others carry {} each way \
                 (efficiency {} applied){allows}",
                c.level,
                c.inside,
                gb(c.gbps),
                c.efficiency
            ));
        }
        line
    }
}

/// `v` to 6 decimals: an efficiency read back from integer rates (0.955, not 0.95499999).
fn round6(v: f64) -> f64 {
    (v * 1e6).round() / 1e6
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
    let eff = cfg.fabric.efficiency;
    // A link's efficiency is its payload rate over its raw rate (unlimited: the fabric's).
    let efficiency = |l: usize| {
        let p = &topo.links()[l].params;
        match (p.raw, p.rate) {
            (Some(raw), Some(r)) => round6(r.bytes_per_s() as f64 / raw.bytes_per_s() as f64),
            _ => eff,
        }
    };
    let mut links: Vec<(usize, f64)> = Vec::new();
    let mut link_efficiency = Vec::new();
    let mut rates: Vec<(f64, f64)> = first.iter().map(|&l| (rate(l), efficiency(l))).collect();
    rates.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.total_cmp(&a.1)));
    for (r, e) in rates {
        match links.last_mut() {
            Some((n, g)) if *g == r && link_efficiency.last() == Some(&e) => *n += 1,
            _ => {
                links.push((1, r));
                link_efficiency.push(e);
            }
        }
    }
    let egress_gbps = links.iter().fold(0.0, |sum, (n, g)| sum + *n as f64 * g);
    let port_gbps = if cfg.fabric.port_gbps.is_finite() { cfg.fabric.port_gbps * eff } else { f64::INFINITY };
    let mut cut = narrowest_cut(&topo, ranks, kind, &rate);
    if let Some(c) = cut.as_mut() {
        c.efficiency = cfg.fabric.topology.efficiency_of(interconnect::LinkClass::Level(c.level), eff);
    }
    let cut_gbps = cut.as_ref().map_or(f64::INFINITY, |c| c.busbw_gbps);
    Ok(Bound {
        gbps: egress_gbps.min(port_gbps).min(cut_gbps),
        links,
        link_efficiency,
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
        let cut = Cut { level: k, inside: g.len(), gbps, efficiency: 1.0, busbw_gbps };
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

    /// The NIC level's line names its own efficiency, not the fabric's: two-node's RoCE level
    /// runs at 0.955 of 25 GB/s per rank while its HCCS links keep 0.7.
    #[test]
    fn the_cut_names_its_levels_own_efficiency() {
        let cfg = Config::preset("two-node").unwrap();
        let b = busbw_bound(&cfg, 16, Some(Kind::AllReduce)).unwrap();
        let cut = b.cut.as_ref().unwrap();
        assert_eq!((cut.level, cut.inside, cut.efficiency), (1, 8, 0.955));
        assert!((cut.gbps - 8.0 * 25.0 * 0.955).abs() < 1e-6, "{}", cut.gbps);
        let line = b.line();
        let links = "1 link(s) x 23.88 GB/s (efficiency 0.955) + 7 link(s) x 19.60 GB/s (efficiency 0.7) = 161.08";
        assert!(line.contains(links), "{line}");
        assert!(line.contains("port takes 137.20 GB/s (efficiency 0.7);"), "{line}");
        let a2a3 = busbw_bound(&Config::preset("a2a3").unwrap(), 8, None).unwrap().line();
        assert!(a2a3.contains("7 link(s) x 19.60 GB/s = 137.20 GB/s (efficiency 0.7 applied), its"), "{a2a3}");
        assert!(line.contains("carry 191.00 GB/s each way (efficiency 0.955 applied)"), "{line}");
    }
}
