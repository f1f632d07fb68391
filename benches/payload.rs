//! Real-data element math, in elements per second (criterion's elements/s): tile add
//! (`combine`, the same element loop as an `AtomicAdd` store's) and `cast` per dtype, and the
//! gemm_ar-class workload with payload (pto-isa's GEMM + AllReduce communication kernel on 8
//! ranks and 24 blocks: an `AtomicAdd` f16 reduce-scatter and an all-gather of 16.9 MB), timed
//! in `World::run` alone, its elements being every f16 element a rank's output holds times
//! the ranks.
//!
//! `RANKSIM_BENCH_ONE=gemm_ar` runs the workload once without criterion and prints its figures
//! (events, seconds in `World::run`, elements per second): what a profiler wants;
//! `RANKSIM_BENCH_TIMING=1` runs it timing-only, for what the engine alone costs.

use criterion::{BenchmarkId, Criterion, Throughput};
use ranksim::Config;
use ranksim::programs::gemm_ar::{self, COLS};
use ranksim::sim_core::{DType, ReduceOp, RoundMode, Tile};
use std::time::{Duration, Instant};

/// Rows of the workload's output (the README problem's 5504 x 1536 f16: 16.9 MB).
const ROWS: usize = 5504;
const RANKS: usize = 8;
/// Elements of one tile in the element benches (a 64 KiB f32 tile).
const ELEMS: usize = 16 * 1024;

/// A tile of `dtype` holding `ELEMS` varied values (every bit pattern class: the cast of
/// mixed-sign values spread over a wide range).
fn tile(dtype: DType, seed: u32) -> Tile {
    let v: Vec<f32> = (0..ELEMS as u32)
        .map(|i| {
            let x = i.wrapping_mul(2_654_435_761).wrapping_add(seed);
            ((x % 2001) as f32 - 1000.0) * 0.37
        })
        .collect();
    let t = Tile::from_slice(ELEMS / 256, 256, &v).expect("shape fits");
    match dtype {
        DType::F32 => Ok(t),
        // TCVT has no f32 -> i8: through f16.
        DType::I8 => t.cast(DType::F16, RoundMode::Rint).and_then(|h| h.cast(DType::I8, RoundMode::Rint)),
        _ => t.cast(dtype, RoundMode::Rint),
    }
    .expect("a direct pair")
}

fn elements(c: &mut Criterion) {
    let mut g = c.benchmark_group("payload");
    g.sample_size(20).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2));
    g.throughput(Throughput::Elements(ELEMS as u64));
    for dt in DType::ALL {
        let (a, b) = (tile(dt, 1), tile(dt, 7));
        g.bench_with_input(BenchmarkId::new("add", dt), &dt, |bench, _| {
            bench.iter(|| a.combine(ReduceOp::Sum, &b).expect("same shapes"))
        });
    }
    let casts = [
        (DType::F32, DType::F16),
        (DType::F16, DType::F32),
        (DType::F32, DType::BF16),
        (DType::BF16, DType::F32),
        (DType::F32, DType::I32),
        (DType::I32, DType::F32),
        (DType::F16, DType::I16),
    ];
    for (from, to) in casts {
        let a = tile(from, 3);
        g.bench_with_input(BenchmarkId::new("cast", format!("{from}->{to}")), &to, |bench, &to| {
            bench.iter(|| a.cast(to, RoundMode::Rint).expect("a direct pair"))
        });
    }
    g.finish();
}

/// One run of the gemm_ar-class workload with payload: (events, seconds in `World::run`).
fn gemm_ar_once() -> (u64, f64) {
    let (events, secs, _) = gemm_ar_timed();
    (events, secs)
}

/// What the calling thread has used so far: CPU seconds in user and system mode, and page
/// faults served without I/O (on a shared host the wall clock also counts other processes'
/// turns; system time is mostly the OS zeroing pages a run touches first).
#[derive(Copy, Clone, Default)]
struct Usage {
    user: f64,
    sys: f64,
    faults: i64,
}

impl Usage {
    fn now() -> Usage {
        // SAFETY: getrusage only writes the struct it is given.
        let u = unsafe {
            let mut u: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_THREAD, &mut u);
            u
        };
        let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        Usage { user: s(u.ru_utime), sys: s(u.ru_stime), faults: u.ru_minflt }
    }

    fn since(self, before: Usage) -> Usage {
        Usage { user: self.user - before.user, sys: self.sys - before.sys, faults: self.faults - before.faults }
    }
}

/// As [`gemm_ar_once`], with what `World::run` used on its thread.
fn gemm_ar_timed() -> (u64, f64, Usage) {
    let mut w = Config::preset("a2a3").and_then(|c| c.world()).expect("preset builds");
    if std::env::var("RANKSIM_BENCH_TIMING").is_ok_and(|v| v == "1") {
        w.set_timing_only().expect("a fresh world");
    }
    gemm_ar::queue(&mut w, RANKS, ROWS).expect("gemm_ar sets up");
    let (before, t) = (Usage::now(), Instant::now());
    let r = w.run().expect("gemm_ar runs");
    let secs = t.elapsed().as_secs_f64();
    (r.stats.events, secs, Usage::now().since(before))
}

/// Elements the workload's payload path handles, as counted for elements/s: every rank's
/// output.
const WORKLOAD_ELEMS: u64 = (RANKS * ROWS * COLS) as u64;

fn workload(c: &mut Criterion) {
    let (events, secs) = gemm_ar_once();
    eprintln!(
        "gemm_ar_payload_8r_24blk: {events} events, run {secs:.3} s, {:.1} M elements/s, {:.3} M events/s",
        WORKLOAD_ELEMS as f64 / secs / 1e6,
        events as f64 / secs / 1e6
    );
    let mut g = c.benchmark_group("payload");
    g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(10));
    g.throughput(Throughput::Elements(WORKLOAD_ELEMS));
    g.bench_function("gemm_ar_payload_8r_24blk", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| Duration::from_secs_f64(gemm_ar_once().1)).sum())
    });
    g.finish();
}

fn main() {
    if std::env::var("RANKSIM_BENCH_ONE").is_ok_and(|v| v == "gemm_ar") {
        let (events, secs, u) = gemm_ar_timed();
        eprintln!(
            "gemm_ar_payload_8r_24blk: {events} events, run {secs:.3} s (cpu {:.3} s user + {:.3} s system, {} page faults), {:.1} M elements/s, {:.3} M events/s",
            u.user,
            u.sys,
            u.faults,
            WORKLOAD_ELEMS as f64 / secs / 1e6,
            events as f64 / secs / 1e6
        );
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    elements(&mut c);
    workload(&mut c);
    c.final_summary();
}
