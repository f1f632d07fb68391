//! Calibration: fit the latency and bandwidth of one link class so that simulated times match
//! measured (size, time) points of a benchmark, by least squares with the simulator in the loop.
//!
//! The model is linear in the two unknowns to first order: `T(s) ~ T0(s) + dT/dα (α - α0) +
//! dT/dβ (β - β0)`, with α the link latency and β its byte time. Each Gauss-Newton step
//! simulates every point at the current values and at two nudged ones to get the
//! sensitivities, then solves the 2x2 normal equations (relative errors, damped steps).

use crate::Config;
use crate::sweep::{SweepSpec, run_calls, time_per_call};
use interconnect::{NodeConfig, TopologyConfig};
use sim_core::{CopyOpts, DType, Dispatch, NotifyOp, WaitCmp};

/// Which links the fit adjusts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LinkClass {
    /// The links of a flat topology, or of a hierarchical topology's nodes.
    Node,
    /// The NICs of level k (1-based) of a hierarchical topology.
    Level(usize),
}

/// The benchmark the measured points come from.
#[derive(Clone, Debug)]
pub enum Workload {
    /// Rank 0 gets `size` bytes from rank 1 with one core, staged through UB in 64 KiB chunks
    /// (pto-isa's TGET bandwidth test); the time is rank 0's dispatch.
    Get,
    /// Rank 0 puts `size` bytes to rank 1 and notifies; rank 1 waits; the time is the slower
    /// dispatch.
    Put,
    /// A collective as `sweep` runs it; the time is the slowest rank's dispatch.
    Collective(SweepSpec),
}

/// One measured point.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Point {
    pub size: u64,
    pub time_us: f64,
}

/// The result of a fit.
#[derive(Clone, Debug)]
pub struct Fit {
    /// Link latency, ns.
    pub latency_ns: f64,
    /// Raw link rate, GB/s (before the fabric's efficiency).
    pub gbps: f64,
    /// The fabric's efficiency.
    pub efficiency: f64,
    /// Per point: (size, measured us, simulated us with the fitted values).
    pub points: Vec<(u64, f64, f64)>,
}

impl Fit {
    /// Root-mean-square relative error over the points.
    pub fn rms_error(&self) -> f64 {
        let n = self.points.len().max(1) as f64;
        (self.points.iter().map(|p| ((p.2 - p.1) / p.1).powi(2)).sum::<f64>() / n).sqrt()
    }
}

/// Parses `size,time_us` lines (sizes with K/M/G suffixes; `#` comments and a header line are
/// skipped).
pub fn parse_table(text: &str) -> Result<Vec<Point>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split([',', ';', '\t']).map(str::trim).collect();
        if cols.len() < 2 {
            return Err(format!("line {}: `{line}`: expected `size,time_us`", i + 1));
        }
        let size = match crate::report::parse_size(cols[0]) {
            Ok(s) => s,
            Err(_) if out.is_empty() && cols[0].parse::<f64>().is_err() => continue, // header
            Err(e) => return Err(format!("line {}: {e}", i + 1)),
        };
        let time_us: f64 = cols[1]
            .parse()
            .map_err(|_| format!("line {}: time `{}` is not a number of microseconds", i + 1, cols[1]))?;
        if !(time_us > 0.0 && time_us.is_finite()) {
            return Err(format!("line {}: time {time_us} must be positive", i + 1));
        }
        out.push(Point { size, time_us });
    }
    if out.len() < 2 {
        return Err(format!("the table has {} point(s); a fit of latency and bandwidth needs at least 2", out.len()));
    }
    Ok(out)
}

/// The (link_gbps, link_latency_ns) of `class` in `cfg`.
fn params(cfg: &mut Config, class: LinkClass) -> Result<(&mut f64, &mut f64), String> {
    match (&mut cfg.fabric.topology, class) {
        (TopologyConfig::FullMesh(m), LinkClass::Node) => Ok((&mut m.link_gbps, &mut m.link_latency_ns)),
        (TopologyConfig::Ring(m), LinkClass::Node) => Ok((&mut m.link_gbps, &mut m.link_latency_ns)),
        (TopologyConfig::Torus2d(m), LinkClass::Node) => Ok((&mut m.link_gbps, &mut m.link_latency_ns)),
        (TopologyConfig::Switch(m), LinkClass::Node) => Ok((&mut m.link_gbps, &mut m.link_latency_ns)),
        (TopologyConfig::Hierarchical(h), LinkClass::Node) => Ok(node_params(&mut h.node)),
        (TopologyConfig::Hierarchical(h), LinkClass::Level(k)) => {
            let n = h.levels.len();
            let l = h
                .levels
                .get_mut(k.wrapping_sub(1))
                .ok_or_else(|| format!("--link level{k}: the topology has levels 1..={n}"))?;
            Ok((&mut l.nic_gbps, &mut l.nic_latency_ns))
        }
        (t, LinkClass::Level(k)) => {
            Err(format!("--link level{k}: a {} topology has no levels; use --link node", t.kind()))
        }
    }
}

fn node_params(n: &mut NodeConfig) -> (&mut f64, &mut f64) {
    match n {
        NodeConfig::FullMesh(m) => (&mut m.link_gbps, &mut m.link_latency_ns),
        NodeConfig::Ring(m) => (&mut m.link_gbps, &mut m.link_latency_ns),
        NodeConfig::Torus2d(m) => (&mut m.link_gbps, &mut m.link_latency_ns),
        NodeConfig::Switch(m) => (&mut m.link_gbps, &mut m.link_latency_ns),
    }
}

/// Simulated time (us) of one point with link latency `alpha_ns` and byte time `beta_ps`.
fn simulate(
    base: &Config,
    class: LinkClass,
    w: &Workload,
    size: u64,
    alpha_ns: f64,
    beta_ps: f64,
) -> Result<f64, String> {
    let mut cfg = base.clone();
    let eff = cfg.fabric.efficiency;
    let (gbps, lat) = params(&mut cfg, class)?;
    *gbps = 1000.0 / beta_ps / eff;
    *lat = alpha_ns;
    match w {
        Workload::Collective(spec) => {
            let r = run_calls(&cfg, spec, size, 1, false)?
                .ok_or_else(|| format!("size {size} gives no element per rank"))?;
            Ok(time_per_call(&r, spec.ranks, 0, 1))
        }
        Workload::Get | Workload::Put => p2p(&cfg, matches!(w, Workload::Get), size),
    }
}

/// One point-to-point transfer of `size` bytes between ranks 0 and 1.
fn p2p(cfg: &Config, get: bool, size: u64) -> Result<f64, String> {
    let e = |e: sim_core::SimError| e.to_string();
    let mut w = cfg.world().map_err(|e| e.to_string())?;
    if w.size() < 2 {
        return Err("a point-to-point workload needs at least 2 ranks".into());
    }
    w.set_timing_only().map_err(e)?;
    let dom = w.create_domain("p2p", &[0, 1], sim_core::DomainOptions::default()).map_err(e)?;
    let n = (size / 4).max(1) as usize;
    let buf = w.alloc_window(&dom, "buf", DType::F32, &[1, n]).map_err(e)?;
    let local = w.alloc_tensor("local", DType::F32, &[1, n]).map_err(e)?;
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[2, 1]).map_err(e)?;
    let opts = CopyOpts::new().chunks(1, n.min(16 * 1024));
    if get {
        w.dispatch(0, Dispatch::kernel("tget", 1, move |c| c.get(&local, 1, &buf, &opts)).in_domain(&dom))
            .map_err(e)?;
    } else {
        let (b, s) = (buf.clone(), sig.clone());
        w.dispatch(
            0,
            Dispatch::kernel("tput", 1, move |c| {
                c.put(&b, 1, &local, &opts)?;
                c.notify(&s, 1, &[0, 0], 1, NotifyOp::AtomicAdd)
            })
            .in_domain(&dom),
        )
        .map_err(e)?;
        w.dispatch(1, Dispatch::kernel("tput_wait", 1, move |c| c.wait(&sig, &[0, 0], 1, WaitCmp::Ge)).in_domain(&dom))
            .map_err(e)?;
    }
    let r = w.run().map_err(e)?;
    Ok(r.dispatches.iter().map(|d| d.device_wall().as_us_f64()).fold(0.0, f64::max))
}

/// Fits latency and bandwidth of `class` to `points`, starting from `base`'s values.
pub fn fit(base: &Config, class: LinkClass, w: &Workload, points: &[Point]) -> Result<Fit, String> {
    let mut b = base.clone();
    let eff = b.fabric.efficiency;
    let (gbps, lat) = params(&mut b, class)?;
    let (mut alpha, mut beta) = (*lat, 1000.0 / (*gbps * eff));
    let mut first = true;
    for _ in 0..8 {
        let (da, db) = ((alpha * 0.1).max(50.0), beta * 0.1);
        let mut ata = [[0.0f64; 2]; 2];
        let mut atr = [0.0f64; 2];
        for p in points {
            let t0 = simulate(base, class, w, p.size, alpha, beta)?;
            let sa = (simulate(base, class, w, p.size, alpha + da, beta)? - t0) / da;
            let sb = (simulate(base, class, w, p.size, alpha, beta + db)? - t0) / db;
            // Weight by 1/measured so every point counts by its relative error.
            let wgt = 1.0 / p.time_us;
            let (ra, rb, r) = (sa * wgt, sb * wgt, (p.time_us - t0) * wgt);
            ata[0][0] += ra * ra;
            ata[0][1] += ra * rb;
            ata[1][1] += rb * rb;
            atr[0] += ra * r;
            atr[1] += rb * r;
        }
        ata[1][0] = ata[0][1];
        let det = ata[0][0] * ata[1][1] - ata[0][1] * ata[1][0];
        if det.abs() <= 1e-12 * ata[0][0] * ata[1][1] || det == 0.0 {
            if first {
                return Err("the points do not tell latency and bandwidth apart (the times do not depend on both); use sizes that span small and large messages".into());
            }
            break;
        }
        first = false;
        let dalpha = (atr[0] * ata[1][1] - atr[1] * ata[0][1]) / det;
        let dbeta = (ata[0][0] * atr[1] - ata[1][0] * atr[0]) / det;
        // Damped steps: the model is only locally linear (the bottleneck can move), so a step
        // changes the byte time by at most 2x and the latency by at most max(latency, 1 us).
        alpha = (alpha + dalpha.clamp(-alpha, alpha.max(1000.0))).max(0.0);
        beta = (beta + dbeta).clamp(beta / 2.0, beta * 2.0);
    }
    let fitted: Vec<(u64, f64, f64)> = points
        .iter()
        .map(|p| Ok((p.size, p.time_us, simulate(base, class, w, p.size, alpha, beta)?)))
        .collect::<Result<_, String>>()?;
    Ok(Fit { latency_ns: alpha, gbps: 1000.0 / beta / eff, efficiency: eff, points: fitted })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_parse_with_headers_comments_and_suffixes() {
        let t = parse_table("# measured\nsize,time_us\n4K, 0.9\n64K,2.5 # note\n1M;40\n").unwrap();
        assert_eq!(
            t,
            vec![
                Point { size: 4096, time_us: 0.9 },
                Point { size: 65536, time_us: 2.5 },
                Point { size: 1 << 20, time_us: 40.0 }
            ]
        );
        assert!(parse_table("4K,1\n").unwrap_err().contains("at least 2"));
        assert!(parse_table("4K,1\n8K,-2\n").unwrap_err().contains("line 2"));
        assert!(parse_table("4K,1\n8Q,2\n").unwrap_err().contains("line 2"));
    }
}
