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

#[test]
fn examples_build_without_the_test_and_bench_dependencies() {
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    // What `cargo run --example` compiles: the examples package and its normal dependencies.
    let out = Command::new(env!("CARGO"))
        .args(["tree", "--offline", "-p", "ranksim-examples", "-e", "normal,build", "--prefix", "none"])
        .current_dir(root)
        .output()
        .expect("cargo tree runs");
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{tree}{}", String::from_utf8_lossy(&out.stderr));
    assert!(tree.contains("ranksim v") && tree.contains("sim-core v"), "{tree}");
    for heavy in ["criterion", "proptest"] {
        assert!(!tree.contains(heavy), "`cargo run --example` would build {heavy}:\n{tree}");
    }
    // Every example source is declared, so `cargo run --example NAME` finds it from the root.
    let manifest = std::fs::read_to_string(root.join("examples/Cargo.toml")).unwrap();
    let mut n = 0;
    for entry in std::fs::read_dir(root.join("examples")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.extension().is_some_and(|e| e == "rs") && name != "lib" {
            assert!(manifest.contains(&format!("name = \"{name}\"\npath = \"{name}.rs\"")), "{name} undeclared");
            assert!(example(&name).is_file(), "{name} not built");
            n += 1;
        }
    }
    assert!(n >= 11, "{n} examples");
}
