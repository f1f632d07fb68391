//! What a sweep will run, decided before anything runs: its ranks and sizes, its series
//! (collective, algorithm, blocks, warmup), the sizes that fit in memory and in the default
//! run's work, and warnings for flags that shape no row.

use super::flags::SweepArgs;
use crate::sweep::{SweepSpec, supports};
use collectives::{Call, DefaultBlocks, Engine, Kind, Mode, Path};
use ranksim::Config;
use ranksim::formats::{self};
use ranksim::measure::busbw_bound;
use ranksim::measure::memory::MemoryLimit;
use sim_core::{MemoryEstimate, ReduceOp};

/// One series of the sweep: a collective, an algorithm, its blocks, its warmup and, in the
/// default main job, a smaller largest size.
#[derive(Clone, Debug)]
pub struct Combo {
    /// The collective.
    pub kind: Kind,
    /// Its algorithm.
    pub mode: Mode,
    /// AIV blocks per rank.
    pub core_num: usize,
    /// Untimed calls before the timed ones.
    pub warmup: u32,
    /// Sizes above this are left out of this series (`None`: the sweep's `-e`).
    pub max_bytes: Option<u64>,
    /// The `hccl` series: each size runs the mode HCCL picks for it
    /// ([`collectives::hccl_aiv_pick`]), `mode` being the pick at the smallest sizes.
    pub auto: bool,
}

/// The label of a combo's series: [`label`] of its spec, or `allgather hccl core_num 48` for
/// the series that runs what HCCL picks at each size.
pub(super) fn combo_label(a: &SweepArgs, c: &Combo, ranks: usize) -> String {
    let s = spec(a, c, ranks);
    if c.auto { format!("{} hccl core_num {}", c.kind, s.call.blocks()) } else { label(&s) }
}

/// The legend / JSON label of a series: `allreduce sdma-mesh core_num 48 -w 1`.
pub(super) fn label(spec: &SweepSpec) -> String {
    let mut s = ranksim::measure::series_name(spec.call.kind, spec.call.mode);
    if spec.call.path == Path::InCore {
        s.push_str(" incore");
    }
    s.push_str(&format!(" core_num {}", spec.call.blocks()));
    if spec.warmup > 0 {
        s.push_str(&format!(" -w {}", spec.warmup));
    }
    s
}

/// `allreduce aiv-mesh`, or the collective alone when it has one algorithm.
pub(super) fn label_of(kind: Kind, mode: Mode) -> String {
    ranksim::measure::series_name(kind, mode)
}

/// The ranks taking part: `-g`, or every rank of the machine; one rank is refused (it has no
/// peer, and nccl-tests' `-g 1` means something else).
pub(super) fn checked_ranks(a: &SweepArgs, cfg: &Config) -> Result<usize, String> {
    let ranks = a.ranks.unwrap_or(cfg.machine.ranks);
    let n = cfg.machine.ranks;
    if n == 1 {
        return Err(format!(
            "machine `{}` has one rank (machine.ranks = 1): a collective needs at least 2",
            cfg.machine.name
        ));
    }
    if ranks == 1 {
        return Err(one_rank_error(&cfg.machine.name, n));
    }
    if ranks == 0 || ranks > n {
        return Err(format!("--ranks {ranks}: machine `{}` has {n} ranks; use 2..={n}", cfg.machine.name));
    }
    Ok(ranks)
}

/// The error of `-g 1`: what `-g` means here and what to type instead.
pub fn one_rank_error(machine: &str, n: usize) -> String {
    format!(
        "-g 1: one rank has no peer, so a collective moves nothing (busbw 0). Here -g / --ranks is the number \
         of ranks taking part: nccl-tests' `-g 1` means one GPU per process with many processes, but ranksim \
         simulates every rank in one process. Leave -g out to use all {n} ranks of `{machine}`, or give 2..={n}"
    )
}

/// The `-b -e -f` sizes, and `--min-busbw` checked as a value.
pub(super) fn checked_sizes(a: &SweepArgs) -> Result<Vec<u64>, String> {
    let sizes = formats::sweep_sizes(a.min_bytes, a.max_bytes, a.factor)
        .map_err(|e| format!("-b {} -e {} -f {}: {e}", a.min_bytes, a.max_bytes, a.factor))?;
    if let Some(min) = a.min_busbw
        && !(min.is_finite() && min >= 0.0)
    {
        return Err(format!("--min-busbw {min}: must be a finite number of GB/s, 0 or more"));
    }
    Ok(sizes)
}

/// The sizes of a series that give rows: a size whose element count is the previous one's
/// would repeat its row.
pub(super) fn distinct_sizes(spec: &SweepSpec, sizes: &[u64]) -> Vec<u64> {
    let mut last = None;
    let mut out = Vec::new();
    for &size in sizes {
        let count = formats::count_for(spec.call.kind, size, spec.call.dtype.size() as u64, spec.call.ranks);
        if last != Some(count) || spec.call.kind == Kind::Barrier {
            out.push(size);
        }
        last = Some(count);
    }
    out
}

/// A series' sizes fitted in the memory limit (`--max-memory`, or what the host has available),
/// and how many run at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fitted {
    /// The sizes to run.
    pub sizes: Vec<u64>,
    /// Sizes run at once: `--jobs`, or every host thread shared among the runs' partitions (a
    /// run split in N takes N threads), fewer when that many runs of the largest size would
    /// not fit together.
    pub threads: usize,
    /// `--jobs` that was lowered so that its runs fit.
    pub lowered_jobs: Option<usize>,
    /// The first size of a default run (no `-e`) left out, and why: its refusal.
    pub left_out: Option<(u64, String)>,
}

impl Fitted {
    /// The notes a series prints about its fit.
    pub fn notes(&self, label: &str) -> Vec<String> {
        let mut notes = Vec::new();
        if let (Some((size, why)), Some(last)) = (&self.left_out, self.sizes.last()) {
            notes.push(format!(
                "{label}: up to {} in the default run (give -e {} to ask for larger sizes): {why}",
                formats::size_label(*last),
                formats::size_label(*size)
            ));
        }
        if let Some(j) = self.lowered_jobs {
            notes.push(format!(
                "{label}: -j {j} lowered to {}: more runs at once would not fit in memory",
                self.threads
            ));
        }
        notes
    }
}

/// The sizes of a series that fit in the memory limit of `a`, each estimated by `estimate`
/// before anything runs: a size whose estimate exceeds the limit is refused with `refusal`'s
/// message, except in the default run (no `-e`), which leaves it and the larger sizes out
/// (`Fitted::left_out`; none left: the caller skips the series). Without a limit (a host that
/// does not say what it has), every size.
pub fn fit_sizes(
    a: &SweepArgs,
    sizes: &[u64],
    estimate: &dyn Fn(u64) -> Result<Option<MemoryEstimate>, String>,
    refusal: &dyn Fn(u64, &MemoryEstimate, MemoryLimit) -> String,
) -> Result<Fitted, String> {
    let parts = a.partitions.max(1);
    let wanted = a.jobs.unwrap_or_else(|| (crate::os::threads() / parts).max(1));
    let Some(limit) = a.budgets.max_memory else {
        return Ok(Fitted { sizes: sizes.to_vec(), threads: wanted, lowered_jobs: None, left_out: None });
    };
    let default_run = a.builtin_max_bytes.is_some();
    let limit = if default_run { limit.for_default_run() } else { limit };
    let (mut kept, mut largest, mut left_out) = (Vec::new(), 0u64, None);
    for &size in sizes {
        // A size that gives no element per rank makes no row: nothing to fit.
        let Some(e) = estimate(size)? else { continue };
        if e.total() <= limit.bytes() {
            largest = largest.max(e.total());
            kept.push(size);
            continue;
        }
        let why = refusal(size, &e, limit);
        if !default_run {
            return Err(why);
        }
        // Larger sizes hold more: the default run stops here.
        left_out = Some((size, why));
        break;
    }
    let fit = limit.bytes().checked_div(largest).map_or(wanted, |k| k.clamp(1, wanted as u64) as usize);
    let lowered_jobs = a.jobs.filter(|&j| fit < j);
    Ok(Fitted { sizes: kept, threads: fit, lowered_jobs, left_out })
}

/// The engine work a default series (no `-e`) keeps to, in operations and packet hops as
/// [`crate::sweep::work`] estimates them: enough for every series of a one-server preset
/// (1.8 M for the largest single size of any 8-rank default sweep) and for a 1024-rank
/// allreduce up to 8 MiB (57 M), while a 1024-rank all_to_all (173 M for its first size)
/// runs one size instead of thirteen; the engine gets through 0.6-2 M a second on a 2-core
/// host with data.
pub const DEFAULT_RUN_WORK: u64 = 64_000_000;

/// A default series cut to [`DEFAULT_RUN_WORK`]: its sizes, smallest first, while their
/// summed work stays within it (the first always runs); the first size left out, with why,
/// when that cuts more than the memory fit did.
pub fn cap_default_work(
    mut fitted: Fitted,
    work: &dyn Fn(u64) -> Result<Option<u64>, String>,
) -> Result<Fitted, String> {
    let mut sum = 0u64;
    for (i, &size) in fitted.sizes.iter().enumerate() {
        sum = sum.saturating_add(work(size)?.unwrap_or(0));
        if i > 0 && sum > DEFAULT_RUN_WORK {
            let why = format!(
                "the series up to {} would keep the engine busy with about {} M operations and packet hops, \
                 more than the {} M a default series keeps to",
                formats::size_label(size),
                sum / 1_000_000,
                DEFAULT_RUN_WORK / 1_000_000
            );
            fitted.left_out = Some((size, why));
            fitted.sizes.truncate(i);
            break;
        }
    }
    Ok(fitted)
}

/// Whether a size gives at least one element per rank (a barrier always runs).
pub(super) fn has_elements(spec: &SweepSpec, size: u64) -> bool {
    spec.call.kind == Kind::Barrier
        || formats::count_for(spec.call.kind, size, spec.call.dtype.size() as u64, spec.call.ranks) > 0
}

/// The series to run. With `--mode`, every (collective, mode) pair that applies; without it,
/// PyPTO's builtin and, on one server, one series of what HCCL picks at each size where a mode
/// of ours models every pick; otherwise the HCCL-class series the modes table
/// ([`collectives::SERVING`]) marks as default for where the ranks are
/// ([`collectives::DefaultSeries`]): on one server the AIV and copy-engine meshes the machine
/// supports; across servers `rhd` for an allreduce and `hier` for an allgather,
/// reduce_scatter or all_to_all; above kMaxSupportedRanks on one server, where the HOST
/// builtins do nothing, `rhd` for an allreduce and `grouped-mesh` for an all_to_all, nothing
/// for the others ([`plan_combos`] says why). Each on the table's default blocks
/// ([`collectives::DefaultBlocks`]) unless `--core-num` says, with one warmup call when it
/// uses copy engines.
pub fn combos(a: &SweepArgs, cfg: &Config, ranks: usize) -> Vec<Combo> {
    let core_num = a.core_num.unwrap_or(1);
    // The ranks span several servers: NICs join them.
    let servers = busbw_bound(cfg, ranks, None).is_ok_and(|b| b.cut.is_some());
    let mut out = Vec::new();
    for &kind in &a.collectives {
        let builtin = Combo { kind, mode: Mode::Mesh, core_num, warmup: a.warmup, max_bytes: None, auto: false };
        let Some(modes) = &a.modes else {
            // Where an HCCL-class series runs beside it, the builtin stops early by default.
            let has_hccl = collectives::modes(kind).len() > 1 && a.path == Path::Host;
            let cap = a.builtin_max_bytes.filter(|&m| has_hccl && m < a.max_bytes);
            // Above kMaxSupportedRanks the HOST builtins return at once: no series of theirs.
            let beyond = beyond_builtins(kind, a.path, ranks);
            if !beyond {
                out.push(Combo { max_bytes: cap, ..builtin.clone() });
            }
            if has_hccl {
                let all = a.core_num.unwrap_or(cfg.chip.aiv_cores);
                // RHD is the vendor library's algorithm between servers and at the scale where
                // the others stop, the grouped mesh its all_to_all at that scale; its full-mesh
                // modes are single-server ones, with every block talking to every peer at once.
                // On one server: one series of what HCCL runs at each size (its AIV expansion
                // mode), where a mode of ours models every pick.
                let op = a.op.unwrap_or(ReduceOp::Sum);
                if !(beyond || servers)
                    && let Some((mode, _)) = collectives::hccl_aiv_pick(kind, op, 0)
                {
                    let c = Combo { kind, mode, core_num: all, warmup: a.warmup, max_bytes: None, auto: true };
                    if supports(cfg, &spec(a, &c, ranks)).is_ok() {
                        out.push(c);
                        continue;
                    }
                }
                // The table says which HCCL-class series a default sweep runs where the ranks are,
                // on how many blocks, and whether it uses copy engines (one warmup call).
                for row in
                    collectives::SERVING.iter().filter(|r| r.kind == kind && r.default_series.runs(servers, beyond))
                {
                    let warmup = if row.engine == Engine::CopyEngines { a.warmup.max(1) } else { a.warmup };
                    let core_num = match row.default_blocks {
                        DefaultBlocks::AllCores => all,
                        DefaultBlocks::Fixed(n) => a.core_num.unwrap_or(n),
                    };
                    let c = Combo { kind, mode: row.mode, core_num, warmup, max_bytes: None, auto: false };
                    if supports(cfg, &spec(a, &c, ranks)).is_ok() {
                        out.push(c);
                    }
                }
            }
            continue;
        };
        // Modes that do not apply to `kind` are left out (`plan_combos` says so); a collective
        // none of them applies to runs no series.
        let modes = modes.iter().copied().filter(|&m| mode_applies(kind, m));
        out.extend(modes.map(|mode| Combo { kind, mode, core_num, warmup: a.warmup, max_bytes: None, auto: false }));
    }
    out
}

/// Whether PyPTO's HOST builtin of `kind` returns at once on `ranks` ranks (above
/// kMaxSupportedRanks).
pub(super) fn beyond_builtins(kind: Kind, path: Path, ranks: usize) -> bool {
    collectives::max_ranks(kind, Mode::Mesh, path).is_some_and(|max| ranks > max)
}

/// The algorithms (`--mode`) a collective has: every mode for allreduce, the builtin and the
/// SDMA mesh for allgather, the builtin (`mesh`) for the others.
pub fn modes_of(kind: Kind) -> Vec<Mode> {
    Mode::ALL.iter().copied().filter(|&m| mode_applies(kind, m)).collect()
}

pub(super) fn mode_applies(kind: Kind, mode: Mode) -> bool {
    collectives::modes(kind).contains(&mode)
}

/// The series [`combos`] picks, with what it leaves out said: a `--mode` that does not apply
/// to a collective (a collective none applies to is skipped), and, in the default run, a
/// series whose collective refuses the dtype on this machine while another series of the
/// same collective runs. Nothing left to run is an error that says why.
pub fn plan_combos(a: &SweepArgs, cfg: &Config, ranks: usize) -> Result<(Vec<Combo>, Vec<String>), String> {
    let mut notes = Vec::new();
    let names = |ms: &[Mode]| ms.iter().map(|m| m.to_string()).collect::<Vec<_>>().join(",");
    if let Some(modes) = &a.modes {
        for &kind in &a.collectives {
            let (fits, not): (Vec<Mode>, Vec<Mode>) = modes.iter().partition(|&&m| mode_applies(kind, m));
            let has = names(&modes_of(kind));
            if fits.is_empty() {
                notes.push(format!(
                    "{kind} skipped: --mode {} does not apply to it ({kind} runs --mode {has}; mesh is PyPTO's builtin)",
                    names(&not)
                ));
            } else if !not.is_empty() {
                notes.push(format!("--mode {} does not apply to {kind} (it runs --mode {has}): not run", names(&not)));
            }
        }
    }
    let mut out: Vec<Combo> = Vec::new();
    let all = combos(a, cfg, ranks);
    if a.modes.is_none() {
        for &kind in &a.collectives {
            if beyond_builtins(kind, a.path, ranks) && !all.iter().any(|c| c.kind == kind) {
                notes.push(format!(
                    "{kind} skipped: PyPTO's HOST builtin returns at once above {} ranks (kMaxSupportedRanks) and no \
                     HCCL-class {kind} modelled here runs at {ranks} ranks (the copy-engine and AIV meshes are \
                     single-server algorithms, every block talking to every peer at once); sweep one server with -g {}, \
                     the InCore lowering with --path incore, or ask for --mode (refused up front if it does not fit \
                     in memory)",
                    collectives::MAX_BUILTIN_RANKS,
                    cfg.server_ranks().min(collectives::MAX_BUILTIN_RANKS)
                ));
            }
        }
    }
    for c in &all {
        let others = all.iter().filter(|o| o.kind == c.kind && o.mode != c.mode).count();
        let s = spec(a, c, ranks);
        if a.modes.is_none()
            && others > 0
            && let Err(why) = supports(cfg, &s)
        {
            notes.push(format!("{} skipped: {why}", label(&s)));
            continue;
        }
        out.push(c.clone());
    }
    if out.is_empty() {
        let why = if notes.is_empty() { "no collective given".to_string() } else { notes.join("; ") };
        return Err(format!("nothing to sweep: {why}"));
    }
    Ok((out, notes))
}

/// Warnings for flags that were given but shape no row of some series.
pub(super) fn flag_warnings(a: &SweepArgs, combos: &[Combo], ranks: usize) -> Vec<String> {
    let mut w = Vec::new();
    for c in combos {
        let s = spec(a, c, ranks);
        let lbl = format!("{} {} ({})", c.kind, c.mode, a.path);
        if let Some(n) = a.core_num
            && n != 1
            && s.call.blocks() == 1
        {
            w.push(format!("--core-num {n} does not apply to {lbl}: it runs on one block"));
        }
        if a.root.is_some() && c.kind != Kind::Broadcast {
            w.push(format!("--root does not apply to {}: only broadcast has a root", c.kind));
        }
        if a.op.is_some() && !s.call.reduces() {
            w.push(format!("-o does not apply to {}: it does not reduce", c.kind));
        }
        let copy_engines = collectives::serving(c.kind, c.mode).is_some_and(|r| r.engine == Engine::CopyEngines);
        if a.modes.is_some() && copy_engines && c.warmup == 0 {
            w.push(format!(
                "{lbl}: the first call pays the copy engines' cold start (chip.sdma.cold_start_ns); add -w 1 to leave it out"
            ));
        }
    }
    w.dedup();
    w
}

/// The spec of one series.
pub(super) fn spec(a: &SweepArgs, c: &Combo, ranks: usize) -> SweepSpec {
    let call = Call::new(c.kind, ranks)
        .with_mode(c.mode)
        .with_path(a.path)
        .with_dtype(a.dtype)
        .with_op(a.op.unwrap_or(ReduceOp::Sum))
        .with_root(a.root.unwrap_or(0))
        .with_core_num(c.core_num);
    let s = SweepSpec::new(call).with_iters(a.iters).with_warmup(c.warmup).with_jitter(a.jitter);
    let s = s.with_timing_only(a.no_data).with_partitions(a.partitions);
    SweepSpec { processes: a.processes, budgets: a.budgets, ..s }
}
