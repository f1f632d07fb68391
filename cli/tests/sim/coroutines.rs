//! Synchronous kernels (`Task::new` closures) run as coroutines on the scheduler's thread by
//! default, or on one OS thread per simulated core (`KernelExec::Threads`): both give the same
//! run, byte for byte: records, times, traffic, traces, checker findings, memory, and errors.
//! A coroutine that overflows its stack ends the run with an error naming it; stacks are
//! reused across blocks.

#[path = "../../../benches/user_kernels/kernels.rs"]
pub(crate) mod kernels;

use crate::common::{a2a3, all};
use kernels::{USER_WORKLOADS, run_user};
use ranksim::prelude::*;
use ranksim::programs::{PROGRAMS, broken::BROKEN};
use ranksim::sim_core::KernelExec;
use ranksim::sim_core::stats::HostStats;

const THREADS: KernelExec = KernelExec::Threads;

fn coroutines() -> KernelExec {
    KernelExec::default()
}

/// A world of the default preset that traces and checks its runs.
fn watched() -> World {
    let mut w = a2a3();
    w.options_mut().trace = true;
    w.options_mut().check = true;
    w
}

/// A report without its host counters (which say how the host ran it, not what ran).
fn simulated(mut r: RunReport) -> RunReport {
    r.host = HostStats::default();
    r
}

#[test]
fn coroutines_are_the_default() {
    assert!(
        matches!(a2a3().options_mut().kernel_exec, KernelExec::Coroutines { stack_bytes } if stack_bytes == KernelExec::DEFAULT_STACK_BYTES)
    );
}

#[test]
fn user_workloads_are_identical_on_coroutines_and_threads() {
    for w in USER_WORKLOADS {
        let (on_threads, bytes_t) = run_user(&mut watched(), w, 2, THREADS).unwrap();
        let (on_coros, bytes_c) = run_user(&mut watched(), w, 2, coroutines()).unwrap();
        assert!(on_threads.stats.events > 1000, "{}: {:?}", w.name, on_threads.stats);
        assert_eq!(on_threads.host.coroutines, 0, "{}: {:?}", w.name, on_threads.host);
        assert_eq!(on_coros.host.threads, 0, "{}: coroutines need no host thread", w.name);
        // The synchronous workloads run on threads or coroutines; the async one on neither.
        let sync = !w.name.starts_with("async");
        assert_eq!(on_threads.host.threads > 0, sync, "{}: {:?}", w.name, on_threads.host);
        assert_eq!(on_coros.host.coroutines > 0, sync, "{}: {:?}", w.name, on_coros.host);
        assert!(on_coros.trace.is_some());
        let polls = w.name.contains("poll_loop");
        assert!(polls || bytes_c.iter().flatten().any(|&b| b != 0), "{}: the workload wrote nothing", w.name);
        assert!(bytes_t == bytes_c, "{}: memory differs", w.name);
        assert_eq!(simulated(on_threads), simulated(on_coros), "{}", w.name);
    }
}

#[test]
fn the_user_workloads_compute_what_they_should() {
    // The ring all-gather leaves every rank with every rank's chunk.
    let ring = &USER_WORKLOADS[0];
    let mut w = a2a3();
    let (_, bytes) = run_user(&mut w, ring, 1, coroutines()).unwrap();
    let first: &Vec<u8> = &bytes[0];
    assert!(bytes.iter().all(|b| b == first), "every rank holds the same gathered buffer");
    // The reduce-scatter + all-gather leaves every rank with the sum over ranks.
    let rs_ag = &USER_WORKLOADS[1];
    let mut w = a2a3();
    let (report, bytes) = run_user(&mut w, rs_ag, 1, coroutines()).unwrap();
    let n = 8;
    let sum: f32 = (1..=n).map(|r| r as f32).sum();
    for (r, b) in bytes.iter().enumerate() {
        let v: Vec<f32> = b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        for (i, &x) in v.iter().enumerate() {
            assert_eq!(x, sum * (i % 13) as f32, "rank {r} element {i}");
        }
    }
    assert!(report.findings.is_empty());
}

#[test]
fn tutorials_and_the_broken_zoo_are_identical_on_coroutines_and_threads() {
    for p in PROGRAMS {
        let run = |exec| {
            let mut w = watched();
            w.options_mut().kernel_exec = exec;
            match (p.run)(&mut w, 4) {
                Ok(o) => Ok((o.ok, o.detail, simulated(o.report))),
                Err(e) => Err(e.to_string()),
            }
        };
        let (t, c) = (run(THREADS), run(coroutines()));
        assert_eq!(t, c, "{}", p.name);
    }
    for b in BROKEN {
        let run = |exec| {
            let mut w = watched();
            w.options_mut().kernel_exec = exec;
            (b.run)(&mut w, 4).map(simulated).map_err(|e| e.to_string())
        };
        let (t, c) = (run(THREADS), run(coroutines()));
        assert_eq!(t, c, "{}", b.name);
    }
}

/// Runs `kernel` on `blocks` blocks of every rank of the default preset, as `exec`.
fn run_kernel(
    exec: KernelExec,
    blocks: usize,
    kernel: impl Fn(&mut Core, &Tensor) -> SimResult<()> + Send + Sync + 'static,
) -> SimResult<RunReport> {
    let mut w = a2a3();
    w.options_mut().kernel_exec = exec;
    let dom = all(&mut w);
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[1, 8]).unwrap();
    w.dispatch_all(&dom, Dispatch::kernel("k", blocks, move |core| kernel(core, &sig))).unwrap();
    w.run()
}

#[test]
fn panics_errors_and_deadlocks_are_reported_alike() {
    let panics = |core: &mut Core, sig: &Tensor| {
        if core.rank() == 3 && core.block_idx() == 1 {
            panic!("kernel bug on rank {}", core.rank());
        }
        core.wait(sig, &[0, 0], 1, WaitCmp::Ge)
    };
    let bad_op = |core: &mut Core, sig: &Tensor| {
        if core.rank() == 2 {
            core.notify(sig, 99, &[0, 0], 1, NotifyOp::Set)?;
        }
        core.wait(sig, &[0, 0], 1, WaitCmp::Ge)
    };
    let deadlock = |core: &mut Core, sig: &Tensor| core.wait(sig, &[0, core.block_idx()], 1, WaitCmp::Ge);
    for (name, t, c) in [
        ("panic", run_kernel(THREADS, 2, panics), run_kernel(coroutines(), 2, panics)),
        ("bad op", run_kernel(THREADS, 2, bad_op), run_kernel(coroutines(), 2, bad_op)),
        ("deadlock", run_kernel(THREADS, 3, deadlock), run_kernel(coroutines(), 3, deadlock)),
    ] {
        let (t, c) = (t.unwrap_err(), c.unwrap_err());
        assert_eq!(t, c, "{name}");
        match name {
            "panic" => assert!(
                matches!(&c, SimError::KernelPanic { site, msg, .. } if site.chip == 3 && site.block == 1 && msg == "kernel bug on rank 3"),
                "{c}"
            ),
            "bad op" => assert!(matches!(&c, SimError::BadOp { site, .. } if site.chip == 2), "{c}"),
            _ => assert!(matches!(&c, SimError::Deadlock(_)), "{c}"),
        }
    }
}

/// Recurses `depth` frames of about 4 KiB each.
fn deep(depth: u64) -> u64 {
    let frame = std::hint::black_box([depth; 512]);
    if depth == 0 { frame[1] } else { deep(depth - 1).wrapping_add(frame[7]) }
}

#[test]
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn a_stack_overflow_ends_the_run_with_an_error_naming_the_kernel() {
    let small = KernelExec::Coroutines { stack_bytes: 64 * 1024 };
    // Rank 5 block 2 recurses far past 64 KiB while every other block waits for a signal
    // nobody sends: the run ends with the overflow, not with a deadlock or a crash.
    let e = run_kernel(small, 3, |core, sig| {
        if core.rank() == 5 && core.block_idx() == 2 {
            core.compute(deep(1000));
        }
        core.wait(sig, &[0, 0], 1, WaitCmp::Ge)
    })
    .unwrap_err();
    let SimError::KernelStackOverflow { site, stack_bytes } = &e else { panic!("expected an overflow, got {e}") };
    assert_eq!((site.chip, site.block, site.task.as_str(), *stack_bytes), (5, 2, "k", 64 * 1024));
    assert!(e.to_string().contains("rank 5 block 2 (task `k`)") && e.to_string().contains("stack_bytes"), "{e}");
    // The same recursion fits a larger stack, and runs (again on this thread) to the end.
    let r = run_kernel(KernelExec::Coroutines { stack_bytes: 8 << 20 }, 3, |core, _| {
        core.compute(deep(1000) % 7);
        Ok(())
    })
    .unwrap();
    assert_eq!(r.host.coroutines, 8 * 3);
}

#[test]
fn stacks_are_reused_by_later_blocks() {
    let mut w = a2a3();
    let dom = w.create_domain("one", &[0], DomainOptions::default()).unwrap();
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[1, 4]).unwrap();
    for round in 0..3 {
        let s = sig.clone();
        let d = Dispatch::kernel("round", 4, move |core| {
            // Every block of a round is live until all four have notified.
            core.notify(&s, 0, &[0, core.block_idx()], 1, NotifyOp::AtomicAdd)?;
            for b in 0..4 {
                core.wait(&s, &[0, b], round + 1, WaitCmp::Ge)?;
            }
            Ok(())
        });
        w.dispatch_all(&dom, d).unwrap();
    }
    let r = w.run().unwrap();
    assert_eq!((r.host.coroutines, r.host.stacks, r.host.threads), (12, 4, 0));
}

#[test]
fn a_core_used_from_another_host_thread_is_a_clear_error_with_coroutines_and_works_with_threads() {
    let kernel = |core: &mut Core, sig: &Tensor| {
        core.notify(sig, core.rank(), &[0, 0], 1, NotifyOp::Set)?;
        let r = std::thread::scope(|s| s.spawn(|| core.wait(sig, &[0, 0], 1, WaitCmp::Ge)).join());
        r.unwrap_or_else(|p| std::panic::resume_unwind(p))
    };
    run_kernel(THREADS, 1, kernel).unwrap();
    let e = run_kernel(coroutines(), 1, kernel).unwrap_err();
    assert!(
        matches!(&e, SimError::KernelPanic { msg, .. } if msg.contains("another host thread") && msg.contains("KernelExec::Threads")),
        "{e}"
    );
}

#[test]
fn a_world_run_inside_a_kernel_keeps_the_outer_kernels_requests_apart() {
    // Each outer block posts a notify (left for the scheduler), runs a whole inner world of
    // its own (itself coroutines), then waits for the notify: the inner run must neither take
    // the outer requests nor disturb the outer coroutine's state.
    let outer = |exec: KernelExec| {
        run_kernel(exec, 2, move |core, sig| {
            core.notify(sig, core.rank(), &[0, core.block_idx()], 1, NotifyOp::AtomicAdd)?;
            let mut inner = a2a3();
            let dom = all(&mut inner);
            let s = inner.alloc_window(&dom, "inner", DType::I32, &[1, 1])?;
            let n = inner.size();
            inner.dispatch_all(
                &dom,
                Dispatch::kernel("inner", 1, move |c| {
                    c.notify(&s, (c.rank() + 1) % n, &[0, 0], 1, NotifyOp::AtomicAdd)?;
                    c.wait(&s, &[0, 0], 1, WaitCmp::Ge)
                }),
            )?;
            let r = inner.run()?;
            assert_eq!(r.host.coroutines, n as u64);
            core.wait(sig, &[0, core.block_idx()], 1, WaitCmp::Ge)
        })
    };
    let (t, c) = (outer(THREADS).unwrap(), outer(coroutines()).unwrap());
    assert_eq!(c.host.coroutines, 16);
    assert_eq!(simulated(t), simulated(c));
}

#[test]
fn an_absurd_stack_size_is_an_error_not_a_crash() {
    let huge = KernelExec::Coroutines { stack_bytes: usize::MAX };
    let e = run_kernel(huge, 1, |core, _| {
        core.compute(1);
        Ok(())
    })
    .unwrap_err();
    assert!(e.to_string().contains("could not map") && e.to_string().contains("at most"), "{e}");
}
