//! What the pipe model costs the simulator: the same tile loop (load, two vector adds, store,
//! on every block of one chip) run serially with blocking loads, and with overlapping pipes
//! and double-buffered asynchronous loads. These measure ranksim itself, not the machine.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ranksim::Config;
use ranksim::prelude::*;
use std::time::Duration;

const COLS: usize = 4096;

/// `blocks` blocks each run `tiles` iterations of load -> add -> add -> store over 16 KiB f32
/// tiles, as async kernels; returns the simulated end time in ps.
fn tile_loop(blocks: usize, tiles: usize, overlap: bool) -> u64 {
    let mut w = Config::default_preset().with_ranks(1).and_then(|c| c.world()).unwrap();
    w.set_timing_only().unwrap();
    let dom = w.world_domain("d").unwrap();
    let rows = blocks * tiles;
    let x = w.alloc_tensor("x", DType::F32, &[rows, COLS]).unwrap();
    let mut d = Dispatch::new("tiles");
    d.add(Task::new_async("tiles", blocks, move |c| {
        let x = x.clone();
        Box::pin(async move { run_block(c, &x, tiles, overlap).await })
    }));
    w.dispatch_all(&dom, d).unwrap();
    w.run().unwrap().end.as_ps()
}

async fn run_block(c: &mut Ops, x: &Tensor, tiles: usize, overlap: bool) -> SimResult<()> {
    let first = c.block_idx() * tiles;
    if !overlap {
        for i in first..first + tiles {
            let t = c.load(x, &[i, 0], &[1, COLS]).await?;
            let t = c.adds(&t, 1.0)?;
            let t = c.adds(&t, 1.0)?;
            c.store(&t, x, &[i, 0])?;
        }
        return Ok(());
    }
    c.overlap_pipes();
    let mut next = Some(c.load_async(x, &[first, 0], &[1, COLS])?);
    for i in first..first + tiles {
        let this = next.take().expect("issued");
        if i + 1 < first + tiles {
            next = Some(c.load_async(x, &[i + 1, 0], &[1, COLS])?);
        }
        let t = c.wait_load(this).await?;
        let t = c.adds(&t, 1.0)?;
        let t = c.adds(&t, 1.0)?;
        c.store(&t, x, &[i, 0])?;
    }
    Ok(())
}

fn pipes(c: &mut Criterion) {
    let mut g = c.benchmark_group("tile_loop");
    g.sample_size(10).measurement_time(Duration::from_secs(3));
    let (blocks, tiles) = (24, 64);
    g.throughput(Throughput::Elements((blocks * tiles) as u64));
    for (name, overlap) in [("serial", false), ("overlapped", true)] {
        g.bench_with_input(BenchmarkId::new(name, blocks), &overlap, |b, &o| b.iter(|| tile_loop(blocks, tiles, o)));
    }
    g.finish();
}

criterion_group!(benches, pipes);
criterion_main!(benches);
