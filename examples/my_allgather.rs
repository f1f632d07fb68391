//! A collective you write yourself, measured like the built-in ones: a direct allgather
//! (every rank stores its row into every peer's window, then signals it) implementing
//! `ranksim::measure::Collective`, then swept, benchmarked, checked and traced; `ranksim_cli::main_for`
//! gives it `ranksim`'s `sweep`, `bench` and `check` commands.
//! The guide `docs/your-collective.md` explains each part.
//!
//! `cargo run --release --example my_allgather [TRACE.json]`

use ranksim::measure::{self, Collective, Measure, Wrong};
use ranksim::prelude::*;
use std::cell::Cell;

// guide:collective begin
/// A direct allgather of f32 rows: rank r's `stage` row lands in row r of every rank's
/// `target`, moved through UB in chunks that fit it.
struct MyAllGather {
    /// Elements per chunk: one UB tile (4096 f32 = 16 KiB, well inside a 910B core's 184 KiB UB).
    chunk: usize,
}

/// The buffers of one size: windows on the domain, and the calls queued so far (each call's
/// wait expects one more notify per peer: the signal cells count calls).
struct Bufs {
    dom: Domain,
    stage: Tensor,
    target: Tensor,
    sig: Tensor,
    calls: Cell<i32>,
}

impl Collective for MyAllGather {
    type Buffers = Bufs;

    fn name(&self) -> String {
        "my_allgather".into()
    }
    fn dtype(&self) -> DType {
        DType::F32
    }
    // nccl-tests' allgather conventions: the size is the gathered buffer, busbw = algbw (n-1)/n.
    fn bus_factor(&self, ranks: usize) -> f64 {
        (ranks as f64 - 1.0) / ranks as f64
    }
    fn count(&self, size_bytes: u64, ranks: usize) -> usize {
        (size_bytes / 4) as usize / ranks
    }
    fn bytes(&self, count: usize, ranks: usize) -> u64 {
        (count * ranks * 4) as u64
    }

    fn setup(&self, w: &mut World, dom: &Domain, count: usize) -> SimResult<Bufs> {
        let n = dom.size();
        Ok(Bufs {
            dom: dom.clone(),
            stage: w.alloc_window(dom, "stage", DType::F32, &[1, count])?,
            target: w.alloc_window(dom, "target", DType::F32, &[n, count])?,
            // One INT32 cell per source rank: "rank s's row has landed here".
            sig: w.alloc_window(dom, "signal", DType::I32, &[n, 1])?,
            calls: Cell::new(0),
        })
    }

    fn stage(&self, w: &mut World, b: &Bufs, count: usize) -> SimResult<()> {
        for r in 0..b.dom.size() {
            let row: Vec<f32> = (0..count).map(|i| (r * 1000 + i % 1000) as f32).collect();
            w.write(&b.stage, r, &row)?;
        }
        Ok(())
    }

    fn call(&self, w: &mut World, b: &Bufs) -> SimResult<()> {
        b.calls.set(b.calls.get() + 1);
        let (stage, target, sig, expect) = (b.stage.clone(), b.target.clone(), b.sig.clone(), b.calls.get());
        let (count, chunk) = (stage.numel(), self.chunk);
        let kernel = Dispatch::kernel("my_allgather", 1, move |core| {
            let (me, n) = (core.rank(), core.nranks());
            // Move the row chunk by chunk: load into UB, store to self and to every peer.
            for off in (0..count).step_by(chunk) {
                let len = chunk.min(count - off);
                let t = core.load(&stage, &[0, off], &[1, len])?;
                core.store(&t, &target, &[me, off])?;
                for p in (0..n).filter(|&p| p != me) {
                    core.remote_store(&t, &target, p, &[me, off], AtomicType::None)?;
                }
            }
            // Signal every peer; a notify lands after the writes its core issued before it.
            for p in (0..n).filter(|&p| p != me) {
                core.notify(&sig, p, &[me, 0], 1, NotifyOp::AtomicAdd)?;
            }
            // Wait for every peer's row of this call: the cell counts calls.
            for q in (0..n).filter(|&q| q != me) {
                core.wait(&sig, &[q, 0], expect, WaitCmp::Ge)?;
            }
            Ok(())
        });
        w.dispatch_all(&b.dom, kernel)
    }

    // Every element of every rank against its golden: `compare` counts the wrong ones and keeps
    // the first few (rank, index, got, expected), which the table prints under a wrong row.
    fn wrong(&self, w: &World, b: &Bufs, count: usize) -> SimResult<Wrong> {
        let mut wrong = Wrong::new();
        for r in 0..b.dom.size() {
            let got: Vec<f32> = w.read(&b.target, r)?;
            for (i, g) in got.iter().enumerate() {
                let (src, e) = (i / count, i % count);
                wrong.compare(r, i, f64::from(*g), (src * 1000 + e % 1000) as f64);
            }
        }
        Ok(wrong)
    }
}
// guide:collective end

// guide:cli begin
fn main() -> std::process::ExitCode {
    let ag = MyAllGather { chunk: 4096 };
    // `my_allgather sweep | bench | check [FLAGS]`: ranksim's sweep, bench and check for this
    // collective, with their flags, outputs and exit codes.
    let command = std::env::args().nth(1).unwrap_or_default();
    if ["sweep", "bench", "check", "--help", "-h"].contains(&command.as_str()) {
        return ranksim_cli::main_for(&ag);
    }
    // guide:cli end
    match tour(&ag) {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => std::process::ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::from(2)
        }
    }
}

/// The measuring API one call at a time; `true` when everything was right.
fn tour(ag: &MyAllGather) -> Result<bool, Box<dyn std::error::Error>> {
    // guide:measure begin
    let cfg = ranksim::Config::default_preset();
    let m = Measure::new(8);

    // One size (in bytes, as everywhere): nccl-tests' row.
    let p = measure::point(&cfg, ag, &m, 1 << 20)?.ok_or("no element")?;
    println!("1 MiB: {:.2} us, busbw {:.2} GB/s, {:?} wrong", p.row.time_us, p.row.busbw_gbps, p.row.nwrong);

    // A sweep, printed as the nccl-tests table; `failed` is true on a wrong element or a
    // FAILED row (a run that deadlocked, with its reason).
    let (b, e, f) = (8 << 10, 1 << 20, 4.0);
    let sizes = ranksim::formats::sweep_sizes(b, e, f)?;
    let (rows, failed) = measure::sweep(&mut std::io::stdout(), &cfg, ag, &m, &sizes)?;
    // The rows as `sweep -J` writes them, and as the `--plot` SVG.
    let json = measure::sweep_json(&cfg, ag, &m, (b, e, f), &rows);
    let points = rows.iter().map(|r| (r.size as f64, r.time_us, r.busbw_gbps)).collect();
    let svg = ranksim::formats::plot_svg("my_allgather", &[ranksim::formats::Series { label: ag.name(), points }]);
    println!("JSON {} bytes, SVG {} bytes", json.len(), svg.len());

    // PyPTO's BenchmarkStats over 5 rounds after 1 warmup call.
    let stats = measure::bench(&cfg, ag, &Measure { iters: 5, warmup: 1, ..m.clone() }, 64 << 10)?;
    println!("{stats}");

    // The protocol checker on 8 ranks at 64 KiB, 2 calls in a row, unperturbed and with 2
    // jittered seeds; each finding prints with both operations' source lines.
    let report =
        measure::check(&cfg, ag, &m, 64 << 10, 2, &CheckOptions { seeds: 2, ..CheckOptions::default() })?.report;
    println!("checker: {} run(s), {} finding(s)", report.runs, report.findings.len());
    for f in &report.findings {
        println!("{f}");
    }

    // One traced call of 128 KiB (4096 elements per rank on 8 ranks), with payload: its
    // device time and its Perfetto trace.
    let run = measure::run(&cfg, ag, &Measure { trace: true, ..m.clone() }, 128 << 10, 1)?;
    let trace = measure::chrome_trace(&run.report, 8).ok_or("not traced")?;
    println!("traced call: device time {}, trace {} bytes", run.report.device_time(), trace.len());
    // guide:measure end
    if let Some(path) = std::env::args().nth(1) {
        std::fs::write(&path, &trace)?;
        println!("trace written to {path}");
    }
    let ok = !failed && rows.len() == sizes.len() && report.is_clean() && p.row.nwrong == Some(0);
    println!("{}", if ok { "OK" } else { "FAILED" });
    Ok(ok)
}
