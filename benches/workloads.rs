//! Engine speed on real workloads, in simulated events per second (criterion's elements/s):
//! the collectives a user sweeps, timing-only as `sweep --no-data` runs them. Each workload
//! also prints its event and packet counts once, so a change of the model (fewer events) is
//! not mistaken for a faster engine.
//!
//! `RANKSIM_BENCH_SCALE=8` multiplies the message sizes (the 64 MiB mesh row is scale
//! 8); the default keeps a full criterion run under a few minutes on a 2-core machine.
//!
//! Next to the built-ins, `user/...` are workloads written as users write kernels (`Task::new`
//! closures, `benches/user_kernels/kernels.rs`), run as coroutines (the default) and, under
//! `user_threads/...`, on OS threads. `RANKSIM_BENCH_ONE=NAME` runs only workload NAME once,
//! without criterion, and prints its figures: a whole-process timing of one run, for a
//! profiler. NAME is a built-in workload (`ring_allreduce_8r` with `RANKSIM_BENCH_SCALE=128`
//! is `sweep --mode ring -b 1G -e 1G --no-data`'s run) or a user one
//! (`RANKSIM_KERNEL_EXEC=threads` for OS threads).

#[path = "user_kernels/kernels.rs"]
mod user_kernels;

use collectives::{Call, Kind, Mode, Path};
use criterion::{Criterion, Throughput};
use ranksim::Config;
use ranksim::measure::{self, Builtin, Measure};
use ranksim::sim_core::KernelExec;
use std::time::{Duration, Instant};
use user_kernels::{FULL, USER_WORKLOADS, UserWorkload};

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

fn setup(w: &Workload) -> (Config, Call) {
    let cfg = Config::preset(w.preset).and_then(|c| c.with_ranks(w.ranks)).expect("preset scales");
    let call = Call::new(w.kind, w.ranks).with_mode(w.mode).with_path(w.path).with_core_num(w.core_num);
    (cfg, call)
}

/// One timing-only run of one call: (events, packets).
fn run(cfg: &Config, call: &Call, bytes: u64) -> (u64, u64) {
    let m = Measure { timing_only: true, ..Measure::new(call.ranks) };
    let r = measure::run(cfg, &Builtin(call), &m, bytes, 1).expect("workload runs").report;
    (r.stats.events, r.stats.packets)
}

fn workloads(c: &mut Criterion) {
    let mut g = c.benchmark_group("workloads");
    g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(10));
    for w in WORKLOADS {
        let (cfg, call, bytes, events) = one_builtin(w);
        g.throughput(Throughput::Elements(events));
        g.bench_function(w.name, |b| b.iter(|| run(&cfg, &call, bytes)));
    }
    g.finish();
}

/// A run of a user workload at `scale` (sixteenths), timing-only unless `payload`:
/// (events, packets, seconds in `World::run`).
fn run_one_user(w: &UserWorkload, scale: u64, exec: KernelExec, payload: bool) -> (u64, u64, f64) {
    let mut world = Config::preset("a2a3").and_then(|c| c.world()).expect("preset builds");
    if !payload {
        world.set_timing_only().expect("a fresh world");
    }
    world.options_mut().kernel_exec = exec;
    (w.setup)(&mut world, w.ranks, scale).expect("user workload sets up");
    let t = Instant::now();
    let r = world.run().expect("user workload runs");
    (r.stats.events, r.stats.packets, t.elapsed().as_secs_f64())
}

fn user_workloads(c: &mut Criterion) {
    let mut g = c.benchmark_group("workloads");
    g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(10));
    let scale = FULL * scale();
    for (prefix, exec) in [("user", KernelExec::default()), ("user_threads", KernelExec::Threads)] {
        for w in USER_WORKLOADS {
            let (events, packets, secs) = run_one_user(w, scale, exec, false);
            eprintln!(
                "{prefix}/{}: {events} events, {packets} packets, run {secs:.3} s, {:.3} M events/s",
                w.name,
                events as f64 / secs / 1e6
            );
            g.throughput(Throughput::Elements(events));
            g.bench_function(format!("{prefix}/{}", w.name), |b| b.iter(|| run_one_user(w, scale, exec, false)));
        }
    }
    g.finish();
}

/// `RANKSIM_BENCH_ONE=NAME`: one run of workload NAME, its figures on stderr: a built-in one
/// at `RANKSIM_BENCH_SCALE`, or a user one (`RANKSIM_KERNEL_EXEC=threads`: on OS threads;
/// `RANKSIM_BENCH_PAYLOAD=1`: with payload).
fn one(name: &str) {
    if let Some(w) = WORKLOADS.iter().find(|w| w.name == name) {
        one_builtin(w);
        return;
    }
    let Some(w) = USER_WORKLOADS.iter().find(|w| w.name == name) else {
        let names: Vec<&str> = WORKLOADS.iter().map(|w| w.name).chain(USER_WORKLOADS.iter().map(|w| w.name)).collect();
        eprintln!("no workload `{name}`; there are: {}", names.join(", "));
        std::process::exit(2);
    };
    let exec = match std::env::var("RANKSIM_KERNEL_EXEC").as_deref() {
        Ok("threads") => KernelExec::Threads,
        _ => KernelExec::default(),
    };
    let payload = std::env::var("RANKSIM_BENCH_PAYLOAD").is_ok_and(|v| v == "1");
    let t = Instant::now();
    let (events, packets, secs) = run_one_user(w, FULL * scale(), exec, payload);
    let all = t.elapsed().as_secs_f64();
    eprintln!(
        "{name} ({exec:?}, payload {payload}): {events} events, {packets} packets, run {secs:.3} s ({:.3} M events/s), with set-up {all:.3} s",
        events as f64 / secs / 1e6
    );
}

/// One timing-only run of built-in workload `w` at `RANKSIM_BENCH_SCALE`: its events, packets
/// and host time (set-up included, as a sweep's row pays it) on stderr. Returns what it ran
/// (the machine, the call, the bytes) and its events.
fn one_builtin(w: &Workload) -> (Config, Call, u64, u64) {
    let (cfg, call) = setup(w);
    let bytes = w.bytes * scale();
    let t = Instant::now();
    let (events, packets) = run(&cfg, &call, bytes);
    let secs = t.elapsed().as_secs_f64();
    eprintln!(
        "{}: {bytes} B, {events} events, {packets} packets, {secs:.3} s ({:.3} M events/s)",
        w.name,
        events as f64 / secs / 1e6
    );
    (cfg, call, bytes, events)
}

/// `RANKSIM_BENCH_LIVE=RANKSxBLOCKS`: one run of a kernel that keeps every block of `RANKS`
/// ranks of the 1024-rank preset live at once (each holding a coroutine stack), timing-only;
/// its figures on stderr. For the memory of large runs.
fn live(spec: &str) {
    let (ranks, blocks) = spec
        .split_once('x')
        .and_then(|(r, b)| Some((r.parse::<usize>().ok()?, b.parse::<usize>().ok()?)))
        .expect("RANKSIM_BENCH_LIVE=RANKSxBLOCKS");
    let mut world = Config::preset("cluster1024").and_then(|c| c.world()).expect("preset builds");
    world.set_timing_only().expect("a fresh world");
    user_kernels::all_blocks_live(&mut world, ranks, blocks).expect("sets up");
    let t = Instant::now();
    match world.run() {
        Ok(r) => eprintln!(
            "{ranks} ranks x {blocks} blocks: {} events, {} coroutines, {} stacks, run {:.3} s",
            r.stats.events,
            r.host.coroutines,
            r.host.stacks,
            t.elapsed().as_secs_f64()
        ),
        Err(e) => eprintln!("{ranks} ranks x {blocks} blocks: {e}"),
    }
}

fn main() {
    if let Ok(spec) = std::env::var("RANKSIM_BENCH_LIVE") {
        return live(&spec);
    }
    if let Ok(name) = std::env::var("RANKSIM_BENCH_ONE") {
        return one(&name);
    }
    let mut c = Criterion::default().configure_from_args();
    workloads(&mut c);
    user_workloads(&mut c);
    c.final_summary();
}
