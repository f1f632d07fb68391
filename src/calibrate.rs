//! Calibration: fit the latency and bandwidth of one link class so that simulated times match
//! measured (size, time) points of a benchmark, by least squares with the simulator in the loop.
//!
//! The unknowns are α, the link latency, and β, its byte time, fitted as `ln(1 ns + α)` and
//! `ln β` so both stay positive. The residuals are relative errors `(measured - simulated) /
//! measured`, so small and large messages count alike. Each Levenberg-Marquardt step
//! simulates every point at the current values and at two nudged ones (finite differences:
//! the simulated time is only piecewise smooth, as the bottleneck moves), solves the damped
//! 2x2 normal equations, and keeps the step only if the error falls.

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
    /// Rank 0 gets `size` bytes from rank `peer` with one core, staged through UB in 64 KiB
    /// chunks (pto-isa's TGET bandwidth test); the time is rank 0's dispatch.
    Get { peer: usize },
    /// Rank 0 puts `size` bytes to rank `peer` and notifies; `peer` waits; the time is the
    /// slower dispatch.
    Put { peer: usize },
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

/// `base` with the links of `class` set to latency `alpha_ns` and byte time `beta_ps`.
fn with_link(base: &Config, class: LinkClass, alpha_ns: f64, beta_ps: f64) -> Result<Config, String> {
    let mut cfg = base.clone();
    let eff = cfg.fabric.efficiency;
    let (gbps, lat) = params(&mut cfg, class)?;
    *gbps = 1000.0 / beta_ps / eff;
    *lat = alpha_ns;
    Ok(cfg)
}

/// Simulated time (us) of workload `w` at `size` bytes on the machine `cfg`.
pub fn time_of(cfg: &Config, w: &Workload, size: u64) -> Result<f64, String> {
    match w {
        Workload::Collective(spec) => {
            let r = run_calls(cfg, spec, size, 1, false)?
                .ok_or_else(|| format!("size {size} gives no element per rank"))?;
            Ok(time_per_call(&r, spec.ranks, 0, 1))
        }
        &Workload::Get { peer } => p2p(cfg, true, peer, size),
        &Workload::Put { peer } => p2p(cfg, false, peer, size),
    }
}

/// The rank whose route from rank 0 crosses the links of `class`: 1 for a node's links, the
/// first rank of the next level-(k-1) group for level k.
pub fn crossing_peer(cfg: &Config, class: LinkClass) -> Result<usize, String> {
    let ranks = cfg.machine.ranks;
    let peer = match (&cfg.fabric.topology, class) {
        (_, LinkClass::Node) => 1,
        (TopologyConfig::Hierarchical(h), LinkClass::Level(k)) => {
            let node = match &h.node {
                NodeConfig::FullMesh(m) => m.ranks,
                NodeConfig::Ring(m) => m.ranks,
                NodeConfig::Switch(m) => m.ranks,
                NodeConfig::Torus2d(m) => Some(m.x * m.y),
            };
            let below: usize = h.levels.iter().take(k.saturating_sub(1)).map(|l| l.groups).product();
            node.unwrap_or(ranks).saturating_mul(below)
        }
        (t, LinkClass::Level(k)) => {
            return Err(format!("--link level{k}: a {} topology has no levels; use --link node", t.kind()));
        }
    };
    if peer >= ranks {
        return Err(format!("no rank pair of the {ranks}-rank machine crosses these links"));
    }
    Ok(peer)
}

/// One point-to-point transfer of `size` bytes between ranks 0 and `peer`.
fn p2p(cfg: &Config, get: bool, peer: usize, size: u64) -> Result<f64, String> {
    let e = |e: sim_core::SimError| e.to_string();
    let mut w = cfg.world().map_err(|e| e.to_string())?;
    if peer == 0 || peer >= w.size() {
        return Err(format!("a point-to-point workload needs ranks 0 and {peer}; the machine has {}", w.size()));
    }
    w.set_timing_only().map_err(e)?;
    let dom = w.create_domain("p2p", &[0, peer], sim_core::DomainOptions::default()).map_err(e)?;
    let n = (size / 4).max(1) as usize;
    let buf = w.alloc_window(&dom, "buf", DType::F32, &[1, n]).map_err(e)?;
    let local = w.alloc_tensor("local", DType::F32, &[1, n]).map_err(e)?;
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[2, 1]).map_err(e)?;
    let opts = CopyOpts::new().chunks(1, n.min(16 * 1024));
    // Inside the kernels, peers are ranks of the two-rank domain: `1` is world rank `peer`.
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
        w.dispatch(
            peer,
            Dispatch::kernel("tput_wait", 1, move |c| c.wait(&sig, &[0, 0], 1, WaitCmp::Ge)).in_domain(&dom),
        )
        .map_err(e)?;
    }
    let r = w.run().map_err(e)?;
    Ok(r.dispatches.iter().map(|d| d.device_wall().as_us_f64()).fold(0.0, f64::max))
}

/// The fit's search space: `x = [ln(1 + alpha_ns), ln(beta_ps)]`.
struct Problem<'a> {
    base: &'a Config,
    class: LinkClass,
    w: &'a Workload,
    points: &'a [Point],
}

impl Problem<'_> {
    fn link(x: [f64; 2]) -> (f64, f64) {
        (x[0].exp() - 1.0, x[1].exp())
    }

    /// Relative residuals `(measured - simulated) / measured` at `x`.
    fn residuals(&self, x: [f64; 2]) -> Result<Vec<f64>, String> {
        let (alpha, beta) = Problem::link(x);
        let cfg = with_link(self.base, self.class, alpha, beta)?;
        self.points.iter().map(|p| Ok((p.time_us - time_of(&cfg, self.w, p.size)?) / p.time_us)).collect()
    }
}

fn cost(r: &[f64]) -> f64 {
    r.iter().map(|v| v * v).sum()
}

/// Relative step of the finite differences in x (5% in alpha + 1 ns and in beta).
const NUDGE: f64 = 0.05;
/// Levenberg-Marquardt iterations at most; each simulates every point three times.
const MAX_STEPS: usize = 60;

/// A Jacobian column this small means the parameter no longer changes any time.
const FLAT: f64 = 1e-12;

/// The Levenberg-Marquardt step for normal matrix `a`, gradient `g` and damping `lambda`; a
/// parameter marked `flat` (no effect on the times) stays put.
fn damped_step(a: [[f64; 2]; 2], g: [f64; 2], lambda: f64, flat: [bool; 2]) -> [f64; 2] {
    let m = [a[0][0] * (1.0 + lambda), a[1][1] * (1.0 + lambda)];
    match flat {
        [false, false] => {
            let det = m[0] * m[1] - a[0][1] * a[1][0];
            [(g[0] * m[1] - g[1] * a[0][1]) / det, (m[0] * g[1] - a[1][0] * g[0]) / det]
        }
        [false, true] => [g[0] / m[0], 0.0],
        [true, false] => [0.0, g[1] / m[1]],
        [true, true] => [0.0, 0.0],
    }
}

/// Fits latency and bandwidth of `class` to `points`, starting from `base`'s values.
pub fn fit(base: &Config, class: LinkClass, w: &Workload, points: &[Point]) -> Result<Fit, String> {
    let mut b = base.clone();
    let eff = b.fabric.efficiency;
    let (gbps, lat) = params(&mut b, class)?;
    let pb = Problem { base, class, w, points };
    let mut x = [(1.0 + lat.max(0.0)).ln(), (1000.0 / (*gbps * eff)).ln()];
    let mut r = pb.residuals(x)?;
    let (mut lambda, mut first) = (1e-3, true);
    for _ in 0..MAX_STEPS {
        // Jacobian of the simulated time, i.e. of -residual, by forward differences.
        let ra = pb.residuals([x[0] + NUDGE, x[1]])?;
        let rb = pb.residuals([x[0], x[1] + NUDGE])?;
        let (mut a, mut g) = ([[0.0f64; 2]; 2], [0.0f64; 2]);
        for i in 0..r.len() {
            let j = [(r[i] - ra[i]) / NUDGE, (r[i] - rb[i]) / NUDGE];
            for (k, row) in a.iter_mut().enumerate() {
                row[0] += j[k] * j[0];
                row[1] += j[k] * j[1];
                g[k] += j[k] * r[i];
            }
        }
        let flat = [a[0][0] <= FLAT, a[1][1] <= FLAT];
        if first && (flat[0] || flat[1]) {
            let which = if flat[1] { "bandwidth" } else { "latency" };
            return Err(format!(
                "the link {which} does not change the simulated times at these sizes (another resource is the \
                 bottleneck, or the sizes are all alike); calibrate a link class on the path, or use sizes that \
                 span small and large messages"
            ));
        }
        first = false;
        let mut improved = false;
        while lambda < 1e12 {
            let d = damped_step(a, g, lambda, flat);
            let trial = [x[0] + d[0].clamp(-2.0, 2.0), x[1] + d[1].clamp(-2.0, 2.0)];
            let rt = pb.residuals(trial)?;
            if cost(&rt) < cost(&r) {
                improved = (d[0].abs() + d[1].abs()) > 1e-6;
                (x, r, lambda) = (trial, rt, lambda / 3.0);
                break;
            }
            lambda *= 4.0;
        }
        if !improved {
            break;
        }
    }
    let (alpha, beta) = Problem::link(x);
    let points = points.iter().zip(&r).map(|(p, res)| (p.size, p.time_us, p.time_us * (1.0 - res))).collect();
    Ok(Fit { latency_ns: alpha, gbps: 1000.0 / beta / eff, efficiency: eff, points })
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
#[cfg(test)]
mod recovery {
    use super::*;

    /// Points simulated on `truth`, fitted from the default preset's values.
    fn recover(w: &Workload, class: LinkClass, truth: &Config, base: &Config) -> Fit {
        let sizes = [4u64 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20];
        let points: Vec<Point> =
            sizes.iter().map(|&size| Point { size, time_us: time_of(truth, w, size).unwrap() }).collect();
        fit(base, class, w, &points).unwrap()
    }

    #[test]
    fn a_fit_recovers_the_link_that_made_the_points() {
        let base = Config::default_preset();
        // a2a3 starts at 500 ns and 28 GB/s raw.
        let truth = with_link(&base, LinkClass::Node, 700.0, 1000.0 / (25.0 * 0.7)).unwrap();
        for w in [Workload::Put { peer: 1 }, Workload::Get { peer: 1 }] {
            let f = recover(&w, LinkClass::Node, &truth, &base);
            assert!((f.latency_ns - 700.0).abs() < 7.0, "{w:?}: {f:?}");
            assert!((f.gbps - 25.0).abs() < 0.25, "{w:?}: {f:?}");
            assert!(f.rms_error() < 1e-3, "{w:?}: {f:?}");
        }
    }

    #[test]
    fn a_fit_of_a_level_uses_a_rank_pair_across_it() {
        let base = Config::preset("two-node").unwrap();
        assert_eq!(crossing_peer(&base, LinkClass::Node), Ok(1));
        assert_eq!(crossing_peer(&base, LinkClass::Level(1)), Ok(8));
        assert!(crossing_peer(&base, LinkClass::Level(2)).unwrap_err().contains("no rank pair"));
        let truth = with_link(&base, LinkClass::Level(1), 900.0, 1000.0 / (20.0 * 0.7)).unwrap();
        let f = recover(&Workload::Put { peer: 8 }, LinkClass::Level(1), &truth, &base);
        assert!((f.latency_ns - 900.0).abs() < 9.0, "{f:?}");
        assert!((f.gbps - 20.0).abs() < 0.2, "{f:?}");
    }

    #[test]
    fn a_link_off_the_path_cannot_be_fitted() {
        let base = Config::preset("two-node").unwrap();
        let points = [Point { size: 4096, time_us: 3.0 }, Point { size: 1 << 20, time_us: 80.0 }];
        let e = fit(&base, LinkClass::Level(1), &Workload::Put { peer: 1 }, &points).unwrap_err();
        assert!(e.contains("does not change the simulated times"), "{e}");
        let e = fit(&Config::default_preset(), LinkClass::Level(1), &Workload::Put { peer: 1 }, &points).unwrap_err();
        assert!(e.contains("full_mesh topology has no levels"), "{e}");
    }
}
