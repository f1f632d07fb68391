//! One series of a built-in `sweep` (or `bench`, or a `# workload:` line): [`SweepSpec`], a
//! [`collectives::Call`] and how its runs repeat and perturb it, the CLI's value ranges
//! ([`SweepSpec::validate`], [`validate_measure`], [`parse_op`]), what an `hccl` series runs at
//! a size ([`SweepSpec::hccl_pick`]), whether a machine runs it ([`supports`],
//! the `--help` matrix), and the note on what each mode models. Measuring goes through the
//! library's [`ranksim::measure`] with [`Builtin`], as a user's collective does.

use collectives::{Call, Engine, Kind, Mode, Path};
use ranksim::Config;
use ranksim::formats::{self, ResultRow};
use ranksim::measure::memory::MemoryLimit;
use ranksim::measure::{
    self, Budgets, Builtin, Collective, MAX_CALLS, MAX_JITTER_PS, MAX_SIZE_PAYLOAD, MAX_SIZE_TIMING, Measure, Point,
    series_name,
};
use sim_core::{DType, Jitter, MemoryEstimate, MemoryReport, Progress, ReduceOp, RunReport, World, human_bytes};

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
    /// Partitions each run is split into (see `RunOptions::partitions`).
    pub partitions: usize,
    /// The partitions are this thread's process group (`RunOptions::processes`).
    pub processes: bool,
    /// What ends a run that would never end (simulated time, events, livelock).
    pub budgets: Budgets,
}

impl SweepSpec {
    /// The library's options for measuring this spec: its ranks, calls, jitter and payload.
    pub fn measure(&self) -> Measure {
        Measure {
            iters: self.iters,
            warmup: self.warmup,
            jitter: self.jitter,
            timing_only: self.timing_only,
            partitions: self.partitions,
            processes: self.processes,
            budgets: self.budgets,
            interrupt: Some(crate::interrupt::flag()),
            ..Measure::new(self.call.ranks)
        }
    }

    /// One measured call of `call` with payload: no warmup, no jitter.
    pub fn new(call: Call) -> SweepSpec {
        SweepSpec {
            call,
            iters: 1,
            warmup: 0,
            jitter: None,
            timing_only: false,
            partitions: 1,
            processes: false,
            budgets: Budgets::default(),
        }
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

    /// With `budgets`.
    pub fn with_budgets(self, budgets: Budgets) -> SweepSpec {
        SweepSpec { budgets, ..self }
    }

    /// Split into `partitions` (1: one engine).
    pub fn with_partitions(self, partitions: usize) -> SweepSpec {
        SweepSpec { partitions, ..self }
    }

    /// Timing-only (no payload) or not.
    pub fn with_timing_only(self, timing_only: bool) -> SweepSpec {
        SweepSpec { timing_only, ..self }
    }

    /// What size `size` of an `hccl` series of this spec runs: the mode HCCL picks for its
    /// data ([`collectives::hccl_aiv_pick`], the data counted as hccl_test counts it: the count
    /// column times the element size), with one warmup call when the pick uses copy engines;
    /// and what its row says it ran (the mode and the vendor library's executor).
    pub fn hccl_pick(&self, size: u64) -> (SweepSpec, String) {
        let c = self.call;
        let esize = c.dtype.size() as u64;
        let data = formats::count_for(c.kind, size, esize, c.ranks).saturating_mul(esize);
        match collectives::hccl_aiv_pick(c.kind, c.op, data) {
            Some((mode, exec)) => {
                let copy_engines = collectives::serving(c.kind, mode).is_some_and(|r| r.engine == Engine::CopyEngines);
                let warmup = if copy_engines { self.warmup.max(1) } else { self.warmup };
                (SweepSpec { call: c.with_mode(mode), ..self.clone() }.with_warmup(warmup), format!("{mode} ({exec})"))
            }
            None => (self.clone(), c.mode.to_string()),
        }
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
        validate_measure(&self.measure(), size_flag, max_size)
    }
}

/// Parses `-o`: a reduction; nccl-tests' `avg` (and `all`) are named and refused.
pub fn parse_op(s: &str) -> Result<ReduceOp, String> {
    match s {
        "avg" => Err("PyPTO's collectives have no avg; use -o sum (avg is sum / ranks and takes the same time)".into()),
        "all" => Err("-o takes one reduction (sum, max, min or prod); run one sweep per op".into()),
        _ => s.parse(),
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

/// Runs one size of `spec` through [`measure::point`]; `None` when the size gives no element
/// per rank.
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
    let m = Measure { trace, progress: progress.cloned(), ..spec.measure() };
    measure::point(cfg, &Builtin(&spec.call), &m, size).map_err(|e| e.to_string())
}

/// The row of `size` that could not be measured, with its reason (`None` when the size gives
/// no element per rank: no row at all).
pub fn failed_row(spec: &SweepSpec, size: u64, why: String) -> Option<ResultRow> {
    measure::failed_row(&Builtin(&spec.call), &spec.measure(), size, why)
}

/// Runs `calls` calls of the collective at `size` bytes (timing-only when the spec says so)
/// through [`measure::run`] and returns the run; `None` when the size gives no element per
/// rank.
pub fn run_calls(
    cfg: &Config,
    spec: &SweepSpec,
    size: u64,
    calls: usize,
    trace: bool,
) -> Result<Option<RunReport>, String> {
    let m = Measure { trace, ..spec.measure() };
    match measure::run(cfg, &Builtin(&spec.call), &m, size, calls.max(1)) {
        Ok(r) => Ok(Some(r.report)),
        Err(measure::Error::NoElement { .. }) => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// Sets up and queues `calls` calls of the collective at `size` bytes on `w` without running
/// them (for the checker), through [`measure::queue`]; `false` when the size gives no element
/// per rank.
pub fn queue_calls(w: &mut World, spec: &SweepSpec, size: u64, calls: usize) -> sim_core::SimResult<bool> {
    let c = Builtin(&spec.call);
    if c.count(size, spec.call.ranks) == 0 && !c.runs_without_data() {
        return Ok(false);
    }
    measure::queue(w, &c, spec.call.ranks, size, calls)?;
    Ok(true)
}

/// What one size of `spec` holds at its peak, estimated before it runs ([`measure::point`]'s
/// runs: the one-call run with payload, the timed run); `None` when the size gives no element
/// per rank.
pub fn estimate(cfg: &Config, spec: &SweepSpec, size: u64) -> Result<Option<MemoryEstimate>, String> {
    measure::memory::estimate(cfg, &Builtin(&spec.call), &spec.measure(), size).map_err(|e| e.to_string())
}

/// The engine's work for one size of `spec` (operations and packet hops of its runs,
/// estimated before it runs); `None` when the size gives no element per rank.
pub fn work(cfg: &Config, spec: &SweepSpec, size: u64) -> Result<Option<u64>, String> {
    measure::memory::estimate_work(cfg, &Builtin(&spec.call), &spec.measure(), size).map_err(|e| e.to_string())
}

/// The refusal of `spec` at `size`, whose `estimate` exceeds `limit`: the estimate, its largest
/// part, and what would fit instead, each with its own estimate (timing-only, fewer blocks,
/// another algorithm, fewer ranks), or a larger limit.
pub fn memory_refusal(
    cfg: &Config,
    spec: &SweepSpec,
    size: u64,
    estimate: &MemoryEstimate,
    limit: MemoryLimit,
) -> String {
    let call = spec.call;
    let fits =
        |s: &SweepSpec| self::estimate(cfg, s, size).ok().flatten().map(|e| e.total()).filter(|&b| b <= limit.bytes());
    let mut ways = Vec::new();
    if !spec.timing_only
        && let Some(b) = fits(&spec.clone().with_timing_only(true))
    {
        ways.push(format!("--no-data (timing-only: the same times; about {})", human_bytes(b)));
    }
    let mut k = call.blocks() / 2;
    while k >= 1 {
        if let Some(b) = fits(&SweepSpec { call: call.with_core_num(k), ..spec.clone() }) {
            ways.push(format!("--core-num {k} (about {})", human_bytes(b)));
            break;
        }
        k /= 2;
    }
    for &mode in collectives::modes(call.kind) {
        let capped = collectives::max_ranks(call.kind, mode, call.path).is_some_and(|m| call.ranks > m);
        if mode == call.mode || capped {
            continue;
        }
        let other = call.with_mode(mode);
        if let Some(b) = fits(&SweepSpec { call: other, ..spec.clone() }) {
            ways.push(format!("--mode {mode} (about {})", human_bytes(b)));
        } else if other.blocks() > 1
            && let Some(b) = fits(&SweepSpec { call: other.with_core_num(1), ..spec.clone() })
        {
            ways.push(format!("--mode {mode} --core-num 1 (about {})", human_bytes(b)));
        }
    }
    let mut g = call.ranks / 2;
    while g >= 2 {
        if let Some(b) = fits(&SweepSpec { call: call.with_ranks(g), ..spec.clone() }) {
            ways.push(format!("-g {g} (about {})", human_bytes(b)));
            break;
        }
        g /= 2;
    }
    ways.push("or a larger --max-memory".to_string());
    let report = MemoryReport {
        what: format!("{} at {} on {} ranks", series_name(call.kind, call.mode), formats::size_label(size), call.ranks),
        estimate: estimate.clone(),
        limit: limit.bytes(),
        limit_source: limit.source().to_string(),
        advice: format!("What fits: {}.", ways.join("; ")),
    };
    report.to_string()
}

/// Whether the collective of `spec` runs on `cfg` at all: one call is queued (not run) on a
/// fresh world with the collective's own validation; the error says what it needs.
pub fn supports(cfg: &Config, spec: &SweepSpec) -> Result<(), String> {
    let mut w = cfg.world().map_err(|e| e.to_string())?;
    w.set_timing_only().map_err(|e| e.to_string())?;
    let size = (spec.call.dtype.size() * spec.call.ranks.max(1) * 64) as u64;
    queue_calls(&mut w, spec, size, 1).map(|_| ()).map_err(|e| e.to_string())
}

/// One line on what a series models: PyPTO's builtin as written, or the vendor library's
/// algorithm, and on how many blocks (the modes table's note, [`collectives::sweep_note`]).
pub fn mode_note(spec: &SweepSpec) -> String {
    collectives::sweep_note(&spec.call, spec.warmup)
}

/// The `--mode` help, from the modes table: every mode with what it is, each collective's
/// modes, and which a default sweep (no `--mode`) runs where the ranks are.
pub fn mode_help() -> String {
    let width = collectives::MODES.iter().map(|m| m.name.len()).max().unwrap_or(0);
    let mut out = String::from("Algorithm(s), comma separated; a mode a collective lacks is named and skipped:\n");
    for m in collectives::MODES {
        out.push_str(&format!("  {:<width$}  {}\n", m.name, m.about));
    }
    let per_kind: Vec<String> = Kind::ALL
        .iter()
        .map(|&k| format!("{k}: {}", collectives::modes(k).iter().map(|m| m.name()).collect::<Vec<_>>().join(", ")))
        .collect();
    out.push_str(&format!("Each collective's modes: {}.\n", per_kind.join("; ")));
    // The default series where the ranks are, per collective: `allreduce rhd; all_to_all hier`.
    let scale = |servers: bool, beyond: bool| {
        let of = |k: Kind| {
            let rows = collectives::SERVING.iter().filter(|r| r.kind == k && r.default_series.runs(servers, beyond));
            rows.map(|r| r.mode.name()).collect::<Vec<_>>().join(", ")
        };
        let kinds = Kind::ALL.into_iter().map(|k| (k, of(k))).filter(|(_, m)| !m.is_empty());
        kinds.map(|(k, m)| format!("{k} {m}")).collect::<Vec<_>>().join("; ")
    };
    out.push_str(&format!(
        "Default: PyPTO's builtin (mesh, one block) and, on one server, the `hccl` series (what HCCL runs at each \
         size, on every AIV core), else {}. Across servers: {}. Above {} ranks on one server, where PyPTO's HOST \
         builtins return at once: {}.",
        scale(false, false),
        scale(true, false),
        collectives::MAX_BUILTIN_RANKS,
        scale(false, true)
    ));
    out
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
