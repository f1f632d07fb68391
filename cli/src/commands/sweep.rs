//! `ranksim sweep`: an nccl-tests style bandwidth sweep of one or more collectives (and, for
//! allreduce, algorithms) over message sizes, with JSON, SVG, \[STRACE\] and Chrome trace
//! outputs and CI gates on wrong elements and average bus bandwidth.
//!
//! Without `--mode` the sweep is the main job: PyPTO's builtin kernel next to the best
//! HCCL-class algorithm the machine supports, each series with a note on what it models and
//! the machine's bus-bandwidth bound.

use super::{BudgetFlags, CmdResult, JitterFlags, Status, parse_op};
use crate::processes::{Place, one_each, same_everywhere};
use crate::progress::RowsBar;
use crate::sweep::{SweepSpec, failed_row, mode_note, run_point_watched, supports};
use collectives::{Call, Kind, Mode, Path};
use ranksim::Config;
use ranksim::formats::nccl_type;
use ranksim::formats::parse_size;
use ranksim::formats::{self, ResultRow, Series, SeriesSummary, SweepConfig, SweepJson};
use ranksim::measure::memory::MemoryLimit;
use ranksim::measure::{Budgets, Point, busbw_bound};
use sim_core::Progress;
use sim_core::{DType, Jitter, MemoryEstimate, ReduceOp};
use std::io::Write;
use std::path::PathBuf;

/// Everything `sweep` is told. `None` means "not given": the default applies, and a flag that
/// was given but does not apply to a series draws a warning.
#[derive(Clone, Debug)]
pub struct SweepArgs {
    /// Machine config (TOML) or preset name; `None`: the embedded a2a3.
    pub config: Option<PathBuf>,
    /// Collectives to sweep, in order.
    pub collectives: Vec<Kind>,
    /// Algorithms; `None`: PyPTO's builtin and the best HCCL-class algorithm the machine runs.
    pub modes: Option<Vec<Mode>>,
    /// HOST builtins or the InCore lowering.
    pub path: Path,
    /// Smallest size in bytes (`-b`).
    pub min_bytes: u64,
    /// Largest size in bytes (`-e`).
    pub max_bytes: u64,
    /// Without `--mode`: the largest size of the builtin's series, when `-e` was not given.
    pub builtin_max_bytes: Option<u64>,
    /// Size multiplier between steps (`-f`).
    pub factor: f64,
    /// Element type (`-d`).
    pub dtype: DType,
    /// Reduction (default sum).
    pub op: Option<ReduceOp>,
    /// Root of broadcast (default 0).
    pub root: Option<usize>,
    /// Timed calls per size (`-n`).
    pub iters: u32,
    /// Untimed calls before them (`-w`).
    pub warmup: u32,
    /// Ranks taking part (`-g`); `None`: every rank.
    pub ranks: Option<usize>,
    /// AIV blocks per rank of the multi-block algorithms (default 1; the default HCCL-class
    /// series uses every AIV core).
    pub core_num: Option<usize>,
    /// Where to write the JSON (`-J`).
    pub json: Option<PathBuf>,
    /// Where to write the SVG plot.
    pub plot: Option<PathBuf>,
    /// Where to write the `[STRACE]` lines.
    pub strace: Option<PathBuf>,
    /// Where to write the Chrome trace of one run.
    pub trace: Option<PathBuf>,
    /// Leave the trace file to another process (under `mpirun`, every process traces the
    /// run alike and the first writes it).
    pub no_trace_file: bool,
    /// Fail when a series' average busbw is below this, GB/s.
    pub min_busbw: Option<f64>,
    /// Seeded timing jitter (`None`: deterministic, unperturbed runs).
    pub jitter: Option<Jitter>,
    /// Timing-only: no payload, no check.
    pub no_data: bool,
    /// Sizes run at once on host threads (`None`: every host thread; fewer, given or not, when
    /// that many runs would not fit in memory together). Results do not depend on it.
    pub jobs: Option<usize>,
    /// Print the engine's work (events, packets) and the host time it took.
    pub stats: bool,
    /// Partitions each run is split into (1: one engine). Results do not depend on it.
    pub partitions: usize,
    /// The partitions are this thread's process group (MPI's ranks under `mpirun`).
    pub processes: bool,
    /// What ends a run that would never end (simulated time, events, livelock).
    pub budgets: Budgets,
}

impl SweepArgs {
    /// The arguments of `ranksim sweep` with no option: the main job on `config`.
    pub fn new(config: Option<PathBuf>) -> SweepArgs {
        use clap::{Args, FromArgMatches};
        let cmd = SweepFlags::augment_args(clap::Command::new("sweep"));
        let flags = cmd.try_get_matches_from(["sweep"]).and_then(|m| SweepFlags::from_arg_matches(&m));
        SweepArgs { config, ..SweepArgs::from(flags.expect("sweep's defaults parse")) }
    }
}

impl From<SweepFlags> for SweepArgs {
    fn from(s: SweepFlags) -> SweepArgs {
        let mut collectives: Vec<Kind> = Vec::new();
        for k in s.collective.into_iter().flatten() {
            if !collectives.contains(&k) {
                collectives.push(k);
            }
        }
        SweepArgs {
            collectives,
            modes: s.mode,
            path: s.path,
            dtype: s.dtype,
            op: s.op,
            root: s.root,
            core_num: s.core_num,
            ..SweepArgs::from(s.series)
        }
    }
}

impl From<SeriesFlags> for SweepArgs {
    /// The arguments of a sweep of one collective: the built-in defaults for what the flags
    /// do not say (a user's collective has its own dtype, op and blocks).
    fn from(s: SeriesFlags) -> SweepArgs {
        SweepArgs {
            config: s.config,
            collectives: vec![Kind::AllReduce],
            modes: None,
            path: Path::Host,
            min_bytes: s.min_bytes,
            max_bytes: s.max_bytes.unwrap_or(DEFAULT_MAX_BYTES),
            builtin_max_bytes: if s.max_bytes.is_none() { Some(DEFAULT_BUILTIN_MAX_BYTES) } else { None },
            factor: s.factor,
            dtype: DType::F32,
            op: None,
            root: None,
            iters: s.iters,
            warmup: s.warmup,
            ranks: s.ranks,
            core_num: None,
            json: s.json,
            plot: s.plot,
            strace: s.strace,
            trace: s.trace,
            no_trace_file: false,
            min_busbw: s.min_busbw,
            jitter: s.jitter.jitter(),
            no_data: s.no_data || s.check == Some(0),
            jobs: s.jobs.map(usize::from),
            stats: s.stats,
            partitions: usize::from(s.partitions),
            processes: false,
            budgets: s.budgets.budgets(),
        }
    }
}

/// Parses `--collective`: `all`, or one collective's name.
fn parse_kinds(s: &str) -> Result<Vec<Kind>, String> {
    if s == "all" { Ok(Kind::ALL.to_vec()) } else { s.parse::<Kind>().map(|k| vec![k]) }
}

/// `ranksim sweep`'s flags as the command line gives them; `SweepArgs::from` turns them into
/// the arguments (and gives [`SweepArgs::new`] its defaults, so they are written once).
#[derive(clap::Args, Clone, Debug)]
pub struct SweepFlags {
    /// Collective(s), comma separated: allreduce, allgather, reduce_scatter, broadcast,
    /// all_to_all, all_to_all_v, barrier, or `all` (every one).
    #[arg(long, default_value = "allreduce", value_delimiter = ',', value_parser = parse_kinds)]
    collective: Vec<Vec<Kind>>,
    /// Allreduce algorithm(s), comma separated: mesh, ring (PyPTO's builtins), two-shot (direct
    /// reduce-scatter + allgather in small tiles), and the HCCL-class modes aiv-mesh (the vendor
    /// library's AIV full-mesh allreduce: large double-buffered UB tiles over many cores, pipes
    /// overlapping) and sdma-mesh (its copy-engine allreduce: inline-reduce SDMA puts, then SDMA
    /// puts; sum only, pays the channels' first-use cold start unless -w >= 1), and rhd
    /// (recursive halving-doubling, the vendor library's algorithm between servers: 2 log2(NR)
    /// steps with one partner each, for any rank count) and hier (the server-level hierarchy: a
    /// reduce-scatter inside each server, rhd between servers on the ranks holding the same
    /// slice, an allgather inside each server; servers of the config's `[machine]
    /// server_ranks`, else its hierarchical fabric's node; the ranks must be whole servers).
    /// Give aiv-mesh and sdma-mesh many
    /// cores, e.g. --core-num 48. Default: mesh (the builtin, one block) and the HCCL-class
    /// modes the machine runs (aiv-mesh; sdma-mesh with -w 1) on every AIV core; above 16
    /// ranks, where PyPTO's builtins return at once (kMaxSupportedRanks), rhd on one block.
    /// allgather, reduce_scatter, all_to_all, all_to_all_v and broadcast take mesh (PyPTO's builtin) and sdma-mesh (the
    /// vendor library's copy-engine mesh), reduce_scatter and all_to_all also aiv-mesh (its AIV
    /// kernels: every block pulls large UB tiles from every peer), all_to_all also grouped-mesh
    /// (the vendor library's grouped full mesh on A3: copy-engine puts to 8 peers at a time,
    /// each round waited for); a mode a collective lacks is named and skipped.
    #[arg(long, value_delimiter = ',')]
    mode: Option<Vec<Mode>>,
    /// host (the builtin kernels, one dispatch per rank) or incore (the composite lowering).
    #[arg(long, default_value = "host")]
    path: Path,
    /// Element type: f32, f16, bf16, i32, i16, i8.
    #[arg(short = 'd', long = "datatype", default_value = "f32")]
    dtype: DType,
    /// Reduction: sum, max, min, prod (default sum). nccl-tests' `avg` is refused (use sum:
    /// avg = sum / ranks, same time).
    #[arg(short = 'o', long = "op", value_parser = parse_op)]
    op: Option<ReduceOp>,
    /// Root rank of broadcast (default 0).
    #[arg(short = 'r', long = "root")]
    root: Option<usize>,
    /// AIV blocks per rank for the HOST mesh, two-shot, aiv-mesh and sdma-mesh allreduce and
    /// the sdma-mesh allgather (default 1; the default HCCL-class series: every AIV core). A
    /// warning names the series it does not apply to.
    #[arg(long)]
    core_num: Option<usize>,
    #[command(flatten)]
    series: SeriesFlags,
}

/// The flags of a sweep that any collective takes, a built-in one or yours
/// ([`crate::main_for`]): machine, sizes, calls, ranks, outputs, gates.
#[derive(clap::Args, Clone, Debug)]
pub struct SeriesFlags {
    /// Machine config (TOML) or preset name; default: the embedded a2a3 preset.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Smallest size in bytes (K/M/G suffixes).
    #[arg(short = 'b', long = "minbytes", default_value = "1K", value_parser = parse_size)]
    min_bytes: u64,
    /// Largest size in bytes (K/M/G suffixes). Default 16M; without --mode, the builtin's series
    /// stops at 4M (its busbw is flat from 32K and its time grows linearly) unless -e is given.
    #[arg(short = 'e', long = "maxbytes", value_parser = parse_size)]
    max_bytes: Option<u64>,
    /// Size multiplier between steps.
    #[arg(short = 'f', long = "stepfactor", default_value_t = 2.0, allow_hyphen_values = true)]
    factor: f64,
    /// Timed calls per size, 1..=10000; the time is their mean. Calls are not identical: the first pays
    /// one-time costs (the copy engines' cold start, and later calls start while the previous
    /// one drains), so -n 2 can differ from -n 1 even without --seed; -w leaves calls out.
    #[arg(short = 'n', long = "iters", default_value_t = 1)]
    iters: u32,
    /// Untimed calls before the timed ones, 0..=10000.
    #[arg(short = 'w', long = "warmup_iters", default_value_t = 0)]
    warmup: u32,
    /// Ranks taking part, 2 or more (default: every rank of the machine). Not nccl-tests' `-g`
    /// (GPUs per process, with many processes): ranksim runs every rank in one process, so
    /// `-g 1` is refused; leave it out.
    #[arg(short = 'g', long)]
    ranks: Option<usize>,
    /// nccl-tests' `-c`: 1 checks every element (the default), 0 does not (as --no-data:
    /// timing-only, same times).
    #[arg(short = 'c', long = "check", value_parser = clap::value_parser!(u8).range(0..=1))]
    check: Option<u8>,
    /// Write the results as JSON (nccl-tests' `-J`).
    #[arg(short = 'J', long)]
    json: Option<PathBuf>,
    /// Write an SVG plot of time and busbw against size.
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Write [STRACE] v=1 lines (one pid per rank, one inv per dispatch) of every run.
    #[arg(long)]
    strace: Option<PathBuf>,
    /// Write a Chrome trace (Perfetto) of one run: the first size of the first series (the
    /// output's last lines name it).
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Exit 1 when a series' average bus bandwidth (GB/s, finite, >= 0) is below this.
    #[arg(long, allow_hyphen_values = true)]
    min_busbw: Option<f64>,
    #[command(flatten)]
    jitter: JitterFlags,
    /// Timing-only: store no payload bytes (same times, no validation, far less memory).
    #[arg(long)]
    no_data: bool,
    /// Sizes simulated at once on host threads (default: every host thread); fewer when that
    /// many runs would not fit together in --max-memory (or what the host has), said so. The
    /// results are the same for any value.
    #[arg(short = 'j', long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    jobs: Option<u16>,
    /// Print the engine's work (events, packets) and the host time it took.
    #[arg(long)]
    stats: bool,
    /// Split each run into this many partitions of whole islands (servers or supernodes,
    /// chips a switch joins), each simulated on a host thread of its own, in windows of the
    /// least latency into a switch (`ranksim topo` prints it). The results are the same for
    /// any value; a machine of fewer islands leaves partitions empty. Each run takes that many
    /// host threads, so without -j fewer sizes run at once. Traces are the same too.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    partitions: u16,
    #[command(flatten)]
    budgets: BudgetFlags,
}

/// The default largest size (`-e`): 16 MiB, where the HCCL-class algorithms are within a few
/// percent of their plateau and the builtin's one-block time (linear in size) still simulates
/// in seconds.
const DEFAULT_MAX_BYTES: u64 = 16 << 20;

/// The default main job's largest size for PyPTO's builtin (4 MiB): its busbw is flat from
/// 32 KiB on and its one-block time grows linearly, so larger sizes would only cost seconds.
const DEFAULT_BUILTIN_MAX_BYTES: u64 = 4 << 20;

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
fn combo_label(a: &SweepArgs, c: &Combo, ranks: usize) -> String {
    let s = spec(a, c, ranks);
    if c.auto { format!("{} hccl core_num {}", c.kind, s.call.blocks()) } else { label(&s) }
}

/// What a size of an `hccl` series runs: the mode HCCL picks for its data
/// ([`collectives::hccl_aiv_pick`], the data counted as hccl_test counts it: the count column
/// times the element size), with one warmup call when the pick uses copy engines; and what its
/// row says it ran (the mode and the vendor library's executor).
pub(crate) fn picked(base: &SweepSpec, size: u64) -> (SweepSpec, String) {
    let c = base.call;
    let esize = c.dtype.size() as u64;
    let data = formats::count_for(c.kind, size, esize, c.ranks).saturating_mul(esize);
    match collectives::hccl_aiv_pick(c.kind, c.op, data) {
        Some((mode, exec)) => {
            let warmup = if mode == Mode::SdmaMesh { base.warmup.max(1) } else { base.warmup };
            (SweepSpec { call: c.with_mode(mode), ..base.clone() }.with_warmup(warmup), format!("{mode} ({exec})"))
        }
        None => (base.clone(), c.mode.to_string()),
    }
}

/// The legend / JSON label of a series: `allreduce sdma-mesh core_num 48 -w 1`.
fn label(spec: &SweepSpec) -> String {
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

/// How far a series' numbers are from measurements: the nearest shipped table that measured
/// the same collective and algorithm, and the model's error against it on this machine.
fn trust_line(cfg: &Config, spec: &SweepSpec) -> String {
    let what = label_of(spec.call.kind, spec.call.mode);
    match super::validate::nearest_table(cfg, spec.call.kind, spec.call.mode, spec.call.ranks) {
        Some(t) => format!(
            "the nearest measured table is {} ({}); the model is off it by {}; caveats: docs/references/measurements.md",
            t.name,
            t.workload,
            t.error_summary()
        ),
        None => format!(
            "no measured table covers {what}: these numbers are the model's alone (`ranksim validate` lists the tables)"
        ),
    }
}

/// `allreduce aiv-mesh`, or the collective alone when it has one algorithm.
fn label_of(kind: Kind, mode: Mode) -> String {
    ranksim::measure::series_name(kind, mode)
}

/// What the `hccl` series models, printed before its table.
const HCCL_NOTE: &str = "HCCL-class, not a PyPTO builtin: what the vendor library runs on a 910B server with \
     HCCL_OP_EXPANSION_MODE=AIV at each size (its selector's thresholds, docs/references/hardware.md §4.2); \
     after each row the mode of ours that ran and the library's executor it models";

/// Runs the sweep, printing the table to `out` and a progress bar to stderr when stdout and stderr are terminals.
pub fn sweep(out: &mut dyn Write, a: &SweepArgs) -> CmdResult {
    let cfg = Config::load_or_default(a.config.as_deref()).map_err(|e| e.to_string())?;
    let ranks = checked_ranks(a, &cfg)?;
    let all_sizes = checked_sizes(a)?;
    let (combos, skipped) = plan_combos(a, &cfg, ranks)?;
    for combo in &combos {
        let spec = spec(a, combo, ranks);
        spec.validate("-e", a.max_bytes, cfg.machine.ranks)?;
        if !all_sizes.iter().any(|&s| has_elements(&spec, s)) {
            return Err(format!(
                "{}: no size from -b {} to -e {} gives an element per rank on {ranks} ranks ({}-byte {}); raise -e",
                combo_label(a, combo, ranks),
                a.min_bytes,
                a.max_bytes,
                a.dtype.size(),
                a.dtype
            ));
        }
    }
    // Memory: every size of every series is estimated before anything runs.
    let mut skipped = skipped;
    let mut planned = Vec::new();
    for combo in &combos {
        let spec = spec(a, combo, ranks);
        // A barrier moves no payload: every size would be the same size-0 row.
        let capped: Vec<u64> = all_sizes.iter().copied().filter(|&s| combo.max_bytes.is_none_or(|m| s <= m)).collect();
        let sizes: &[u64] = if spec.call.kind == Kind::Barrier { &all_sizes[..1] } else { &capped };
        let todo = distinct_sizes(&spec, sizes);
        let fitted = fit_sizes(a, &todo, &|s| crate::sweep::estimate(&cfg, &spec, s), &|s, e, l| {
            crate::sweep::memory_refusal(&cfg, &spec, s, e, l)
        })?;
        let fitted = if a.builtin_max_bytes.is_some() {
            cap_default_work(fitted, &|s| crate::sweep::work(&cfg, &spec, s))?
        } else {
            fitted
        };
        match fitted.left_out {
            Some((_, why)) if fitted.sizes.is_empty() => {
                skipped.push(format!("{} skipped: {why}", combo_label(a, combo, ranks)))
            }
            _ => planned.push((combo.clone(), fitted)),
        }
    }
    if planned.is_empty() {
        return Err(format!("nothing to sweep: {}", skipped.join("; ")));
    }
    let combos: Vec<Combo> = planned.iter().map(|(c, _)| c.clone()).collect();
    let mut run = SweepRun::new(combos.len() > 1, &cfg);
    for w in skipped.into_iter().chain(flag_warnings(a, &combos, ranks)) {
        run.warn(out, w)?;
    }
    for (combo, fitted) in planned {
        let combo = &combo;
        let spec = spec(a, combo, ranks);
        let lbl = combo_label(a, combo, ranks);
        let bound = busbw_bound(&cfg, ranks, Some(spec.call.kind)).map_err(|e| e.to_string())?;
        let note = if combo.auto { HCCL_NOTE.to_string() } else { mode_note(&spec) };
        let mut notes = vec![format!("{lbl}: {note}")];
        let reports_bound = spec.call.kind != Kind::Barrier;
        if reports_bound {
            notes.push(format!("bound: {}", bound.line()));
        }
        if let Some(n) = hccl_costs_note(&cfg, &spec) {
            notes.push(format!("{lbl}: {n}"));
        }
        if spec.call.kind == Kind::Barrier && all_sizes.len() > 1 {
            notes.push("barrier moves no payload: one row, not one per size".to_string());
        }
        if let Some(m) = combo.max_bytes {
            notes.push(format!(
                "{lbl}: up to {} in the default run (one block: its time grows linearly with the size); \
                 give -e for larger sizes",
                formats::size_label(m)
            ));
        }
        notes.extend(fitted.notes(&lbl));
        let mut config = sweep_config(a, &cfg, &spec, combo.max_bytes.unwrap_or(a.max_bytes));
        if combo.auto {
            config.mode = "hccl".into();
        }
        let plan = SeriesPlan {
            config,
            label: lbl,
            notes,
            threads: fitted.threads,
            sizes: fitted.sizes,
            bound: reports_bound.then_some(bound.gbps).filter(|b| b.is_finite()),
            trust: Some(trust_line(&cfg, &spec)),
        };
        let auto = combo.auto;
        let measure = |size: u64, trace: bool, progress: Option<&Progress>| {
            if !auto {
                return run_point_watched(&cfg, &spec, size, trace, progress);
            }
            let (s, algorithm) = picked(&spec, size);
            let point = run_point_watched(&cfg, &s, size, trace, progress)?;
            Ok(point.map(|mut p| {
                p.row.algorithm = Some(algorithm);
                p
            }))
        };
        let failed = |size: u64, why: String| {
            let (s, algorithm) = if auto { picked(&spec, size) } else { (spec.clone(), String::new()) };
            failed_row(&s, size, why).map(|r| ResultRow { algorithm: auto.then_some(algorithm), ..r })
        };
        run.series(out, a, plan, &measure, &failed)?;
    }
    run.finish(out, a, ranks)
}

/// The ranks taking part: `-g`, or every rank of the machine; one rank is refused (it has no
/// peer, and nccl-tests' `-g 1` means something else).
fn checked_ranks(a: &SweepArgs, cfg: &Config) -> Result<usize, String> {
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
fn checked_sizes(a: &SweepArgs) -> Result<Vec<u64>, String> {
    let sizes = formats::sweep_sizes(a.min_bytes, a.max_bytes, a.factor)
        .map_err(|e| format!("-b {} -e {} -f {}: {e}", a.min_bytes, a.max_bytes, a.factor))?;
    if let Some(min) = a.min_busbw
        && !(min.is_finite() && min >= 0.0)
    {
        return Err(format!("--min-busbw {min}: must be a finite number of GB/s, 0 or more"));
    }
    Ok(sizes)
}

/// What one series of a sweep prints and runs.
pub struct SeriesPlan {
    /// The legend / JSON label.
    pub label: String,
    /// What the preamble line and the JSON say was run.
    pub config: SweepConfig,
    /// `# ` lines between the preamble and the header (what it models, the bound, caps).
    pub notes: Vec<String>,
    /// The sizes to run, in order.
    pub sizes: Vec<u64>,
    /// Sizes run at once on host threads.
    pub threads: usize,
    /// The busbw bound its summary compares with (`None`: no bound applies).
    pub bound: Option<f64>,
    /// How far such numbers are from measurements: a line after the footer (`None`: none).
    pub trust: Option<String>,
}

/// The error a sweep stops with when Ctrl-C or SIGTERM arrived (the exit code is 130).
const INTERRUPTED: &str = "interrupted";

/// Measures one size of a series: `(size, traced, progress)`; `Ok(None)` when the size gives
/// no element.
pub type MeasureFn<'a> = dyn Fn(u64, bool, Option<&Progress>) -> Result<Option<Point>, String> + Sync + 'a;

/// The FAILED row of a size whose run gave no measurement, and why (`None`: no row at all).
pub type FailedRowFn<'a> = dyn Fn(u64, String) -> Option<ResultRow> + 'a;

/// Everything a sweep gathers over its series: rows, plot series, summaries, STRACE, engine
/// work, warnings already printed, whether anything failed.
pub struct SweepRun {
    multi: bool,
    rows: Vec<ResultRow>,
    series: Vec<Series>,
    summaries: Vec<SeriesSummary>,
    strace: formats::StraceLog,
    tally: crate::run_stats::Tally,
    started: std::time::Instant,
    traced: Option<(String, u64)>,
    warned: Vec<String>,
    failed: bool,
}

impl SweepRun {
    /// A sweep of one series, or of several (`multi`: rows carry their series, a summary
    /// closes the output), on the machine of `cfg`.
    pub fn new(multi: bool, cfg: &Config) -> SweepRun {
        SweepRun {
            multi,
            rows: Vec::new(),
            series: Vec::new(),
            summaries: Vec::new(),
            strace: formats::StraceLog::new(&cfg.host),
            tally: crate::run_stats::Tally::default(),
            started: std::time::Instant::now(),
            traced: None,
            warned: Vec::new(),
            failed: false,
        }
    }

    /// Prints `# warning: w` once per sweep.
    pub fn warn(&mut self, out: &mut dyn Write, w: String) -> Result<(), String> {
        if !self.warned.contains(&w) {
            writeln!(out, "# warning: {w}").map_err(io)?;
            self.warned.push(w);
        }
        Ok(())
    }

    /// Runs one series: its preamble, notes and header, a row per size (FAILED rows for sizes
    /// that gave no measurement, with the first wrong elements of a wrong row), the footer,
    /// and the lines that say why it failed.
    pub fn series(
        &mut self,
        out: &mut dyn Write,
        a: &SweepArgs,
        plan: SeriesPlan,
        measure: &MeasureFn<'_>,
        failed_row: &FailedRowFn<'_>,
    ) -> Result<(), String> {
        writeln!(out, "{}", formats::preamble(env!("CARGO_PKG_VERSION"), &plan.config)).map_err(io)?;
        for n in &plan.notes {
            writeln!(out, "# {n}").map_err(io)?;
        }
        writeln!(out, "{}", formats::header()).map_err(io)?;
        let trace_first = a.trace.is_some() && self.traced.is_none();
        let bar = RowsBar::on_terminal(&plan.label, plan.sizes.len());
        let work = |k: usize, &size: &u64| measure(size, trace_first && k == 0, Some(bar.counter()));
        let mut rows: Vec<ResultRow> = Vec::new();
        let mut take = |k: usize, result: Result<Option<Point>, String>| -> Result<(), String> {
            bar.row_done();
            bar.suspend(|| self.take_row(out, a, &plan, &mut rows, failed_row, plan.sizes[k], result))
        };
        let taken = crate::parallel::in_order(&plan.sizes, plan.threads, work, &mut take);
        drop(bar);
        if crate::interrupt::raised() {
            // Ctrl-C: the rows so far are the partial table; no footer, no files.
            writeln!(out, "# interrupted: {} of {} size(s) of this series done", rows.len(), plan.sizes.len())
                .map_err(io)?;
            return Err(INTERRUPTED.into());
        }
        taken?;
        self.close_series(out, a, plan, rows)
    }

    /// Prints and keeps the row of one size.
    #[allow(clippy::too_many_arguments)]
    fn take_row(
        &mut self,
        out: &mut dyn Write,
        a: &SweepArgs,
        plan: &SeriesPlan,
        rows: &mut Vec<ResultRow>,
        failed_row: &FailedRowFn<'_>,
        size: u64,
        result: Result<Option<Point>, String>,
    ) -> Result<(), String> {
        let series = self.multi.then(|| plan.label.clone());
        if crate::interrupt::raised() {
            // The run was stopped, not failed: no row, and no further size.
            return Err(INTERRUPTED.into());
        }
        let point = match result {
            Ok(Some(p)) => p,
            Ok(None) => return Ok(()),
            // This size cannot run (a tile that does not fit UB, a deadlock, ...): its row says
            // why, the details follow as notes, and the sweep goes on.
            Err(e) => {
                let mut lines = e.lines();
                let Some(row) = failed_row(size, lines.next().unwrap_or("failed").to_string()) else { return Ok(()) };
                match &row.algorithm {
                    Some(alg) => writeln!(out, "{}  ({alg})", formats::row(&row)),
                    None => writeln!(out, "{}", formats::row(&row)),
                }
                .map_err(io)?;
                for l in lines.filter(|l| !l.trim().is_empty()) {
                    writeln!(out, "#   {}", l.trim_end()).map_err(io)?;
                }
                rows.push(ResultRow { series, ..row });
                return Ok(());
            }
        };
        self.tally.add(&point.report);
        if self.traced.is_none()
            && let (Some(path), Some(trace)) = (&a.trace, &point.report.trace)
        {
            if !a.no_trace_file {
                let json = ranksim::formats::to_chrome_json(trace, plan.config.ranks);
                std::fs::write(path, json).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            }
            self.traced = Some((plan.label.clone(), point.row.size));
        }
        if a.strace.is_some() {
            self.strace.add_run(&point.report);
        }
        for w in &point.report.warnings {
            self.warn(out, w.clone())?;
        }
        match &point.row.algorithm {
            Some(alg) => writeln!(out, "{}  {alg}", formats::row(&point.row)),
            None => writeln!(out, "{}", formats::row(&point.row)),
        }
        .map_err(io)?;
        for m in &point.row.first_wrong {
            writeln!(out, "#   wrong: {m}").map_err(io)?;
        }
        rows.push(ResultRow { series, ..point.row });
        Ok(())
    }

    /// The footer of a series and the lines that say why it failed; its summary and plot line.
    fn close_series(
        &mut self,
        out: &mut dyn Write,
        a: &SweepArgs,
        plan: SeriesPlan,
        rows: Vec<ResultRow>,
    ) -> Result<(), String> {
        let lbl = plan.label;
        let measured: Vec<&ResultRow> = rows.iter().filter(|r| r.failed.is_none()).collect();
        let avg = formats::average_busbw(&measured.iter().map(|r| r.busbw_gbps).collect::<Vec<_>>());
        let verdict = formats::Verdict::of(&rows);
        writeln!(out, "{}", formats::footer(avg, verdict)).map_err(io)?;
        self.failed |= verdict.is_failed();
        if let Some(min) = a.min_busbw
            && avg < min
        {
            writeln!(out, "# FAILED: {lbl}: average bus bandwidth {avg:.2} GB/s is below --min-busbw {min}")
                .map_err(io)?;
            self.failed = true;
        }
        if verdict.wrong > 0 {
            writeln!(out, "# FAILED: {} wrong element(s)", verdict.wrong).map_err(io)?;
        }
        if let Some(t) = &plan.trust {
            writeln!(out, "# measured: {t}").map_err(io)?;
        }
        if verdict.failed > 0 {
            writeln!(out, "# FAILED: {} size(s) have no measurement (the FAILED rows say why)", verdict.failed)
                .map_err(io)?;
        }
        self.series.push(Series {
            label: lbl.clone(),
            points: measured.iter().map(|r| (r.size as f64, r.time_us, r.busbw_gbps)).collect(),
        });
        let peak = measured.iter().map(|r| r.busbw_gbps).fold(0.0, f64::max);
        self.summaries.push(SeriesSummary {
            label: lbl,
            config: plan.config,
            average_bus_bandwidth: avg,
            peak_bus_bandwidth: peak,
            bound_gbps: plan.bound,
        });
        self.rows.extend(rows);
        Ok(())
    }

    /// The summary of several series, the output files, the trace line and `--stats`; the
    /// sweep's status.
    pub fn finish(self, out: &mut dyn Write, a: &SweepArgs, ranks: usize) -> CmdResult {
        if self.multi {
            summary(out, &self.summaries, &self.rows).map_err(io)?;
        }
        if let Some(path) = &a.trace {
            match &self.traced {
                Some((series, size)) => writeln!(
                    out,
                    "# trace: {series} at {size} B (the first size that ran; one run per sweep) written to {}",
                    path.display()
                ),
                None => writeln!(out, "# warning: no trace written: the first size of the sweep did not run"),
            }
            .map_err(io)?;
        }
        write_outputs(a, &self.machine_title(ranks), self.rows, self.summaries, &self.series, &self.strace.text())?;
        if a.stats {
            writeln!(out, "{}", self.tally.line(self.started.elapsed())).map_err(io)?;
        }
        Ok(if self.failed { Status::Failed } else { Status::Ok })
    }

    fn machine_title(&self, ranks: usize) -> String {
        let machine = self.summaries.first().map_or("?", |s| s.config.machine.as_str());
        format!("ranksim sweep on {machine} ({ranks} ranks)")
    }
}

fn io(e: std::io::Error) -> String {
    e.to_string()
}

/// The sizes of a series that give rows: a size whose element count is the previous one's
/// would repeat its row.
fn distinct_sizes(spec: &SweepSpec, sizes: &[u64]) -> Vec<u64> {
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
fn has_elements(spec: &SweepSpec, size: u64) -> bool {
    spec.call.kind == Kind::Barrier
        || formats::count_for(spec.call.kind, size, spec.call.dtype.size() as u64, spec.call.ranks) > 0
}

/// The closing comparison of several series: each one's best busbw against its bound (one
/// bound in the heading when every series has the same), or FAILED for a series with no
/// measured size.
fn summary(out: &mut dyn Write, s: &[SeriesSummary], rows: &[ResultRow]) -> std::io::Result<()> {
    let bounds: Vec<f64> = s.iter().filter_map(|x| x.bound_gbps).collect();
    let one = bounds.windows(2).all(|w| w[0] == w[1]);
    match bounds.first() {
        Some(b) if one => writeln!(out, "# summary: peak busbw per series (bound {:.2} GB/s)", b + 0.0)?,
        _ => writeln!(out, "# summary: peak busbw per series, each against its collective's bound")?,
    }
    for x in s {
        let mine = || rows.iter().filter(|r| r.series.as_deref() == Some(x.label.as_str()));
        if mine().all(|r| r.failed.is_some()) {
            writeln!(out, "#   {:<44} FAILED: no size was measured (the FAILED rows say why)", x.label)?;
            continue;
        }
        if x.config.collective == "barrier" {
            writeln!(out, "#   {:<44} moves no payload: its row gives its time", x.label)?;
            continue;
        }
        let pct = match x.bound_gbps {
            Some(b) if b > 0.0 && one => format!(" = {:.1}% of the bound", 100.0 * x.peak_bus_bandwidth / b),
            Some(b) if b > 0.0 => format!(" = {:.1}% of its bound {b:.2} GB/s", 100.0 * x.peak_bus_bandwidth / b),
            _ => String::new(),
        };
        writeln!(out, "#   {:<44} {:>9.2} GB/s{pct}", x.label, x.peak_bus_bandwidth)?;
    }
    Ok(())
}

/// Blocks a default `hier` allgather / reduce_scatter / all_to_all series runs on: each puts to
/// every peer of a step on its own channels, so a few blocks keep the links busy while their
/// handshakes stay few.
pub const HIER_BLOCKS: usize = 4;

/// The series to run. With `--mode`, every (collective, mode) pair that applies; without it,
/// PyPTO's builtin and the HCCL-class algorithms `cfg` supports for the collective (`aiv-mesh`
/// for allreduce, reduce_scatter and all_to_all; `sdma-mesh` when the chip has copy engines
/// and the op is a sum), on every AIV
/// core and with one warmup call when they use copy engines. When the ranks span several
/// servers an allreduce's HCCL-class series is `rhd` (the vendor library's algorithm between
/// servers; the full-mesh ones are single-server), on one block. Above kMaxSupportedRanks,
/// where the HOST builtins do nothing, only what the vendor library runs at that scale: `rhd`
/// for an allreduce, the grouped mesh (`grouped-mesh`, one block, one warmup call) for an
/// all_to_all, nothing for the others ([`plan_combos`] says why). Across servers an allgather,
/// reduce_scatter or all_to_all runs `hier` (a mesh inside each server, HCCL's algorithm
/// between them) on [`HIER_BLOCKS`] blocks, one warmup call.
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
                let candidates: &[Mode] = match kind {
                    Kind::AllReduce if beyond || servers => &[Mode::Rhd],
                    // Across servers HCCL runs its two-level algorithms: a mesh inside each
                    // server, halving-doubling / ring or pairwise between them.
                    Kind::AllGather | Kind::ReduceScatter | Kind::AllToAll if servers => &[Mode::Hier],
                    Kind::AllToAll if beyond => &[Mode::GroupedMesh],
                    _ if beyond => &[],
                    Kind::AllReduce | Kind::ReduceScatter | Kind::AllToAll | Kind::AllGather => {
                        &[Mode::AivMesh, Mode::SdmaMesh]
                    }
                    _ if servers => &[],
                    _ => &[Mode::SdmaMesh],
                };
                for &mode in candidates {
                    let copy_engines = matches!(mode, Mode::SdmaMesh | Mode::GroupedMesh | Mode::Hier);
                    let warmup = if copy_engines { a.warmup.max(1) } else { a.warmup };
                    // RHD talks to one partner at a time: one block already fills that link; the
                    // grouped mesh's rounds of 8 peers go through one channel at its rate.
                    // hier's blocks each put to every peer of a step on channels of their own:
                    // a few blocks fill the links.
                    let core_num = match mode {
                        Mode::Rhd | Mode::GroupedMesh => a.core_num.unwrap_or(1),
                        Mode::Hier => a.core_num.unwrap_or(HIER_BLOCKS),
                        _ => all,
                    };
                    let c = Combo { kind, mode, core_num, warmup, max_bytes: None, auto: false };
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
fn beyond_builtins(kind: Kind, path: Path, ranks: usize) -> bool {
    collectives::max_ranks(kind, Mode::Mesh, path).is_some_and(|max| ranks > max)
}

/// The algorithms (`--mode`) a collective has: every mode for allreduce, the builtin and the
/// SDMA mesh for allgather, the builtin (`mesh`) for the others.
pub fn modes_of(kind: Kind) -> Vec<Mode> {
    Mode::ALL.iter().copied().filter(|&m| mode_applies(kind, m)).collect()
}

fn mode_applies(kind: Kind, mode: Mode) -> bool {
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
fn flag_warnings(a: &SweepArgs, combos: &[Combo], ranks: usize) -> Vec<String> {
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
        if a.modes.is_some() && c.mode == Mode::SdmaMesh && c.warmup == 0 {
            w.push(format!(
                "{lbl}: the first call pays the copy engines' cold start (chip.sdma.cold_start_ns); add -w 1 to leave it out"
            ));
        }
    }
    w.dedup();
    w
}

/// The spec of one series.
fn spec(a: &SweepArgs, c: &Combo, ranks: usize) -> SweepSpec {
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

fn sweep_config(a: &SweepArgs, cfg: &Config, s: &SweepSpec, max_bytes: u64) -> SweepConfig {
    SweepConfig {
        machine: cfg.machine.name.clone(),
        ranks: s.call.ranks,
        collective: s.call.kind.to_string(),
        mode: if matches!(s.call.kind, Kind::AllReduce | Kind::AllGather) || s.call.mode != Mode::Mesh {
            s.call.mode.to_string()
        } else {
            "-".into()
        },
        path: s.call.path.to_string(),
        core_num: s.call.blocks(),
        dtype: nccl_type(s.call.dtype).to_string(),
        redop: if s.call.reduces() { s.call.op.to_string() } else { "none".into() },
        root: if s.call.kind == Kind::Broadcast { i64::try_from(s.call.root).unwrap_or(i64::MAX) } else { -1 },
        min_bytes: a.min_bytes,
        max_bytes,
        step_factor: a.factor,
        warmup: s.warmup,
        iters: s.iters,
        seed: a.jitter.map_or(0, |j| j.seed),
        jitter_op_ns: a.jitter.map(|j| j.op.as_ps() / 1000),
        jitter_dispatch_ns: a.jitter.map(|j| j.dispatch.as_ps() / 1000),
        timing_only: a.no_data,
    }
}

fn write_outputs(
    a: &SweepArgs,
    title: &str,
    rows: Vec<ResultRow>,
    summaries: Vec<SeriesSummary>,
    series: &[Series],
    strace: &str,
) -> Result<(), String> {
    let write = |path: &PathBuf, text: &str| {
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    if let Some(p) = &a.json {
        let Some(first) = summaries.first() else { return Err("nothing to sweep".into()) };
        let mut sc = first.config.clone();
        let join = |f: fn(&SweepConfig) -> String| {
            let mut v: Vec<String> = Vec::new();
            for s in &summaries {
                let x = f(&s.config);
                if !v.contains(&x) {
                    v.push(x);
                }
            }
            v.join(",")
        };
        sc.collective = join(|c| c.collective.clone());
        sc.mode = join(|c| c.mode.clone());
        write(p, &formats::to_json_string(&SweepJson::new(sc, rows, summaries)))?;
    }
    if let Some(p) = &a.plot {
        write(p, &formats::plot_svg(title, series))?;
    }
    if let Some(p) = &a.strace {
        write(p, strace)?;
    }
    Ok(())
}

/// For an HCCL-class series on a machine that gives HCCL's own op costs: that the times are
/// device time only, and what a host-launched op adds (small sizes are otherwise optimistic).
fn hccl_costs_note(cfg: &Config, spec: &SweepSpec) -> Option<String> {
    let h = &cfg.host;
    let hccl = matches!(spec.call.mode, Mode::AivMesh | Mode::SdmaMesh | Mode::Rhd | Mode::Hier | Mode::GroupedMesh)
        && spec.call.path == Path::Host;
    (hccl && (h.hccl_launch_us > 0.0 || h.hccl_setup_us > 0.0)).then(|| {
        format!(
            "device time only: a host-launched HCCL op also pays about {} us of setup before it (host.hccl_setup_us) \
             and runs at most once per {} us (host.hccl_launch_us), fitted to 2-rank HcclSend/HcclRecv \
             (ranksim validate --table hccl-sendrecv-2p)",
            h.hccl_setup_us, h.hccl_launch_us
        )
    })
}
/// A sweep's arguments for a run over `place = (rank, size)` processes: one partition each,
/// sizes one after another (every process takes part in every run), and the JSON, STRACE and
/// plot written by the first process only. Nothing that changes a run may differ between the
/// processes (they would wait for each other forever): `--trace`, which asks for a traced run,
/// stays on every process, and only the first writes the file.
pub fn sweep_args(mut a: SweepArgs, place: Place) -> Result<SweepArgs, String> {
    let Some((rank, size)) = place else { return Ok(a) };
    a.partitions = one_each(a.partitions, size)?;
    a.processes = true;
    a.jobs = Some(1);
    a.budgets.max_memory = same_everywhere(a.budgets.max_memory);
    if rank > 0 {
        (a.json, a.plot, a.strace, a.no_trace_file) = (None, None, None, true);
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_over_processes_has_one_partition_each_and_only_the_first_writes_files() {
        let mut a = SweepArgs::new(None);
        (a.json, a.trace) = (Some("r.json".into()), Some("t.json".into()));
        let first = sweep_args(a.clone(), Some((0, 3))).unwrap();
        assert_eq!((first.partitions, first.processes, first.jobs), (3, true, Some(1)));
        assert!(first.json.is_some() && !first.no_trace_file);
        let third = sweep_args(a.clone(), Some((2, 3))).unwrap();
        assert!(third.json.is_none());
        assert!(third.trace.is_some() && third.no_trace_file, "every process traces, the first writes the file");
        assert_eq!(sweep_args(a.clone(), None).unwrap().partitions, 1, "alone: unchanged");
        a.partitions = 2;
        assert!(sweep_args(a, Some((0, 3))).unwrap_err().contains("one partition per process (3)"));
    }

    /// Processes decide alike: a given --max-memory holds on every one, the memory each host
    /// happens to have available is not a limit (alone, it is).
    #[test]
    fn processes_share_a_given_memory_limit_and_not_what_each_host_has() {
        let mut a = SweepArgs::new(None);
        a.budgets.max_memory = Some(MemoryLimit::Available(8 << 30));
        assert_eq!(sweep_args(a.clone(), Some((1, 2))).unwrap().budgets.max_memory, None);
        assert_eq!(sweep_args(a.clone(), None).unwrap().budgets.max_memory, Some(MemoryLimit::Available(8 << 30)));
        a.budgets.max_memory = Some(MemoryLimit::Given(4 << 30));
        assert_eq!(sweep_args(a, Some((0, 2))).unwrap().budgets.max_memory, Some(MemoryLimit::Given(4 << 30)));
    }

    #[test]
    fn new_takes_the_command_lines_defaults() {
        let a = SweepArgs::new(Some("ring8".into()));
        assert_eq!(a.config, Some(PathBuf::from("ring8")));
        assert_eq!(a.collectives, [Kind::AllReduce]);
        assert!(a.modes.is_none() && a.path == Path::Host && a.dtype == DType::F32);
        assert_eq!((a.min_bytes, a.max_bytes, a.builtin_max_bytes), (1 << 10, 16 << 20, Some(4 << 20)));
        assert_eq!((a.factor, a.iters, a.warmup), (2.0, 1, 0));
        assert!(a.op.is_none() && a.root.is_none() && a.ranks.is_none() && a.core_num.is_none());
        assert!(a.json.is_none() && a.plot.is_none() && a.strace.is_none() && a.trace.is_none());
        assert!(a.min_busbw.is_none() && a.jitter.is_none() && a.jobs.is_none());
        assert!(!a.no_data && !a.stats);
        assert_eq!((a.partitions, a.processes), (1, false));
    }

    /// A run split in N takes N host threads: without -j a sweep runs fewer sizes at once
    /// (never none); -j is taken as given when its runs fit.
    #[test]
    fn split_runs_leave_host_threads_to_their_partitions() {
        let mut a = SweepArgs::new(None);
        a.budgets.max_memory = None;
        let threads = |a: &SweepArgs| fit_sizes(a, &[1024], &|_| Ok(gib(0)), &|_, _, _| String::new()).unwrap().threads;
        let all = threads(&a);
        a.partitions = 2;
        assert_eq!(threads(&a), (all / 2).max(1));
        a.partitions = 1 << 10;
        assert_eq!(threads(&a), 1);
        a.jobs = Some(3);
        assert_eq!(threads(&a), 3);
    }

    fn gib(n: u64) -> Option<MemoryEstimate> {
        let mut e = MemoryEstimate::new();
        e.add("payload", n << 30);
        Some(e)
    }

    /// Sizes whose estimate exceeds the limit: refused when -e asked for them, left out of the
    /// default run (with the first one's refusal); -j runs only as many sizes at once as fit.
    #[test]
    fn sizes_fit_the_memory_limit_or_are_refused() {
        let mut a = SweepArgs::new(None);
        a.budgets.max_memory = Some(MemoryLimit::Given(10 << 30));
        a.jobs = Some(4);
        // 1 KiB holds 1 GiB, 2 KiB 4 GiB, 4 KiB 16 GiB, 8 KiB 64 GiB.
        let est = |s: u64| Ok(gib((s / 1024) * (s / 1024)));
        let refusal = |s: u64, e: &MemoryEstimate, l: MemoryLimit| format!("{s} needs {} > {}", e.total(), l.bytes());
        let sizes = [1024, 2048, 4096, 8192];
        let f = fit_sizes(&a, &sizes, &est, &refusal).unwrap();
        assert_eq!(f.sizes, [1024, 2048]);
        assert_eq!(f.left_out, Some((4096, format!("4096 needs {} > {}", 16u64 << 30, 10u64 << 30))));
        // Two runs of 4 GiB fit in 10 GiB, not four.
        assert_eq!((f.threads, f.lowered_jobs), (2, Some(4)));
        let notes = f.notes("x");
        assert!(
            notes[0].starts_with("x: up to 2K in the default run (give -e 4K to ask for larger sizes): 4096 needs")
        );
        assert_eq!(notes[1], "x: -j 4 lowered to 2: more runs at once would not fit in memory");
        a.builtin_max_bytes = None; // -e given
        assert_eq!(
            fit_sizes(&a, &sizes, &est, &refusal).unwrap_err(),
            format!("4096 needs {} > {}", 16u64 << 30, 10u64 << 30)
        );
        // Nothing fits: the default run leaves every size out.
        a.builtin_max_bytes = Some(4 << 20);
        a.budgets.max_memory = Some(MemoryLimit::Given(1 << 20));
        let f = fit_sizes(&a, &sizes, &est, &refusal).unwrap();
        assert!(f.sizes.is_empty() && f.left_out.as_ref().is_some_and(|(s, _)| *s == 1024));
    }

    /// A default series runs its sizes while their summed work stays within the budget; the
    /// first always runs, even over it; a cut names the first size left out and the sum.
    #[test]
    fn a_default_series_keeps_to_its_work_budget() {
        let fitted = |sizes: &[u64]| Fitted { sizes: sizes.to_vec(), threads: 1, lowered_jobs: None, left_out: None };
        let quarter = DEFAULT_RUN_WORK / 4;
        let f = cap_default_work(fitted(&[1, 2, 4, 8]), &|s| Ok(Some(s * quarter / 2))).unwrap();
        // 1/8 + 1/4 + 1/2 of the budget fit; with 8 (a whole budget) the sum is 15/8 of it.
        assert_eq!(f.sizes, [1, 2, 4]);
        let (size, why) = f.left_out.unwrap();
        assert_eq!(size, 8);
        assert!(why.contains(&format!("about {} M operations", 15 * DEFAULT_RUN_WORK / 8 / 1_000_000)), "{why}");
        let f = cap_default_work(fitted(&[1, 2]), &|_| Ok(Some(3 * DEFAULT_RUN_WORK))).unwrap();
        assert_eq!((f.sizes, f.left_out.map(|(s, _)| s)), (vec![1], Some(2)));
        let f = cap_default_work(fitted(&[1, 2, 4]), &|_| Ok(None)).unwrap();
        assert_eq!((f.sizes.len(), f.left_out), (3, None));
    }

    /// On what the host has (no --max-memory), a default series keeps to half of it (a
    /// default sweep of cluster1024's allreduce reached 16 MiB, 16.1 GiB estimated against
    /// 20.8 GiB available, and the host's other processes pushed it to the OOM killer), while
    /// sizes asked for with -e may use all of it.
    #[test]
    fn a_default_series_keeps_to_half_of_what_the_host_has() {
        let mut a = SweepArgs::new(None);
        a.budgets.max_memory = Some(MemoryLimit::Available(20 << 30));
        a.jobs = Some(1);
        let est = |s: u64| Ok(gib(s / 1024)); // 1 KiB holds 1 GiB
        let refusal = |s: u64, _: &MemoryEstimate, l: MemoryLimit| format!("{s}: {} of {}", l.bytes(), l.source());
        let sizes = [4096, 8192, 16384];
        let f = fit_sizes(&a, &sizes, &est, &refusal).unwrap();
        assert_eq!(f.sizes, [4096, 8192]);
        let (size, why) = f.left_out.unwrap();
        assert_eq!(size, 16384);
        assert!(why.starts_with(&format!("16384: {} of half of what this host has available", 10u64 << 30)), "{why}");
        a.builtin_max_bytes = None; // -e 16K: the whole of what the host has
        assert_eq!(fit_sizes(&a, &sizes, &est, &refusal).unwrap().sizes, sizes);
        // A given limit is taken whole by a default run too.
        a.builtin_max_bytes = Some(4 << 20);
        a.budgets.max_memory = Some(MemoryLimit::Given(20 << 30));
        assert_eq!(fit_sizes(&a, &sizes, &est, &refusal).unwrap().sizes, sizes);
    }
}
