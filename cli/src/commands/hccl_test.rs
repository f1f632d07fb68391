//! `ranksim hccl-test`: what hccl_test would print on the simulated machine. It takes
//! hccl_test's own flags (`-b -e -f -i -n -w -d -o -r -t`), runs its size loop, times each size
//! as its back-to-back loop does ([`crate::hccl_test::HcclTestRun`]) and prints its echo line,
//! header and rows (`check_result` NULL: the runs keep no data), after two `#` lines naming the
//! machine and the equivalent `mpirun` command, so `ranksim validate --hccl-test` reads the
//! output back as it reads a real log.

use super::{CmdResult, Status};
use crate::hccl_test::{Algorithm, HcclTestRun, LogRow, sizes};
use collectives::{Call, Kind, Mode};
use ranksim::Config;
use sim_core::{DType, ReduceOp};
use std::io::Write;
use std::path::PathBuf;

/// Everything `hccl-test` is told.
#[derive(Clone, Debug)]
pub struct HcclTestArgs {
    /// Machine config (TOML) or preset name; `None`: the embedded a2a3.
    pub config: Option<PathBuf>,
    /// The operator.
    pub kind: Kind,
    /// Processes (`mpirun -n`); `None`: every rank of the machine.
    pub ranks: Option<usize>,
    /// `-b`, bytes.
    pub min_bytes: u64,
    /// `-e`, bytes.
    pub max_bytes: u64,
    /// `-i`, bytes.
    pub step_bytes: Option<u64>,
    /// `-f`.
    pub factor: Option<f64>,
    /// `-n`.
    pub iters: u32,
    /// `-w`.
    pub warmup: u32,
    /// `-d`.
    pub dtype: DType,
    /// `-o`.
    pub op: ReduceOp,
    /// `-r`.
    pub root: usize,
    /// `-t 1`: device-only timing.
    pub device_time: bool,
    /// `HCCL_OP_EXPANSION_MODE=AIV`.
    pub aiv: bool,
    /// One algorithm at every size instead of HCCL's pick.
    pub mode: Option<Mode>,
}

/// hccl_test's binary for an operator.
fn binary(kind: Kind) -> Result<&'static str, String> {
    Ok(match kind {
        Kind::AllReduce => "all_reduce_test",
        Kind::AllGather => "all_gather_test",
        Kind::ReduceScatter => "reduce_scatter_test",
        Kind::AllToAll => "alltoall_test",
        Kind::Broadcast => "broadcast_test",
        other => {
            return Err(format!(
                "hccl_test has no {other} test ranksim models; use allreduce, allgather, reduce_scatter, all_to_all or broadcast"
            ));
        }
    })
}

/// hccl_test's `-d` name of an element type.
fn dtype_name(d: DType) -> &'static str {
    match d {
        DType::F32 => "fp32",
        DType::F16 => "fp16",
        DType::BF16 => "bfp16",
        DType::I32 => "int32",
        DType::I16 => "int16",
        DType::I8 => "int8",
    }
}

/// Runs `hccl-test`.
pub fn hccl_test(out: &mut dyn Write, a: &HcclTestArgs) -> CmdResult {
    let io = |e: std::io::Error| e.to_string();
    let cfg = Config::load_or_default(a.config.as_deref()).map_err(|e| e.to_string())?;
    let bin = binary(a.kind)?;
    let ranks = a.ranks.unwrap_or(cfg.machine.ranks);
    if ranks < 2 || ranks > cfg.machine.ranks {
        return Err(format!(
            "-n {ranks} processes: the machine `{}` has 2..={} ranks",
            cfg.machine.name, cfg.machine.ranks
        ));
    }
    if a.root >= ranks {
        return Err(format!("-r {}: the root must be below the {ranks} ranks", a.root));
    }
    let list = sizes(a.kind, ranks, a.min_bytes, a.max_bytes, a.step_bytes, a.factor)?;
    let call = Call::new(a.kind, ranks)
        .with_mode(Mode::SdmaMesh)
        .with_dtype(a.dtype)
        .with_op(a.op)
        .with_root(a.root)
        .with_core_num(cfg.chip.aiv_cores);
    let algorithm = match (a.mode, a.aiv) {
        (Some(m), _) => Algorithm::Given(m),
        (None, true) => Algorithm::HcclAiv,
        (None, false) => Algorithm::HcclDefault,
    };
    let run = HcclTestRun { call, algorithm, iters: a.iters, warmup: a.warmup, device_time: a.device_time };
    writeln!(out, "# ranksim hccl-test on `{}`: {}", cfg.machine.name, run.describe()).map_err(io)?;
    let step = match (a.factor, a.step_bytes) {
        (Some(f), _) => format!(" -f {f}"),
        (None, Some(i)) => format!(" -i {i}"),
        (None, None) => String::new(),
    };
    let env = if a.aiv { "HCCL_OP_EXPANSION_MODE=AIV " } else { "" };
    writeln!(
        out,
        "# {env}mpirun -n {ranks} ./bin/{bin} -b {} -e {}{step} -d {} -o {} -r {} -n {} -w {}{}",
        a.min_bytes,
        a.max_bytes,
        dtype_name(a.dtype),
        a.op,
        a.root,
        a.iters,
        a.warmup,
        if a.device_time { " -t 1" } else { "" }
    )
    .map_err(io)?;
    let (lo, hi) = (list.first().copied().unwrap_or(a.min_bytes), list.last().copied().unwrap_or(a.max_bytes));
    writeln!(out, "the minbytes is {lo}, maxbytes is {hi}, iters is {}, warmup_iters is {}", a.iters, a.warmup)
        .map_err(io)?;
    writeln!(
        out,
        "{:<15} | {:<12} | {:<18} | check_result:",
        "data_size(Bytes):", "aveg_time(us):", "alg_bandwidth(GB/s):"
    )
    .map_err(io)?;
    for size in list {
        let time_us = run.time_us(&cfg, size).map_err(|e| format!("{bin} at {size} B: {e}"))?;
        let row = LogRow { line: 0, size, time_us, algbw_gbps: size as f64 / time_us / 1e3, check: "NULL".into() };
        writeln!(out, "{row}").map_err(io)?;
    }
    Ok(Status::Ok)
}
