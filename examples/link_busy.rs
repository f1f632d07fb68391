//! An observer of your own (`sim_core::observe::Observe`): it records how long each fabric
//! resource was busy (from the scheduler's link-busy facts, which it asks for with
//! `wants_links`, so even an untraced run reports them) and the bytes each rank stored to
//! peers, while rank 0 `remote_store`s BYTES into rank 1's window. It prints both, the time
//! the config's link rate gives for BYTES, and the built-in traffic counters' bytes, and ends
//! with OK when the observer's bytes are the counters'.
//!
//! `cargo run --example link_busy [CONFIG] [BYTES]` (CONFIG: a TOML file or a preset name,
//! default `a2a3`; BYTES: a multiple of 4, default 65536)

use ranksim::Config;
use ranksim::interconnect::LinkClass;
use ranksim::prelude::*;
use ranksim::sim_core::observe::{CoreId, Observe, OpId};
use ranksim::sim_core::trace::LinkBusy;
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

// guide:observer begin
/// What the observer saw: per resource its busy time (ps) and the bytes it carried, and per
/// rank the bytes it stored to other ranks.
#[derive(Debug, Default)]
struct Usage {
    busy: BTreeMap<String, (u64, u64)>,
    stored: Vec<u64>,
}

/// The observer: it writes into a `Usage` the host holds a clone of.
struct LinkUsage(Arc<Mutex<Usage>>);

impl Observe for LinkUsage {
    fn wants_links(&self) -> bool {
        true
    }

    fn run_started(&mut self, ranks: usize, _cores: usize) {
        let mut u = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *u = Usage { busy: BTreeMap::new(), stored: vec![0; ranks] };
    }

    fn link_busy(&mut self, b: &LinkBusy) {
        let mut u = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let e = u.busy.entry(b.resource.clone()).or_default();
        e.0 += (b.end - b.start).as_ps();
        e.1 += b.bytes;
    }

    fn store_posted(&mut self, core: CoreId, _op: OpId, to: usize, bytes: u64) {
        if to != core.rank() {
            self.0.lock().unwrap_or_else(|e| e.into_inner()).stored[core.rank()] += bytes;
        }
    }
}
// guide:observer end

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: cargo run --example link_busy [CONFIG] [BYTES]";
    let config = args.first().map_or("a2a3", String::as_str);
    let bytes = match args.get(1).map(|s| s.parse::<usize>()) {
        None => 65536,
        Some(Ok(b)) if b > 0 && b % 4 == 0 => b,
        _ => {
            eprintln!("BYTES must be a positive multiple of 4\n{usage}");
            return ExitCode::from(2);
        }
    };
    match run(config, bytes) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}\n{usage}");
            ExitCode::from(2)
        }
    }
}

/// Runs the store under the observer and prints what it saw; true when its bytes are the
/// traffic counters'.
fn run(config: &str, bytes: usize) -> Result<bool, Box<dyn std::error::Error>> {
    let path = std::path::Path::new(config);
    let cfg = if path.is_file() { Config::load(path)? } else { Config::preset(config)? }.with_ranks(2)?;
    let mut world = cfg.world()?;
    let all = world.world_domain("all")?;
    let inbox = world.alloc_window(&all, "inbox", DType::F32, &[1, bytes / 4])?;
    let w = inbox.clone();
    world.dispatch_all(
        &all,
        Dispatch::kernel("store", 1, move |core| {
            if core.rank() == 0 {
                let t = core.load(&w, &[0, 0], &[1, bytes / 4])?;
                core.remote_store(&t, &w, 1, &[0, 0], AtomicType::None)?;
            }
            Ok(())
        }),
    )?;
    let seen = Arc::new(Mutex::new(Usage::default()));
    world.observe(Box::new(LinkUsage(seen.clone())));
    let report = world.run()?;
    let seen = seen.lock().unwrap_or_else(|e| e.into_inner());

    println!("rank 0 remote_stores {bytes} B into rank 1's window ({}, untraced)", cfg.machine.name);
    for (resource, (ps, b)) in &seen.busy {
        println!("{resource:>16}: busy {ps:>12} ps for {b:>9} B");
    }
    match link_rate(&cfg) {
        Ok(gbps) => {
            let ps = bytes as f64 * 1000.0 / gbps;
            println!("a core's stores cross a link at {gbps:.3} GB/s: {bytes} B keep it busy {ps:.0} ps");
        }
        Err(e) => println!("(the config's link rate: {e})"),
    }
    let mut same = true;
    for (rank, &b) in seen.stored.iter().enumerate() {
        let counted = report.traffic[rank].remote_write_bytes;
        println!("rank {rank}: stored {b} B to peers (traffic counters: {counted} B)");
        same &= b == counted;
    }
    println!("{}", if same { "OK" } else { "MISMATCH" });
    Ok(same)
}

/// The rate a core's remote stores get from a node link: its raw rate times the fabric's
/// efficiency and `core_write_efficiency`, GB/s.
fn link_rate(cfg: &Config) -> Result<f64, String> {
    let mut topology = cfg.fabric.topology.clone();
    let raw = topology.link_mut(LinkClass::Node).map(|(gbps, _)| *gbps).map_err(|e| format!("{e:?}"))?;
    Ok(raw * cfg.fabric.efficiency * cfg.fabric.core_write_efficiency)
}
