//! The simulated programs that reproduce measurements: a one-core get or put between two ranks,
//! or a collective as `sweep` runs it, each timed on a timing-only run (times never depend on
//! payload). `calibrate` fits links with them in the loop; `validate` compares them to tables.

use crate::hccl_test::HcclTestRun;
use crate::measurements::{Program, Unit, WorkloadLine};
use crate::sweep::{SweepSpec, run_calls};
use crate::transfer_batch::{DEFAULT_BATCH, DEFAULT_WINDOW, Dir, TransferBatch};
use collectives::{Call, Kind, Mode, Path};
use ranksim::Config;
use ranksim::formats;
use ranksim::measure::{Measure, time_per_call};
use sim_core::{CopyOpts, DType, Dispatch, NotifyOp, SdmaOpts, WaitCmp};

/// Bytes per staged chunk of a get / put when the workload does not say (64 KiB through UB).
pub const DEFAULT_CHUNK: u64 = 64 * 1024;

/// A runnable benchmark.
#[derive(Clone, Debug)]
pub enum Workload {
    /// Rank 0 gets `size` bytes from rank `peer` with one core, staged through UB in `chunk`-byte
    /// chunks (pto-isa's TGET bandwidth test); the time is rank 0's dispatch.
    Get {
        /// The rank read from.
        peer: usize,
        /// Bytes per staged chunk.
        chunk: u64,
    },
    /// Rank 0 puts `size` bytes to rank `peer` in `chunk`-byte chunks and notifies; `peer`
    /// waits; the time is the slower dispatch.
    Put {
        /// The rank written to.
        peer: usize,
        /// Bytes per staged chunk.
        chunk: u64,
    },
    /// Rank 0 gets `size` bytes from rank `peer` with an SDMA engine and waits for it (pto-isa's
    /// TGET_ASYNC test); the time is the second of two calls, once the channel is warm.
    GetAsync {
        /// The rank read from.
        peer: usize,
        /// SDMA channels the descriptors are striped over (`SdmaOpts::queues`).
        queues: usize,
    },
    /// Rank 0 copies `size` bytes from GM into its own window with an SDMA put striped over
    /// `queues` channels (an on-chip HBM -> HBM copy); the second of two calls, warm.
    SdmaCopy {
        /// SDMA channels the descriptors are striped over.
        queues: usize,
    },
    /// An HCCL-class `HcclSend` (rank 0) / `HcclRecv` (rank `peer`) pair: the sender stages
    /// the data into its CCL window with an on-chip SDMA copy and signals; the receiver pulls
    /// it over the fabric with SDMA reads and acknowledges; every SDMA transfer is striped over
    /// all channels. The time per op of a back-to-back loop: `host.hccl_setup_us` plus the
    /// slower dispatch of the second of two calls (warm channels), but no less than
    /// `host.hccl_launch_us` (the host launches the next op while this one runs).
    HcclSendRecv {
        /// The receiving rank.
        peer: usize,
    },
    /// A collective as `sweep` runs it; the time is the slowest rank's dispatch.
    Collective(SweepSpec),
    /// A collective as hccl_test runs and times it (its `aveg_time`): ops launched back to
    /// back from the host with HCCL's per-op costs, or device time only.
    HcclTest(HcclTestRun),
    /// A batch of point-to-point blocks as HIXL's benchmark moves them; the time is per block
    /// (see [`crate::transfer_batch`]).
    TransferBatch(TransferBatch),
    /// pto-isa's a2a3 GEMM + AllReduce communication kernel on `ranks` ranks, the size being
    /// its f16 output's bytes; the time is the slowest rank's dispatch.
    GemmArComm {
        /// Ranks taking part.
        ranks: usize,
    },
}

impl Workload {
    /// What the machine `cfg` lacks to run `line`, or `None` when it can.
    pub fn needs(line: &WorkloadLine, cfg: &Config) -> Option<String> {
        let on = &line.on;
        match line.program {
            Program::GetAsync | Program::SdmaCopy | Program::HcclSendRecv | Program::TransferBatch
                if cfg.chip.sdma.is_none() =>
            {
                Some("an SDMA copy engine (pto-isa TGET_ASYNC): add a [chip.sdma] table to the machine config".into())
            }
            _ if !on.is_empty() && !on.contains(&cfg.machine.name) => Some(format!(
                "the machine it was measured on: --config {} (this is `{}`)",
                on.join(" or --config "),
                cfg.machine.name
            )),
            _ => None,
        }
    }

    /// The runnable form of `line` on `cfg`; `peer` is the get / put peer when the line gives
    /// none. A line the machine cannot run is an error saying what it needs.
    pub fn resolve(line: &WorkloadLine, cfg: &Config, peer: usize) -> Result<Workload, String> {
        if let Some(needs) = Workload::needs(line, cfg) {
            return Err(format!("`{line}` cannot run: needs {needs}"));
        }
        let chunk = line.chunk.unwrap_or(DEFAULT_CHUNK);
        let peer = line.peer.unwrap_or(peer);
        Ok(match line.program {
            Program::Get => Workload::Get { peer, chunk },
            Program::GetAsync => Workload::GetAsync { peer, queues: line.queues.unwrap_or(1) },
            Program::SdmaCopy => Workload::SdmaCopy { queues: line.queues.unwrap_or(channels(cfg)) },
            Program::HcclSendRecv => Workload::HcclSendRecv { peer },
            Program::TransferBatch => Workload::TransferBatch(transfer_batch(line, peer)?),
            Program::Put => Workload::Put { peer, chunk },
            Program::GemmArComm => Workload::GemmArComm { ranks: line.ranks.unwrap_or(cfg.machine.ranks) },
            Program::Collective(kind) => {
                let call = Call::new(kind, line.ranks.unwrap_or(cfg.machine.ranks))
                    .with_mode(line.mode.unwrap_or(Mode::Mesh))
                    .with_path(line.path.unwrap_or(Path::Host))
                    .with_dtype(line.dtype.unwrap_or(DType::F32))
                    .with_core_num(line.core_num.unwrap_or(1));
                Workload::Collective(SweepSpec::new(call).with_warmup(line.warmup.unwrap_or(0)).with_timing_only(true))
            }
        })
    }

    /// A one-line description for reports.
    pub fn describe(&self) -> String {
        match self {
            Workload::Get { peer, .. } => format!("get (one core, rank 0 <- rank {peer})"),
            Workload::Put { peer, .. } => format!("put + notify (one core, rank 0 -> rank {peer})"),
            Workload::GetAsync { peer, queues: 1 } => format!("get_async (SDMA, rank 0 <- rank {peer})"),
            Workload::GetAsync { peer, queues } => {
                format!("get_async (SDMA on {queues} channels, rank 0 <- rank {peer})")
            }
            Workload::SdmaCopy { queues } => format!("on-chip SDMA copy (rank 0, {queues} channels)"),
            Workload::HcclSendRecv { peer } => format!("HcclSend / HcclRecv (rank 0 -> rank {peer}, SDMA)"),
            Workload::TransferBatch(t) => format!(
                "{} batch of {} via {} (rank 0 {} rank {}, {} block(s) in flight), per block",
                t.dir,
                ranksim::formats::size_label(t.batch),
                t.via,
                if t.dir == Dir::Write { "->" } else { "<-" },
                t.peer,
                t.window
            ),
            Workload::GemmArComm { ranks } => {
                format!("gemm_ar comm kernel (24 AIV blocks: AtomicAdd reduce-scatter + all-gather) on {ranks} ranks")
            }
            Workload::Collective(s) => {
                format!("{} {} {} on {} ranks", s.call.kind, s.call.mode, s.call.path, s.call.ranks)
            }
            Workload::HcclTest(r) => r.describe(),
        }
    }

    /// The collective, if this is one.
    pub fn kind(&self) -> Option<Kind> {
        match self {
            Workload::Collective(s) => Some(s.call.kind),
            Workload::HcclTest(r) => Some(r.call.kind),
            _ => None,
        }
    }

    /// The nccl-tests bus-bandwidth factor, or an error when the workload has no bus bandwidth
    /// (a point-to-point transfer, a barrier).
    fn bus_factor(&self) -> Result<f64, String> {
        let f = match self {
            Workload::Collective(s) => formats::bus_factor(s.call.kind, s.call.ranks),
            Workload::HcclTest(r) => formats::bus_factor(r.call.kind, r.call.ranks),
            _ => 0.0,
        };
        if f > 0.0 {
            Ok(f)
        } else {
            Err(format!("{} has no bus bandwidth; give its table as `size,time_us`", self.describe()))
        }
    }

    /// The time (us) a table value of `unit` at `size` bytes stands for.
    pub fn time_from(&self, unit: Unit, size: u64, value: f64) -> Result<f64, String> {
        match unit {
            Unit::TimeUs => Ok(value),
            Unit::BusbwGbps => Ok(size as f64 * self.bus_factor()? / (value * 1e3)),
        }
    }

    /// The table value of `unit` that a time of `time_us` at `size` bytes gives.
    pub fn value_from(&self, unit: Unit, size: u64, time_us: f64) -> Result<f64, String> {
        match unit {
            Unit::TimeUs => Ok(time_us),
            Unit::BusbwGbps => Ok(size as f64 * self.bus_factor()? / (time_us * 1e3)),
        }
    }

    /// Simulated time (us) of one call at `size` bytes on the machine `cfg`.
    pub fn time_us(&self, cfg: &Config, size: u64) -> Result<f64, String> {
        match self {
            Workload::Collective(spec) => {
                let calls = spec.warmup as usize + 1;
                let r = run_calls(cfg, spec, size, calls, false)?
                    .ok_or_else(|| format!("size {size} gives no element per rank"))?;
                if let Some(w) = r.warnings.first() {
                    return Err(format!("size {size}: the run was cut short, so it has no time: {w}"));
                }
                Ok(time_per_call(&r, &Measure { iters: 1, ..spec.measure() }))
            }
            Workload::HcclTest(r) => r.time_us(cfg, size),
            &Workload::Get { peer, chunk } => p2p(cfg, true, peer, chunk, size),
            &Workload::Put { peer, chunk } => p2p(cfg, false, peer, chunk, size),
            &Workload::GetAsync { peer, queues } => sdma_get(cfg, peer, queues, size),
            &Workload::SdmaCopy { queues } => sdma_copy(cfg, queues, size),
            &Workload::HcclSendRecv { peer } => sendrecv(cfg, peer, size),
            Workload::TransferBatch(t) => t.time_per_block_us(cfg, size),
            &Workload::GemmArComm { ranks } => crate::gemm_ar::comm_time_us(cfg, ranks, size),
        }
    }
}

/// The batch a `transfer_batch` line describes; `dir` and `via` must be given.
fn transfer_batch(line: &WorkloadLine, peer: usize) -> Result<TransferBatch, String> {
    let t = &line.transfer;
    Ok(TransferBatch {
        peer,
        dir: t.dir.ok_or("`transfer_batch` needs `dir=write` or `dir=read`")?,
        via: t.via.ok_or("`transfer_batch` needs `via=hixl` or `via=comm_domain`")?,
        window: t.window.unwrap_or(DEFAULT_WINDOW),
        batch: t.batch.unwrap_or(DEFAULT_BATCH),
    })
}

/// A two-rank domain of ranks 0 and `peer` on a timing-only world of `cfg`, with an `[1, n]`
/// f32 window holding `size` bytes.
fn pair(cfg: &Config, peer: usize, size: u64) -> Result<(sim_core::World, sim_core::Domain, sim_core::Tensor), String> {
    let e = |e: sim_core::SimError| e.to_string();
    let mut w = cfg.world().map_err(|e| e.to_string())?;
    if peer == 0 || peer >= w.size() {
        return Err(format!("a point-to-point workload needs ranks 0 and {peer}; the machine has {}", w.size()));
    }
    w.set_timing_only().map_err(e)?;
    let dom = w.create_domain("p2p", &[0, peer], sim_core::DomainOptions::default()).map_err(e)?;
    let n = (size / 4).max(1) as usize;
    let buf = w.alloc_window(&dom, "buf", DType::F32, &[1, n]).map_err(e)?;
    Ok((w, dom, buf))
}

/// The chip's SDMA channels (1 without an SDMA table; such workloads are refused earlier).
fn channels(cfg: &Config) -> usize {
    cfg.chip.sdma.as_ref().map_or(1, |s| s.channels)
}

/// Rank 0 gets `size` bytes of rank `peer`'s window with an SDMA engine on `queues` channels,
/// twice; the time (us) of the second call, on warm channels (the first pays the cold start).
fn sdma_get(cfg: &Config, peer: usize, queues: usize, size: u64) -> Result<f64, String> {
    let e = |e: sim_core::SimError| e.to_string();
    let (mut w, dom, buf) = pair(cfg, peer, size)?;
    let local = w.alloc_tensor("local", DType::F32, buf.shape()).map_err(e)?;
    let k = Dispatch::kernel("tget_async", 1, move |c| {
        let h = c.get_async(&local, 1, &buf, &SdmaOpts::new().queues(queues))?;
        c.wait_async(h)
    });
    twice_on_rank_0(w, &dom, k)
}

/// Rank 0 copies `size` bytes of GM into its own window with an SDMA put striped over
/// `queues` channels, twice; the time (us) of the second call.
fn sdma_copy(cfg: &Config, queues: usize, size: u64) -> Result<f64, String> {
    let e = |e: sim_core::SimError| e.to_string();
    let mut w = cfg.world().map_err(|e| e.to_string())?;
    w.set_timing_only().map_err(e)?;
    let dom = w.create_domain("copy", &[0], sim_core::DomainOptions::default()).map_err(e)?;
    let n = (size / 4).max(1) as usize;
    let win = w.alloc_window(&dom, "ccl", DType::F32, &[1, n]).map_err(e)?;
    let user = w.alloc_tensor("user", DType::F32, &[1, n]).map_err(e)?;
    let k = Dispatch::kernel("sdma_copy", 1, move |c| {
        let h = c.put_async(&win, 0, &user, &SdmaOpts::new().queues(queues))?;
        c.wait_async(h)
    });
    twice_on_rank_0(w, &dom, k)
}

/// Runs `kernel` on rank 0 of `dom` twice, one dispatch after the other; the time (us) of the
/// second call, on warm channels (the first pays their cold start).
fn twice_on_rank_0(mut w: sim_core::World, dom: &sim_core::Domain, kernel: Dispatch) -> Result<f64, String> {
    let e = |e: sim_core::SimError| e.to_string();
    for _ in 0..2 {
        w.dispatch(0, kernel.clone().in_domain(dom)).map_err(e)?;
    }
    second_call(w.run().map_err(e)?, 1)
}

/// HcclSend on rank 0 and HcclRecv on rank `peer` of `size` bytes, twice (see
/// [`Workload::HcclSendRecv`]); the time of one op in a back-to-back loop, in us.
fn sendrecv(cfg: &Config, peer: usize, size: u64) -> Result<f64, String> {
    let e = |e: sim_core::SimError| e.to_string();
    let (mut w, dom, ccl) = pair(cfg, peer, size)?;
    let user = w.alloc_tensor("user", DType::F32, ccl.shape()).map_err(e)?;
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[2, 1]).map_err(e)?;
    let q = channels(cfg);
    for call in 1..=2 {
        let (c0, u0, s0) = (ccl.clone(), user.clone(), sig.clone());
        let send = Dispatch::kernel("hcom_send", 1, move |c| {
            let h = c.put_async(&c0, 0, &u0, &SdmaOpts::new().queues(q))?;
            c.wait_async(h)?;
            c.notify(&s0, 1, &[0, 0], 1, NotifyOp::AtomicAdd)?;
            c.wait(&s0, &[1, 0], call, WaitCmp::Ge)
        });
        let (c1, u1, s1) = (ccl.clone(), user.clone(), sig.clone());
        let recv = Dispatch::kernel("hcom_receive", 1, move |c| {
            c.wait(&s1, &[0, 0], call, WaitCmp::Ge)?;
            let h = c.get_async(&u1, 0, &c1, &SdmaOpts::new().queues(q))?;
            c.wait_async(h)?;
            c.notify(&s1, 0, &[1, 0], 1, NotifyOp::AtomicAdd)
        });
        w.dispatch(0, send.in_domain(&dom)).map_err(e)?;
        w.dispatch(peer, recv.in_domain(&dom)).map_err(e)?;
    }
    let device = second_call(w.run().map_err(e)?, 2)?;
    Ok(cfg.host.hccl_launch_us.max(cfg.host.hccl_setup_us + device))
}

/// The slowest of the last `per_call` dispatches (one call's), in us.
fn second_call(r: sim_core::RunReport, per_call: usize) -> Result<f64, String> {
    let n = r.dispatches.len();
    if n < 2 * per_call {
        return Err(format!("the run dispatched {n} kernel(s), not the {} of two calls", 2 * per_call));
    }
    Ok(r.dispatches[n - per_call..].iter().map(|d| d.device_wall().as_us_f64()).fold(0.0, f64::max))
}

/// One point-to-point transfer of `size` bytes between ranks 0 and `peer`.
fn p2p(cfg: &Config, get: bool, peer: usize, chunk: u64, size: u64) -> Result<f64, String> {
    let e = |e: sim_core::SimError| e.to_string();
    let (mut w, dom, buf) = pair(cfg, peer, size)?;
    let n = buf.numel();
    let local = w.alloc_tensor("local", DType::F32, &[1, n]).map_err(e)?;
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[2, 1]).map_err(e)?;
    let opts = CopyOpts::new().chunks(1, n.min((chunk / 4).max(1) as usize));
    // Inside the kernels, peers are ranks of the two-rank domain: `1` is world rank `peer`.
    if get {
        w.dispatch(0, Dispatch::kernel("tget", 1, move |c| c.get(&local, 1, &buf, &opts)).in_domain(&dom))
            .map_err(e)?;
    } else {
        let (b, s) = (buf.clone(), sig.clone());
        w.dispatch(
            0,
            Dispatch::kernel("tput", 1, move |c| {
                c.put(&b, 1, &local, &opts)?;
                c.notify(&s, 1, &[0, 0], 1, NotifyOp::AtomicAdd)
            })
            .in_domain(&dom),
        )
        .map_err(e)?;
        w.dispatch(
            peer,
            Dispatch::kernel("tput_wait", 1, move |c| c.wait(&sig, &[0, 0], 1, WaitCmp::Ge)).in_domain(&dom),
        )
        .map_err(e)?;
    }
    let r = w.run().map_err(e)?;
    Ok(r.dispatches.iter().map(|d| d.device_wall().as_us_f64()).fold(0.0, f64::max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busbw_and_time_convert_both_ways() {
        let cfg = Config::default_preset();
        let line = WorkloadLine::parse("collective allreduce ranks=4").unwrap();
        let w = Workload::resolve(&line, &cfg, 1).unwrap();
        // 4 ranks: busbw = algbw * 1.5; 1 MB in 100 us is 10 GB/s algbw, 15 GB/s busbw.
        let t = w.time_from(Unit::BusbwGbps, 1_000_000, 15.0).unwrap();
        assert!((t - 100.0).abs() < 1e-9, "{t}");
        let bw = w.value_from(Unit::BusbwGbps, 1_000_000, 100.0).unwrap();
        assert!((bw - 15.0).abs() < 1e-9, "{bw}");
        let get = Workload::resolve(&WorkloadLine::parse("get").unwrap(), &cfg, 1).unwrap();
        assert!(get.time_from(Unit::BusbwGbps, 4096, 1.0).unwrap_err().contains("has no bus bandwidth"));
        assert!(get.value_from(Unit::BusbwGbps, 4096, 1.0).unwrap_err().contains("has no bus bandwidth"));
        let line = WorkloadLine::parse("get_async").unwrap();
        assert!(Workload::resolve(&line, &cfg, 1).is_ok());
        let mut bare = cfg.clone();
        bare.chip.sdma = None;
        let e = Workload::resolve(&line, &bare, 1).unwrap_err();
        assert!(e.contains("needs an SDMA copy engine") && e.contains("[chip.sdma]"), "{e}");
    }
}
