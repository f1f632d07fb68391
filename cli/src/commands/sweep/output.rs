//! What a sweep writes besides its rows: the note under each series, the closing summary,
//! and the JSON, SVG, STRACE and trace files.

use super::flags::SweepArgs;
use super::plan::label_of;
use crate::sweep::SweepSpec;
use collectives::{Kind, Mode, Origin, Path};
use ranksim::Config;
use ranksim::formats::{self, ResultRow, Series, SeriesSummary, SweepConfig, SweepJson};
use ranksim::measure::{self, Builtin};
use std::io::Write;
use std::path::PathBuf;

/// How far a series' numbers are from measurements: the nearest shipped table that measured
/// the same collective and algorithm, and the model's error against it on this machine.
pub(super) fn trust_line(cfg: &Config, spec: &SweepSpec) -> String {
    let what = label_of(spec.call.kind, spec.call.mode);
    match crate::commands::validate::nearest_table(cfg, spec.call.kind, spec.call.mode, spec.call.ranks) {
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

/// What the `hccl` series models, printed before its table.
pub(super) const HCCL_NOTE: &str = "HCCL-class, not a PyPTO builtin: what the vendor library runs on a 910B server with \
     HCCL_OP_EXPANSION_MODE=AIV at each size (its selector's thresholds, docs/references/hardware.md §4.2); \
     after each row the mode of ours that ran and the library's executor it models";

/// The closing comparison of several series: each one's best busbw against its bound (one
/// bound in the heading when every series has the same), or FAILED for a series with no
/// measured size.
pub(super) fn summary(out: &mut dyn Write, s: &[SeriesSummary], rows: &[ResultRow]) -> std::io::Result<()> {
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

/// What a series of a built-in sweep ran, as its preamble and JSON say it: the library's
/// [`ranksim::measure::sweep_config`] of the spec, with the built-in's own collective, mode,
/// path and blocks.
pub(super) fn sweep_config(a: &SweepArgs, cfg: &Config, s: &SweepSpec, max_bytes: u64) -> SweepConfig {
    let c = &s.call;
    let sizes = (a.min_bytes, max_bytes, a.factor);
    SweepConfig {
        collective: c.kind.to_string(),
        mode: if matches!(c.kind, Kind::AllReduce | Kind::AllGather) || c.mode != Mode::Mesh {
            c.mode.to_string()
        } else {
            "-".into()
        },
        path: c.path.to_string(),
        core_num: c.blocks(),
        ..measure::sweep_config(cfg, &Builtin(c), &s.measure(), sizes)
    }
}

pub(super) fn write_outputs(
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
pub(super) fn hccl_costs_note(cfg: &Config, spec: &SweepSpec) -> Option<String> {
    let h = &cfg.host;
    let hccl = spec.call.origin() == Origin::HcclClass && spec.call.path == Path::Host;
    (hccl && (h.hccl_launch_us > 0.0 || h.hccl_setup_us > 0.0)).then(|| {
        format!(
            "device time only: a host-launched HCCL op also pays about {} us of setup before it (host.hccl_setup_us) \
             and runs at most once per {} us (host.hccl_launch_us), fitted to 2-rank HcclSend/HcclRecv \
             (ranksim validate --table hccl-sendrecv-2p)",
            h.hccl_setup_us, h.hccl_launch_us
        )
    })
}
