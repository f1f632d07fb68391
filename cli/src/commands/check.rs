//! `ranksim check`: run programs under the protocol checker and report what it finds.

use super::{CmdResult, Status};
use crate::checker::{self, Checkable};
use crate::processes::{Place, one_each, same_everywhere};
use ranksim::Config;
use ranksim::measure::{Budgets, Measure};
use sim_core::check::{CheckOptions, CheckReport, Finding};
use std::io::Write;
use std::path::PathBuf;

/// Everything `check` is told.
#[derive(Clone, Debug, Default)]
pub struct CheckArgs {
    /// Machine config (TOML) or preset name; `None`: the embedded a2a3.
    pub config: Option<PathBuf>,
    /// One program (default: every program that is not `broken-*`).
    pub program: Option<String>,
    /// Ranks taking part (default: the machine's, within what the program takes).
    pub ranks: Option<usize>,
    /// Seeds and jitter of the reruns.
    pub options: CheckOptions,
    /// Partitions each run is split into (1: one engine).
    pub partitions: usize,
    /// The partitions are this thread's process group (MPI's ranks under `mpirun`).
    pub processes: bool,
    /// Leave the trace file to another process (under `mpirun`, every process traces the
    /// run alike and the first writes it).
    pub no_trace_file: bool,
    /// Where to write the findings as JSON.
    pub json: Option<PathBuf>,
    /// Write the unperturbed run's Perfetto trace, findings as instant events (one program).
    pub trace: Option<PathBuf>,
    /// Only list the programs.
    pub list: bool,
    /// What ends a run that would never end (simulated time, events, livelock).
    pub budgets: Budgets,
}

/// The checker's reruns as a command line gives them (`ranksim check` and a user's
/// collective's `check`).
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct RerunFlags {
    /// Jittered reruns after the unperturbed run (seeds 1..=N).
    #[arg(long, default_value_t = 0)]
    seeds: u64,
    /// Largest jitter per transfer in the jittered runs, ns.
    #[arg(long, default_value_t = 500)]
    jitter_op_ns: u64,
    /// Largest jitter per dispatch start in the jittered runs, ns.
    #[arg(long, default_value_t = 5000)]
    jitter_dispatch_ns: u64,
    /// Split each checked run into this many partitions of whole islands, each on a host
    /// thread of its own (as `sweep --partitions`): the findings are the same for any value.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    partitions: u16,
    #[command(flatten)]
    budgets: super::BudgetFlags,
}

impl RerunFlags {
    /// The checker's options these flags ask for.
    pub fn options(&self) -> CheckOptions {
        CheckOptions {
            seeds: self.seeds,
            op_jitter: sim_core::SimDuration::from_ns(self.jitter_op_ns),
            dispatch_jitter: sim_core::SimDuration::from_ns(self.jitter_dispatch_ns),
        }
    }

    /// The budgets of each checked run.
    pub fn budgets(&self) -> Budgets {
        self.budgets.budgets()
    }

    /// The partitions each checked run is split into.
    pub fn partitions(&self) -> usize {
        usize::from(self.partitions)
    }
}

/// The most jittered reruns `--seeds` asks for.
const MAX_SEEDS: u64 = 100_000;

/// Checks, prints the findings, writes the JSON; `Failed` when anything was found.
pub fn check(out: &mut dyn Write, a: &CheckArgs) -> CmdResult {
    let io = |e: std::io::Error| e.to_string();
    let all = checker::catalogue();
    if a.list {
        for c in &all {
            writeln!(out, "{:<28} {}", c.name, c.about).map_err(io)?;
        }
        return Ok(Status::Ok);
    }
    let cfg = Config::load_or_default(a.config.as_deref()).map_err(|e| e.to_string())?;
    let chosen: Vec<&Checkable> = match &a.program {
        Some(name) => vec![
            all.iter()
                .find(|c| &c.name == name)
                .ok_or_else(|| format!("no program `{name}`; `ranksim check --list` names them"))?,
        ],
        None => all.iter().filter(|c| !c.is_broken()).collect(),
    };
    if a.trace.is_some() && chosen.len() != 1 {
        return Err("--trace needs --program: it writes the trace of one program's unperturbed run".into());
    }
    let o = &a.options;
    validate_options(o)?;
    writeln!(
        out,
        "# ranksim check on `{}`: {} program(s), the unperturbed run and {} seed(s) each (jitter up to {} per transfer, {} per dispatch)",
        cfg.machine.name,
        chosen.len(),
        o.seeds,
        o.op_jitter,
        o.dispatch_jitter
    )
    .map_err(io)?;
    let mut results = Vec::new();
    let mut found = 0;
    for c in chosen {
        let max = c.max_ranks.unwrap_or(usize::MAX).min(cfg.machine.ranks);
        if a.program.is_none() && a.ranks.is_none() && c.min_ranks > max {
            // Checking everything: a program this machine is too small for is skipped, said so.
            writeln!(
                out,
                "skip  {:<28} needs at least {} ranks; the machine has {}",
                c.name, c.min_ranks, cfg.machine.ranks
            )
            .map_err(io)?;
            continue;
        }
        let ranks = a.ranks.unwrap_or(max.max(c.min_ranks));
        let m = Measure {
            trace: a.trace.is_some(),
            partitions: a.partitions.max(1),
            processes: a.processes,
            budgets: a.budgets,
            interrupt: Some(crate::interrupt::flag()),
            ..Measure::new(ranks)
        };
        let (r, timeline) = checker::check_traced(&cfg, c, &m, o)?;
        if let (Some(path), Some(t), false) = (&a.trace, timeline, a.no_trace_file) {
            let json = ranksim::formats::to_chrome_json(&t, cfg.machine.ranks);
            std::fs::write(path, json).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        found += r.findings.len();
        print(out, &c.name, ranks, &r).map_err(io)?;
        results.push((c.name.clone(), ranks, r));
    }
    writeln!(out, "# {found} finding(s)").map_err(io)?;
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(&json(&cfg, &results)).map_err(|e| e.to_string())?;
        std::fs::write(path, text + "\n").map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(if found > 0 { Status::Failed } else { Status::Ok })
}

/// Checks the checker's options as values: jitter up to 1 s, at most [`MAX_SEEDS`] seeds.
pub(crate) fn validate_options(o: &CheckOptions) -> Result<(), String> {
    for (flag, d) in [("--jitter-op-ns", o.op_jitter), ("--jitter-dispatch-ns", o.dispatch_jitter)] {
        if d.as_ps() > ranksim::measure::MAX_JITTER_PS {
            return Err(format!("{flag} {}: jitter must be in 0..=1000000000 ns (1 s)", d.as_ps() / 1000));
        }
    }
    if o.seeds > MAX_SEEDS {
        return Err(format!("--seeds {}: at most {MAX_SEEDS} jittered reruns", o.seeds));
    }
    Ok(())
}

/// One program's line (`clean` or `FOUND`) and its findings, those every rank repeats folded.
pub(crate) fn print(out: &mut dyn Write, name: &str, ranks: usize, r: &CheckReport) -> std::io::Result<()> {
    let status = if r.is_clean() { "clean" } else { "FOUND" };
    writeln!(out, "{status:<5} {name:<28} {ranks} ranks, {} run(s), {} finding(s)", r.runs, r.findings.len())?;
    for (f, same) in group_across_ranks(&r.findings, ranks) {
        let text = f.to_string().replace('\n', "\n      ");
        writeln!(out, "      {text}")?;
        if !same.is_empty() {
            let list: Vec<String> = same.iter().map(usize::to_string).collect();
            writeln!(
                out,
                "      ... and the same finding, every rank shifted alike, on rank(s) {} ({} ranks in all)",
                list.join(", "),
                same.len() + 1
            )?;
        }
    }
    Ok(())
}

/// A finding's text with every `rank K` written relative to its own rank (`rank +d`, d ranks
/// after it, modulo `n`): findings of a protocol bug that every rank repeats compare equal.
fn shape(f: &Finding, n: usize) -> String {
    let text = f.to_string();
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(i) = rest.find("rank ") {
        out.push_str(&rest[..i + 5]);
        rest = &rest[i + 5..];
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        match rest[..digits].parse::<usize>() {
            Ok(k) if n > 0 => out.push_str(&format!("+{}", (k + n - f.rank % n) % n)),
            _ => out.push_str(&rest[..digits]),
        }
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

/// The findings with those that differ only by a rotation of the ranks folded into the first:
/// each first finding and the other ranks that repeat it.
fn group_across_ranks(findings: &[Finding], n: usize) -> Vec<(&Finding, Vec<usize>)> {
    let mut groups: Vec<(String, &Finding, Vec<usize>)> = Vec::new();
    for f in findings {
        let key = shape(f, n);
        match groups.iter_mut().find(|(k, _, _)| *k == key) {
            Some((_, _, same)) => same.push(f.rank),
            None => groups.push((key, f, Vec::new())),
        }
    }
    groups.into_iter().map(|(_, f, same)| (f, same)).collect()
}

fn finding_json(f: &Finding) -> serde_json::Value {
    let sites: Vec<serde_json::Value> = f
        .sites
        .iter()
        .map(|s| {
            serde_json::json!({
                "rank": s.rank, "block": s.block, "task": s.task, "dispatch": s.dispatch, "op": s.op,
                "target": s.target, "time_ps": s.time.as_ps(), "location": s.location,
            })
        })
        .collect();
    serde_json::json!({
        "kind": f.kind.name(), "rank": f.rank, "time_ps": f.time.as_ps(), "message": f.message,
        "count": f.count, "seed": f.seed, "sites": sites,
    })
}

/// The findings JSON: the machine, and per program its ranks, runs and findings.
pub(crate) fn json(cfg: &Config, results: &[(String, usize, CheckReport)]) -> serde_json::Value {
    let programs: Vec<serde_json::Value> = results
        .iter()
        .map(|(name, ranks, r)| {
            let findings: Vec<serde_json::Value> = r.findings.iter().map(finding_json).collect();
            serde_json::json!({ "program": name, "ranks": ranks, "runs": r.runs, "findings": findings })
        })
        .collect();
    serde_json::json!({ "machine": cfg.machine.name, "programs": programs })
}

/// `check`'s arguments for a run over `place = (rank, size)` processes: one partition each,
/// the findings' JSON and the trace written by the first process only (every process traces
/// alike).
pub fn check_args(mut a: CheckArgs, place: Place) -> Result<CheckArgs, String> {
    let Some((rank, size)) = place else { return Ok(a) };
    a.partitions = one_each(a.partitions, size)?;
    a.processes = true;
    a.budgets.max_memory = same_everywhere(a.budgets.max_memory);
    if rank > 0 {
        (a.json, a.no_trace_file) = (None, true);
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ranksim::measure::memory::MemoryLimit;

    #[test]
    fn a_check_over_processes_has_one_partition_each_and_only_the_first_writes_files() {
        let a = CheckArgs { json: Some("f.json".into()), trace: Some("t.json".into()), ..Default::default() };
        let first = check_args(a.clone(), Some((0, 2))).unwrap();
        assert_eq!((first.partitions, first.processes), (2, true));
        assert!(first.json.is_some() && !first.no_trace_file);
        let second = check_args(a.clone(), Some((1, 2))).unwrap();
        assert!(second.json.is_none() && second.trace.is_some() && second.no_trace_file);
        assert_eq!(check_args(a.clone(), None).unwrap().partitions, 0, "alone: unchanged");
        let four = CheckArgs { partitions: 4, ..a };
        assert!(check_args(four, Some((0, 2))).unwrap_err().contains("one partition per process (2)"));
    }

    /// Processes decide alike: the memory each host happens to have available is not a limit.
    #[test]
    fn a_check_over_processes_drops_what_each_host_has_available() {
        let mut c = CheckArgs::default();
        c.budgets.max_memory = Some(MemoryLimit::Available(8 << 30));
        assert_eq!(check_args(c, Some((0, 2))).unwrap().budgets.max_memory, None);
    }
}
