//! The `ranksim` command line: the clap declarations of the commands and their flags, and
//! the turning of those flags into each command's arguments (`bench` loads its config here to
//! default the rank count; `sweep --help` gets the default machine's support matrix). It also
//! restores the default SIGPIPE, installs the Ctrl-C / SIGTERM handler (exit code 130, the
//! output so far printed) and maps the outcome to the exit code (0 ok, 1 failed, 2
//! error). The commands themselves live in `ranksim_cli::commands`.

use clap::{Parser, Subcommand};
use collectives::{Call, Kind, Mode, Path};
use ranksim::collectives;
use ranksim::formats::parse_size;
use ranksim::sim_core::{DType, ReduceOp};
use ranksim_cli::commands::bench::{BenchArgs, BenchCalls, BenchRunFlags};
use ranksim_cli::commands::hccl_test::HcclTestArgs;
use ranksim_cli::commands::sweep::{SweepArgs, SweepFlags};
use ranksim_cli::commands::validate::ValidateArgs;
use ranksim_cli::commands::{self, BudgetFlags, calibrate::CalibrateArgs};
use ranksim_cli::hccl_test::Overrides;
use ranksim_cli::measurements::{Program, WorkloadLine};
use ranksim_cli::sweep::SweepSpec;
use ranksim_cli::sweep::parse_op;
use std::path::PathBuf;
use std::process::ExitCode;

/// ranksim: a cycle-approximate multi-chip simulator for PyPTO L3 collectives.
///
/// Every command takes `--config FILE` (a machine TOML, see configs/) or a preset name (a2a3, a3-supernode, a5, cluster1024, ring8, torus4x4, two-node); without it the embedded
/// a2a3 preset (8 x Ascend 910B, HCCS full mesh) is used.
#[derive(Parser)]
#[command(version, about, long_about, args_override_self = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Bandwidth sweep over message sizes, printed like nccl-tests (size, count, type, redop,
    /// root, time, algbw, busbw, #wrong) with an average-busbw footer per series. Without
    /// --mode: PyPTO's builtin kernel next to the best HCCL-class algorithm the machine runs,
    /// each with a note on what it models and the machine's busbw bound. Exits 1 when an
    /// element is wrong, a series' average busbw is below --min-busbw, or a size has no
    /// measurement: a row marked FAILED (in the table and as `failed` in the JSON) says why —
    /// its run failed (a dtype the path does not support, a tile that overflows UB, ...) or was
    /// cut short by a builtin's early return (more than 16 ranks, a ring whose count is not a
    /// multiple of the ranks) — and the sweep goes on with the other sizes. Sizes that round to
    /// the element count of the previous one are not repeated.
    Sweep(Box<SweepFlags>),
    /// PyPTO's benchmark(): run WARMUP + ROUNDS calls of a collective, build BenchmarkStats
    /// from the [STRACE] spans of every dispatch with PyPTO's L3 rule, and print its line, a
    /// per-rank table and the mean span tree.
    Bench(Box<BenchCli>),
    /// Print the machine a config describes: chips, cores, memory paths, its links by class
    /// (count, rates, latency; every link with --links), ports; with --route A B, the path
    /// from rank A to rank B; with --resolved, the whole config after its bases, each value
    /// with the file and line it comes from (or `default`).
    Topo {
        /// Machine config (TOML) or preset name (a2a3, a3-supernode, a5, cluster1024, ring8, torus4x4, two-node).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Show the route from rank A to rank B.
        #[arg(long, num_args = 2, value_names = ["A", "B"])]
        route: Option<Vec<usize>>,
        /// List every link and port (a 4096-rank full mesh has 16.7 M links).
        #[arg(long)]
        links: bool,
        /// Print the config resolved (its bases merged, defaults filled in) as TOML, each value
        /// with its source: file and line, or `default`.
        #[arg(long, conflicts_with_all = ["route", "links"])]
        resolved: bool,
    },
    /// Fit one link class's latency and bandwidth to one or more measured tables at once (CSV:
    /// `size,time_us` or `size,busbw_gbps` rows) by least squares with the simulator in the
    /// loop; print the per-point and per-table error of the re-simulation (a WARNING above 10%
    /// rms) and a config snippet. Refuses tables that cannot determine both (one size, a
    /// barrier, time that does not grow with size).
    Calibrate(Box<CalibrateCli>),
    /// Compare the simulator with measured tables (configs/measurements/, embedded): per point
    /// the measured and simulated value and the error, per table the rms and worst error.
    /// Exits 1 when any point's error exceeds --tolerance; tables the simulator cannot run yet
    /// are listed as "not run" with what they need.
    Validate {
        /// Machine config (TOML) or preset name; default: the embedded a2a3 preset.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Run only this table: a shipped table's name (e.g. t3-tget) or a CSV file; repeatable.
        #[arg(long)]
        table: Vec<String>,
        /// Largest |error| in percent a point may have before the exit code is 1.
        #[arg(long, default_value_t = 10.0, allow_hyphen_values = true)]
        tolerance: f64,
        /// Write the results as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Compare an hccl_test log (the tool's printed table, pasted as is, with its command
        /// line) row by row instead of the shipped tables (with --table as well: both).
        #[arg(long, value_name = "LOG")]
        hccl_test: Option<PathBuf>,
        #[command(flatten)]
        hccl: HcclTestFlags,
        /// Ranks of the hccl_test run, when its log shows no `mpirun -n N` (default: all).
        #[arg(long)]
        ranks: Option<usize>,
        /// Element type of the hccl_test run, over the log's `-d` (default fp32).
        #[arg(short = 'd', long = "datatype", value_parser = ranksim_cli::hccl_test::dtype)]
        dtype: Option<DType>,
        /// One algorithm at every size of the hccl_test run (default: what HCCL picks).
        #[arg(long)]
        mode: Option<Mode>,
    },
    /// Print what HCCL's hccl_test would print on the machine: its size loop (-b -e -f / -i),
    /// each size timed as its -w warm-up and -n back-to-back host-launched calls (HCCL's
    /// per-op host costs, or device time only with -t 1), its table with NULL checks.
    /// `validate --hccl-test` reads the output back.
    HcclTest(Box<HcclTestCli>),
    /// Run programs under the protocol checker (data races, stale reads, signal misuse,
    /// deadlocks), unperturbed and with seeded jitter; exit 1 when anything is found.
    /// `check --list` names the programs: tutorials, collectives, and the `broken-*` zoo.
    Check {
        /// Machine config (TOML) or preset name.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Program to check (default: every program that is not `broken-*`).
        #[arg(long)]
        program: Option<String>,
        /// Ranks taking part (default: as many as the machine and the program allow).
        #[arg(long)]
        ranks: Option<usize>,
        #[command(flatten)]
        reruns: ranksim_cli::commands::check::RerunFlags,
        /// Write the findings as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Write the unperturbed run's Perfetto trace, findings as instant events (with --program).
        #[arg(long)]
        trace: Option<PathBuf>,
        /// List the programs and exit.
        #[arg(long)]
        list: bool,
    },
    /// Run the built-in tutorial programs and check their goldens (`run --list` names them).
    Run {
        /// Program to run (default: every correct program).
        program: Option<String>,
        /// Machine config (TOML).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Ranks taking part (default: all).
        #[arg(long)]
        ranks: Option<usize>,
        /// List the programs and exit.
        #[arg(long)]
        list: bool,
        /// Print the engine's work (events, packets) and the host time it took.
        #[arg(long)]
        stats: bool,
        #[command(flatten)]
        budgets: BudgetFlags,
    },
}

/// How an hccl_test log's run was made, over what the log shows (`validate` and `calibrate`
/// with `--hccl-test`).
#[derive(clap::Args)]
struct HcclTestFlags {
    /// The operator of the hccl_test run, when its log shows no command line.
    #[arg(long)]
    collective: Option<Kind>,
    /// Reduction (`-o`) of the hccl_test run: sum, max, min, prod.
    #[arg(long, value_parser = parse_op)]
    op: Option<ReduceOp>,
    /// The run had HCCL_OP_EXPANSION_MODE=AIV (also read from the log): each size runs what
    /// HCCL picks in that mode; otherwise its default copy-engine mesh.
    #[arg(long)]
    aiv: bool,
    /// hccl_test's -n (timed iterations), over the log's (default 20).
    #[arg(long)]
    iters: Option<u32>,
    /// hccl_test's -w (warm-up iterations), over the log's (default 10).
    #[arg(long)]
    warmup: Option<u32>,
    /// hccl_test's -t 1: device-only timing, no host launch between ops.
    #[arg(long)]
    device_time: bool,
}

impl HcclTestFlags {
    fn overrides(&self, ranks: Option<usize>, dtype: Option<DType>, mode: Option<Mode>) -> Overrides {
        Overrides {
            collective: self.collective,
            ranks,
            dtype,
            op: self.op,
            mode,
            aiv: self.aiv,
            iters: self.iters,
            warmup: self.warmup,
            device_time: self.device_time,
        }
    }
}

#[derive(clap::Args)]
struct HcclTestCli {
    /// The hccl_test binary or collective: all_reduce_test (allreduce), all_gather_test,
    /// reduce_scatter_test, alltoall_test (all_to_all), broadcast_test.
    test: String,
    /// Machine config (TOML) or preset name; default: the embedded a2a3 preset.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Processes (mpirun -n), one rank each; default: every rank of the machine.
    #[arg(long)]
    ranks: Option<usize>,
    /// Smallest size, bytes (K/M/G suffixes).
    #[arg(short = 'b', long = "minbytes", default_value = "64M", value_parser = parse_size)]
    min_bytes: u64,
    /// Largest size, bytes (K/M/G suffixes).
    #[arg(short = 'e', long = "maxbytes", default_value = "64M", value_parser = parse_size)]
    max_bytes: u64,
    /// Step between sizes, bytes (without -f; default (max - min) / 10).
    #[arg(short = 'i', long = "stepbytes", value_parser = parse_size)]
    step_bytes: Option<u64>,
    /// Factor between sizes (above 1).
    #[arg(short = 'f', long = "stepfactor")]
    factor: Option<f64>,
    /// Timed iterations per size.
    #[arg(short = 'n', long = "iters", default_value_t = ranksim_cli::hccl_test::DEFAULT_ITERS)]
    iters: u32,
    /// Warm-up iterations per size.
    #[arg(short = 'w', long = "warmup_iters", default_value_t = ranksim_cli::hccl_test::DEFAULT_WARMUP)]
    warmup: u32,
    /// Element type: fp32, fp16, bfp16, int32, int16, int8.
    #[arg(short = 'd', long = "datatype", default_value = "fp32", value_parser = ranksim_cli::hccl_test::dtype)]
    dtype: DType,
    /// Reduction: sum, prod, max, min.
    #[arg(short = 'o', long = "op", default_value = "sum", value_parser = parse_op)]
    op: ReduceOp,
    /// Root rank of broadcast.
    #[arg(short = 'r', long = "root", default_value_t = 0)]
    root: usize,
    /// 1: device-only timing (CANN 9's -t 1), no host launch between ops.
    #[arg(short = 't', default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=1))]
    device_time: u8,
    /// The run has HCCL_OP_EXPANSION_MODE=AIV: each size runs what HCCL picks in that mode.
    #[arg(long)]
    aiv: bool,
    /// One algorithm at every size instead of HCCL's pick.
    #[arg(long)]
    mode: Option<Mode>,
}

#[derive(clap::Args)]
struct CalibrateCli {
    /// Machine config (TOML) or preset name; default: the embedded a2a3 preset.
    #[arg(long)]
    config: Option<PathBuf>,
    /// CSV of measured points (`size,time_us` or `size,busbw_gbps`, K/M/G suffixes, # comments);
    /// repeat to fit several tables at once.
    #[arg(long, required_unless_present = "hccl_test")]
    table: Vec<PathBuf>,
    /// An hccl_test log (its printed table and command line) to fit as well.
    #[arg(long, value_name = "LOG")]
    hccl_test: Option<PathBuf>,
    #[command(flatten)]
    hccl: HcclTestFlags,
    /// What the table at the same position measured, e.g. `get`, `put peer=8`, `allreduce` or
    /// `collective allreduce mode=two-shot core_num=48 ranks=2`; without it a table's own
    /// `# workload:` line is used (`-` says so for a table before one that needs a --workload).
    #[arg(long)]
    workload: Vec<String>,
    /// Which links to fit: node (the flat topology's links) or levelK (NICs of level K).
    #[arg(long, default_value = "node")]
    link: String,
    /// Allreduce algorithm of a --workload collective that does not say (default mesh).
    #[arg(long)]
    mode: Option<Mode>,
    /// host or incore, for a --workload collective that does not say (default host).
    #[arg(long)]
    path: Option<Path>,
    /// AIV blocks per rank, for a --workload allreduce that does not say (default 1).
    #[arg(long)]
    core_num: Option<usize>,
    /// Ranks taking part, for a --workload collective that does not say (default: all).
    #[arg(long)]
    ranks: Option<usize>,
    /// Element type, for a --workload collective that does not say (default f32).
    #[arg(short = 'd', long = "datatype")]
    dtype: Option<DType>,
}

#[derive(clap::Args)]
struct BenchCli {
    /// Machine config (TOML) or preset name; default: the embedded a2a3 preset.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Collective: allreduce, allgather, reduce_scatter, broadcast, all_to_all, all_to_all_v, barrier.
    #[arg(long, default_value = "allreduce")]
    collective: Kind,
    /// Algorithm (`sweep --help` lists each collective's).
    #[arg(long, default_value = "mesh")]
    mode: Mode,
    /// host or incore.
    #[arg(long, default_value = "host")]
    path: Path,
    /// Message size in bytes (K/M/G suffixes), nccl-tests convention.
    #[arg(short = 'b', long, default_value = "256K", value_parser = parse_size)]
    size: u64,
    /// Element type.
    #[arg(short = 'd', long = "datatype", default_value = "f32")]
    dtype: DType,
    /// Reduction: sum, max, min, prod.
    #[arg(short = 'o', long = "op", default_value = "sum", value_parser = parse_op)]
    op: ReduceOp,
    /// Root rank of broadcast.
    #[arg(short = 'r', long = "root", default_value_t = 0)]
    root: usize,
    #[command(flatten)]
    calls: BenchCalls,
    /// Ranks taking part (default: all); `-g` as in nccl-tests.
    #[arg(short = 'g', long)]
    ranks: Option<usize>,
    /// AIV blocks per rank for the HOST mesh, two-shot, aiv-mesh and sdma-mesh allreduce.
    #[arg(long, default_value_t = 1)]
    core_num: usize,
    #[command(flatten)]
    run: BenchRunFlags,
}

fn main() -> ExitCode {
    // Like other Unix tools, end quietly when the reader of stdout goes away (`| head`).
    ranksim_cli::restore_sigpipe();
    ranksim_cli::interrupt::install();
    let cli = parse_cli();
    // Under mpirun a sweep or a check is split over the processes; the session ends MPI when
    // dropped.
    let split = matches!(cli.command, Some(Command::Sweep(_) | Command::Check { list: false, .. }));
    let (place, _session) = match ranksim_cli::processes::join(split) {
        Ok(s) => s,
        Err(e) => return ranksim_cli::exit_code(Err(e)),
    };
    let (mut stdout, mut sink) = (std::io::stdout().lock(), std::io::sink());
    let out = ranksim_cli::processes::output(place, &mut stdout, &mut sink);
    let result = match cli.command {
        None => commands::run::run(&mut *out, None, None, None, false),
        Some(Command::Run { program, config, ranks, list, stats, budgets }) => {
            let b = budgets.budgets();
            commands::run::run_with_stats(&mut *out, program.as_deref(), config.as_deref(), ranks, list, stats, &b)
        }
        Some(Command::Sweep(s)) => ranksim_cli::commands::sweep::sweep_args(SweepArgs::from(*s), place)
            .and_then(|a| commands::sweep::sweep(&mut *out, &a)),
        Some(Command::Topo { config, resolved: true, .. }) => commands::topo::resolved(&mut *out, config.as_deref()),
        Some(Command::Topo { config, route, links, .. }) => {
            let route = route.and_then(|r| Some((*r.first()?, *r.get(1)?)));
            commands::topo::topo(&mut *out, config.as_deref(), route, links)
        }
        Some(Command::Calibrate(c)) => calibrate_args(*c).and_then(|a| commands::calibrate::calibrate(&mut *out, &a)),
        Some(Command::Validate { config, table, tolerance, json, hccl_test, hccl, ranks, dtype, mode }) => {
            let hccl = hccl.overrides(ranks, dtype, mode);
            let a = ValidateArgs {
                tables: table,
                tolerance_pct: tolerance,
                json,
                hccl_test,
                hccl,
                ..ValidateArgs::new(config)
            };
            commands::validate::validate(&mut *out, &a)
        }
        Some(Command::HcclTest(h)) => hccl_test_args(*h).and_then(|a| commands::hccl_test::hccl_test(&mut *out, &a)),
        Some(Command::Bench(b)) => bench_args(*b).and_then(|a| commands::bench::bench(&mut *out, &a)),
        Some(Command::Check { config, program, ranks, reruns, json, trace, list }) => {
            let (options, partitions, budgets) = (reruns.options(), reruns.partitions(), reruns.budgets());
            let a = commands::check::CheckArgs {
                config,
                program,
                ranks,
                options,
                partitions,
                budgets,
                json,
                trace,
                list,
                ..Default::default()
            };
            ranksim_cli::commands::check::check_args(a, place).and_then(|a| commands::check::check(&mut *out, &a))
        }
    };
    ranksim_cli::exit_code(result)
}

/// Parses the command line; `sweep --help` ends with the dtype x path support matrix of the
/// default machine (worked out by asking the collectives, so it cannot drift).
fn parse_cli() -> Cli {
    use clap::{CommandFactory, FromArgMatches};
    let mut cmd = Cli::command();
    let asks_help = std::env::args().any(|a| a == "--help" || a == "-h" || a == "help");
    if asks_help {
        let matrix = ranksim_cli::sweep::support_matrix(&ranksim::Config::default_preset());
        cmd = cmd.mut_subcommand("sweep", |s| s.after_long_help(matrix.clone()).after_help(matrix));
    }
    let matches = cmd.get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

fn bench_args(b: BenchCli) -> Result<BenchArgs, String> {
    let cfg = ranksim::Config::load_or_default(b.config.as_deref()).map_err(|e| e.to_string())?;
    let jitter = b.run.jitter.jitter();
    let call = Call::new(b.collective, b.ranks.unwrap_or(cfg.machine.ranks))
        .with_mode(b.mode)
        .with_path(b.path)
        .with_dtype(b.dtype)
        .with_op(b.op)
        .with_root(b.root)
        .with_core_num(b.core_num);
    let spec = SweepSpec::new(call)
        .with_iters(b.calls.rounds)
        .with_warmup(b.calls.warmup)
        .with_jitter(jitter)
        .with_timing_only(b.run.no_data)
        .with_budgets(b.run.budgets.budgets());
    Ok(BenchArgs { config: b.config, spec, size: b.size, strace: b.run.strace, stats: b.run.stats })
}

fn hccl_test_args(h: HcclTestCli) -> Result<HcclTestArgs, String> {
    let kind = ranksim_cli::hccl_test::kind_of(&h.test)?;
    Ok(HcclTestArgs {
        config: h.config,
        kind,
        ranks: h.ranks,
        min_bytes: h.min_bytes,
        max_bytes: h.max_bytes,
        step_bytes: h.step_bytes,
        factor: h.factor,
        iters: h.iters,
        warmup: h.warmup,
        dtype: h.dtype,
        op: h.op,
        root: h.root,
        device_time: h.device_time == 1,
        aiv: h.aiv,
        mode: h.mode,
    })
}

fn calibrate_args(c: CalibrateCli) -> Result<CalibrateArgs, String> {
    let workloads = c
        .workload
        .iter()
        .map(|w| {
            if w == "-" {
                return Ok(None);
            }
            let mut line = WorkloadLine::parse(w).map_err(|e| format!("--workload `{w}`: {e}"))?;
            if let Program::Collective(kind) = line.program {
                line.mode = line.mode.or(c.mode.filter(|_| kind == Kind::AllReduce));
                line.core_num = line.core_num.or(c.core_num.filter(|_| kind == Kind::AllReduce));
                line.path = line.path.or(c.path);
                line.ranks = line.ranks.or(c.ranks);
                line.dtype = line.dtype.or(c.dtype);
            }
            Ok(Some(line))
        })
        .collect::<Result<_, String>>()?;
    let hccl = c.hccl.overrides(c.ranks, c.dtype, c.mode);
    Ok(CalibrateArgs { config: c.config, tables: c.table, workloads, link: c.link, hccl_test: c.hccl_test, hccl })
}
