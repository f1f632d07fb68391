//! Cost of the window protocol of split runs (`--partitions`, MPI): one window's meeting over
//! the byte path (an all-to-all of crossings and an all-gather of reports, on `LocalGroup`'s
//! threads, the shape MPI's calls take), and a whole two-node allreduce, timing-only, on one
//! engine against two partitions on threads (whose windows are one lookahead, 750 ns, long).

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use ranksim::Config;
use ranksim::collectives::{Call, Kind, Mode};
use ranksim::measure::{self, Builtin, Measure};
use ranksim::sim_core::{LocalGroup, ProcessGroup};
use std::time::{Duration, Instant};

/// `windows` meetings of `n` members, each an all-to-all of `bytes` to every member and an
/// all-gather of a 16-byte report, as a split run's processes meet at a window's end. The
/// wall time of the slowest member.
fn meetings(n: usize, windows: u64, bytes: usize) -> Duration {
    std::thread::scope(|s| {
        let members: Vec<_> = LocalGroup::new(n)
            .into_iter()
            .map(|mut g| {
                s.spawn(move || {
                    let start = Instant::now();
                    for _ in 0..windows {
                        let got = g.all_to_all(vec![vec![7u8; bytes]; n]).expect("a meeting");
                        assert_eq!(got.len(), n);
                        g.all_gather(vec![1u8; 16]).expect("a meeting");
                    }
                    start.elapsed()
                })
            })
            .collect();
        members.into_iter().map(|h| h.join().expect("a member")).max().unwrap_or_default()
    })
}

/// A 16-rank allreduce (rhd) of 1 MiB on two-node, timing-only, split in `parts`.
fn two_node_allreduce(parts: usize) -> u64 {
    let cfg = Config::preset("two-node").expect("a preset");
    let call = Call::new(Kind::AllReduce, 16).with_mode(Mode::Rhd);
    let m = Measure { timing_only: true, partitions: parts, ..Measure::new(16) };
    measure::run(&cfg, &Builtin(&call), &m, 1 << 20, 1).expect("the run ends").report.stats.events
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("split");
    g.sample_size(10).measurement_time(Duration::from_secs(5)).warm_up_time(Duration::from_secs(1));
    for bytes in [0, 4096] {
        g.bench_with_input(BenchmarkId::new("window_meeting_2_members", bytes), &bytes, |b, &bytes| {
            b.iter_custom(|iters| meetings(2, iters, bytes))
        });
    }
    for parts in [1, 2] {
        g.bench_with_input(BenchmarkId::new("two_node_rhd_1mib_partitions", parts), &parts, |b, &p| {
            b.iter(|| two_node_allreduce(p))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
