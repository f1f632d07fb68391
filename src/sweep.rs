//! One point of a `sweep`: run a collective at one message size on a fresh world, time it the
//! way PyPTO's benchmark does (per call, the slowest rank's device wall), and check every
//! element against an exact golden.
//!
//! Inputs are small integers, so every reduction is exact in every dtype and `#wrong` counts
//! real errors, never rounding. With `--iters`/`--warmup` above one call the data would be
//! reduced again and again, so results are checked on a one-call run and timed on a
//! timing-only run of all calls (times do not depend on payload).

use crate::Config;
use crate::report::{self, ResultRow};
use collectives::{AllGather, AllReduce, Kind, Mode, Path};
use sim_core::{DType, Domain, Jitter, ReduceOp, RunReport, SimDuration, Tensor, World};

/// What a sweep runs.
#[derive(Clone, Debug)]
pub struct SweepSpec {
    pub kind: Kind,
    pub mode: Mode,
    pub path: Path,
    pub dtype: DType,
    pub op: ReduceOp,
    pub root: usize,
    /// Measured calls per size.
    pub iters: u32,
    /// Calls before the measured ones.
    pub warmup: u32,
    /// Ranks taking part (the first `ranks` chips).
    pub ranks: usize,
    /// AIV blocks per rank (HOST mesh, two-shot, aiv-mesh and sdma-mesh allreduce).
    pub core_num: usize,
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
    /// Checks the values a user gave (not just their types): calls, root, jitter and the
    /// largest size, naming the argument, its value and the allowed range.
    pub fn validate(&self, size_flag: &str, max_size: u64, machine_ranks: usize) -> Result<(), String> {
        if self.ranks == 0 || self.ranks > machine_ranks {
            return Err(format!(
                "--ranks {}: the machine has {machine_ranks} ranks; use 1..={machine_ranks}",
                self.ranks
            ));
        }
        if self.iters == 0 || self.iters > MAX_CALLS {
            return Err(format!("-n {}: timed calls must be in 1..={MAX_CALLS}", self.iters));
        }
        if self.warmup > MAX_CALLS {
            return Err(format!("-w {}: warmup calls must be in 0..={MAX_CALLS}", self.warmup));
        }
        if self.root >= self.ranks {
            return Err(format!(
                "--root {}: out of range for {} ranks; use 0..={}",
                self.root,
                self.ranks,
                self.ranks - 1
            ));
        }
        if let Some(j) = self.jitter {
            for (flag, d) in [("--jitter-op-ns", j.op), ("--jitter-dispatch-ns", j.dispatch)] {
                if d.as_ps() > MAX_JITTER_PS {
                    return Err(format!("{flag} {}: jitter must be in 0..=1000000000 ns (1 s)", d.as_ps() / 1000));
                }
            }
        }
        let limit = if self.timing_only { MAX_SIZE_TIMING } else { MAX_SIZE_PAYLOAD };
        if max_size > limit {
            let hint = if self.timing_only { "" } else { "; add --no-data (timing-only) for sizes up to 16G" };
            return Err(format!(
                "{size_flag} {max_size}: a size is at most {} bytes ({}){hint}",
                limit,
                report::size_label(limit)
            ));
        }
        Ok(())
    }
}

/// One measured size.
#[derive(Clone, Debug)]
pub struct Point {
    pub row: ResultRow,
    /// The run the time was read from (all calls).
    pub report: RunReport,
}

/// The nccl-tests name of a dtype (`float`, `half`, `bfloat16`, `int32`, ...).
pub fn nccl_type(dt: DType) -> &'static str {
    match dt {
        DType::F32 => "float",
        DType::F16 => "half",
        DType::BF16 => "bfloat16",
        DType::I32 => "int32",
        DType::I16 => "int16",
        DType::I8 => "int8",
    }
}

/// Whether the collective reduces (prints its op) or not (`none`).
fn reduces(kind: Kind) -> bool {
    matches!(kind, Kind::AllReduce | Kind::ReduceScatter)
}

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

/// Runs one size; `None` when the size gives no element per rank.
pub fn run_point(cfg: &Config, spec: &SweepSpec, size: u64, trace: bool) -> Result<Option<Point>, String> {
    let n = spec.ranks;
    let es = spec.dtype.size() as u64;
    let count = report::count_for(spec.kind, size, es, n) as usize;
    if count == 0 && spec.kind != Kind::Barrier {
        return Ok(None);
    }
    let calls = (spec.iters as usize).saturating_add(spec.warmup as usize).max(1);
    let checked = !spec.timing_only;
    let check_run = if checked { Some(run(cfg, spec, count, 1, false, trace && calls == 1)?) } else { None };
    let timed = match (&check_run, calls) {
        (Some(r), 1) => r.report.clone(),
        _ => run(cfg, spec, count, calls, true, trace)?.report,
    };
    let bytes = report::bytes_for(spec.kind, count as u64, es, n);
    // A builtin that returned at once (more than 16 ranks, a ring whose count is not a
    // multiple of the ranks, a root out of range) warned: its time is not the collective's.
    let mut warnings: Vec<&String> = check_run.iter().flat_map(|r| &r.report.warnings).collect();
    warnings.extend(timed.warnings.iter().filter(|w| !warnings.contains(w)).collect::<Vec<_>>());
    if !warnings.is_empty() {
        let why = format!("cut short: {}", warnings.iter().map(|w| w.as_str()).collect::<Vec<_>>().join("; "));
        let row = failed_row(spec, size, why).unwrap_or_else(|| {
            ResultRow::failed(bytes, count as u64, nccl_type(spec.dtype), "none", -1, String::new())
        });
        return Ok(Some(Point { row, report: timed }));
    }
    let time_us = time_per_call(&timed, n, spec.warmup as usize, calls);
    let row = ResultRow {
        size: bytes,
        count: count as u64,
        type_name: nccl_type(spec.dtype).to_string(),
        redop: if reduces(spec.kind) { spec.op.name().to_string() } else { "none".into() },
        root: if spec.kind == Kind::Broadcast { i64::try_from(spec.root).unwrap_or(i64::MAX) } else { -1 },
        time_us,
        algbw_gbps: report::algbw_gbps(bytes, time_us),
        busbw_gbps: report::busbw_gbps(spec.kind, bytes, time_us, n),
        nwrong: check_run.map(|r| r.wrong),
        series: None,
        failed: None,
    };
    Ok(Some(Point { row, report: timed }))
}

/// The row of `size` that could not be measured, with its reason (`None` when the size gives
/// no element per rank: no row at all).
pub fn failed_row(spec: &SweepSpec, size: u64, why: String) -> Option<ResultRow> {
    let (n, es) = (spec.ranks, spec.dtype.size() as u64);
    let count = report::count_for(spec.kind, size, es, n);
    if count == 0 && spec.kind != Kind::Barrier {
        return None;
    }
    let bytes = report::bytes_for(spec.kind, count, es, n);
    let redop = if reduces(spec.kind) { spec.op.name() } else { "none" };
    let root = if spec.kind == Kind::Broadcast { i64::try_from(spec.root).unwrap_or(i64::MAX) } else { -1 };
    Some(ResultRow::failed(bytes, count, nccl_type(spec.dtype), redop, root, why))
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
    let count = report::count_for(spec.kind, size, spec.dtype.size() as u64, spec.ranks) as usize;
    if count == 0 && spec.kind != Kind::Barrier {
        return Ok(None);
    }
    Ok(Some(run(cfg, spec, count, calls.max(1), spec.timing_only, trace)?.report))
}

/// Mean over the measured calls of the slowest rank's device wall, in microseconds.
pub fn time_per_call(r: &RunReport, n: usize, warmup: usize, calls: usize) -> f64 {
    let mut per_call = vec![SimDuration::ZERO; calls];
    for chip in 0..n {
        for d in r.of_chip(chip) {
            if d.index < calls {
                per_call[d.index] = per_call[d.index].max(d.device_wall());
            }
        }
    }
    let measured = &per_call[warmup.min(calls - 1)..];
    measured.iter().map(|d| d.as_us_f64()).sum::<f64>() / measured.len() as f64
}

/// A finished run and how many elements were wrong.
struct Ran {
    report: RunReport,
    wrong: u64,
}

/// Builds a world, queues `calls` calls of the collective and runs them.
fn run(
    cfg: &Config,
    spec: &SweepSpec,
    count: usize,
    calls: usize,
    timing_only: bool,
    trace: bool,
) -> Result<Ran, String> {
    let e = |e: sim_core::SimError| e.to_string();
    let mut w = cfg.world().map_err(|e| e.to_string())?;
    if timing_only || spec.timing_only {
        w.set_timing_only().map_err(e)?;
    }
    w.options_mut().trace = trace;
    w.options_mut().jitter = spec.jitter;
    let bufs = queue(&mut w, spec, count, calls).map_err(e)?;
    let report = w.run().map_err(e)?;
    let wrong = if w.has_payload() { bufs.wrong(&w, spec, count).map_err(e)? } else { 0 };
    Ok(Ran { report, wrong })
}

/// Allocates the buffers on the first `spec.ranks` chips of `w`, stages inputs and queues
/// `calls` calls of `count` elements.
fn queue(w: &mut World, spec: &SweepSpec, count: usize, calls: usize) -> sim_core::SimResult<Buffers> {
    let members: Vec<usize> = (0..spec.ranks).collect();
    let dom = w.create_domain("comm_d0", &members, sim_core::DomainOptions::default())?;
    let bufs = Buffers::new(w, &dom, spec, count)?;
    if w.has_payload() {
        bufs.fill(w, spec)?;
    }
    for _ in 0..calls {
        bufs.call(w, spec)?;
    }
    Ok(bufs)
}

/// Sets up and queues `calls` calls of the collective at `size` bytes on `w` without running
/// them (for the checker); `false` when the size gives no element per rank.
pub fn queue_calls(w: &mut World, spec: &SweepSpec, size: u64, calls: usize) -> sim_core::SimResult<bool> {
    let count = report::count_for(spec.kind, size, spec.dtype.size() as u64, spec.ranks) as usize;
    if count == 0 && spec.kind != Kind::Barrier {
        return Ok(false);
    }
    queue(w, spec, count, calls)?;
    Ok(true)
}

/// The window buffers of one collective call.
struct Buffers {
    main: Option<Tensor>,
    second: Option<Tensor>,
    counts: Option<(Tensor, Tensor)>,
    sig: Tensor,
}

/// AIV blocks a call runs on: `core_num` for the multi-block algorithms (the HOST mesh,
/// two-shot and HCCL-class allreduces, the SDMA allgather), 1 otherwise.
pub fn blocks(spec: &SweepSpec) -> usize {
    let multi = match spec.kind {
        Kind::AllReduce => spec.path == Path::Host && spec.mode != Mode::Ring,
        Kind::AllGather => spec.mode == Mode::SdmaMesh,
        _ => false,
    };
    if multi { spec.core_num } else { 1 }
}

impl Buffers {
    fn new(w: &mut World, dom: &Domain, spec: &SweepSpec, count: usize) -> sim_core::SimResult<Buffers> {
        let n = spec.ranks;
        let cn = blocks(spec);
        let sig = w.alloc_window(
            dom,
            "signal",
            DType::I32,
            &collectives::signal_shape(spec.kind, spec.mode, spec.path, n, cn),
        )?;
        let dt = spec.dtype;
        let mut b = Buffers { main: None, second: None, counts: None, sig };
        match spec.kind {
            Kind::AllReduce | Kind::Broadcast => b.main = Some(w.alloc_window(dom, "data", dt, &[count])?),
            Kind::ReduceScatter => b.main = Some(w.alloc_window(dom, "data", dt, &[n, count])?),
            Kind::AllGather => {
                b.main = Some(w.alloc_window(dom, "stage", dt, &[1, count])?);
                b.second = Some(w.alloc_window(dom, "target", dt, &[n, count])?);
            }
            Kind::AllToAll | Kind::AllToAllV => {
                b.main = Some(w.alloc_window(dom, "input", dt, &[n, count])?);
                b.second = Some(w.alloc_window(dom, "target", dt, &[n, count])?);
                if spec.kind == Kind::AllToAllV {
                    let send = w.alloc_window(dom, "send_counts", DType::I32, &[n])?;
                    let recv = w.alloc_window(dom, "recv_counts", DType::I32, &[n, 1])?;
                    b.counts = Some((send, recv));
                }
            }
            Kind::Barrier => {}
        }
        Ok(b)
    }

    /// Stages every rank's input.
    fn fill(&self, w: &mut World, spec: &SweepSpec) -> sim_core::SimResult<()> {
        for r in 0..spec.ranks {
            if let Some(t) = &self.main {
                let vals: Vec<f64> = (0..t.numel()).map(|i| value(spec.op, r, i)).collect();
                w.write_f64(t, r, &vals)?;
            }
            if let Some((send, _)) = &self.counts {
                w.write(send, r, &vec![1i32; spec.ranks])?;
            }
        }
        Ok(())
    }

    /// Queues one call of the collective on every rank.
    fn call(&self, w: &mut World, spec: &SweepSpec) -> sim_core::SimResult<()> {
        let main = || self.main.clone().ok_or_else(|| sim_core::SimError::invalid("no data buffer"));
        let second = || self.second.clone().ok_or_else(|| sim_core::SimError::invalid("no target buffer"));
        match spec.kind {
            Kind::AllReduce => collectives::allreduce(
                w,
                &main()?,
                &self.sig,
                AllReduce { op: spec.op, mode: spec.mode, path: spec.path, core_num: blocks(spec) },
            ),
            Kind::AllGather => {
                let how = AllGather { mode: spec.mode, path: spec.path, core_num: blocks(spec) };
                collectives::allgather_with(w, &main()?, &second()?, &self.sig, how)
            }
            Kind::ReduceScatter => collectives::reduce_scatter(w, &main()?, &self.sig, spec.op, spec.path),
            Kind::Broadcast => collectives::broadcast(w, &main()?, &self.sig, spec.root, spec.path),
            Kind::AllToAll => collectives::all_to_all(w, &main()?, &second()?, &self.sig, spec.path),
            Kind::AllToAllV => {
                let (send, recv) =
                    self.counts.clone().ok_or_else(|| sim_core::SimError::invalid("no count buffers"))?;
                collectives::all_to_all_v(w, &main()?, &second()?, &send, &recv, &self.sig, spec.path)
            }
            Kind::Barrier => collectives::barrier(w, &self.sig, spec.path),
        }
    }

    /// Elements that differ from the golden, over every rank.
    fn wrong(&self, w: &World, spec: &SweepSpec, count: usize) -> sim_core::SimResult<u64> {
        let n = spec.ranks;
        let v = |r: usize, i: usize| value(spec.op, r, i);
        let fold = |i: usize| (1..n).fold(v(0, i), |a, r| combine(spec.op, a, v(r, i)));
        // The goldens every rank shares, computed once.
        let reduced: Vec<f64> = match spec.kind {
            Kind::AllReduce => (0..count).map(fold).collect(),
            Kind::Broadcast => (0..count).map(|i| v(spec.root, i)).collect(),
            Kind::AllGather => (0..n).flat_map(|r| (0..count).map(move |i| v(r, i))).collect(),
            _ => Vec::new(),
        };
        let mut wrong = 0;
        for me in 0..n {
            let (got, want): (Vec<f64>, &[f64]) = match spec.kind {
                Kind::AllReduce | Kind::Broadcast => (read(w, self.main.as_ref(), me)?, &reduced),
                Kind::ReduceScatter => {
                    let all = read(w, self.main.as_ref(), me)?;
                    let want: Vec<f64> = (me * count..(me + 1) * count).map(fold).collect();
                    wrong += count_wrong(&all[me * count..(me + 1) * count], &want);
                    continue;
                }
                Kind::AllGather => (read(w, self.second.as_ref(), me)?, &reduced),
                Kind::AllToAll | Kind::AllToAllV => {
                    let got = read(w, self.second.as_ref(), me)?;
                    let want: Vec<f64> =
                        (0..n).flat_map(|src| (0..count).map(move |i| v(src, me * count + i))).collect();
                    wrong += count_wrong(&got, &want);
                    continue;
                }
                Kind::Barrier => (Vec::new(), &reduced),
            };
            wrong += count_wrong(&got, want);
        }
        Ok(wrong)
    }
}

/// Elements of `got` that differ from `want`, a missing or extra one counting as wrong.
fn count_wrong(got: &[f64], want: &[f64]) -> u64 {
    (got.iter().zip(want).filter(|(g, w)| g != w).count() + got.len().abs_diff(want.len())) as u64
}

fn combine(op: ReduceOp, a: f64, b: f64) -> f64 {
    match op {
        ReduceOp::Sum => a + b,
        ReduceOp::Max => a.max(b),
        ReduceOp::Min => a.min(b),
        ReduceOp::Prod => a * b,
    }
}

/// Rank `r`'s copy of `t` as f64 (nothing when there is no such buffer).
fn read(w: &World, t: Option<&Tensor>, r: usize) -> sim_core::SimResult<Vec<f64>> {
    t.map_or(Ok(Vec::new()), |t| w.read_f64(t, r))
}
