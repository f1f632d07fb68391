//! `ranksim sweep`'s flags as the command line gives them, and [`SweepArgs`], what a sweep is
//! told once they are read.

use crate::commands::{BudgetFlags, JitterFlags};
use crate::sweep::parse_op;
use collectives::{Kind, Mode, Path};
use ranksim::formats::parse_size;
use ranksim::measure::Budgets;
use sim_core::{DType, Jitter, ReduceOp};
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
pub(super) fn parse_kinds(s: &str) -> Result<Vec<Kind>, String> {
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
    /// Algorithm(s), comma separated (`--help` lists every mode, each collective's, and the
    /// default sweep's, from the modes table).
    #[arg(long, value_delimiter = ',', long_help = crate::sweep::mode_help())]
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
pub(super) const DEFAULT_MAX_BYTES: u64 = 16 << 20;

/// The default main job's largest size for PyPTO's builtin (4 MiB): its busbw is flat from
/// 32 KiB on and its one-block time grows linearly, so larger sizes would only cost seconds.
pub(super) const DEFAULT_BUILTIN_MAX_BYTES: u64 = 4 << 20;
