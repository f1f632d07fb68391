//! What a new user runs first: every example binary, run as written (the README's snippet is
//! `readme.rs`).

use std::path::PathBuf;
use std::process::Command;

/// Where `cargo test` builds the example binaries: next to the test binaries.
pub fn example_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary");
    exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>").join("examples")
}

/// The example binary `name`.
fn example(name: &str) -> PathBuf {
    example_dir().join(name)
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
