//! The same program and config give byte-identical results and timings on every run, whatever
//! the OS does with the threads: repeated runs, runs with random host-side delays injected
//! into kernels, and a run pinned to a single host core.

use crate::common::{a2a3, all};
use ranksim::prelude::*;
use std::time::Duration;

const COLS: usize = 256;
const BLOCKS: usize = 4;

/// Everything observable about one run: every window byte of every rank, every dispatch and
/// task record, and the scheduler's counters.
#[derive(Debug, PartialEq)]
struct Fingerprint {
    windows: Vec<Vec<f32>>,
    dispatches: Vec<ranksim::sim_core::DispatchRecord>,
    stats: ranksim::sim_core::EngineStats,
}

/// A stress protocol on 8 ranks x 4 blocks: uneven compute, a lane barrier, remote loads of
/// every peer, order-sensitive f32 atomic adds into rank 0, chunked pipelined puts and gets.
/// `jitter` sleeps a random host time before every operation.
fn stress(jitter: bool) -> Fingerprint {
    let mut w = a2a3();
    let dom = all(&mut w);
    let n = w.size();
    let data = w
        .alloc_window(&dom, "data", DType::F32, &[n * BLOCKS, COLS])
        .unwrap();
    let acc = w
        .alloc_window(&dom, "acc", DType::F32, &[BLOCKS, COLS])
        .unwrap();
    let inbox = w
        .alloc_window(&dom, "inbox", DType::F32, &[BLOCKS * 4, COLS])
        .unwrap();
    let sig = w
        .alloc_window(&dom, "sig", DType::I32, &[n, BLOCKS])
        .unwrap();
    let (d, a, ib, s) = (data.clone(), acc.clone(), inbox.clone(), sig.clone());
    let nap = move || {
        if jitter {
            std::thread::sleep(Duration::from_micros(rand::random::<u64>() % 200));
        }
    };
    w.dispatch_all(
        &dom,
        Dispatch::kernel("stress", BLOCKS, move |core| {
            let (me, nr, b) = (core.rank(), core.nranks(), core.block_idx());
            nap();
            core.compute(((me * 7 + b * 13) % 50) as u64 * 100);
            let vals: Vec<f32> = (0..COLS)
                .map(|i| (me * 1000 + b * 10) as f32 + i as f32 * 0.1)
                .collect();
            core.store(
                &Tile::from_slice(1, COLS, &vals)?,
                &d,
                &[me * BLOCKS + b, 0],
            )?;
            for p in (0..nr).filter(|&p| p != me) {
                nap();
                core.notify(&s, p, &[me, b], 1, NotifyOp::AtomicAdd)?;
            }
            for p in (0..nr).filter(|&p| p != me) {
                core.wait(&s, &[p, b], 1, WaitCmp::Ge)?;
            }
            let mut sum = core.load(&d, &[me * BLOCKS + b, 0], &[1, COLS])?;
            for p in (0..nr).filter(|&p| p != me) {
                nap();
                let t = core.remote_load(&d, p, &[p * BLOCKS + b, 0], &[1, COLS])?;
                let scaled = core.muls(&t, 0.3)?;
                sum = core.add(&sum, &scaled)?;
            }
            core.remote_store(&sum, &a, 0, &[b, 0], AtomicType::Add)?;
            nap();
            let next = (me + 1) % nr;
            core.put(
                &ib,
                next,
                &d,
                &CopyOpts::new()
                    .region(&[b * 4, 0], &[me * BLOCKS, 0], &[4, COLS])
                    .chunks(1, 64)
                    .pipeline(true),
            )?;
            core.get(
                &d,
                next,
                &d,
                &CopyOpts::new()
                    .region(&[me * BLOCKS + b, 0], &[next * BLOCKS + b, 0], &[1, COLS])
                    .chunks(1, 100),
            )
        }),
    )
    .unwrap();
    let report = w.run().unwrap();
    let mut windows = Vec::new();
    for r in 0..n {
        for t in [&data, &acc, &inbox] {
            windows.push(w.read::<f32>(t, r).unwrap());
        }
        windows.push(
            w.read::<i32>(&sig, r)
                .unwrap()
                .iter()
                .map(|&x| x as f32)
                .collect(),
        );
    }
    Fingerprint {
        windows,
        dispatches: report.dispatches,
        stats: report.stats,
    }
}

#[test]
fn twenty_runs_are_identical() {
    let first = stress(false);
    assert!(
        first.stats.events > 1000,
        "the stress program should be busy: {:?}",
        first.stats
    );
    for i in 1..20 {
        assert!(stress(false) == first, "run {i} differs from run 0");
    }
}

#[test]
fn random_host_delays_change_nothing() {
    let reference = stress(false);
    for i in 0..3 {
        assert!(stress(true) == reference, "jittered run {i} differs");
    }
}

#[test]
fn one_host_core_gives_the_same_result() {
    let reference = stress(false);
    let pinned = std::thread::spawn(|| {
        // SAFETY: cpu_set_t is plain data; CPU_ZERO/CPU_SET only write inside it, and
        // sched_setaffinity(0, ..) pins the calling thread, whose children inherit the mask.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_ZERO(&mut set);
            libc::CPU_SET(0, &mut set);
            assert_eq!(
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set),
                0
            );
        }
        stress(false)
    })
    .join()
    .unwrap();
    assert!(
        pinned == reference,
        "the run pinned to one host core differs"
    );
}
