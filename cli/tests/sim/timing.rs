//! The first-cut timing model against closed-form costs, in exact picoseconds, on the simple
//! machine (DMA 100 GB/s with no issue cost, links 10 GB/s with 1 us latency, notify 10 ns).
//! A 4096-byte payload serialises in 40 960 ps on a core's DMA and 409 600 ps on a link.

use crate::common::{all, run_on_all, simple};
use parking_lot::Mutex;
use ranksim::prelude::*;
use std::sync::Arc;

const N: usize = 1024; // f32 elements = 4096 bytes

/// Instants recorded by each rank's kernel.
type Log = Arc<Mutex<Vec<(usize, Vec<u64>)>>>;

/// Runs `kernel` on every rank and returns the instants each rank recorded, by rank.
fn times(
    world: &mut World,
    kernel: impl Fn(&mut Core, &Tensor, &Tensor) -> SimResult<Vec<SimTime>> + Send + Sync + 'static,
) -> Vec<Vec<u64>> {
    let dom = all(world);
    let data = world.alloc_window(&dom, "data", DType::F32, &[1, N]).unwrap();
    let sig = world.alloc_window(&dom, "signal", DType::I32, &[world.size(), 1]).unwrap();
    let log: Log = Arc::default();
    let l = log.clone();
    world
        .dispatch_all(
            &dom,
            Dispatch::kernel("timed", 1, move |core| {
                let t = kernel(core, &data, &sig)?;
                l.lock().push((core.rank(), t.iter().map(|x| x.as_ps()).collect()));
                Ok(())
            }),
        )
        .unwrap();
    world.run().unwrap();
    let mut v = log.lock().clone();
    v.sort();
    v.into_iter().map(|(_, t)| t).collect()
}

fn payload() -> Tile {
    Tile::from_slice(1, N, &vec![1.5f32; N]).unwrap()
}

#[test]
fn remote_store_then_notify_arrives_in_fifo_order() {
    let mut w = simple(2);
    let t = times(&mut w, |core, data, sig| {
        if core.rank() == 0 {
            core.remote_store(&payload(), data, 1, &[0, 0], AtomicType::None)?;
            let after_store = core.now();
            core.notify(sig, 1, &[0, 0], 1, NotifyOp::AtomicAdd)?;
            Ok(vec![after_store, core.now()])
        } else {
            core.wait(sig, &[0, 0], 1, WaitCmp::Ge)?;
            let woke = core.now();
            let got = core.load(data, &[0, 0], &[1, N])?;
            assert_eq!(got.to_vec::<f32>()?, vec![1.5; N]);
            Ok(vec![woke])
        }
    });
    // The sender's DMA drains the tile in 40 960 ps; the notify costs 10 ns more.
    assert_eq!(t[0], vec![40_960, 50_960]);
    // The payload occupies the link 0..409 600; the 4-byte notify queues behind it
    // (400 ps on the wire) and lands after the 1 us latency.
    assert_eq!(t[1], vec![409_600 + 400 + 1_000_000]);
}

#[test]
fn put_returns_when_its_last_byte_left_and_lands_after_latency() {
    let mut w = simple(2);
    let t = times(&mut w, |core, data, sig| {
        if core.rank() == 0 {
            core.put(data, 1, data, &CopyOpts::new())?;
            let done = core.now();
            core.notify(sig, 1, &[0, 0], 1, NotifyOp::AtomicAdd)?;
            Ok(vec![done])
        } else {
            core.wait(sig, &[0, 0], 1, WaitCmp::Ge)?;
            Ok(vec![core.now()])
        }
    });
    // Load 40 960 ps, then 409 600 ps on the link.
    assert_eq!(t[0], vec![40_960 + 409_600]);
    // Notify issued at 460 560 after its 10 ns, link free: 400 ps + 1 us.
    assert_eq!(t[1], vec![450_560 + 10_000 + 400 + 1_000_000]);
}

#[test]
fn remote_load_is_a_round_trip() {
    let mut w = simple(2);
    let t = times(&mut w, |core, data, _| {
        let peer = 1 - core.rank();
        core.remote_load(data, peer, &[0, 0], &[1, N])?;
        Ok(vec![core.now()])
    });
    // Request: 1 us latency; data back: 409 600 ps on the link plus 1 us.
    assert_eq!(t, vec![vec![2_409_600], vec![2_409_600]]);
}

#[test]
fn flows_sharing_a_link_serialise_and_separate_links_do_not() {
    // Ranks 0 and 1 both push 4096 bytes to rank 2 at t = 0: on a full mesh each has its own
    // link, so both land at 1 409 600.
    let mut w = simple(3);
    let t = times(&mut w, |core, data, sig| {
        let me = core.rank();
        if me < 2 {
            core.remote_store(&payload(), data, 2, &[0, 0], AtomicType::None)?;
            core.notify(sig, 2, &[me, 0], 1, NotifyOp::AtomicAdd)?;
            Ok(vec![])
        } else {
            core.wait(sig, &[0, 0], 1, WaitCmp::Ge)?;
            let first = core.now();
            core.wait(sig, &[1, 0], 1, WaitCmp::Ge)?;
            Ok(vec![first, core.now()])
        }
    });
    assert_eq!(t[2], vec![1_410_000, 1_410_000]);

    // Two blocks of rank 0 push to rank 1 over the same link: the second payload queues behind
    // the first, and both notifies queue behind both payloads.
    let mut w = simple(2);
    let dom = all(&mut w);
    let data = w.alloc_window(&dom, "data", DType::F32, &[2, N]).unwrap();
    let sig = w.alloc_window(&dom, "signal", DType::I32, &[2, 1]).unwrap();
    let (d, s) = (data.clone(), sig.clone());
    w.dispatch(
        0,
        Dispatch::kernel("senders", 2, move |core| {
            let b = core.block_idx();
            core.remote_store(&payload(), &d, 1, &[b, 0], AtomicType::None)?;
            core.notify(&s, 1, &[b, 0], 1, NotifyOp::AtomicAdd)
        })
        .in_domain(&dom),
    )
    .unwrap();
    let log: Arc<Mutex<Vec<u64>>> = Arc::default();
    let l = log.clone();
    w.dispatch(
        1,
        Dispatch::kernel("receiver", 1, move |core| {
            core.wait(&sig, &[0, 0], 1, WaitCmp::Ge)?;
            l.lock().push(core.now().as_ps());
            core.wait(&sig, &[1, 0], 1, WaitCmp::Ge)?;
            l.lock().push(core.now().as_ps());
            Ok(())
        })
        .in_domain(&dom),
    )
    .unwrap();
    w.run().unwrap();
    assert_eq!(*log.lock(), vec![2 * 409_600 + 400 + 1_000_000, 2 * 409_600 + 800 + 1_000_000]);
    assert_eq!(w.read::<f32>(&data, 1).unwrap(), vec![1.5; 2 * N]);
}

#[test]
fn unpipelined_and_pipelined_chunked_puts_match_closed_form() {
    for (pipeline, expect) in [(false, 4 * (10_240 + 102_400)), (true, 419_840)] {
        let mut w = simple(2);
        let dom = all(&mut w);
        let src = w.alloc_tensor("src", DType::F32, &[8, 128]).unwrap();
        let dst = w.alloc_window(&dom, "dst", DType::F32, &[8, 128]).unwrap();
        let log: Arc<Mutex<Vec<u64>>> = Arc::default();
        let l = log.clone();
        w.dispatch(
            0,
            Dispatch::kernel("put", 1, move |core| {
                core.put(&dst, 1, &src, &CopyOpts::new().chunks(4, 64).pipeline(pipeline))?;
                l.lock().push(core.now().as_ps());
                Ok(())
            })
            .in_domain(&dom),
        )
        .unwrap();
        w.run().unwrap();
        assert_eq!(*log.lock(), vec![expect as u64], "pipeline={pipeline}");
    }
}

#[test]
fn local_costs_compute_vector_and_dma() {
    let mut w = simple(1);
    let dom = all(&mut w);
    let x = w.alloc_window(&dom, "x", DType::F32, &[1, 256]).unwrap();
    let log: Arc<Mutex<Vec<u64>>> = Arc::default();
    let l = log.clone();
    run_on_all(&mut w, &dom, "local", 1, move |core| {
        let mut t = vec![core.now().as_ps()];
        core.compute(1000);
        t.push(core.now().as_ps());
        let a = core.load(&x, &[0, 0], &[1, 256])?;
        t.push(core.now().as_ps());
        let b = core.add(&a, &a)?;
        t.push(core.now().as_ps());
        core.store(&b, &x, &[0, 0])?;
        t.push(core.now().as_ps());
        *l.lock() = t;
        Ok(())
    });
    // 1000 cycles at 1 GHz; 1 KiB at 100 GB/s = 10 240 ps; add: 10 + 1024/256 cycles = 14 ns.
    assert_eq!(*log.lock(), vec![0, 1_000_000, 1_010_240, 1_024_240, 1_034_480]);
}

#[test]
fn dispatches_on_a_chip_run_one_after_another() {
    let toml = crate::common::simple_toml(2)
        .replace("dispatch_launch_ns = 0.0", "dispatch_launch_ns = 5000.0")
        .replace("task_start_ns = 0.0", "task_start_ns = 800.0");
    let mut w = ranksim::Config::from_toml(&toml, "t").unwrap().world().unwrap();
    let dom = all(&mut w);
    for name in ["first", "second"] {
        w.dispatch_all(
            &dom,
            Dispatch::kernel(name, 1, |core| {
                core.compute(2000);
                Ok(())
            }),
        )
        .unwrap();
    }
    let r = w.run().unwrap();
    let d: Vec<_> = r.of_chip(0).collect();
    assert_eq!(d.len(), 2);
    // Launch 5 us, task start 0.8 us, 2 us of work; the next dispatch launches 5 us later.
    assert_eq!((d[0].name.as_str(), d[0].start.as_ps(), d[0].end.as_ps()), ("first", 5_000_000, 7_800_000));
    assert_eq!((d[1].name.as_str(), d[1].start.as_ps(), d[1].end.as_ps()), ("second", 12_800_000, 15_600_000));
    assert_eq!(d[0].tasks[0].start.as_ps(), 5_800_000);
    assert_eq!(r.end.as_ps(), 15_600_000);
}
