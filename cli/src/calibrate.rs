//! Calibration: fit the latency and bandwidth of one link class so that simulated times match
//! measured (size, time) points of one or more benchmarks, by least squares with the simulator
//! in the loop.
//!
//! The unknowns are α, the link latency, and β, its byte time, fitted as `ln(1 ns + α)` and
//! `ln β` inside a box (α from 0 to 10 ms, rates from 0.001 to 1e6 GB/s), so a step never
//! proposes a negative latency or an infinite rate. The residuals are relative errors
//! `(measured - simulated) / measured` over every point of every table, so small and large
//! messages, and every table, count alike. Each Levenberg-Marquardt step simulates every point
//! at the current values and at two nudged ones (finite differences: the simulated time is only
//! piecewise smooth, as the bottleneck moves), solves the damped 2x2 normal equations, and keeps
//! the step only if the error falls. Tables that cannot tell latency from bandwidth (one size,
//! a barrier, time that does not grow with size) are refused up front ([`check_fittable`]).

use crate::measurements::Table;
use crate::workload::Workload;
use interconnect::NoSuchLinks;
use ranksim::Config;

/// Which links the fit adjusts (the topology answers where they are: see
/// [`interconnect::TopologyConfig::link_mut`]).
pub use interconnect::LinkClass;

/// One measured point.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Point {
    /// Message size in bytes.
    pub size: u64,
    /// Measured time per call, microseconds.
    pub time_us: f64,
}

/// One measured table to fit: its name, the workload that reproduces it, its points as times.
#[derive(Clone, Debug)]
pub struct Measured {
    /// The table's name (file stem).
    pub name: String,
    /// The simulated program that reproduces it.
    pub workload: Workload,
    /// Its measured points.
    pub points: Vec<Point>,
}

impl Measured {
    /// The points of `table` as times (a bus-bandwidth table is converted through the
    /// workload's nccl-tests factor).
    pub fn from_table(table: &Table, workload: Workload) -> Result<Measured, String> {
        let points = table
            .rows
            .iter()
            .map(|r| {
                let time_us = workload
                    .time_from(table.unit, r.size, r.value)
                    .map_err(|e| format!("{} line {}: {e}", table.name, r.line))?;
                Ok(Point { size: r.size, time_us })
            })
            .collect::<Result<_, String>>()?;
        Ok(Measured { name: table.name.clone(), workload, points })
    }
}

/// The fit of one table: per point (size, measured us, simulated us with the fitted values).
#[derive(Clone, Debug)]
pub struct FitTable {
    /// The table's name.
    pub name: String,
    /// `(size, measured us, simulated us)` per point.
    pub points: Vec<(u64, f64, f64)>,
}

impl FitTable {
    /// Root-mean-square relative error over the table's points.
    pub fn rms_error(&self) -> f64 {
        rms_relative(&self.points)
    }
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
    /// One entry per fitted table, in the order given.
    pub tables: Vec<FitTable>,
    /// What the fit could not do (a parameter held at its bound), for the user to read.
    pub warnings: Vec<String>,
}

impl Fit {
    /// Root-mean-square relative error over every point of every table (what the fit minimises).
    pub fn rms_error(&self) -> f64 {
        let all: Vec<(u64, f64, f64)> = self.tables.iter().flat_map(|t| t.points.iter().copied()).collect();
        rms_relative(&all)
    }
}

/// `sqrt(mean(((simulated - measured) / measured)^2))` over (size, measured, simulated).
fn rms_relative(points: &[(u64, f64, f64)]) -> f64 {
    let n = points.len().max(1) as f64;
    (points.iter().map(|p| ((p.2 - p.1) / p.1).powi(2)).sum::<f64>() / n).sqrt()
}

/// Refuses tables from which the link's latency and bandwidth cannot be told apart, saying what
/// to add or change: a barrier (no bytes), a single measured size, time that does not grow
/// with size.
pub fn check_fittable(series: &[Measured]) -> Result<(), String> {
    if series.is_empty() {
        return Err("no table to fit; pass --table FILE".into());
    }
    for s in series {
        if s.workload.kind() == Some(collectives::Kind::Barrier) {
            return Err(format!(
                "{}: a barrier moves no bytes, so it says nothing about the link bandwidth; fit a get, a put or a \
                 collective that carries data",
                s.name
            ));
        }
        rises_with_size(s)?;
    }
    let mut sizes: Vec<u64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.size)).collect();
    sizes.sort_unstable();
    sizes.dedup();
    if sizes.len() < 2 {
        return Err(format!(
            "every point is at one size ({} B): one size cannot separate the link latency from its bandwidth; add \
             rows at several sizes, from a few KiB (latency-bound) to MiBs (bandwidth-bound)",
            sizes.first().copied().unwrap_or(0)
        ));
    }
    Ok(())
}

/// A table of two or more sizes must take longer at its largest size than at its smallest.
fn rises_with_size(s: &Measured) -> Result<(), String> {
    let (Some(first), Some(last)) = (s.points.first(), s.points.last()) else {
        return Ok(());
    };
    if s.points.len() >= 2 && last.time_us <= first.time_us {
        return Err(format!(
            "{}: the time does not grow with size ({} us at {} B, {} us at {} B); latency plus size / bandwidth \
             cannot fit a flat or falling curve: check that the column is time per call in microseconds (or \
             busbw_gbps with that header) and the sizes are bytes",
            s.name, first.time_us, first.size, last.time_us, last.size
        ));
    }
    Ok(())
}

/// The (link_gbps, link_latency_ns) of `class` in `cfg`.
fn params(cfg: &mut Config, class: LinkClass) -> Result<(&mut f64, &mut f64), String> {
    cfg.fabric.topology.link_mut(class).map_err(no_such_links)
}

/// The `--link` error for a class the topology does not have.
fn no_such_links(e: NoSuchLinks) -> String {
    match e {
        NoSuchLinks::NoSuchLevel { level, levels } => {
            format!("--link level{level}: the topology has levels 1..={levels}")
        }
        NoSuchLinks::NoLevels { kind, level } => {
            format!("--link level{level}: a {kind} topology has no levels; use --link node")
        }
    }
}

/// `base` with the links of `class` set to latency `alpha_ns` and byte time `beta_ps`.
fn with_link(base: &Config, class: LinkClass, alpha_ns: f64, beta_ps: f64) -> Result<Config, String> {
    let mut cfg = base.clone();
    let eff = cfg.fabric.topology.efficiency_of(class, cfg.fabric.efficiency);
    let (gbps, lat) = params(&mut cfg, class)?;
    *gbps = 1000.0 / beta_ps / eff;
    *lat = alpha_ns;
    Ok(cfg)
}

/// The rank whose route from rank 0 crosses the links of `class`: 1 for a node's links, the
/// first rank of the next level-(k-1) group for level k.
pub fn crossing_peer(cfg: &Config, class: LinkClass) -> Result<usize, String> {
    let ranks = cfg.machine.ranks;
    let peer = cfg.fabric.topology.crossing_peer(class, ranks).map_err(no_such_links)?;
    if peer >= ranks {
        return Err(format!("no rank pair of the {ranks}-rank machine crosses these links"));
    }
    Ok(peer)
}

/// The fit's search space: `x = [ln(1 + alpha_ns), ln(beta_ps)]`, kept inside [`BOUNDS`] so
/// the latency never goes negative and the rate stays finite.
struct Problem<'a> {
    base: &'a Config,
    class: LinkClass,
    series: &'a [Measured],
}

/// The box `x` stays in: latency 0 ns ..= 10 ms; byte time 1e-3 ps (1e6 GB/s) ..= 1e6 ps
/// (0.001 GB/s).
const BOUNDS: [(f64, f64); 2] = [(0.0, 16.118_095_65), (-6.907_755_28, 13.815_510_56)];

impl Problem<'_> {
    fn link(x: [f64; 2]) -> (f64, f64) {
        (x[0].exp() - 1.0, x[1].exp())
    }

    fn clamp(x: [f64; 2]) -> [f64; 2] {
        [x[0].clamp(BOUNDS[0].0, BOUNDS[0].1), x[1].clamp(BOUNDS[1].0, BOUNDS[1].1)]
    }

    /// Relative residuals `(measured - simulated) / measured` at `x`, table after table.
    fn residuals(&self, x: [f64; 2]) -> Result<Vec<f64>, String> {
        let (alpha, beta) = Problem::link(x);
        let cfg = with_link(self.base, self.class, alpha, beta)?;
        let mut out = Vec::new();
        for s in self.series {
            for p in &s.points {
                out.push((p.time_us - s.workload.time_us(&cfg, p.size)?) / p.time_us);
            }
        }
        Ok(out)
    }

    /// The residuals at a trial point, or `None` when the simulator rejects it (such a step
    /// is simply not taken).
    fn trial(&self, x: [f64; 2]) -> Option<Vec<f64>> {
        self.residuals(x).ok().filter(|r| r.iter().all(|v| v.is_finite()))
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

/// The normal matrix `J^T J` and gradient `J^T r` at `x`, by forward differences.
fn normal_equations(pb: &Problem, x: [f64; 2], r: &[f64]) -> Result<([[f64; 2]; 2], [f64; 2]), String> {
    // Nudge inward at the upper bound so the nudged point stays in the box.
    let step = |k: usize| if x[k] + NUDGE > BOUNDS[k].1 { -NUDGE } else { NUDGE };
    let ra = pb.residuals([x[0] + step(0), x[1]])?;
    let rb = pb.residuals([x[0], x[1] + step(1)])?;
    let (mut a, mut g) = ([[0.0f64; 2]; 2], [0.0f64; 2]);
    for i in 0..r.len() {
        // Jacobian of the simulated time, i.e. of -residual.
        let j = [(r[i] - ra[i]) / step(0), (r[i] - rb[i]) / step(1)];
        for (k, row) in a.iter_mut().enumerate() {
            row[0] += j[k] * j[0];
            row[1] += j[k] * j[1];
            g[k] += j[k] * r[i];
        }
    }
    Ok((a, g))
}

/// Fits latency and bandwidth of `class` to every table of `series` at once (minimising the
/// combined relative error, every point weighted alike), starting from `base`'s values.
pub fn fit(base: &Config, class: LinkClass, series: &[Measured]) -> Result<Fit, String> {
    check_fittable(series)?;
    let mut b = base.clone();
    let eff = b.fabric.topology.efficiency_of(class, b.fabric.efficiency);
    let (gbps, lat) = params(&mut b, class)?;
    let pb = Problem { base, class, series };
    let mut x = Problem::clamp([(1.0 + lat.max(0.0)).ln(), (1000.0 / (*gbps * eff)).ln()]);
    let mut r = pb.residuals(x)?;
    let mut lambda = 1e-3;
    for step in 0..MAX_STEPS {
        let (a, g) = normal_equations(&pb, x, &r)?;
        let flat = [a[0][0].is_nan() || a[0][0] <= FLAT, a[1][1].is_nan() || a[1][1] <= FLAT];
        if step == 0 && (flat[0] || flat[1]) {
            let which = if flat[1] { "bandwidth" } else { "latency" };
            return Err(format!(
                "the link {which} does not change the simulated times at these sizes (another resource is the \
                 bottleneck, or the sizes are all alike); calibrate a link class on the path, or use sizes that \
                 span small and large messages"
            ));
        }
        let mut improved = false;
        while lambda < 1e12 {
            let d = damped_step(a, g, lambda, flat);
            let trial = Problem::clamp([x[0] + d[0].clamp(-2.0, 2.0), x[1] + d[1].clamp(-2.0, 2.0)]);
            match pb.trial(trial) {
                Some(rt) if cost(&rt) < cost(&r) => {
                    improved = (trial[0] - x[0]).abs() + (trial[1] - x[1]).abs() > 1e-6;
                    (x, r, lambda) = (trial, rt, lambda / 3.0);
                    break;
                }
                _ => lambda *= 4.0,
            }
        }
        if !improved {
            break;
        }
    }
    finish(series, x, &r, eff)
}

/// Checks the fitted values and builds the result.
fn finish(series: &[Measured], x: [f64; 2], r: &[f64], eff: f64) -> Result<Fit, String> {
    let (alpha, beta) = Problem::link(x);
    let gbps = 1000.0 / beta / eff;
    if !(alpha.is_finite() && alpha >= 0.0 && gbps.is_finite() && gbps > 0.0 && r.iter().all(|v| v.is_finite())) {
        return Err(format!(
            "the fit did not converge to usable values (latency {alpha} ns, rate {gbps} GB/s); check the tables' \
             units and the workloads"
        ));
    }
    if x[1] <= BOUNDS[1].0 || x[1] >= BOUNDS[1].1 || x[0] >= BOUNDS[0].1 {
        return Err(format!(
            "the fit ran to the edge of its search space (latency {alpha:.1} ns, rate {gbps:.6} GB/s): these times \
             do not follow latency + size / bandwidth of these links; check the units (us per call, bytes) and that \
             the workload is the program that was measured"
        ));
    }
    let mut res = r.iter();
    let tables = series
        .iter()
        .map(|s| FitTable {
            name: s.name.clone(),
            points: s
                .points
                .iter()
                .map(|p| (p.size, p.time_us, p.time_us * (1.0 - res.next().copied().unwrap_or(0.0))))
                .collect(),
        })
        .collect();
    let mut warnings = Vec::new();
    if x[0] <= BOUNDS[0].0 {
        warnings.push(
            "the fitted latency is held at its floor of 0 ns: the measured small-message times are shorter than \
             the rest of the simulated path takes, so the link latency cannot explain them (look at the per-point \
             errors of the smallest sizes)"
                .to_string(),
        );
    }
    Ok(Fit { latency_ns: alpha, gbps, efficiency: eff, tables, warnings })
}

#[cfg(test)]
mod refusals {
    use super::*;

    fn series(name: &str, w: Workload, pts: &[(u64, f64)]) -> Measured {
        Measured {
            name: name.into(),
            workload: w,
            points: pts.iter().map(|&(size, time_us)| Point { size, time_us }).collect(),
        }
    }

    const GET: Workload = Workload::Get { peer: 1, chunk: 65536 };

    fn collective(kind: collectives::Kind) -> Workload {
        let line = crate::measurements::WorkloadLine::new(crate::measurements::Program::Collective(kind));
        Workload::resolve(&line, &Config::default_preset(), 1).unwrap()
    }

    #[test]
    fn what_cannot_be_determined_is_refused_with_what_to_add() {
        let cfg = Config::default_preset();
        let fit1 = |s: &[Measured]| fit(&cfg, LinkClass::Node, s).unwrap_err();
        let e = fit1(&[series("one", GET, &[(4096, 1.0)])]);
        assert!(e.contains("every point is at one size (4096 B)") && e.contains("add rows at several sizes"), "{e}");
        let e = fit1(&[series("b", collective(collectives::Kind::Barrier), &[(4096, 1.0), (8192, 2.0)])]);
        assert!(e.starts_with("b: a barrier moves no bytes"), "{e}");
        let e = fit1(&[series("flat", GET, &[(4096, 5.0), (1 << 20, 5.0)])]);
        assert!(e.starts_with("flat: the time does not grow with size"), "{e}");
        let e = fit1(&[series("down", GET, &[(4096, 9.0), (65536, 12.0), (1 << 20, 5.0)])]);
        assert!(e.contains("cannot fit a flat or falling curve"), "{e}");
        assert!(fit1(&[]).contains("no table to fit"));
        // One size per table is fine when the tables together span sizes.
        assert!(check_fittable(&[series("a", GET, &[(4096, 1.0)]), series("b", GET, &[(1 << 20, 50.0)])]).is_ok());
    }

    #[test]
    fn a_busbw_table_becomes_times() {
        let t = crate::measurements::parse("t", "size,busbw_gbps\n1M,10\n").unwrap();
        let s = Measured::from_table(&t, collective(collectives::Kind::AllGather)).unwrap();
        // 8 ranks: busbw = algbw * 7/8, so algbw 80/7 GB/s; 1 MiB takes 1048576 * 7 / 80e3 us.
        assert!((s.points[0].time_us - 1048576.0 * 7.0 / 80e3).abs() < 1e-9, "{s:?}");
        let e = Measured::from_table(&t, GET).unwrap_err();
        assert!(e.starts_with("t line 2: get (one core") && e.contains("has no bus bandwidth"), "{e}");
    }

    #[test]
    fn fitted_values_out_of_reach_are_reported_not_passed_to_the_config() {
        let cfg = Config::default_preset();
        // 4 KiB in 10 ns would need a negative link latency: it stays at 0 and says so.
        let f = fit(&cfg, LinkClass::Node, &[series("fast", GET, &[(4096, 0.01), (1 << 20, 50.0)])]).unwrap();
        assert_eq!(f.latency_ns, 0.0, "{f:?}");
        assert!(f.gbps.is_finite() && f.gbps > 0.0, "{f:?}");
        assert!(f.warnings.iter().any(|w| w.contains("held at its floor of 0 ns")), "{f:?}");
        // 2 us per byte is slower than the slowest rate the search allows (0.001 GB/s).
        let e = fit(&cfg, LinkClass::Node, &[series("slow", GET, &[(4096, 1e4), (1 << 20, 2e6)])]).unwrap_err();
        assert!(e.contains("ran to the edge of its search space"), "{e}");
    }
}

#[cfg(test)]
mod recovery {
    use super::*;

    /// Points simulated on `truth` at `sizes`.
    fn simulated(name: &str, w: &Workload, truth: &Config, sizes: &[u64]) -> Measured {
        let points = sizes.iter().map(|&size| Point { size, time_us: w.time_us(truth, size).unwrap() }).collect();
        Measured { name: name.into(), workload: w.clone(), points }
    }

    /// Points simulated on `truth`, fitted from `base`'s values.
    fn recover(w: &Workload, class: LinkClass, truth: &Config, base: &Config) -> Fit {
        let sizes = [4u64 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20];
        fit(base, class, &[simulated("t", w, truth, &sizes)]).unwrap()
    }

    #[test]
    fn a_fit_recovers_the_link_that_made_the_points() {
        let base = Config::default_preset();
        // a2a3 starts at 500 ns and 28 GB/s raw.
        let truth = with_link(&base, LinkClass::Node, 700.0, 1000.0 / (25.0 * 0.7)).unwrap();
        for w in [Workload::Put { peer: 1, chunk: 65536 }, Workload::Get { peer: 1, chunk: 65536 }] {
            let f = recover(&w, LinkClass::Node, &truth, &base);
            assert!((f.latency_ns - 700.0).abs() < 7.0, "{w:?}: {f:?}");
            assert!((f.gbps - 25.0).abs() < 0.25, "{w:?}: {f:?}");
            assert!(f.rms_error() < 1e-3, "{w:?}: {f:?}");
        }
    }

    #[test]
    fn a_fit_of_two_tables_at_once_recovers_the_link() {
        let base = Config::default_preset();
        let truth = with_link(&base, LinkClass::Node, 800.0, 1000.0 / (22.0 * 0.7)).unwrap();
        let put = simulated("put", &Workload::Put { peer: 1, chunk: 65536 }, &truth, &[4 << 10, 1 << 20]);
        let line =
            crate::measurements::WorkloadLine::parse("collective allreduce mode=two-shot core_num=8 ranks=2").unwrap();
        let ar = Workload::resolve(&line, &base, 1).unwrap();
        let ar = simulated("allreduce", &ar, &truth, &[64 << 10, 4 << 20]);
        let f = fit(&base, LinkClass::Node, &[put, ar]).unwrap();
        assert!((f.latency_ns - 800.0).abs() < 8.0, "{f:?}");
        assert!((f.gbps - 22.0).abs() < 0.22, "{f:?}");
        assert_eq!(f.tables.len(), 2);
        assert!(f.tables.iter().all(|t| t.rms_error() < 1e-3 && t.points.len() == 2), "{f:?}");
    }

    #[test]
    fn a_fit_of_a_level_uses_a_rank_pair_across_it() {
        let base = Config::preset("two-node").unwrap();
        assert_eq!(crossing_peer(&base, LinkClass::Node), Ok(1));
        assert_eq!(crossing_peer(&base, LinkClass::Level(1)), Ok(8));
        assert!(crossing_peer(&base, LinkClass::Level(2)).unwrap_err().contains("no rank pair"));
        // The RoCE level has its own efficiency (0.955), which the fit uses, not the fabric's.
        let eff = base.fabric.topology.efficiency_of(LinkClass::Level(1), base.fabric.efficiency);
        assert_eq!(eff, 0.955);
        let truth = with_link(&base, LinkClass::Level(1), 900.0, 1000.0 / (20.0 * eff)).unwrap();
        let f = recover(&Workload::Put { peer: 8, chunk: 65536 }, LinkClass::Level(1), &truth, &base);
        assert!((f.latency_ns - 900.0).abs() < 9.0, "{f:?}");
        assert!((f.gbps - 20.0).abs() < 0.2, "{f:?}");
    }

    #[test]
    fn a_link_off_the_path_cannot_be_fitted() {
        let base = Config::preset("two-node").unwrap();
        let pts = vec![Point { size: 4096, time_us: 3.0 }, Point { size: 1 << 20, time_us: 80.0 }];
        let s =
            |peer| [Measured { name: "t".into(), workload: Workload::Put { peer, chunk: 65536 }, points: pts.clone() }];
        let e = fit(&base, LinkClass::Level(1), &s(1)).unwrap_err();
        assert!(e.contains("does not change the simulated times"), "{e}");
        let e = fit(&Config::default_preset(), LinkClass::Level(1), &s(1)).unwrap_err();
        assert!(e.contains("full_mesh topology has no levels"), "{e}");
    }
}
