//! What a new user runs first: the README's "Writing a program" snippet and every example
//! binary, run as written.

use std::path::PathBuf;
use std::process::Command;

// readme-snippet-start
#[rustfmt::skip]
fn readme_snippet() -> Result<(ranksim::sim_core::RunReport, Vec<f32>), Box<dyn std::error::Error>> {
    use ranksim::prelude::*;

    let mut world = ranksim::Config::default_preset().world()?;
    let dom = world.world_domain("comm_d0")?;
    let data = world.alloc_window(&dom, "data", DType::F32, &[1, 256])?;
    let sig = world.alloc_window(&dom, "signal", DType::I32, &[8, 1])?;
    let (d, s) = (data.clone(), sig.clone());
    world.dispatch_all(&dom, Dispatch::kernel("shift", 1, move |core| {
        let (me, n) = (core.rank(), core.nranks());
        let t = core.load(&d, &[0, 0], &[1, 256])?;
        core.remote_store(&t, &d, (me + 1) % n, &[0, 0], AtomicType::None)?;
        core.notify(&s, (me + 1) % n, &[me, 0], 1, NotifyOp::AtomicAdd)?;
        core.wait(&s, &[(me + n - 1) % n, 0], 1, WaitCmp::Ge)
    }))?;
    let report = world.run()?;          // Err(SimError::Deadlock(..)) if the protocol hangs
    let out: Vec<f32> = world.read(&data, 0)?;
    Ok((report, out))
}
// readme-snippet-end

/// Lines of `text`, trimmed, without blank lines.
fn lines(text: &str) -> Vec<&str> {
    text.lines().map(str::trim).filter(|l| !l.is_empty()).collect()
}

#[test]
fn the_readme_snippet_is_this_test_and_it_runs() {
    let readme = include_str!("../../README.md");
    let block = readme.split("## Writing a program").nth(1).and_then(|s| s.split("```rust").nth(1));
    let block = block.and_then(|s| s.split("```").next()).expect("the README has a ```rust block");
    let me = include_str!("examples.rs");
    let body = me.split("// readme-snippet-start").nth(1).and_then(|s| s.split("// readme-snippet-end").next());
    let body = body.expect("the markers");
    // The test's copy is the README's, wrapped in a function that returns what it computed.
    let inner: Vec<&str> = lines(body);
    let inner = &inner[2..inner.len() - 2];
    assert_eq!(inner, lines(block).as_slice(), "README.md's snippet and this test's copy differ; update both");
    let (report, out) = readme_snippet().expect("the snippet runs");
    assert!(report.end.as_ps() > 0);
    // Rank 0 received rank 7's (all-zero) window row: what the snippet reads back.
    assert_eq!(out, vec![0.0f32; 256]);
}

/// The example binary `name`, built by `cargo test` next to the test binaries.
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary");
    exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>").join("examples").join(name)
}

fn run(name: &str, args: &[&str]) -> (i32, String) {
    let out = Command::new(example(name)).args(args).output().unwrap_or_else(|e| panic!("example `{name}`: {e}"));
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn every_tutorial_example_prints_ok() {
    for name in [
        "hello_rank",
        "window_buffer",
        "signal_exchange",
        "remote_load",
        "remote_store",
        "put",
        "get",
        "barrier",
        "programming_model",
    ] {
        for ranks in ["2", "4"] {
            let (code, out) = run(name, &[ranks]);
            assert_eq!(code, 0, "{name} {ranks}: {out}");
            assert!(out.trim_end().ends_with("OK"), "{name} {ranks}: {out}");
        }
    }
    let (code, out) = run("hello_rank", &["x"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("usage: cargo run --example hello_rank [RANKS]"), "{out}");
}

#[test]
fn the_deadlock_example_reports_every_blocked_wait_and_fails() {
    let (code, out) = run("deadlock", &["2"]);
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("deadlock"), "{out}");
}

#[test]
fn the_collectives_example_times_every_collective() {
    let (code, out) = run("collectives", &[]);
    assert_eq!(code, 0, "{out}");
    for row in [
        "allreduce       mesh",
        "allreduce       aiv-mesh",
        "allreduce       sdma-mesh",
        "allgather       sdma-mesh",
        "barrier",
    ] {
        assert!(out.contains(row), "`{row}` missing:\n{out}");
    }
}
