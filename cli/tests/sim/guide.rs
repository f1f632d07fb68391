//! The guide `docs/your-collective.md`: its code is `examples/my_allgather.rs` (which
//! `examples.rs` runs) and, for observers, `examples/link_busy.rs`; its numbers are that
//! example's output.

use std::process::Command;

/// The ```rust blocks of the guide.
fn guide_blocks() -> Vec<String> {
    let guide = include_str!("../../../docs/your-collective.md");
    let mut blocks = Vec::new();
    let mut cur: Option<Vec<&str>> = None;
    for line in guide.lines() {
        match (&mut cur, line) {
            (None, "```rust") => cur = Some(Vec::new()),
            (Some(b), "```") => {
                blocks.push(b.join("\n"));
                cur = None;
            }
            (Some(b), l) => b.push(l),
            _ => {}
        }
    }
    blocks
}

/// The example's text between `// guide:NAME begin` and `// guide:NAME end`, de-indented to the
/// marker's level.
fn example_part(name: &str) -> String {
    part_of(include_str!("../../../examples/my_allgather.rs"), name)
}

/// The text of `src` between `// guide:NAME begin` and `// guide:NAME end`, de-indented.
fn part_of(src: &str, name: &str) -> String {
    let lines: Vec<&str> = src.lines().collect();
    let begin = lines.iter().position(|l| l.trim() == format!("// guide:{name} begin")).expect("begin marker");
    let end = lines.iter().position(|l| l.trim() == format!("// guide:{name} end")).expect("end marker");
    let indent = lines[begin].len() - lines[begin].trim_start().len();
    lines[begin + 1..end]
        .iter()
        .map(|l| if l.len() >= indent { &l[indent..] } else { l.trim() })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_guide_shows_the_example_code() {
    let blocks = guide_blocks();
    assert_eq!(blocks.len(), 4, "{blocks:?}");
    let link_busy = include_str!("../../../examples/link_busy.rs");
    let sources = [
        ("the example", example_part("collective")),
        ("the example", example_part("measure")),
        ("the example", example_part("cli")),
        ("examples/link_busy.rs", part_of(link_busy, "observer")),
    ];
    for (block, (file, part)) in blocks.iter().zip(sources) {
        assert_eq!(block.trim_end(), part.trim_end(), "docs/your-collective.md differs from {file}");
    }
}

#[test]
fn the_guide_example_runs_and_prints_what_the_guide_says() {
    let exe = crate::examples::example_dir().join("my_allgather");
    let trace = std::env::temp_dir().join(format!("ranksim-guide-{}.json", std::process::id()));
    let out = Command::new(exe).arg(&trace).output().expect("the my_allgather example (cargo build --examples)");
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.trim_end().ends_with("OK"), "{text}");
    let guide = include_str!("../../../docs/your-collective.md");
    assert!(text.contains("1 MiB: 41.56 us, busbw 22.08 GB/s, Some(0) wrong"), "{text}");
    assert!(guide.contains("takes 41.56 us (busbw 22.08 GB/s)"));
    assert!(text.contains("# ranksim sweep: collective my_allgather ranks 8 machine a2a3"), "{text}");
    assert_eq!(text.lines().filter(|l| l.contains("float    none")).count(), 4, "{text}");
    assert!(text.contains("BenchmarkStats(rounds=5, warmup=1): device_wall_us min="), "{text}");
    assert!(text.contains("checker: 3 run(s), 0 finding(s)"), "{text}");
    assert!(text.contains("traced call: device time 6.738us"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let _ = std::fs::remove_file(&trace);
    assert!(json["traceEvents"].as_array().is_some_and(|e| e.iter().any(|e| e["name"] == "remote_store")));
}

#[test]
fn device_time_is_the_sweep_time_of_one_call_and_builtins_take_the_custom_path() {
    use ranksim::collectives::{Kind, Mode};
    use ranksim::measure::Builtin;
    use ranksim::prelude::*;
    use ranksim_cli::sweep::SweepSpec;
    let cfg = ranksim::Config::default_preset();
    let call = ranksim::collectives::Call::new(Kind::AllReduce, 4).with_mode(Mode::TwoShot).with_core_num(2);
    let spec = SweepSpec::new(call);
    let p = ranksim_cli::sweep::run_point(&cfg, &spec, 64 << 10, false).unwrap().unwrap();
    assert_eq!(p.report.device_time().as_us_f64(), p.row.time_us);
    assert_eq!(p.report.device_time_per_call().len(), 1);
    // The built-in, measured through the user-collective API: the same row.
    let m = ranksim::measure::Measure::new(4);
    let q = ranksim::measure::point(&cfg, &Builtin(&spec.call), &m, 64 << 10).unwrap().unwrap();
    assert_eq!(q.row, p.row);
    // Three calls: three per-call times, summed by device_time.
    let r = ranksim_cli::sweep::run_calls(&cfg, &spec, 64 << 10, 3, false).unwrap().unwrap();
    let per = r.device_time_per_call();
    assert_eq!(per.len(), 3);
    assert_eq!(r.device_time(), per[0] + per[1] + per[2]);
    let report =
        ranksim::measure::check(&cfg, &Builtin(&spec.call), &m, 8192, 2, &CheckOptions::default()).unwrap().report;
    assert!(report.is_clean() && report.runs == 1, "{report:?}");
}
