//! Simulator throughput: how fast the scheduler applies events, and how fast blocking requests
//! are handed between core threads, at 8 and 64 ranks. These measure ranksim itself, not the
//! simulated machine.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ranksim::Config;
use ranksim::prelude::*;
use std::time::Duration;

fn world(ranks: usize) -> World {
    Config::default_preset()
        .with_ranks(ranks)
        .and_then(|c| c.world())
        .expect("the a2a3 preset scales to any rank count")
}

/// Posted traffic: every rank sends `k` notifies to its right neighbour, then waits once for
/// all of its left neighbour's. Returns the number of events the scheduler applied.
fn posted(ranks: usize, k: i32) -> u64 {
    let mut w = world(ranks);
    let dom = w.world_domain("d").unwrap();
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[ranks, 1]).unwrap();
    w.dispatch_all(
        &dom,
        Dispatch::kernel("posted", 1, move |c| {
            let (me, n) = (c.rank(), c.nranks());
            for _ in 0..k {
                c.notify(&sig, (me + 1) % n, &[me, 0], 1, NotifyOp::AtomicAdd)?;
            }
            c.wait(&sig, &[(me + n - 1) % n, 0], k, WaitCmp::Ge)
        }),
    )
    .unwrap();
    w.run().unwrap().stats.events
}

/// Blocking traffic: ranks in pairs play ping-pong `k` times; every wait must be answered by
/// the other thread. Returns the number of waits.
fn ping_pong(ranks: usize, k: i32) -> u64 {
    let mut w = world(ranks);
    let dom = w.world_domain("d").unwrap();
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[1, 1]).unwrap();
    w.dispatch_all(
        &dom,
        Dispatch::kernel("ping_pong", 1, move |c| {
            let me = c.rank();
            let peer = me ^ 1;
            for i in 1..=k {
                if me % 2 == 0 {
                    c.notify(&sig, peer, &[0, 0], 1, NotifyOp::AtomicAdd)?;
                    c.wait(&sig, &[0, 0], i, WaitCmp::Ge)?;
                } else {
                    c.wait(&sig, &[0, 0], i, WaitCmp::Ge)?;
                    c.notify(&sig, peer, &[0, 0], 1, NotifyOp::AtomicAdd)?;
                }
            }
            Ok(())
        }),
    )
    .unwrap();
    w.run().unwrap();
    ranks as u64 * k as u64
}

/// The same ping-pong with the kernel run as a future inside the scheduler (no threads).
fn ping_pong_async(ranks: usize, k: i32) -> u64 {
    let mut w = world(ranks);
    let dom = w.world_domain("d").unwrap();
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[1, 1]).unwrap();
    let mut d = Dispatch::new("ping_pong");
    d.add(Task::new_async("ping_pong", 1, move |c| {
        let sig = sig.clone();
        Box::pin(async move {
            let r: SimResult<()> = async {
                let me = c.rank();
                for i in 1..=k {
                    if me % 2 == 0 {
                        c.notify(&sig, me ^ 1, &[0, 0], 1, NotifyOp::AtomicAdd)?;
                        c.wait(&sig, &[0, 0], i, WaitCmp::Ge).await?;
                    } else {
                        c.wait(&sig, &[0, 0], i, WaitCmp::Ge).await?;
                        c.notify(&sig, me ^ 1, &[0, 0], 1, NotifyOp::AtomicAdd)?;
                    }
                }
                Ok(())
            }
            .await;
            r
        })
    }));
    w.dispatch_all(&dom, d).unwrap();
    w.run().unwrap();
    ranks as u64 * k as u64
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("engine");
    g.sample_size(10).measurement_time(Duration::from_secs(5)).warm_up_time(Duration::from_secs(1));
    for ranks in [2usize, 8, 64] {
        let k = 20_000 / ranks as i32;
        g.throughput(Throughput::Elements(posted(ranks, k)));
        g.bench_with_input(BenchmarkId::new("posted_events", ranks), &ranks, |b, &r| b.iter(|| posted(r, k)));
        let k = 4_000 / ranks as i32;
        g.throughput(Throughput::Elements(ping_pong(ranks, k)));
        g.bench_with_input(BenchmarkId::new("blocking_handoffs", ranks), &ranks, |b, &r| b.iter(|| ping_pong(r, k)));
        let k = 40_000 / ranks as i32;
        g.throughput(Throughput::Elements(ping_pong_async(ranks, k)));
        g.bench_with_input(BenchmarkId::new("async_waits", ranks), &ranks, |b, &r| b.iter(|| ping_pong_async(r, k)));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
