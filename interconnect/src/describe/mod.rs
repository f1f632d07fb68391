//! Text for a `topo` command: the links, ports and chip paths of a fabric, and the
//! remote-write path between two chips with its latency and bottleneck. Rates and times are
//! printed from their integer forms, so the text is the same on every machine.

use crate::config::{FabricConfig, FabricConfigError, err};
use crate::network::{ChipPaths, NetworkModel};
use sim_core::{
    Bandwidth, SimDuration,
    model::{Network, PathKind, Route},
};
use std::fmt::Write;

/// Every directed link (raw and effective rate, latency), every ingress port and the chip-side
/// paths of the fabric `cfg` for `ranks` chips.
pub fn describe(cfg: &FabricConfig, ranks: usize, chip: &ChipPaths) -> Result<String, FabricConfigError> {
    describe_with(cfg, ranks, chip, true)
}

/// As [`describe`], with the links and ports summarised: one line per class of link (kind,
/// rates and latency) with how many there are, and one line for the ports when they are all
/// alike. Its length does not grow with the rank count.
pub fn describe_summary(cfg: &FabricConfig, ranks: usize, chip: &ChipPaths) -> Result<String, FabricConfigError> {
    describe_with(cfg, ranks, chip, false)
}

/// The class of a link for [`describe_summary`]: `chip-to-chip`, `up`, `down`, `nicK-up`, `nicK-down`.
fn class(kind: crate::topology::LinkKind) -> String {
    use crate::topology::LinkKind;
    match kind {
        LinkKind::Direct => "chip-to-chip".to_string(),
        LinkKind::Up => "up (chip -> switch)".to_string(),
        LinkKind::Down => "down (switch -> chip)".to_string(),
        LinkKind::NicUp(k) => format!("nic{k}-up"),
        LinkKind::NicDown(k) => format!("nic{k}-down"),
    }
}

fn describe_with(cfg: &FabricConfig, ranks: usize, chip: &ChipPaths, all: bool) -> Result<String, FabricConfigError> {
    let model = NetworkModel::new(cfg, ranks, chip)?;
    let topo = model.topology();
    let port = cfg.port()?;
    let mut out = String::new();
    let _ = writeln!(out, "topology: {}, {ranks} chips, diameter {}", topo.label(), topo.diameter());
    let _ = writeln!(out, "packet: {} B; efficiency {} (links, NICs, ports)", cfg.packet_bytes, cfg.efficiency);
    if all {
        let links: Vec<[String; 4]> = topo
            .links()
            .iter()
            .map(|l| [l.name(), gbps(l.params.raw), gbps(l.params.rate), ns(l.params.latency)])
            .collect();
        let _ = writeln!(out, "links: {} directed (raw rate, effective rate, latency)", links.len());
        table(&mut out, &links);
        let ports: Vec<[String; 4]> =
            (0..ranks).map(|c| [format!("port {c}"), gbps(port.raw), gbps(port.rate), String::new()]).collect();
        let _ = writeln!(out, "ports: {ranks} ingress (raw rate, effective rate)");
        table(&mut out, &ports);
    } else {
        let mut classes: Vec<([String; 4], usize)> = Vec::new();
        for l in topo.links() {
            let key = [class(l.kind), gbps(l.params.raw), gbps(l.params.rate), ns(l.params.latency)];
            match classes.iter_mut().find(|(k, _)| *k == key) {
                Some((_, n)) => *n += 1,
                None => classes.push((key, 1)),
            }
        }
        let _ = writeln!(
            out,
            "links: {} directed, in {} class(es) (count x kind, raw rate, effective rate, latency; --links lists each)",
            topo.links().len(),
            classes.len()
        );
        let rows: Vec<[String; 4]> =
            classes.into_iter().map(|([k, raw, rate, lat], n)| [format!("{n} x {k}"), raw, rate, lat]).collect();
        table(&mut out, &rows);
        let _ = writeln!(out, "ports: {ranks} ingress, each {} raw, {} effective", gbps(port.raw), gbps(port.rate));
    }
    if let Some((link, i)) = topo.lookahead() {
        let _ = writeln!(
            out,
            "islands: {} (chips joined without a switch); across a switch a packet's path is booked in two halves and news takes the route's latency; lookahead {} (the least latency into a switch, {})",
            topo.island_count(),
            ns(link.latency),
            topo.links()[i].name()
        );
    }
    let _ = writeln!(
        out,
        "chip paths: {} cores per chip; mte2 {}, mte3 {} per core; hbm {} per chip",
        chip.cores,
        gbps(chip.mte2),
        gbps(chip.mte3),
        gbps(chip.hbm)
    );
    if chip.sdma_channels > 0 {
        let _ = writeln!(out, "sdma: {} channels per chip, {} each", chip.sdma_channels, gbps(chip.sdma));
    }
    if chip.cube_cores > 0 {
        let _ = writeln!(
            out,
            "cube: {} AIC cores per chip; gm->l1 {}, l0c->gm {} per core",
            chip.cube_cores,
            gbps(chip.gm_to_l1),
            gbps(chip.l0c_to_gm)
        );
    }
    Ok(out)
}

/// Resource names of the remote-write path from core 0 of chip `a` to chip `b`:
/// `["mte3 0.0", "link 0->1", "port 1", "hbm 1"]`.
pub fn route(cfg: &FabricConfig, ranks: usize, a: usize, b: usize) -> Result<Vec<String>, FabricConfigError> {
    let (model, path) = remote_write(cfg, ranks, &ChipPaths::unlimited(1), a, b)?;
    Ok(path.iter().map(|&r| model.resource_name(r)).collect())
}

/// The remote-write path from core 0 of chip `a` to chip `b` on one line, with its one-way
/// latency and its bottleneck: `0 -> mte3 0.0 -> link 0->1 -> port 1 -> hbm 1 (latency 500.000 ns,
/// bottleneck 19.600 GB/s at link 0->1)`.
pub fn route_line(
    cfg: &FabricConfig,
    ranks: usize,
    chip: &ChipPaths,
    a: usize,
    b: usize,
) -> Result<String, FabricConfigError> {
    let (model, path) = remote_write(cfg, ranks, chip, a, b)?;
    let mut latency = SimDuration::ZERO;
    let mut slowest: Option<(Bandwidth, u32)> = None;
    for &r in &path {
        let Some((rate, lat)) = model.resource_timing(r) else { continue };
        latency += lat;
        if let Some(rate) = rate.filter(|&x| slowest.is_none_or(|(s, _)| x < s)) {
            slowest = Some((rate, r));
        }
    }
    let hops: Vec<String> = path.iter().map(|&r| model.resource_name(r)).collect();
    let bottleneck = match slowest {
        Some((rate, r)) => format!("{} at {}", gbps(Some(rate)), model.resource_name(r)),
        None => "unlimited".to_string(),
    };
    Ok(format!("{a} -> {} (latency {}, bottleneck {bottleneck})", hops.join(" -> "), ns(latency)))
}

/// A model of `cfg` with the remote-write path from core 0 of `a` to `b` resolved.
fn remote_write(
    cfg: &FabricConfig,
    ranks: usize,
    chip: &ChipPaths,
    a: usize,
    b: usize,
) -> Result<(NetworkModel, Vec<u32>), FabricConfigError> {
    for c in [a, b] {
        if c >= ranks {
            let why = format!("chip {c} is not one of the {ranks} chips (0..{ranks})");
            return Err(err("route", format!("{a} -> {b}"), why));
        }
    }
    let chip = ChipPaths { cores: chip.cores.max(1), ..*chip };
    let mut model = NetworkModel::new(cfg, ranks, &chip)?;
    let id = model.path(&Route { kind: PathKind::RemoteWrite, chip: a, core: 0, peer: b });
    let path = model.path_resources(id).to_vec();
    Ok((model, path))
}

/// Appends rows, columns aligned (name left, numbers right), blank trailing columns dropped.
fn table(out: &mut String, rows: &[[String; 4]]) {
    let mut width = [0; 4];
    for row in rows {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    for row in rows {
        let mut line = format!("  {:<w$}", row[0], w = width[0]);
        for (cell, w) in row.iter().zip(width).skip(1) {
            let _ = write!(line, "  {cell:>w$}");
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
}

/// `19.600 GB/s` (rounded to MB/s), or `unlimited`.
fn gbps(rate: Option<Bandwidth>) -> String {
    match rate {
        Some(b) => {
            let mb = b.bytes_per_s().saturating_add(500_000) / 1_000_000;
            format!("{}.{:03} GB/s", mb / 1000, mb % 1000)
        }
        None => "unlimited".to_string(),
    }
}

/// `500.000 ns` (exact to the picosecond).
fn ns(d: SimDuration) -> String {
    format!("{}.{:03} ns", d.as_ps() / 1000, d.as_ps() % 1000)
}

#[cfg(test)]
mod tests;
