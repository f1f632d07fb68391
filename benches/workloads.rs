//! Engine speed on real workloads, in simulated events per second (criterion's elements/s):
//! the collectives a user sweeps, timing-only as `sweep --no-data` runs them. Each workload
//! also prints its event and packet counts once, so a change of the model (fewer events) is
//! not mistaken for a faster engine.
//!
//! `RANKSIM_BENCH_SCALE=8` multiplies the message sizes (the 64 MiB mesh row is scale
//! 8); the default keeps a full criterion run under a few minutes on a 2-core machine.

use collectives::{Call, Kind, Mode, Path};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ranksim::Config;
use ranksim::sweep::{SweepSpec, run_calls};
use std::time::{Duration, Instant};

struct Workload {
    name: &'static str,
    preset: &'static str,
    ranks: usize,
    kind: Kind,
    mode: Mode,
    path: Path,
    core_num: usize,
    bytes: u64,
}

const MIB: u64 = 1 << 20;

const WORKLOADS: &[Workload] = &[
    // PyPTO's builtin mesh allreduce on 8 blocks.
    Workload {
        name: "mesh_allreduce_8r_8blk",
        preset: "a2a3",
        ranks: 8,
        kind: Kind::AllReduce,
        mode: Mode::Mesh,
        path: Path::Host,
        core_num: 8,
        bytes: 8 * MIB,
    },
    Workload {
        name: "ring_allreduce_8r",
        preset: "a2a3",
        ranks: 8,
        kind: Kind::AllReduce,
        mode: Mode::Ring,
        path: Path::Host,
        core_num: 1,
        bytes: 8 * MIB,
    },
    Workload {
        name: "all_to_all_64r",
        preset: "a2a3",
        ranks: 64,
        kind: Kind::AllToAll,
        mode: Mode::Mesh,
        // The HOST builtin serves at most 16 ranks; the in-core one any number.
        path: Path::InCore,
        core_num: 1,
        bytes: 8 * MIB, // 128 KiB per peer: the in-core put stages a whole piece in UB
    },
    // HCCL's AIV reduce-scatter + all-gather: large tiles on 24 cores.
    Workload {
        name: "aiv_rs_ag_8r_24c",
        preset: "a2a3",
        ranks: 8,
        kind: Kind::AllReduce,
        mode: Mode::AivMesh,
        path: Path::Host,
        core_num: 24,
        bytes: 16 * MIB,
    },
    // Scale with an algorithm that scales: RHD signals only its partners, so the work is
    // n log n transfers; the whole 1024-rank cluster preset, where a packet's hops are spread
    // over a hundred thousand resources.
    Workload {
        name: "rhd_allreduce_1024r",
        preset: "cluster1024",
        ranks: 1024,
        kind: Kind::AllReduce,
        mode: Mode::Rhd,
        path: Path::Host,
        core_num: 1,
        bytes: 64 * 1024,
    },
    // Scale: every rank notifies every other and waits (n² signals in flight), the pattern
    // that deepens the event queue and lengthens a port's booking calendar.
    Workload {
        name: "barrier_256r",
        preset: "a2a3",
        ranks: 256,
        kind: Kind::Barrier,
        mode: Mode::Mesh,
        path: Path::InCore,
        core_num: 1,
        bytes: 0,
    },
];

fn scale() -> u64 {
    std::env::var("RANKSIM_BENCH_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(1).max(1)
}

fn setup(w: &Workload) -> (Config, SweepSpec) {
    let cfg = Config::preset(w.preset).and_then(|c| c.with_ranks(w.ranks)).expect("preset scales");
    let call = Call::new(w.kind, w.ranks).with_mode(w.mode).with_path(w.path).with_core_num(w.core_num);
    let spec = SweepSpec::new(call).with_timing_only(true);
    (cfg, spec)
}

/// One run: (events, packets).
fn run(cfg: &Config, spec: &SweepSpec, bytes: u64) -> (u64, u64) {
    let r = run_calls(cfg, spec, bytes, 1, false).expect("workload runs").expect("non-empty size");
    (r.stats.events, r.stats.packets)
}

fn workloads(c: &mut Criterion) {
    let mut g = c.benchmark_group("workloads");
    g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(10));
    for w in WORKLOADS {
        let (cfg, spec) = setup(w);
        let bytes = w.bytes * scale();
        let t = Instant::now();
        let (events, packets) = run(&cfg, &spec, bytes);
        let secs = t.elapsed().as_secs_f64();
        eprintln!(
            "{}: {bytes} B, {events} events, {packets} packets, {secs:.2} s, {:.3} M events/s",
            w.name,
            events as f64 / secs / 1e6
        );
        g.throughput(Throughput::Elements(events));
        g.bench_function(w.name, |b| b.iter(|| run(&cfg, &spec, bytes)));
    }
    g.finish();
}

criterion_group!(benches, workloads);
criterion_main!(benches);
