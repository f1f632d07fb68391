//! The protocol checker's cost: an 8-rank 1 MiB allreduce (the default sweep's HOST mesh
//! kernel, and the two-shot InCore lowering) run with and without checking.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use ranksim::Config;
use ranksim::collectives::{Call, Kind, Mode, Path};
use ranksim::measure::{self, Builtin};
use std::time::Duration;

fn spec(mode: Mode, path: Path) -> Call {
    Call::new(Kind::AllReduce, 8).with_mode(mode).with_path(path)
}

/// One 1 MiB allreduce on a fresh a2a3 world; returns the findings (none expected).
fn allreduce(s: &Call, check: bool) -> usize {
    let mut w = Config::default_preset().world().expect("the default preset builds");
    w.options_mut().check = check;
    measure::queue(&mut w, &Builtin(s), s.ranks, 1 << 20, 1).expect("a valid allreduce");
    w.run().expect("the allreduce completes").findings.len()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("checker");
    g.sample_size(10).measurement_time(Duration::from_secs(10)).warm_up_time(Duration::from_secs(1));
    for (mode, path) in [(Mode::Mesh, Path::Host), (Mode::TwoShot, Path::InCore)] {
        let s = spec(mode, path);
        for check in [false, true] {
            let id = BenchmarkId::new(
                format!("allreduce_1mib_8_ranks_{mode}_{path}"),
                if check { "checked" } else { "plain" },
            );
            g.bench_with_input(id, &check, |b, &check| b.iter(|| allreduce(&s, check)));
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
