//! Runs that can only spin end with a livelock report (every running core polls cells nothing
//! in flight can change); runs that never end otherwise reach a budget (simulated time, events)
//! or the host's stop flag. A poller waiting on a transfer in flight is never a livelock.

use crate::common::{a2a3, all};
use ranksim::prelude::*;
use sim_core::{Cond, Interrupt, Jitter, KernelExec, Limit, LivelockReport, RunOptions};
use std::time::{Duration, Instant};

/// A world of a2a3 whose rank 1 polls `signal[0, 0]` (`>= 1`) in a loop that, when `write`,
/// also writes a scalar of its own GM each time (so something always changes); nobody ever
/// notifies the cell. Returns the world and the line of the poll.
fn spinner(write: bool, exec: KernelExec) -> (World, u32) {
    let mut w = a2a3();
    w.options_mut().kernel_exec = exec;
    let dom = all(&mut w);
    let sig = w.alloc_window(&dom, "signal", DType::I32, &[8, 1]).unwrap();
    let scratch = w.alloc_tensor("scratch", DType::I32, &[1, 8]).unwrap();
    let line = line!() + 6;
    w.dispatch_all(
        &dom,
        Dispatch::kernel("spin", 1, move |core| {
            if core.rank() == 1 {
                let mut k = 0.0;
                while !core.test_signal(&sig, &[0, 0], 1, WaitCmp::Ge)? {
                    if write {
                        k += 1.0;
                        core.write_scalar(&scratch, &[0, 0], k)?;
                    }
                }
            }
            Ok(())
        }),
    )
    .unwrap();
    (w, line)
}

fn livelock(r: SimResult<RunReport>) -> LivelockReport {
    match r {
        Err(SimError::Livelock(l)) => *l,
        other => panic!("expected a livelock, got {other:?}"),
    }
}

#[test]
fn a_poll_of_a_cell_nobody_writes_ends_as_a_livelock_naming_the_cell_the_value_and_the_line() {
    for exec in [KernelExec::default(), KernelExec::Threads] {
        let (mut w, line) = spinner(false, exec);
        let t0 = Instant::now();
        let l = livelock(w.run());
        assert!(t0.elapsed() < Duration::from_secs(5), "found in {:?}", t0.elapsed());
        assert_eq!(l.polls.len(), 1, "{l}");
        let p = &l.polls[0];
        assert_eq!((p.chip, p.block, p.task.as_str(), p.op.as_str()), (1, 0, "spin", "test_signal"));
        assert_eq!((p.buffer.as_str(), p.coords.as_slice(), p.current), ("signal", &[0, 0][..], 0.0));
        assert_eq!(p.cond, Some(Cond::Signed(WaitCmp::Ge, 1)));
        assert!(p.last_writers.is_empty());
        assert_eq!(p.polls, RunOptions::DEFAULT_LIVELOCK_POLLS, "ended at the threshold");
        let at = p.location.clone().unwrap();
        assert!(at.starts_with(&format!("{}:{line}:", file!())), "{at}");
        assert!(l.waits.is_empty() && l.stuck.is_empty());
        let text = l.to_string();
        assert!(text.starts_with("livelock at "), "{text}");
        assert!(text.contains("last writers: none (nobody ever wrote this cell)"), "{text}");
        assert!(text.contains("hint: nobody ever wrote this cell"), "{text}");
        assert!(text.contains(&format!("called at {at}")), "{text}");
    }
}

#[test]
fn a_livelock_report_is_the_same_every_run_and_on_both_drivers() {
    let run = |exec| livelock(spinner(false, exec).0.run());
    let first = run(KernelExec::default());
    assert_eq!(first, run(KernelExec::default()));
    assert_eq!(first, run(KernelExec::Threads));
}

/// Rank 0 puts `bytes` into rank 1's window and then notifies; rank 1 polls the notify's cell
/// (`test_signal` in a loop) and reads the data. Slow (a large transfer) but correct.
fn slow_poller(w: &mut World, bytes: usize) {
    let dom = all(w);
    let n = bytes / 4;
    let data = w.alloc_window(&dom, "data", DType::F32, &[1, n]).unwrap();
    let src = w.alloc_tensor("src", DType::F32, &[1, n]).unwrap();
    let sig = w.alloc_window(&dom, "signal", DType::I32, &[8, 1]).unwrap();
    w.dispatch_all(
        &dom,
        Dispatch::kernel("slow", 1, move |core| match core.rank() {
            0 => {
                core.put(&data, 1, &src, &CopyOpts::new().chunks(1, 16384))?;
                core.notify(&sig, 1, &[0, 0], 1, NotifyOp::AtomicAdd)
            }
            1 => {
                while !core.test_signal(&sig, &[0, 0], 1, WaitCmp::Ge)? {}
                core.load(&data, &[0, 0], &[1, 8]).map(|_| ())
            }
            _ => Ok(()),
        }),
    )
    .unwrap();
}

#[test]
fn a_poller_waiting_on_a_transfer_in_flight_is_never_a_livelock_even_at_one_poll_and_under_jitter() {
    for seed in [None, Some(1), Some(2), Some(3)] {
        let mut w = a2a3();
        // The most eager rule: a single poll with nothing changing would do.
        w.options_mut().livelock_polls = 1;
        w.options_mut().jitter =
            seed.map(|seed| Jitter { seed, op: SimDuration::from_ns(500), dispatch: SimDuration::from_us(5) });
        slow_poller(&mut w, 4 << 20);
        let r = w.run().unwrap_or_else(|e| panic!("seed {seed:?}: {e}"));
        assert!(r.end > SimTime::from_ps(100_000_000), "a slow protocol: {}", r.end);
    }
}

#[test]
fn a_spin_that_also_writes_is_no_livelock_and_reaches_the_simulated_time_budget() {
    let (mut w, line) = spinner(true, KernelExec::default());
    w.options_mut().max_sim_time = SimTime::from_ps(50_000_000);
    let err = w.run().unwrap_err();
    let SimError::Budget(b) = &err else { panic!("expected a budget, got {err}") };
    assert_eq!(b.limit, Limit::SimTime(SimTime::from_ps(50_000_000)));
    assert!(b.time <= SimTime::from_ps(50_000_000) && b.time > SimTime::from_ps(49_000_000), "{}", b.time);
    let spinning: Vec<_> = b.cores.iter().filter(|c| c.chip == 1).collect();
    assert_eq!(spinning.len(), 1, "{err}");
    assert!(["test", "write_scalar"].contains(&spinning[0].last_op.as_str()), "{err}");
    let at = spinning[0].location.clone().unwrap();
    let (poll, write) = (format!("{}:{line}:", file!()), format!("{}:{}:", file!(), line + 3));
    assert!(at.starts_with(&poll) || at.starts_with(&write), "{at}");
    let text = err.to_string();
    assert!(text.contains("simulated-time limit of 50.000us"), "{text}");
    assert!(text.contains("RunOptions::max_sim_time"), "{text}");
}

#[test]
fn the_event_budget_ends_a_run_after_that_many_events() {
    let (mut w, _) = spinner(true, KernelExec::default());
    w.options_mut().max_events = 20_000;
    let err = w.run().unwrap_err();
    let SimError::Budget(b) = &err else { panic!("expected a budget, got {err}") };
    assert_eq!((b.limit, b.events), (Limit::Events(20_000), 20_000));
    assert!(err.to_string().contains("the limit of 20000 events"), "{err}");
    // A livelock with the rule off reaches it too.
    let (mut w, _) = spinner(false, KernelExec::default());
    w.options_mut().livelock_polls = 0;
    w.options_mut().max_events = 20_000;
    assert!(matches!(w.run(), Err(SimError::Budget(b)) if b.limit == Limit::Events(20_000)));
}

#[test]
fn the_stop_flag_ends_a_run_that_would_never_end_on_both_drivers() {
    for exec in [KernelExec::default(), KernelExec::Threads] {
        let (mut w, _) = spinner(true, exec);
        w.options_mut().max_events = u64::MAX;
        w.options_mut().max_sim_time = SimTime::NEVER;
        let stop = Interrupt::new();
        w.options_mut().interrupt = Some(stop.clone());
        let raiser = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            stop.raise();
        });
        let t0 = Instant::now();
        let err = w.run().unwrap_err();
        raiser.join().unwrap();
        assert!(matches!(err, SimError::Interrupted { events, .. } if events > 0), "{err}");
        assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
        // The world runs again once the flag is lowered.
        assert!(err.to_string().starts_with("interrupted at simulated time"));
    }
}

/// Starts `ranksim args` and sends it `signal` once it has printed `ready` on stdout; returns
/// its exit code, what it printed, and how long it took to end after the signal.
fn interrupted(args: &[&str], ready: &str, signal: i32) -> (Option<i32>, String, Duration) {
    use std::io::{BufRead, BufReader, Read};
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_ranksim"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the ranksim binary runs");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    while !seen.contains(ready) {
        let mut line = String::new();
        assert!(out.read_line(&mut line).unwrap() > 0, "ended before `{ready}`: {seen}");
        seen.push_str(&line);
    }
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, signal) };
    let sent = Instant::now();
    out.read_to_string(&mut seen).unwrap();
    let status = child.wait().unwrap();
    (status.code(), seen, sent.elapsed())
}

#[test]
fn ctrl_c_and_sigterm_end_a_long_sweep_with_its_rows_so_far_and_exit_code_130() {
    // The builtin mesh on one block up to 1 GiB, timing-only: minutes of work in a debug build.
    let args = ["sweep", "--mode", "mesh", "-b", "1K", "-e", "1G", "-f", "4", "--no-data", "-j", "1"];
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let (code, out, took) = interrupted(&args, "      262144 ", signal);
        assert_eq!(code, Some(130), "{out}");
        assert!(took < Duration::from_secs(5), "ended {took:?} after the signal");
        assert!(out.contains("# interrupted: "), "{out}");
        assert!(!out.contains("Avg bus bandwidth"), "no footer for a partial series: {out}");
    }
}

#[test]
fn a_run_over_its_event_budget_fails_naming_the_limit() {
    // A correct program with a budget too small for it.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ranksim"))
        .args(["run", "barrier", "--ranks", "8", "--max-events", "100"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("the limit of 100 events"), "{text}");
}
