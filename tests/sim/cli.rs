//! The `ranksim` binary: the main job runs on the embedded preset, and a broken protocol
//! prints its deadlock report and exits non-zero.

use std::process::Command;

fn ranksim(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ranksim")).args(args).output().expect("the ranksim binary runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn the_main_job_runs_every_tutorial_program_on_the_default_preset() {
    let (code, out) = ranksim(&[]);
    assert_eq!(code, 0, "{out}");
    for name in ["hello_rank", "signal_exchange", "barrier", "remote_load", "remote_store", "put", "get"] {
        assert!(out.lines().any(|l| l.starts_with("OK") && l.contains(name)), "{name} missing from:\n{out}");
    }
    assert!(!out.contains("FAIL"), "{out}");
}

#[test]
fn the_deadlock_program_prints_the_report_and_fails() {
    let (code, out) = ranksim(&["run", "deadlock", "--ranks", "3"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("deadlock at") && out.contains("3 blocked wait(s)") && out.contains("needs >= 1"), "{out}");
}

#[test]
fn bad_arguments_are_explained() {
    let (code, out) = ranksim(&["run", "nope"]);
    assert_eq!(code, 2);
    assert!(out.contains("no program `nope`"), "{out}");
    let (code, out) = ranksim(&["run", "put", "--ranks", "9"]);
    assert_eq!(code, 2);
    assert!(out.contains("needs 2..=8 ranks"), "{out}");
    let (code, out) = ranksim(&["run", "--config", "/nonexistent.toml"]);
    assert_eq!(code, 2);
    assert!(out.contains("/nonexistent.toml"), "{out}");
    let (code, out) = ranksim(&["run", "--list"]);
    assert_eq!(code, 0);
    assert!(out.contains("deadlock"), "{out}");
}
