//! `ranksim bench`: PyPTO's `benchmark()` on the simulator. It runs `warmup + rounds` calls
//! of a collective (each call one dispatch per rank), emits the `[STRACE]` spans of every
//! dispatch, folds them with PyPTO's L3 rule into `BenchmarkStats`, and prints its line (as
//! `str(stats)` does), a per-rank table and the mean span tree.

use super::{BudgetFlags, CmdResult, JitterFlags, Status};
use crate::sweep::{SweepSpec, run_calls};
use ranksim::Config;
use ranksim::formats::StraceLog;
use ranksim::formats::benchmark_stats::{BenchmarkStats, Metric, Spread};
use std::io::Write;
use std::path::PathBuf;

/// The calls of a `bench`, PyPTO's `benchmark()` rounds, as every collective takes them.
#[derive(clap::Args, Debug)]
pub struct BenchCalls {
    /// Measured rounds.
    #[arg(short = 'n', long = "rounds", default_value_t = 20)]
    pub rounds: u32,
    /// Warmup rounds (dropped).
    #[arg(short = 'w', long = "warmup", default_value_t = 3)]
    pub warmup: u32,
}

/// The flags of a `bench` run that every collective takes, built-in or yours: its
/// `[STRACE]` file, jitter, timing-only, `--stats` and budgets.
#[derive(clap::Args, Debug)]
pub struct BenchRunFlags {
    /// Where to write the run's `[STRACE]` lines.
    #[arg(long, help = "Write the run's [STRACE] lines (PyPTO's parser rebuilds the same stats from them)")]
    pub strace: Option<PathBuf>,
    /// Seeded timing jitter.
    #[command(flatten)]
    pub jitter: JitterFlags,
    /// Timing-only: store no payload bytes.
    #[arg(long)]
    pub no_data: bool,
    /// Print the engine's work (events, packets) and the host time it took.
    #[arg(long)]
    pub stats: bool,
    /// What ends a run that would never end.
    #[command(flatten)]
    pub budgets: BudgetFlags,
}

/// Everything `bench` is told.
#[derive(Clone, Debug)]
pub struct BenchArgs {
    /// Machine config (TOML) or preset name; `None`: the embedded a2a3.
    pub config: Option<PathBuf>,
    /// What to run; `iters` and `warmup` are the rounds and warmup launches.
    pub spec: SweepSpec,
    /// Message size in bytes (nccl-tests convention for the collective).
    pub size: u64,
    /// Where to write the run's `[STRACE]` lines.
    pub strace: Option<PathBuf>,
    /// Print the engine's work (events, packets) and the host time it took.
    pub stats: bool,
}

/// Runs the benchmark and prints its statistics.
pub fn bench(out: &mut dyn Write, a: &BenchArgs) -> CmdResult {
    let cfg = Config::load_or_default(a.config.as_deref()).map_err(|e| e.to_string())?;
    if a.spec.call.ranks == 1 {
        return Err(super::sweep::one_rank_error(&cfg.machine.name, cfg.machine.ranks));
    }
    if a.spec.call.ranks == 0 || a.spec.call.ranks > cfg.machine.ranks {
        return Err(format!(
            "--ranks {}: machine `{}` has {} ranks",
            a.spec.call.ranks, cfg.machine.name, cfg.machine.ranks
        ));
    }
    a.spec.validate("-b", a.size, cfg.machine.ranks)?;
    let (rounds, warmup) = (a.spec.iters as usize, a.spec.warmup as usize);
    if let Some(limit) = a.spec.budgets.max_memory {
        let m = a.spec.measure();
        let c = ranksim::measure::Builtin(&a.spec.call);
        let e =
            ranksim::measure::memory::estimate_run(&cfg, &c, &m, a.size, rounds + warmup).map_err(|e| e.to_string())?;
        if let Some(e) = e.filter(|e| e.total() > limit.bytes()) {
            return Err(crate::sweep::memory_refusal(&cfg, &a.spec, a.size, &e, limit));
        }
    }
    let started = std::time::Instant::now();
    let Some(report) = run_calls(&cfg, &a.spec, a.size, rounds + warmup, false)? else {
        return Err(format!(
            "-b {}: a size of {} bytes gives no element per rank; use a larger -b/--size",
            a.size, a.size
        ));
    };
    let headline = |mean_us: f64| bandwidth_line(&cfg, &a.spec, a.size, mean_us);
    let printed = Printed { rounds, warmup, strace: a.strace.as_deref(), stats: a.stats, started };
    print_bench(out, &cfg, &report, &printed, &headline)
}

/// How a benchmark's run is printed: its rounds and warmup, where its STRACE goes, whether to
/// print the engine's work, and when it started (for the host time).
pub(crate) struct Printed<'a> {
    pub rounds: usize,
    pub warmup: usize,
    pub strace: Option<&'a std::path::Path>,
    pub stats: bool,
    pub started: std::time::Instant,
}

/// Prints a benchmark run: `BenchmarkStats` folded from its STRACE spans, the bandwidth
/// `headline` of the mean device time, the per-rank table and the mean span trees; writes the
/// STRACE; `Failed` when the run was cut short.
pub(crate) fn print_bench(
    out: &mut dyn Write,
    cfg: &Config,
    report: &sim_core::RunReport,
    p: &Printed<'_>,
    headline: &dyn Fn(f64) -> Result<String, String>,
) -> CmdResult {
    let io = |e: std::io::Error| e.to_string();
    let mut log = StraceLog::new(&cfg.host);
    log.add_run(report);
    let stats = BenchmarkStats::from_l3(log.invocations().to_vec(), p.rounds, p.warmup).with_names(log.names().clone());
    writeln!(out, "{stats}").map_err(io)?;
    writeln!(out, "{}", headline(stats.device_us_mean())?).map_err(io)?;
    writeln!(out).map_err(io)?;
    per_rank_table(out, &stats).map_err(io)?;
    writeln!(out).map_err(io)?;
    let pids: Vec<u64> = stats.per_rank(Metric::Device).unwrap_or_default().keys().copied().collect();
    writeln!(out, "{}", distinct_trees(&stats.format_mean_tree(true, Spread::Stdev, None, None), &pids)).map_err(io)?;
    if let Some(path) = p.strace {
        std::fs::write(path, log.text()).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if p.stats {
        let mut tally = crate::run_stats::Tally::default();
        tally.add(report);
        writeln!(out, "{}", tally.line(p.started.elapsed())).map_err(io)?;
    }
    for w in &report.warnings {
        writeln!(out, "# warning: {w}").map_err(io)?;
    }
    if !report.warnings.is_empty() {
        // A builtin returned at once: the times above are not the collective's.
        writeln!(out, "# FAILED: the run was cut short (see the warnings); its times are not the collective's")
            .map_err(io)?;
        return Ok(Status::Failed);
    }
    Ok(Status::Ok)
}

/// `# allreduce of 262144 B on 8 ranks: mean device wall 1145.3 us -> algbw 0.23 GB/s, busbw
/// 0.40 GB/s (machine bound 137.20 GB/s)`, nccl-tests' conventions on the headline time.
fn bandwidth_line(cfg: &Config, spec: &SweepSpec, size: u64, time_us: f64) -> Result<String, String> {
    let es = spec.call.dtype.size() as u64;
    let count = ranksim::formats::count_for(spec.call.kind, size, es, spec.call.ranks);
    let bytes = ranksim::formats::bytes_for(spec.call.kind, count, es, spec.call.ranks);
    let algbw = ranksim::formats::algbw_gbps(bytes, time_us);
    let busbw = ranksim::formats::busbw_gbps(spec.call.kind, bytes, time_us, spec.call.ranks);
    let bound = ranksim::measure::busbw_bound(cfg, spec.call.ranks, Some(spec.call.kind)).map_err(|e| e.to_string())?;
    Ok(format!(
        "# {} of {bytes} B on {} ranks: mean device wall {time_us:.1} us -> algbw {algbw:.2} GB/s, busbw {busbw:.2} GB/s (machine bound {:.2} GB/s)",
        spec.call.kind, spec.call.ranks, bound.gbps
    ))
}

/// The mean trees of `format_mean_tree`, one per dispatch, with the trees of several ranks
/// that are the same printed once (the first one's header, then the ranks it stands for), and
/// those that differ only in their numbers, by at most [`NEAR`] of the root span, folded into
/// the first with the range of their root spans. `pids` lists the ranks' pids in rank order.
pub fn distinct_trees(text: &str, pids: &[u64]) -> String {
    let rank_of = |pid: u64| pids.iter().position(|&p| p == pid);
    let mut groups: Vec<TreeGroup> = Vec::new();
    for block in text.split("\n\n") {
        let (header, body) = block.split_once('\n').unwrap_or((block, ""));
        let pid = header
            .strip_prefix("dispatch pid=")
            .and_then(|r| r.split_whitespace().next())
            .and_then(|p| p.parse::<u64>().ok());
        let Some(rank) = pid.and_then(rank_of) else {
            groups.push(TreeGroup::new(header, body, None));
            continue;
        };
        // The header without its pid: the same dispatch slot and task on another rank.
        let rest = header.split_once(' ').and_then(|x| x.1.split_once(' ')).map_or("", |x| x.1);
        let root = root_us(body);
        let found = groups.iter_mut().find(|g| {
            !g.ranks.is_empty()
                && g.rest == rest
                && (g.body == body || (shape(&g.body) == shape(body) && near(g.root, root)))
        });
        match found {
            Some(g) => {
                g.ranks.push(rank);
                g.same &= g.body == body;
                g.roots.push(root);
            }
            None => groups.push(TreeGroup::new(header, body, Some((rank, rest)))),
        }
    }
    groups.iter().map(TreeGroup::render).collect::<Vec<_>>().join("\n\n")
}

/// How far (relative to the first) a rank's root span may be from the first rank's for their
/// trees to be printed once: 1 %.
pub const NEAR: f64 = 0.01;

/// Trees of one dispatch slot printed as one.
struct TreeGroup {
    header: String,
    body: String,
    rest: String,
    ranks: Vec<usize>,
    /// Every member's tree is the same text.
    same: bool,
    root: Option<f64>,
    roots: Vec<Option<f64>>,
}

impl TreeGroup {
    fn new(header: &str, body: &str, rank: Option<(usize, &str)>) -> TreeGroup {
        let root = root_us(body);
        TreeGroup {
            header: header.to_string(),
            body: body.to_string(),
            rest: rank.map_or(String::new(), |r| r.1.to_string()),
            ranks: rank.map(|r| r.0).into_iter().collect(),
            same: true,
            root,
            roots: vec![root],
        }
    }

    fn render(&self) -> String {
        let (header, body) = (&self.header, &self.body);
        if self.ranks.len() <= 1 {
            return if body.is_empty() { header.clone() } else { format!("{header}\n{body}") };
        }
        let list: Vec<String> = self.ranks.iter().map(usize::to_string).collect();
        let (n, list) = (self.ranks.len(), list.join(", "));
        if self.same {
            return format!("{header}\nthe same tree on ranks {list} ({n} ranks)\n{body}");
        }
        let roots: Vec<f64> = self.roots.iter().flatten().copied().collect();
        let lo = roots.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = roots.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        format!(
            "{header}\nthe same spans on ranks {list} ({n} ranks), within {:.0}%: the root span's mean is {lo:.1} to {hi:.1} us over them; this is rank {}'s\n{body}",
            NEAR * 100.0,
            self.ranks[0]
        )
    }
}

/// A tree with its numbers blanked: the spans and their nesting.
fn shape(body: &str) -> String {
    body.chars().map(|c| if c.is_ascii_digit() || c == '.' { '#' } else { c }).collect()
}

/// The root span's mean in microseconds: the first number of the tree's first line.
fn root_us(body: &str) -> Option<f64> {
    let line = body.lines().next()?;
    let word = line.split_whitespace().find(|w| w.ends_with("us") && w.starts_with(|c: char| c.is_ascii_digit()))?;
    word.trim_end_matches("us").parse().ok()
}

fn near(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => (a - b).abs() <= NEAR * a.abs(),
        _ => false,
    }
}

/// One line per rank: mean, min and max over the rounds of its summed dispatch device walls,
/// and its mean host wall.
fn per_rank_table(out: &mut dyn Write, stats: &BenchmarkStats) -> std::io::Result<()> {
    let device = stats.per_rank(Metric::Device).unwrap_or_default();
    let host = stats.per_rank(Metric::Host).unwrap_or_default();
    writeln!(out, "# per rank, over {} rounds (us)", stats.rounds)?;
    writeln!(
        out,
        "{:>6} {:>8} {:>12} {:>12} {:>12} {:>12}",
        "rank", "pid", "device mean", "device min", "device max", "host mean"
    )?;
    for (i, (pid, d)) in device.iter().enumerate() {
        let h = host.get(pid).cloned().unwrap_or_default();
        let mean = |v: &[f64]| if v.is_empty() { 0.0 } else { v.iter().sum::<f64>() / v.len() as f64 };
        let min = d.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = d.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        writeln!(out, "{i:>6} {pid:>8} {:>12.1} {min:>12.1} {max:>12.1} {:>12.1}", mean(d), mean(&h))?;
    }
    Ok(())
}
