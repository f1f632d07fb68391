//! One point of a `sweep`: run a collective at one message size on a fresh world, time it the
//! way PyPTO's benchmark does (per call, the slowest rank's device wall), and check every
//! element against an exact golden.
//!
//! Inputs are small integers, so every reduction is exact in every dtype and `#wrong` counts
//! real errors, never rounding. With `--iters`/`--warmup` above one call the data would be
//! reduced again and again, so results are checked on a one-call run and timed on a
//! timing-only run of all calls (times do not depend on payload).

use crate::Config;
use crate::custom::{self, Collective, Measure, Wrong};
use crate::formats::{self, ResultRow};
use collectives::{Call, CallBuffers, Kind, Mode, Path};
use sim_core::{DType, Domain, Jitter, Progress, ReduceOp, RunReport, SimResult, World};

/// What a sweep (or `bench`, or a `# workload:` line) runs: one collective call, the
/// workload [`collectives::Call`] describes, and how the run repeats and perturbs it. The
/// run-level knobs stay here rather than in `Call`: they describe a measurement of the call,
/// not the collective, and the collectives crate never reads them.
#[derive(Clone, Debug)]
pub struct SweepSpec {
    /// The collective call.
    pub call: Call,
    /// Measured calls per size.
    pub iters: u32,
    /// Calls before the measured ones.
    pub warmup: u32,
    /// Seeded perturbation of the run, if any.
    pub jitter: Option<Jitter>,
    /// Skip payload bytes (no validation).
    pub timing_only: bool,
}

/// The most timed calls (`-n`) and, separately, warmup calls (`-w`) per size: a bound that
/// keeps a sweep finite and its sums far from any overflow.
pub const MAX_CALLS: u32 = 10_000;

/// The largest message size with payload (1 GiB: every rank holds its buffers in memory).
pub const MAX_SIZE_PAYLOAD: u64 = 1 << 30;

/// The largest message size of a timing-only run (`--no-data`): 16 GiB.
pub const MAX_SIZE_TIMING: u64 = 1 << 34;

/// The largest jitter (per transfer or per dispatch start): 1 s, as any configured cost.
pub const MAX_JITTER_PS: u64 = 1_000_000_000_000;

impl SweepSpec {
    /// One measured call of `call` with payload: no warmup, no jitter.
    pub fn new(call: Call) -> SweepSpec {
        SweepSpec { call, iters: 1, warmup: 0, jitter: None, timing_only: false }
    }

    /// With `iters` measured calls.
    pub fn with_iters(self, iters: u32) -> SweepSpec {
        SweepSpec { iters, ..self }
    }

    /// With `warmup` calls before the measured ones.
    pub fn with_warmup(self, warmup: u32) -> SweepSpec {
        SweepSpec { warmup, ..self }
    }

    /// With `jitter`.
    pub fn with_jitter(self, jitter: Option<Jitter>) -> SweepSpec {
        SweepSpec { jitter, ..self }
    }

    /// Timing-only (no payload) or not.
    pub fn with_timing_only(self, timing_only: bool) -> SweepSpec {
        SweepSpec { timing_only, ..self }
    }

    /// Checks the values a user gave (not just their types): calls, root, jitter and the
    /// largest size, naming the argument, its value and the allowed range.
    pub fn validate(&self, size_flag: &str, max_size: u64, machine_ranks: usize) -> Result<(), String> {
        if self.call.ranks == 0 || self.call.ranks > machine_ranks {
            return Err(format!(
                "--ranks {}: the machine has {machine_ranks} ranks; use 1..={machine_ranks}",
                self.call.ranks
            ));
        }
        if self.call.root >= self.call.ranks {
            return Err(format!(
                "--root {}: out of range for {} ranks; use 0..={}",
                self.call.root,
                self.call.ranks,
                self.call.ranks - 1
            ));
        }
        validate_measure(&measure(self), size_flag, max_size)
    }
}

/// Checks the values of a measurement (calls, warmup, jitter, the largest size), naming the
/// flag, its value and the allowed range: the rules every collective's sweep and bench keep.
pub fn validate_measure(m: &Measure, size_flag: &str, max_size: u64) -> Result<(), String> {
    if m.iters == 0 || m.iters > MAX_CALLS {
        return Err(format!("-n {}: timed calls must be in 1..={MAX_CALLS}", m.iters));
    }
    if m.warmup > MAX_CALLS {
        return Err(format!("-w {}: warmup calls must be in 0..={MAX_CALLS}", m.warmup));
    }
    if let Some(j) = m.jitter {
        for (flag, d) in [("--jitter-op-ns", j.op), ("--jitter-dispatch-ns", j.dispatch)] {
            if d.as_ps() > MAX_JITTER_PS {
                return Err(format!("{flag} {}: jitter must be in 0..=1000000000 ns (1 s)", d.as_ps() / 1000));
            }
        }
    }
    let limit = if m.timing_only { MAX_SIZE_TIMING } else { MAX_SIZE_PAYLOAD };
    if max_size > limit {
        let hint = if m.timing_only { "" } else { "; add --no-data (timing-only) for sizes up to 16G" };
        return Err(format!(
            "{size_flag} {max_size}: a size is at most {} bytes ({}){hint}",
            limit,
            formats::size_label(limit)
        ));
    }
    Ok(())
}

/// One measured size (the row and the run its time was read from).
pub use crate::custom::Point;

/// The nccl-tests name of a dtype (kept here for `ranksim::sweep::nccl_type` users).
pub use crate::formats::nccl_type;

/// The input of rank `r`, element `i`: small integers that keep every op exact.
fn value(op: ReduceOp, r: usize, i: usize) -> f64 {
    match op {
        ReduceOp::Prod => {
            if (r + i).is_multiple_of(3) {
                -1.0
            } else {
                1.0
            }
        }
        _ => ((r * 3 + i) % 9) as f64 - 4.0,
    }
}

/// A built-in series' name: `allreduce ring`, `reduce_scatter sdma-mesh`, or the collective
/// alone for the builtin of a collective whose only other algorithm came later (so earlier
/// labels stay as they were).
pub fn series_name(kind: Kind, mode: Mode) -> String {
    if matches!(kind, Kind::AllReduce | Kind::AllGather) || mode != Mode::Mesh {
        format!("{kind} {mode}")
    } else {
        kind.to_string()
    }
}

/// The built-in collective `spec` describes, as a [`Collective`]: the same path a user's
/// collective takes through [`crate::custom`].
pub struct Builtin<'a>(pub &'a SweepSpec);

impl Collective for Builtin<'_> {
    type Buffers = CallBuffers;

    fn name(&self) -> String {
        series_name(self.0.call.kind, self.0.call.mode)
    }
    fn dtype(&self) -> DType {
        self.0.call.dtype
    }
    fn bus_factor(&self, ranks: usize) -> f64 {
        formats::bus_factor(self.0.call.kind, ranks)
    }
    fn count(&self, size_bytes: u64, ranks: usize) -> usize {
        formats::count_for(self.0.call.kind, size_bytes, self.0.call.dtype.size() as u64, ranks) as usize
    }
    fn bytes(&self, count: usize, ranks: usize) -> u64 {
        formats::bytes_for(self.0.call.kind, count as u64, self.0.call.dtype.size() as u64, ranks)
    }
    fn redop(&self) -> String {
        if self.0.call.reduces() { self.0.call.op.name().to_string() } else { "none".into() }
    }
    fn root(&self) -> i64 {
        if self.0.call.kind == Kind::Broadcast { i64::try_from(self.0.call.root).unwrap_or(i64::MAX) } else { -1 }
    }
    fn runs_without_data(&self) -> bool {
        self.0.call.kind == Kind::Barrier
    }
    fn setup(&self, w: &mut World, dom: &Domain, count: usize) -> SimResult<CallBuffers> {
        self.0.call.alloc(w, dom, count)
    }
    fn stage(&self, w: &mut World, b: &CallBuffers, _count: usize) -> SimResult<()> {
        fill(w, b, &self.0.call)
    }
    fn call(&self, w: &mut World, b: &CallBuffers) -> SimResult<()> {
        self.0.call.queue(w, b)
    }
    fn wrong(&self, w: &World, b: &CallBuffers, count: usize) -> SimResult<Wrong> {
        wrong(w, b, &self.0.call, count)
    }
}

fn measure(spec: &SweepSpec) -> Measure {
    Measure {
        ranks: spec.call.ranks,
        iters: spec.iters,
        warmup: spec.warmup,
        jitter: spec.jitter,
        timing_only: spec.timing_only,
        progress: None,
    }
}

/// Runs one size; `None` when the size gives no element per rank.
pub fn run_point(cfg: &Config, spec: &SweepSpec, size: u64, trace: bool) -> Result<Option<Point>, String> {
    run_point_watched(cfg, spec, size, trace, None)
}

/// [`run_point`], publishing the runs' progress to `progress`.
pub fn run_point_watched(
    cfg: &Config,
    spec: &SweepSpec,
    size: u64,
    trace: bool,
    progress: Option<&Progress>,
) -> Result<Option<Point>, String> {
    let m = Measure { progress: progress.cloned(), ..measure(spec) };
    custom::point(cfg, &Builtin(spec), &m, size, trace)
}

/// The row of `size` that could not be measured, with its reason (`None` when the size gives
/// no element per rank: no row at all).
pub fn failed_row(spec: &SweepSpec, size: u64, why: String) -> Option<ResultRow> {
    let (n, es) = (spec.call.ranks, spec.call.dtype.size() as u64);
    let count = formats::count_for(spec.call.kind, size, es, n);
    if count == 0 && spec.call.kind != Kind::Barrier {
        return None;
    }
    let bytes = formats::bytes_for(spec.call.kind, count, es, n);
    let redop = if spec.call.reduces() { spec.call.op.name() } else { "none" };
    let root = if spec.call.kind == Kind::Broadcast { i64::try_from(spec.call.root).unwrap_or(i64::MAX) } else { -1 };
    Some(ResultRow::failed(bytes, count, nccl_type(spec.call.dtype), redop, root, why))
}

/// Runs `calls` calls of the collective at `size` bytes (timing-only when the spec says so)
/// and returns the run; `None` when the size gives no element per rank.
pub fn run_calls(
    cfg: &Config,
    spec: &SweepSpec,
    size: u64,
    calls: usize,
    trace: bool,
) -> Result<Option<RunReport>, String> {
    let c = Builtin(spec);
    let count = c.count(size, spec.call.ranks);
    if count == 0 && !c.runs_without_data() {
        return Ok(None);
    }
    Ok(Some(custom::run(cfg, &c, &measure(spec), count, calls.max(1), spec.timing_only, trace)?.report))
}

/// Mean over the measured calls of the slowest rank's device wall, in microseconds.
pub use crate::custom::time_per_call;

/// Sets up and queues `calls` calls of the collective at `size` bytes on `w` without running
/// them (for the checker); `false` when the size gives no element per rank.
pub fn queue_calls(w: &mut World, spec: &SweepSpec, size: u64, calls: usize) -> sim_core::SimResult<bool> {
    let c = Builtin(spec);
    let count = c.count(size, spec.call.ranks);
    if count == 0 && !c.runs_without_data() {
        return Ok(false);
    }
    custom::queue(w, &c, spec.call.ranks, count, calls)?;
    Ok(true)
}

/// Bytes of simulated memory a payload run of `spec` at `size` holds: every rank's window
/// buffers, as [`Call::alloc`] lays them out (signals are negligible). For the up-front memory
/// check of a sweep.
pub fn payload_bytes(spec: &SweepSpec, size: u64) -> u64 {
    let (n, es) = (spec.call.ranks as u64, spec.call.dtype.size() as u64);
    let count = formats::count_for(spec.call.kind, size, es, spec.call.ranks);
    let per_rank = spec.call.data_elems(count);
    per_rank.saturating_mul(es).saturating_mul(n)
}

/// Stages every rank's input.
fn fill(w: &mut World, b: &CallBuffers, call: &Call) -> SimResult<()> {
    for r in 0..call.ranks {
        if let Some(t) = &b.input {
            w.write_bytes(t, r, &periodic_bytes(call.dtype, t.numel(), |i| value(call.op, r, i)))?;
        }
        if let Some((send, _)) = &b.counts {
            w.write(send, r, &vec![1i32; call.ranks])?;
        }
    }
    Ok(())
}

/// Elements that differ from the golden, over every rank.
fn wrong(w: &World, b: &CallBuffers, call: &Call, count: usize) -> SimResult<Wrong> {
    let n = call.ranks;
    let v = |r: usize, i: usize| value(call.op, r, i);
    let fold = |i: usize| (1..n).fold(v(0, i), |a, r| combine(call.op, a, v(r, i)));
    let mut wrong = Wrong::new();
    for me in 0..n {
        // Where rank `me`'s result sits (buffer, first element) and its golden: `segs`
        // segments of `count` elements, element `i` of segment `s` being `g(s, i)`.
        let (buf, first, segs, g): (_, usize, usize, Golden) = match call.kind {
            Kind::AllReduce => (&b.input, 0, 1, Box::new(|_, i| fold(i))),
            Kind::Broadcast => (&b.input, 0, 1, Box::new(|_, i| v(call.root, i))),
            Kind::ReduceScatter => (&b.input, me * count, 1, Box::new(move |_, i| fold(me * count + i))),
            Kind::AllGather => (&b.target, 0, n, Box::new(v)),
            Kind::AllToAll | Kind::AllToAllV => (&b.target, 0, n, Box::new(move |s, i| v(s, me * count + i))),
            Kind::Barrier => continue,
        };
        let got = match buf {
            Some(t) => w.read_bytes(t, me)?,
            None => Vec::new(),
        };
        wrong_elements(&mut wrong, me, call.dtype, &got, first, segs, count, g);
    }
    Ok(wrong)
}

/// Element `i` of segment `s` of a rank's expected result.
type Golden<'a> = Box<dyn Fn(usize, usize) -> f64 + 'a>;

/// Period of every input and golden sequence along a segment: `value` repeats every 9 elements.
const PERIOD: usize = 9;

/// `len` elements `f(0..len)` of `dt` as little-endian bytes, for an `f` that repeats every
/// [`PERIOD`] elements: one period is encoded (as `World::write_f64` does) and repeated.
fn periodic_bytes(dt: DType, len: usize, f: impl Fn(usize) -> f64) -> Vec<u8> {
    let es = dt.size();
    let mut period = vec![0u8; PERIOD.min(len) * es];
    for i in 0..PERIOD.min(len) {
        dt.write_f64(&mut period, i, f(i));
    }
    let mut out = period.repeat(len.div_ceil(PERIOD.max(1)));
    out.truncate(len * es);
    out
}

/// Compares the elements of `got` (rank `rank`'s whole buffer, as bytes) from element `first`
/// on with the golden `g(s, i)` of `segs` segments of `count` elements, into `wrong` (missing
/// ones count as wrong). Compared as numbers, as `read_f64` decodes them; equal bytes of an
/// exactly encoded golden are equal numbers, so only differing bytes are decoded.
#[allow(clippy::too_many_arguments)]
fn wrong_elements(
    wrong: &mut Wrong,
    rank: usize,
    dt: DType,
    got: &[u8],
    first: usize,
    segs: usize,
    count: usize,
    g: impl Fn(usize, usize) -> f64,
) {
    let es = dt.size();
    // Compared a block of whole periods at a time; a block that differs, element by element.
    let block = (4096 / (PERIOD * es)).max(1) * PERIOD;
    for s in 0..segs {
        let want: Vec<f64> = (0..PERIOD.min(count)).map(|i| g(s, i)).collect();
        let pattern = periodic_bytes(dt, block.min(count), |i| want[i % PERIOD]);
        let exact = (0..want.len()).all(|i| dt.read_f64(&pattern, i) == want[i]);
        let start = (first + s * count) * es;
        let seg = got.get(start..got.len().min(start + count * es)).unwrap_or_default();
        for (b, bytes) in seg.chunks(block * es).enumerate() {
            if exact && bytes == &pattern[..bytes.len()] {
                continue;
            }
            for (k, chunk) in bytes.chunks_exact(es).enumerate() {
                let i = b * block + k;
                wrong.compare(rank, first + s * count + i, dt.read_f64(chunk, 0), want[i % PERIOD]);
            }
        }
        wrong.add_count((count - seg.len() / es) as u64);
    }
}

fn combine(op: ReduceOp, a: f64, b: f64) -> f64 {
    match op {
        ReduceOp::Sum => a + b,
        ReduceOp::Max => a.max(b),
        ReduceOp::Min => a.min(b),
        ReduceOp::Prod => a * b,
    }
}

/// Whether the collective of `spec` runs on `cfg` at all: one call is queued (not run) on a
/// fresh world with the collective's own validation; the error says what it needs.
pub fn supports(cfg: &Config, spec: &SweepSpec) -> Result<(), String> {
    let mut w = cfg.world().map_err(|e| e.to_string())?;
    w.set_timing_only().map_err(|e| e.to_string())?;
    let size = (spec.call.dtype.size() * spec.call.ranks.max(1) * 64) as u64;
    queue_calls(&mut w, spec, size, 1).map(|_| ()).map_err(|e| e.to_string())
}

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
pub fn busbw_bound(cfg: &Config, ranks: usize, kind: Option<Kind>) -> Result<Bound, String> {
    let topo = interconnect::Topology::new(&cfg.fabric, cfg.machine.ranks).map_err(|e| e.to_string())?;
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

/// One line on what a series models: PyPTO's builtin as written, or the vendor library's
/// algorithm, and on how many blocks.
pub fn mode_note(spec: &SweepSpec) -> String {
    let cn = spec.call.blocks();
    let on = |what: &str| format!("{what}, on {cn} block(s) per rank");
    match (spec.call.kind, spec.call.mode, spec.call.path) {
        (kind, mode, Path::InCore) if mode != Mode::Rhd => {
            format!("the InCore lowering of PyPTO's {kind} (one block, called from a kernel)")
        }
        (Kind::AllReduce, Mode::Mesh, _) => {
            on("PyPTO's builtin mesh allreduce as written: every rank pulls each peer's whole buffer and reduces it, \
             step by step (each load, add and store waits for the previous one)")
        }
        (Kind::AllReduce, Mode::Ring, _) => {
            on("PyPTO's builtin ring allreduce as written: reduce-scatter then allgather around the ring")
        }
        (Kind::AllReduce, Mode::TwoShot, _) => on("a direct reduce-scatter + allgather in small UB tiles"),
        (Kind::AllReduce, Mode::AivMesh, _) => {
            on("HCCL-class, not a PyPTO builtin: the vendor library's AIV full-mesh allreduce (large \
             double-buffered UB tiles, pipes overlapping)")
        }
        (Kind::AllReduce, Mode::Rhd, _) => {
            on("HCCL-class, not a PyPTO builtin: recursive halving-doubling (the vendor library's algorithm \
             between servers), 2 log2(ranks) steps with one partner each, so one link busy at a time")
        }
        (Kind::ReduceScatter | Kind::AllToAll | Kind::AllToAllV | Kind::Broadcast, Mode::SdmaMesh, _) => {
            let how = match spec.call.kind {
                Kind::ReduceScatter => "inline-reduce SDMA puts to every peer at once",
                Kind::Broadcast => "the root scatters a slice to each rank, which puts it to every peer",
                _ => "SDMA puts to every peer at once",
            };
            let warm = if spec.warmup == 0 { "; its first call pays the channels' cold start (add -w 1)" } else { "" };
            on(&format!(
                "HCCL-class, not a PyPTO builtin: the vendor library's copy-engine (SDMA) {} on a full mesh ({how}, \
                 one channel per block){warm}",
                spec.call.kind
            ))
        }
        (_, Mode::SdmaMesh, _) => {
            let warm = if spec.warmup == 0 { "; its first call pays the channels' cold start (add -w 1)" } else { "" };
            on(&format!(
                "HCCL-class, not a PyPTO builtin: the vendor library's copy-engine (SDMA) {} path{warm}",
                spec.call.kind
            ))
        }
        (Kind::AllToAll, _, _) => {
            on("PyPTO's builtin all_to_all kernel as written; it pushes one count-element block to every rank, as the \
             builtin allgather does, so at the same size their times are the same")
        }
        (kind, _, _) => on(&format!("PyPTO's builtin {kind} kernel as written")),
    }
}

/// The element types each collective and algorithm accepts on `cfg`, per path, as a text
/// table (`y` runs, `-` is refused), worked out by asking the collectives' own validation.
pub fn support_matrix(cfg: &Config) -> String {
    let rows: Vec<(Kind, Mode)> =
        Kind::ALL.iter().flat_map(|&k| collectives::modes(k).iter().map(move |&m| (k, m))).collect();
    let names: Vec<String> = DType::ALL.iter().map(|d| d.to_string()).collect();
    let head = names.iter().map(|n| format!("{n:>5}")).collect::<Vec<_>>().join("");
    let mut out = format!(
        "Element types (-d) each collective and --mode accepts on `{}` (y: runs, -: refused; sum op):\n  {:<26}{head}   |{head}\n  {:<26}{:^w$}   |{:^w$}\n",
        cfg.machine.name,
        "",
        "",
        "--path host",
        "--path incore",
        w = head.len()
    );
    for (kind, mode) in rows {
        let name = series_name(kind, mode);
        let mut line = format!("  {name:<26}");
        for path in [Path::Host, Path::InCore] {
            if path == Path::InCore {
                line.push_str("   |");
            }
            for dtype in DType::ALL {
                let call = Call::new(kind, cfg.machine.ranks).with_mode(mode).with_path(path).with_dtype(dtype);
                let spec = SweepSpec::new(call).with_timing_only(true);
                line.push_str(if supports(cfg, &spec).is_ok() { "    y" } else { "    -" });
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(dt: DType, vals: &[f64]) -> Vec<u8> {
        let mut b = vec![0u8; vals.len() * dt.size()];
        for (i, &v) in vals.iter().enumerate() {
            dt.write_f64(&mut b, i, v);
        }
        b
    }

    #[test]
    fn periodic_bytes_are_the_element_by_element_encoding() {
        for dt in DType::ALL {
            for len in [0, 1, 8, 9, 10, 100] {
                let f = |i: usize| ((i * 7 + 3) % 9) as f64 - 4.0;
                let want = bytes(dt, &(0..len).map(f).collect::<Vec<_>>());
                assert_eq!(periodic_bytes(dt, len, f), want, "{dt} {len}");
            }
        }
    }

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

    #[test]
    fn wrong_elements_counts_what_read_f64_would() {
        let count = |dt: DType, got: &[u8], first: usize, segs: usize, n: usize, g: &dyn Fn(usize, usize) -> f64| {
            let mut w = Wrong::new();
            wrong_elements(&mut w, 0, dt, got, first, segs, n, g);
            w
        };
        let g = |s: usize, i: usize| ((s + i) % 9) as f64 - 4.0;
        let good: Vec<f64> = (0..2).flat_map(|s| (0..20).map(move |i| g(s, i))).collect();
        let dt = DType::F32;
        assert_eq!(count(dt, &bytes(dt, &good), 0, 2, 20, &g).count(), 0);
        // Two wrong values, one of them in the second segment: both named, in order.
        let mut bad = good.clone();
        (bad[3], bad[25]) = (100.0, -100.0);
        let w = count(dt, &bytes(dt, &bad), 0, 2, 20, &g);
        assert_eq!(w.count(), 2);
        let named: Vec<(u64, f64, f64)> = w.first().iter().map(|m| (m.index, m.got, m.expected)).collect();
        assert_eq!(named, [(3, 100.0, g(0, 3)), (25, -100.0, g(1, 5))]);
        // -0.0 where 0.0 is due: different bytes, the same number.
        let mut z = good.clone();
        let k = (0..40).find(|&k| good[k] == 0.0).unwrap();
        z[k] = -0.0;
        assert_eq!(count(dt, &bytes(dt, &z), 0, 2, 20, &g).count(), 0);
        // A short buffer: the missing elements are wrong; an offset region is read from `first`.
        assert_eq!(count(dt, &bytes(dt, &good[..30]), 0, 2, 20, &g).count(), 10);
        assert_eq!(count(dt, &bytes(dt, &good), 20, 1, 20, &|_, i| g(1, i)).count(), 0);
        // A golden i8 cannot hold (200): every element is wrong, whatever the bytes; only the
        // first few are kept.
        let dt = DType::I8;
        let sat = bytes(dt, &[200.0; 9]);
        let w = count(dt, &sat, 0, 1, 9, &|_, _| 200.0);
        assert_eq!((w.count(), w.first().len()), (9, crate::formats::Mismatch::KEPT));
    }
}
