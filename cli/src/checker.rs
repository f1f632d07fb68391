//! What `ranksim check` can check, and how: every tutorial program, every collective (each
//! mode and path, two calls in a row so reuse between calls is exercised) and the zoo of
//! broken protocols, each run under the checker unperturbed and then once per jitter seed on
//! a fresh world.

use crate::sweep::{SweepSpec, queue_calls};
use collectives::{Call, Kind, Mode, Path};
use ranksim::Config;
use ranksim::measure::{self, Measure};
use ranksim::programs::{self, broken};
use sim_core::{
    RunReport, SimResult, World,
    check::{CheckOptions, CheckReport},
    trace::Trace,
};

/// Bytes per rank of each checked collective call.
const COLLECTIVE_BYTES: u64 = 8192;
/// Calls of each checked collective (two, so a call's leftovers would meet the next one).
const COLLECTIVE_CALLS: usize = 2;
/// AIV blocks per rank for the HOST mesh, two-shot, aiv-mesh and sdma-mesh allreduce.
const COLLECTIVE_BLOCKS: usize = 4;

/// One checkable program.
pub struct Checkable {
    /// The name `check --program` takes.
    pub name: String,
    /// One line on what it does.
    pub about: String,
    /// Fewest ranks it needs.
    pub min_ranks: usize,
    /// Most ranks it can take (`None`: any).
    pub max_ranks: Option<usize>,
    what: What,
}

enum What {
    Tutorial(&'static programs::Program),
    Collective { kind: Kind, mode: Mode, path: Path },
    Broken(&'static broken::Broken),
}

impl Checkable {
    /// Whether it is a deliberately broken protocol.
    pub fn is_broken(&self) -> bool {
        matches!(self.what, What::Broken(_))
    }

    /// Sets up on the first `ranks` chips of `w` and runs it.
    fn run(&self, w: &mut World, ranks: usize) -> SimResult<RunReport> {
        match &self.what {
            What::Tutorial(p) => (p.run)(w, ranks).map(|o| o.report),
            What::Broken(b) => (b.run)(w, ranks),
            &What::Collective { kind, mode, path } => {
                let spec = collective_spec(kind, mode, path, ranks);
                queue_calls(w, &spec, COLLECTIVE_BYTES, COLLECTIVE_CALLS)?;
                w.run()
            }
        }
    }
}

fn collective_spec(kind: Kind, mode: Mode, path: Path, ranks: usize) -> SweepSpec {
    let call = Call::new(kind, ranks).with_mode(mode).with_path(path).with_core_num(COLLECTIVE_BLOCKS);
    SweepSpec::new(call.with_core_num(call.blocks())).with_iters(COLLECTIVE_CALLS as u32)
}

/// Every checkable program: tutorials, collectives, then the broken zoo.
pub fn catalogue() -> Vec<Checkable> {
    let mut out = Vec::new();
    for p in programs::PROGRAMS.iter().filter(|p| programs::find_broken(&format!("broken-{}", p.name)).is_none()) {
        let what = What::Tutorial(p);
        out.push(Checkable {
            name: p.name.into(),
            about: p.about.into(),
            min_ranks: p.min_ranks,
            max_ranks: None,
            what,
        });
    }
    for kind in Kind::ALL {
        for &mode in collectives::modes(kind) {
            for path in [Path::Host, Path::InCore] {
                let named = kind == Kind::AllReduce || mode != Mode::Mesh;
                let name = if named { format!("{kind}-{mode}-{path}") } else { format!("{kind}-{path}") };
                let how = if named { format!("{mode}, {path}") } else { path.to_string() };
                let about = format!("{COLLECTIVE_CALLS} calls of {kind} ({how}), {COLLECTIVE_BYTES} B per rank");
                let max = collectives::max_ranks(kind, mode, path);
                let what = What::Collective { kind, mode, path };
                out.push(Checkable { name, about, min_ranks: 1, max_ranks: max, what });
            }
        }
    }
    for b in programs::broken_zoo() {
        let what = What::Broken(b);
        out.push(Checkable {
            name: b.name.into(),
            about: b.about.into(),
            min_ranks: b.min_ranks,
            max_ranks: None,
            what,
        });
    }
    out
}

/// Checks `c` on `ranks` ranks of `cfg`'s machine: the unperturbed run, then `opts.seeds`
/// jittered runs, each on a fresh world. Deadlocks are findings; a kernel error is an error.
pub fn check(cfg: &Config, c: &Checkable, ranks: usize, opts: &CheckOptions) -> Result<CheckReport, String> {
    check_traced(cfg, c, &Measure::new(ranks), opts).map(|(r, _)| r)
}

/// As [`check`] on `m.ranks` ranks, each run split as `m` says (`partitions`, `processes`);
/// with `m.trace`, also returns the timeline of the unperturbed run, findings
/// included as instant events (none when that run did not complete). A run the simulator
/// warned about (a builtin cut short) checked nothing: it is an error, never a clean report.
pub fn check_traced(
    cfg: &Config,
    c: &Checkable,
    m: &Measure,
    opts: &CheckOptions,
) -> Result<(CheckReport, Option<Trace>), String> {
    let ranks = m.ranks;
    let max = c.max_ranks.unwrap_or(usize::MAX).min(cfg.machine.ranks);
    if ranks < c.min_ranks || ranks > max {
        return Err(format!("{} needs {}..={max} ranks, got {ranks}", c.name, c.min_ranks));
    }
    // A collective's runs are estimated whole (routes, transfers in flight, signal cells and
    // the checker's records) before the first; any program's runs at least by what the world
    // holds (`RunOptions::max_memory`, through the budgets).
    if let (&What::Collective { kind, mode, path }, Some(_)) = (&c.what, m.budgets.max_memory) {
        let spec = collective_spec(kind, mode, path, ranks);
        let b = measure::Builtin(&spec.call);
        let e = measure::memory::estimate_check(cfg, &b, m, COLLECTIVE_BYTES, COLLECTIVE_CALLS);
        if let Some(e) = e.map_err(|e| e.to_string())? {
            let what = format!("{} on {ranks} ranks", c.name);
            measure::memory::refuse(&what, &e, m, false).map_err(|e| e.to_string())?;
        }
    }
    let checked = measure::check_program(cfg, &c.name, m, opts, &|w| c.run(w, ranks)).map_err(|e| e.to_string())?;
    Ok((checked.report, checked.timeline))
}
