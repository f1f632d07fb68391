use collectives::{AllReduce, Kind, Mode, Path};
use ranksim::collectives;
use ranksim::prelude::*;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mib: usize = args.get(1).map(|s| s.parse().unwrap()).unwrap_or(8);
    let mode: Mode = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(Mode::Mesh);
    let core_num: usize = args.get(3).map(|s| s.parse().unwrap()).unwrap_or(1);
    let payload = args.get(4).map(|s| s == "data").unwrap_or(false);
    let cfg = ranksim::Config::default_preset();
    let mut w = cfg.world().unwrap();
    if !payload {
        w.set_timing_only().unwrap();
    }
    let dom = w.world_domain("d").unwrap();
    let n = mib * 1024 * 1024 / 4;
    let data = w.alloc_window(&dom, "data", DType::F32, &[n]).unwrap();
    let cn = if mode == Mode::Ring { 1 } else { core_num };
    let sig = w
        .alloc_window(&dom, "sig", DType::I32, &collectives::signal_shape(Kind::AllReduce, mode, Path::Host, 8, cn))
        .unwrap();
    collectives::allreduce(&mut w, &data, &sig, AllReduce { op: ReduceOp::Sum, mode, path: Path::Host, core_num: cn })
        .unwrap();
    let t0 = std::time::Instant::now();
    let r = w.run().unwrap();
    let el = t0.elapsed();
    println!(
        "{mib} MiB {mode} c={cn} payload={payload}: wall {:?}, sim {}, events {}, requests {}, {:.2} Mev/s",
        el,
        r.end,
        r.stats.events,
        r.stats.requests,
        r.stats.events as f64 / el.as_secs_f64() / 1e6
    );
}
