//! Speed of the packet model: simulated packets per second for a 64-rank all-to-all pattern,
//! and the wall time of a 64 MiB put around an 8-rank ring. These measure ranksim itself.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ranksim::Config;
use ranksim::prelude::*;
use std::time::Duration;

/// Async blocks per rank in the all-to-all: each puts to every 16th peer in turn.
const A2A_BLOCKS: usize = 16;

fn world(ranks: usize, timing_only: bool) -> World {
    let mut w = Config::default_preset()
        .with_ranks(ranks)
        .and_then(|c| c.world())
        .expect("the a2a3 preset scales to any rank count");
    if timing_only {
        w.set_timing_only().expect("nothing is allocated yet");
    }
    w
}

/// Every rank puts `bytes` to every other rank over a full mesh of `ranks` chips, with
/// [`A2A_BLOCKS`] cores per rank working at once, payloads not stored. Returns the packets
/// the network moved.
fn all_to_all(ranks: usize, bytes: usize) -> u64 {
    let mut w = world(ranks, true);
    let dom = w.world_domain("d").unwrap();
    let cols = bytes / 4;
    let buf = w.alloc_window(&dom, "buf", DType::F32, &[ranks, cols]).unwrap();
    let mut d = Dispatch::new("all_to_all");
    d.add(Task::new_async("a2a", A2A_BLOCKS, move |c| {
        let buf = buf.clone();
        Box::pin(async move {
            let r: SimResult<()> = async {
                let (me, n, b) = (c.rank(), c.nranks(), c.block_idx());
                for k in (1 + b..n).step_by(A2A_BLOCKS) {
                    let peer = (me + k) % n;
                    let opts = CopyOpts::new().region(&[me, 0], &[me, 0], &[1, cols]);
                    c.put(&buf, peer, &buf, &opts).await?;
                }
                Ok(())
            }
            .await;
            r
        })
    }));
    w.dispatch_all(&dom, d).unwrap();
    w.run().unwrap().stats.packets
}

/// Each of 8 ranks puts a 64 MiB f32 buffer to its right neighbour, one core each, staged
/// through UB in pipelined 64 KiB chunks, with real data. Returns the packets moved.
fn put_ring_64mib() -> u64 {
    let mut w = world(8, false);
    let dom = w.world_domain("d").unwrap();
    let shape = [1024, 16_384];
    let src = w.alloc_window(&dom, "src", DType::F32, &shape).unwrap();
    let dst = w.alloc_window(&dom, "dst", DType::F32, &shape).unwrap();
    w.dispatch_all(
        &dom,
        Dispatch::kernel("put_ring", 1, move |c| {
            let peer = (c.rank() + 1) % c.nranks();
            c.put(&dst, peer, &src, &CopyOpts::new().chunks(1, 16_384).pipeline(true))
        }),
    )
    .unwrap();
    w.run().unwrap().stats.packets
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("network");
    g.sample_size(10).measurement_time(Duration::from_secs(10)).warm_up_time(Duration::from_secs(1));
    let (ranks, bytes) = (64, 64 * 1024);
    g.throughput(Throughput::Elements(all_to_all(ranks, bytes)));
    g.bench_with_input(BenchmarkId::new("all_to_all_packets", ranks), &ranks, |b, &r| b.iter(|| all_to_all(r, bytes)));
    g.throughput(Throughput::Elements(put_ring_64mib()));
    g.bench_function("put_ring_64mib_8_ranks", |b| b.iter(put_ring_64mib));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
