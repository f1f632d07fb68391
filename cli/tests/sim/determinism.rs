//! The same program and config give byte-identical results and timings on every run, whatever
//! the OS does with the threads: repeated runs, runs with random host-side delays injected
//! into kernels, a run pinned to a single host core, and the same kernel run as coroutines
//! or as futures inside the scheduler instead of on threads.

use crate::common::{a2a3, all, scratch_dir};
use ranksim::prelude::*;
use std::time::Duration;

const COLS: usize = 256;
const BLOCKS: usize = 4;

/// Everything observable about one run: every window byte of every rank, every dispatch and
/// task record, and the scheduler's counters.
#[derive(Debug, PartialEq)]
struct Fingerprint {
    windows: Vec<Vec<f32>>,
    dispatches: Vec<ranksim::sim_core::stats::DispatchRecord>,
    stats: ranksim::sim_core::stats::EngineStats,
}

/// The buffers of the stress protocol.
#[derive(Clone)]
struct Bufs {
    data: Tensor,
    acc: Tensor,
    inbox: Tensor,
    sig: Tensor,
    jitter: bool,
}

/// A stress protocol on 8 ranks x 4 blocks: uneven compute, a lane barrier, remote loads of
/// every peer, order-sensitive f32 atomic adds into rank 0, chunked pipelined puts and gets.
/// With `jitter` it sleeps a random host time before many operations.
async fn stress_body(core: &mut Ops, b: &Bufs) -> SimResult<()> {
    let nap = || {
        if b.jitter {
            std::thread::sleep(Duration::from_micros(rand::random::<u64>() % 200));
        }
    };
    let (me, nr, blk) = (core.rank(), core.nranks(), core.block_idx());
    nap();
    core.compute(((me * 7 + blk * 13) % 50) as u64 * 100);
    let vals: Vec<f32> = (0..COLS).map(|i| (me * 1000 + blk * 10) as f32 + i as f32 * 0.1).collect();
    core.store(&Tile::from_slice(1, COLS, &vals)?, &b.data, &[me * BLOCKS + blk, 0])?;
    for p in (0..nr).filter(|&p| p != me) {
        nap();
        core.notify(&b.sig, p, &[me, blk], 1, NotifyOp::AtomicAdd)?;
    }
    for p in (0..nr).filter(|&p| p != me) {
        core.wait(&b.sig, &[p, blk], 1, WaitCmp::Ge).await?;
    }
    let mut sum = core.load(&b.data, &[me * BLOCKS + blk, 0], &[1, COLS]).await?;
    for p in (0..nr).filter(|&p| p != me) {
        nap();
        let t = core.remote_load(&b.data, p, &[p * BLOCKS + blk, 0], &[1, COLS]).await?;
        let scaled = core.muls(&t, 0.3)?;
        sum = core.add(&sum, &scaled)?;
    }
    core.remote_store(&sum, &b.acc, 0, &[blk, 0], AtomicType::Add)?;
    nap();
    let next = (me + 1) % nr;
    let push = CopyOpts::new().region(&[blk * 4, 0], &[me * BLOCKS, 0], &[4, COLS]).chunks(1, 64).pipeline(true);
    core.put(&b.inbox, next, &b.data, &push).await?;
    let pull = CopyOpts::new().region(&[me * BLOCKS + blk, 0], &[next * BLOCKS + blk, 0], &[1, COLS]).chunks(1, 100);
    core.get(&b.data, next, &b.data, &pull).await
}

/// How the stress kernel is run.
#[derive(Copy, Clone, Debug, PartialEq)]
enum Exec {
    /// On core threads (`KernelExec::Threads`).
    Threads,
    /// As coroutines on the scheduler's thread (the default).
    Coroutines,
    /// On core threads, sleeping random host times.
    Jitter,
    /// As futures polled by the scheduler.
    Async,
}

fn stress(exec: Exec) -> Fingerprint {
    let mut w = a2a3();
    let dom = all(&mut w);
    let n = w.size();
    let b = Bufs {
        data: w.alloc_window(&dom, "data", DType::F32, &[n * BLOCKS, COLS]).unwrap(),
        acc: w.alloc_window(&dom, "acc", DType::F32, &[BLOCKS, COLS]).unwrap(),
        inbox: w.alloc_window(&dom, "inbox", DType::F32, &[BLOCKS * 4, COLS]).unwrap(),
        sig: w.alloc_window(&dom, "sig", DType::I32, &[n, BLOCKS]).unwrap(),
        jitter: exec == Exec::Jitter,
    };
    if matches!(exec, Exec::Threads | Exec::Jitter) {
        w.options_mut().kernel_exec = ranksim::sim_core::KernelExec::Threads;
    }
    let bk = b.clone();
    let task = match exec {
        Exec::Async => Task::new_async("stress", BLOCKS, move |ops| {
            let b = bk.clone();
            Box::pin(async move { stress_body(ops, &b).await })
        }),
        _ => Task::new("stress", BLOCKS, move |core| core.run(async |ops| stress_body(ops, &bk).await)),
    };
    let mut d = Dispatch::new("stress");
    d.add(task);
    w.dispatch_all(&dom, d).unwrap();
    let report = w.run().unwrap();
    let mut windows = Vec::new();
    for r in 0..n {
        for t in [&b.data, &b.acc, &b.inbox] {
            windows.push(w.read::<f32>(t, r).unwrap());
        }
        windows.push(w.read::<i32>(&b.sig, r).unwrap().iter().map(|&x| x as f32).collect());
    }
    if exec == Exec::Async {
        assert_eq!(report.host.threads, 0, "async kernels need no host threads");
    }
    Fingerprint { windows, dispatches: report.dispatches, stats: report.stats }
}

#[test]
fn twenty_runs_are_identical() {
    let first = stress(Exec::Threads);
    assert!(first.stats.events > 1000, "the stress program should be busy: {:?}", first.stats);
    for i in 1..20 {
        assert!(stress(Exec::Threads) == first, "run {i} differs from run 0");
    }
}

/// Three runs on `exec` each give what a run on threads gives.
fn three_runs_match_threads(exec: Exec) {
    let threads = stress(Exec::Threads);
    for i in 0..3 {
        assert!(stress(exec) == threads, "{exec:?} run {i} differs from the threaded run");
    }
}

#[test]
fn random_host_delays_change_nothing() {
    three_runs_match_threads(Exec::Jitter);
}

#[test]
fn one_host_core_gives_the_same_result() {
    let reference = stress(Exec::Threads);
    let pinned = std::thread::spawn(|| {
        // SAFETY: cpu_set_t is plain data; CPU_ZERO/CPU_SET/CPU_ISSET only touch inside it;
        // sched_getaffinity fills it and sched_setaffinity(0, ..) pins the calling thread,
        // whose children inherit the mask. The core is the first one this process may use,
        // which need not be CPU 0.
        unsafe {
            let size = std::mem::size_of::<libc::cpu_set_t>();
            let mut allowed: libc::cpu_set_t = std::mem::zeroed();
            assert_eq!(libc::sched_getaffinity(0, size, &mut allowed), 0);
            let cpu = (0..libc::CPU_SETSIZE as usize).find(|&c| libc::CPU_ISSET(c, &allowed)).expect("an allowed CPU");
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_ZERO(&mut set);
            libc::CPU_SET(cpu, &mut set);
            assert_eq!(libc::sched_setaffinity(0, size, &set), 0);
        }
        stress(Exec::Threads)
    })
    .join()
    .unwrap();
    assert!(pinned == reference, "the run pinned to one host core differs");
}

#[test]
fn coroutine_kernels_give_the_same_result_as_thread_kernels() {
    three_runs_match_threads(Exec::Coroutines);
}

#[test]
fn async_kernels_give_the_same_result_as_thread_kernels() {
    three_runs_match_threads(Exec::Async);
}

/// A sweep's sizes run on several host threads give the table, JSON and STRACE of one thread,
/// byte for byte; `--stats` adds its line and changes nothing else.
#[test]
fn a_sweep_on_several_host_threads_is_byte_identical_to_one() {
    let dir = scratch_dir("jobs");
    let run = |jobs: &str, stats: bool| {
        let (json, strace) = (dir.join(format!("{jobs}.json")), dir.join(format!("{jobs}.strace")));
        let mut args = vec!["sweep", "--mode", "mesh,two-shot", "--core-num", "4", "-b", "1K", "-e", "64K", "-j", jobs];
        let (j, s) = (json.display().to_string(), strace.display().to_string());
        args.extend(["--json", &j, "--strace", &s]);
        if stats {
            args.push("--stats");
        }
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ranksim")).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        (text, std::fs::read(json).unwrap(), std::fs::read(strace).unwrap())
    };
    let one = run("1", false);
    let three = run("3", false);
    assert_eq!(one, three);
    let (with_stats, json, strace) = run("2", true);
    let (stats, rest): (Vec<&str>, Vec<&str>) = with_stats.lines().partition(|l| l.starts_with("# stats:"));
    assert_eq!(stats.len(), 1, "{with_stats}");
    assert!(stats[0].contains(" run(s), ") && stats[0].contains(" engine events, "), "{}", stats[0]);
    let events: u64 = stats[0].split(" run(s), ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(events > 1000, "{}", stats[0]);
    assert_eq!(rest.join("\n") + "\n", one.0);
    assert_eq!((json, strace), (one.1, one.2));
    std::fs::remove_dir_all(&dir).ok();
}
