//! hccl_test, HCCL's performance test tool (modelled on nccl-tests), as `ranksim validate
//! --hccl-test LOG` and `ranksim calibrate --hccl-test LOG` read and reproduce it.
//!
//! What the tool does and prints (CANN's `tools/hccl_test`, e.g. GitHub
//! leideng/CANN-8.1.RC1 @ 4332a01, `Ascend/ascend-toolkit/8.1.RC1/tools/hccl_test/`:
//! `common/src/hccl_opbase_rootinfo_base.{h,cc}`, `common/src/hccl_test_common.{h,cc}`,
//! `opbase_test/hccl_*_rootinfo_test.cc`; docs/references/measurements.md has the summary):
//!
//! - one binary per operator (`all_reduce_test`, `all_gather_test`, `reduce_scatter_test`,
//!   `alltoall_test`, `broadcast_test`, ...), started by `mpirun` with one process per NPU;
//! - per size: `-w` warm-up calls (default 10), an event recorded on the stream, `-n` calls
//!   (default 20) launched back to back from the host onto one stream, a second event, and
//!   `aveg_time` = the events' elapsed time / `-n`: the host's per-op launch and HCCL's
//!   per-op setup are inside it whenever the device is faster than the host;
//! - only the root rank prints, a header `data_size(Bytes): | aveg_time(us): |
//!   alg_bandwidth(GB/s): | check_result:` once, then one row per size: the size, the time
//!   with 2 decimals, the algorithm bandwidth with 5 and `success`, `failed` or `NULL`
//!   (no check); a failing rank prints `rank id N, check result failed` lines before it;
//! - `data_size` is the `-b .. -e` size: the whole buffer for allreduce and broadcast, the
//!   gathered output for allgather (each rank sends `data_size / ranks`), the whole input for
//!   reduce_scatter (each rank keeps `data_size / ranks`), the whole send buffer for
//!   alltoall. These are nccl-tests' and so ranksim's size column: a row's size is run as is;
//! - `alg_bandwidth` = `data_size / aveg_time` (GB/s = 1e9 B/s) for all five; there is no
//!   bus bandwidth column.
//!
//! CANN 9's hccl_test adds `-t 1`, device-only timing (the ops' device time, no host gaps),
//! which the AIV-mode allgather table of configs/measurements was measured with.

use crate::sweep::{SweepSpec, run_calls};
use collectives::{Call, Kind, Mode};
use ranksim::Config;
use ranksim::measure::{Measure, time_per_call};
use sim_core::DType;
use sim_core::ReduceOp;
use std::fmt;

/// hccl_test's default `-n` (timed calls per size).
pub const DEFAULT_ITERS: u32 = 20;
/// hccl_test's default `-w` (warm-up calls per size).
pub const DEFAULT_WARMUP: u32 = 10;
/// The most calls (`-w` plus `-n`) the loop model steps through.
const MAX_CALLS: u64 = 100_000_000;

/// The operators ranksim reproduces, by hccl_test binary name.
const BINARIES: &[(&str, Kind)] = &[
    ("all_reduce_test", Kind::AllReduce),
    ("all_gather_test", Kind::AllGather),
    ("reduce_scatter_test", Kind::ReduceScatter),
    ("alltoall_test", Kind::AllToAll),
    ("broadcast_test", Kind::Broadcast),
];

/// hccl_test binaries ranksim has no model of (so a log of one is refused by name).
const OTHER_BINARIES: &[&str] =
    &["alltoallv_test", "all_gather_v_test", "reduce_scatter_v_test", "reduce_test", "scatter_test", "send_recv_test"];

/// One row of hccl_test's table.
#[derive(Clone, Debug, PartialEq)]
pub struct LogRow {
    /// 1-based line in the log.
    pub line: usize,
    /// `data_size`, bytes.
    pub size: u64,
    /// `aveg_time`, microseconds per call.
    pub time_us: f64,
    /// `alg_bandwidth`, GB/s.
    pub algbw_gbps: f64,
    /// `check_result`: `success`, `failed` or `NULL`.
    pub check: String,
}

/// What the log's command line and environment say about the run (fields not found: `None`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogCommand {
    /// 1-based line of the command.
    pub line: usize,
    /// The operator, from the binary's name.
    pub kind: Option<Kind>,
    /// `mpirun -n N` / `-np N`: processes, one rank each.
    pub ranks: Option<usize>,
    /// `-d`.
    pub dtype: Option<DType>,
    /// `-o`.
    pub op: Option<ReduceOp>,
    /// `-r`.
    pub root: Option<usize>,
    /// `-n`.
    pub iters: Option<u32>,
    /// `-w`.
    pub warmup: Option<u32>,
    /// `-t 1`: device-only timing.
    pub device_time: Option<bool>,
}

/// What the root rank echoes before its table (`the minbytes is .., maxbytes is .., iters is
/// N, warmup_iters is W`): the iterations that ran.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LogEcho {
    /// `iters is N` (`-n`).
    pub iters: u32,
    /// `warmup_iters is W` (`-w`).
    pub warmup: u32,
}

/// The echo line's iterations, or `None` when `line` is not that line.
fn echo_line(line: &str) -> Result<Option<LogEcho>, String> {
    if !(line.contains("minbytes is") && line.contains("iters is")) {
        return Ok(None);
    }
    let after = |key: &str| -> Result<u32, String> {
        let v = line
            .split(key)
            .nth(1)
            .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).find(|w| !w.is_empty()))
            .ok_or_else(|| format!("`{line}`: no number after `{key}`"))?;
        v.parse().map_err(|_| format!("`{line}`: `{v}` after `{key}` is not a whole number"))
    };
    Ok(Some(LogEcho { iters: after(", iters is")?, warmup: after("warmup_iters is")? }))
}

/// A parsed hccl_test log.
#[derive(Clone, Debug, PartialEq)]
pub struct HcclTestLog {
    /// The name it was given (its path).
    pub name: String,
    /// The command line, when the log shows it.
    pub command: Option<LogCommand>,
    /// The iterations hccl_test echoed, when the log shows them.
    pub echo: Option<LogEcho>,
    /// `HCCL_OP_EXPANSION_MODE=AIV` appears in the log.
    pub aiv: bool,
    /// The table's rows, sizes increasing.
    pub rows: Vec<LogRow>,
    /// Rows whose printed bandwidth is not `data_size / aveg_time` (line, printed, computed).
    pub inconsistent: Vec<(usize, f64, f64)>,
}

/// Whether a line is hccl_test's table header.
fn is_header(line: &str) -> bool {
    line.contains("data_size") && (line.contains("aveg_time") || line.contains("avg_time"))
}

/// Parses an hccl_test log: the table (its header and rows; other lines between them, such
/// as `rank id 3, check result failed`, are skipped), the command line if one is shown, and
/// `HCCL_OP_EXPANSION_MODE=AIV`. Errors read `NAME line N: ...` and say what to change.
pub fn parse_log(name: &str, text: &str) -> Result<HcclTestLog, String> {
    let mut log = HcclTestLog {
        name: name.into(),
        command: None,
        echo: None,
        aiv: false,
        rows: Vec::new(),
        inconsistent: Vec::new(),
    };
    let mut header: Option<usize> = None;
    for (i, raw) in text.lines().enumerate() {
        let at = |msg: String| format!("{name} line {}: {msg}", i + 1);
        let line = raw.trim();
        if line.contains("HCCL_OP_EXPANSION_MODE") {
            log.aiv = line.split(['=', ' ', '"', '\'']).any(|w| w.eq_ignore_ascii_case("AIV"));
        }
        if let Some(cmd) = command_line(line).map_err(at)? {
            if log.command.is_some() {
                return Err(at("a second hccl_test command; keep one run per log (one command, one table)".into()));
            }
            log.command = Some(LogCommand { line: i + 1, ..cmd });
            continue;
        }
        if let Some(echo) = echo_line(line).map_err(at)? {
            log.echo = Some(echo);
            continue;
        }
        if is_header(line) {
            if let Some(first) = header {
                return Err(at(format!("a second table header (the first is on line {first}); keep one run per log")));
            }
            header = Some(i + 1);
            continue;
        }
        if header.is_none() || !line.contains('|') {
            continue;
        }
        let row = table_row(line).map_err(at)?;
        if let Some(prev) = log.rows.last()
            && row.0 <= prev.size
        {
            return Err(at(format!(
                "data_size {} does not exceed the previous row's {}; one run's rows grow with size",
                row.0, prev.size
            )));
        }
        let computed = row.0 as f64 / row.1 / 1e3;
        // The time has 2 decimals: allow its rounding, and 1 % for hccl_test's rank rounding.
        let slack = 0.01 + 0.005 / row.1;
        if (row.2 - computed).abs() > slack * computed + 1e-5 {
            log.inconsistent.push((i + 1, row.2, computed));
        }
        log.rows.push(LogRow { line: i + 1, size: row.0, time_us: row.1, algbw_gbps: row.2, check: row.3 });
    }
    if header.is_none() {
        return Err(format!(
            "{name}: no hccl_test table; paste the tool's output from its header line \
             `data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:` on"
        ));
    }
    if log.rows.is_empty() {
        return Err(format!(
            "{name}: the table has a header but no rows; a row reads `<bytes> | <us> | <GB/s> | success`"
        ));
    }
    Ok(log)
}

/// One `size | time | algbw | check` row.
fn table_row(line: &str) -> Result<(u64, f64, f64, String), String> {
    let cols: Vec<&str> = line.split('|').map(str::trim).collect();
    if cols.len() != 4 {
        return Err(format!(
            "`{line}` has {} column(s); an hccl_test row has 4: data_size | aveg_time | alg_bandwidth | check_result",
            cols.len()
        ));
    }
    let size: u64 = cols[0].parse().map_err(|_| {
        format!("data_size `{}` is not a whole number of bytes (hccl_test prints e.g. 1048576)", cols[0])
    })?;
    if size == 0 {
        return Err("data_size 0 moves no bytes; remove the row".into());
    }
    let max = ranksim::measure::MAX_SIZE_TIMING;
    if size > max {
        return Err(format!("data_size {size} is more than the simulator times ({max} bytes, 16G); remove the row"));
    }
    let number = |s: &str, what: &str| -> Result<f64, String> {
        let v: f64 = s.parse().map_err(|_| format!("{what} `{s}` is not a number"))?;
        if v.is_finite() && v > 0.0 { Ok(v) } else { Err(format!("{what} {s} must be a positive number")) }
    };
    let time = number(cols[1], "aveg_time")?;
    let algbw = number(cols[2], "alg_bandwidth")?;
    let check = cols[3].to_string();
    if !matches!(check.as_str(), "success" | "failed" | "NULL") {
        return Err(format!("check_result `{check}`: hccl_test prints success, failed or NULL"));
    }
    Ok((size, time, algbw, check))
}

/// An hccl_test command line in `line` (the first word naming one of its binaries), parsed;
/// `None` when the line names none.
fn command_line(line: &str) -> Result<Option<LogCommand>, String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let base = |w: &str| w.rsplit('/').next().unwrap_or(w).to_string();
    let Some(at) = words.iter().position(|w| {
        let b = base(w);
        BINARIES.iter().any(|(n, _)| *n == b) || OTHER_BINARIES.contains(&b.as_str())
    }) else {
        return Ok(None);
    };
    let bin = base(words[at]);
    let kind = BINARIES.iter().find(|(n, _)| *n == bin).map(|(_, k)| *k).ok_or_else(|| {
        let names: Vec<&str> = BINARIES.iter().map(|b| b.0).collect();
        format!("`{bin}`: ranksim models {} (pass --collective to compare another way)", names.join(", "))
    })?;
    let mut c = LogCommand { kind: Some(kind), ..LogCommand::default() };
    // Before the binary: the launcher's process count.
    let launcher = &words[..at];
    if let Some(p) = launcher.iter().position(|w| matches!(*w, "-n" | "-np" | "--np" | "-c")) {
        let v = launcher.get(p + 1).ok_or("`mpirun -n` needs a process count")?;
        c.ranks = Some(v.parse().map_err(|_| format!("`mpirun -n {v}`: expected a whole number of processes"))?);
    }
    let mut rest = words[at + 1..].iter();
    while let Some(flag) = rest.next() {
        let (key, inline) = match flag.split_once('=') {
            Some((k, v)) if k.starts_with("--") => (k, Some(v)),
            _ => (*flag, None),
        };
        let takes = matches!(
            key,
            "-b" | "-e"
                | "-i"
                | "-f"
                | "-n"
                | "-o"
                | "-d"
                | "-r"
                | "-w"
                | "-c"
                | "-p"
                | "-t"
                | "-z"
                | "--minbytes"
                | "--maxbytes"
                | "--stepbytes"
                | "--stepfactor"
                | "--iters"
                | "--op"
                | "--datatype"
                | "--root"
                | "--warmup_iters"
                | "--check"
                | "--npus"
                | "--zero_copy"
        );
        if !takes {
            continue;
        }
        let value = match inline {
            Some(v) => v,
            None => rest.next().ok_or_else(|| format!("`{bin} {key}` needs a value"))?,
        };
        let whole = |what: &str| -> Result<u32, String> {
            value.parse().map_err(|_| format!("`{key} {value}`: expected a whole number ({what})"))
        };
        match key {
            "-n" | "--iters" => c.iters = Some(whole("timed iterations")?),
            "-w" | "--warmup_iters" => c.warmup = Some(whole("warm-up iterations")?),
            "-r" | "--root" => c.root = Some(whole("root rank")? as usize),
            "-t" => c.device_time = Some(whole("1: device-only timing")? == 1),
            "-d" | "--datatype" => c.dtype = Some(dtype(value)?),
            "-o" | "--op" => c.op = Some(crate::sweep::parse_op(value)?),
            _ => {}
        }
    }
    Ok(Some(c))
}

/// The operator an hccl_test binary (`all_reduce_test`, `./bin/alltoall_test`) or a
/// collective's name (`allreduce`, `all_to_all`) stands for.
pub fn kind_of(name: &str) -> Result<Kind, String> {
    let bin = name.rsplit('/').next().unwrap_or(name);
    if let Some((_, k)) = BINARIES.iter().find(|(n, _)| *n == bin) {
        return Ok(*k);
    }
    let names: Vec<&str> = BINARIES.iter().map(|b| b.0).collect();
    bin.parse::<Kind>()
        .ok()
        .filter(|k| BINARIES.iter().any(|(_, b)| b == k))
        .ok_or_else(|| format!("`{name}`: ranksim models hccl_test's {} (or name the collective)", names.join(", ")))
}

/// hccl_test's `-d` names as ranksim's element types.
pub fn dtype(name: &str) -> Result<DType, String> {
    match name {
        "fp32" => Ok(DType::F32),
        "fp16" => Ok(DType::F16),
        "bfp16" => Ok(DType::BF16),
        "int32" => Ok(DType::I32),
        "int16" => Ok(DType::I16),
        "int8" => Ok(DType::I8),
        other => other.parse().map_err(|_| {
            format!("`-d {other}`: ranksim has fp32, fp16, bfp16, int32, int16 and int8 (pass --datatype to override)")
        }),
    }
}

/// hccl_test's alignment unit above [`ALIGN_LINE`] for the operators whose data splits over
/// the ranks (allgather, reduce_scatter, alltoall): `ranks x 512` bytes (`BUF_ALGIN_SIZE`).
const ALIGN_BYTES: u64 = 512;
/// Above this size (1 MiB, `BUF_ALGIN_LINE`) those sizes are whole multiples of `ranks x 512`.
const ALIGN_LINE: u64 = 1 << 20;
/// The most sizes one `hccl-test` sweep runs.
pub const MAX_SIZES: usize = 1000;

/// The sizes hccl_test runs for `-b min -e max` with `-f factor` (when above 1) or else `-i
/// step` (default `(max - min) / 10`, or 1 when they are equal): from `min` while not above
/// `max`, multiplying (truncated to whole bytes) or adding. For allgather, reduce_scatter and
/// alltoall it first aligns `min`, `max` and the step to a multiple of `ranks` (of `ranks x
/// 512` above 1 MiB; the bounds down, the step and each size above 1 MiB up), as its
/// `check_data_count` and size loop do.
pub fn sizes(
    kind: Kind,
    ranks: usize,
    min: u64,
    max: u64,
    step: Option<u64>,
    factor: Option<f64>,
) -> Result<Vec<u64>, String> {
    if min == 0 {
        return Err("-b 0 moves no bytes; give -b 1 or more".into());
    }
    if max < min {
        return Err(format!("-e {max} is below -b {min}; give -e at least -b"));
    }
    if let Some(f) = factor
        && !(f > 1.0 && f.is_finite())
    {
        return Err(format!("-f {f}: the step factor must be above 1 (e.g. -f 2)"));
    }
    let aligned = matches!(kind, Kind::AllGather | Kind::ReduceScatter | Kind::AllToAll);
    let n = ranks.max(1) as u64;
    let unit = n * ALIGN_BYTES;
    let down = |v: u64| {
        let v = v.max(n);
        if v > ALIGN_LINE { v / unit * unit } else { v / n * n }
    };
    let up = |v: u64, line: bool| {
        let u = if line && v > ALIGN_LINE { unit } else { n };
        v.div_ceil(u) * u
    };
    let (min, max) = if aligned { (down(min), down(max)) } else { (min, max) };
    let mut step = step.unwrap_or(if max == min { 1 } else { (max - min) / 10 });
    if aligned {
        step = up(step, true);
    }
    if factor.is_none() && step == 0 {
        return Err("-i 0 never moves to the next size; give -i 1 or more, or -f".into());
    }
    let mut out = Vec::new();
    let mut size = min;
    while size <= max {
        if aligned && size > ALIGN_LINE {
            size = up(size, true);
        }
        out.push(size);
        if out.len() > MAX_SIZES {
            return Err(format!("-b {min} -e {max} gives more than {MAX_SIZES} sizes; use a larger -i or -f"));
        }
        let next = match factor {
            Some(f) => (size as f64 * f) as u64,
            None => size.saturating_add(step),
        };
        if next <= size {
            break;
        }
        size = next;
    }
    Ok(out)
}

/// Which algorithm a run's rows are modelled with.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// This mode at every size.
    Given(Mode),
    /// What HCCL picks per size with `HCCL_OP_EXPANSION_MODE=AIV` ([`collectives::hccl_aiv_pick`]).
    HcclAiv,
    /// HCCL's default expansion on one 910B server: its copy-engine (SDMA) full mesh.
    HcclDefault,
}

/// A collective as hccl_test runs it: `iters` calls launched back to back from the host after
/// `warmup` ones, with HCCL's per-op host costs (`host.hccl_launch_us` per launch,
/// `host.hccl_setup_us` before each copy-engine op), or the device time only (`-t 1`).
#[derive(Clone, Debug, PartialEq)]
pub struct HcclTestRun {
    /// The collective and its element type, reduction, root and ranks (the mode is chosen
    /// per size by `algorithm`).
    pub call: Call,
    /// How each size's algorithm is chosen.
    pub algorithm: Algorithm,
    /// Timed calls (`-n`).
    pub iters: u32,
    /// Warm-up calls (`-w`).
    pub warmup: u32,
    /// `-t 1`: the device time per op only.
    pub device_time: bool,
}

impl HcclTestRun {
    /// The series that runs at `size` bytes and the algorithm its row names.
    pub fn spec_at(&self, size: u64) -> (SweepSpec, String) {
        let base = SweepSpec::new(self.call).with_timing_only(true);
        match self.algorithm {
            Algorithm::Given(m) => (SweepSpec { call: self.call.with_mode(m), ..base }, m.to_string()),
            Algorithm::HcclDefault => {
                (SweepSpec { call: self.call.with_mode(Mode::SdmaMesh), ..base }, Mode::SdmaMesh.to_string())
            }
            Algorithm::HcclAiv => base.hccl_pick(size),
        }
    }

    /// The device time (us) of one warm call at `size` bytes: the second of two calls, so a
    /// copy engine's first-use cost (paid in hccl_test's warm-up) is not in it.
    pub fn device_us(&self, cfg: &Config, size: u64) -> Result<f64, String> {
        let (spec, _) = self.spec_at(size);
        let spec = spec.with_warmup(1);
        let r =
            run_calls(cfg, &spec, size, 2, false)?.ok_or_else(|| format!("size {size} gives no element per rank"))?;
        if let Some(w) = r.warnings.first() {
            return Err(format!("size {size}: the run was cut short, so it has no time: {w}"));
        }
        Ok(time_per_call(&r, &Measure { iters: 1, ..spec.measure() }))
    }

    /// hccl_test's `aveg_time` (us) at `size` bytes on `cfg`.
    pub fn time_us(&self, cfg: &Config, size: u64) -> Result<f64, String> {
        let device = self.device_us(cfg, size)?;
        if self.device_time {
            return Ok(device);
        }
        let (spec, _) = self.spec_at(size);
        let setup = if spec.call.mode == Mode::AivMesh { 0.0 } else { cfg.host.hccl_setup_us };
        loop_time_us(cfg.host.hccl_launch_us, setup + device, self.iters, self.warmup)
    }

    /// A one-line description for reports.
    pub fn describe(&self) -> String {
        let alg = match self.algorithm {
            Algorithm::Given(m) => m.to_string(),
            Algorithm::HcclAiv => "HCCL's AIV-mode pick per size".into(),
            Algorithm::HcclDefault => "sdma-mesh (HCCL's default expansion)".into(),
        };
        let timing = if self.device_time { "device time only (-t 1)".to_string() } else { "host-launched".into() };
        format!(
            "hccl_test {} on {} ranks, {}, {alg}, -w {} -n {}, {timing}",
            self.call.kind,
            self.call.ranks,
            self.call.dtype.name(),
            self.warmup,
            self.iters
        )
    }
}

/// hccl_test's `aveg_time` for ops that each occupy the stream `op_us` (setup plus device
/// time), launched from the host one per `launch_us`: the host enqueues `warmup` ops, the start
/// event, `iters` ops and the end event; op `i`'s launch ends at `(i + 1) launch_us`, and it
/// runs from then or from the previous op's end, whichever is later; the result is the
/// events' elapsed time over `iters`. After a warm-up this is `launch_us` host-bound and
/// `op_us` device-bound; without one the first launch falls inside the timed span.
pub fn loop_time_us(launch_us: f64, op_us: f64, iters: u32, warmup: u32) -> Result<f64, String> {
    if iters == 0 {
        return Err("-n 0 times no call (hccl_test divides by it); give -n 1 or more".into());
    }
    if u64::from(iters) + u64::from(warmup) > MAX_CALLS {
        return Err(format!("-w {warmup} -n {iters}: at most {MAX_CALLS} calls in all"));
    }
    let mut end = 0.0f64;
    let mut start_event = 0.0;
    for i in 0..(warmup + iters) {
        if i == warmup {
            // The start event is recorded after the warm-up launches and fires when they ran.
            start_event = (f64::from(warmup) * launch_us).max(end);
        }
        let launched = f64::from(i + 1) * launch_us;
        end = launched.max(end) + op_us;
    }
    Ok((end - start_event) / f64::from(iters))
}

/// The run a log describes: the log's command line and environment, each field overridden
/// by the flag given for it. The collective is required from one of them.
pub fn run_of(log: &HcclTestLog, flags: &Overrides, cfg: &Config) -> Result<HcclTestRun, String> {
    let cmd = log.command.clone().unwrap_or_default();
    let kind = flags.collective.or(cmd.kind).ok_or_else(|| {
        format!(
            "{}: the log shows no hccl_test command line (e.g. `mpirun -n 8 ./bin/all_reduce_test -b 8K -e 64M -f 2 -p 8`); \
             add it to the log or pass --collective allreduce",
            log.name
        )
    })?;
    let ranks = flags.ranks.or(cmd.ranks).unwrap_or(cfg.machine.ranks);
    let call = Call::new(kind, ranks)
        .with_mode(Mode::SdmaMesh)
        .with_dtype(flags.dtype.or(cmd.dtype).unwrap_or(DType::F32))
        .with_op(flags.op.or(cmd.op).unwrap_or(ReduceOp::Sum))
        .with_root(cmd.root.unwrap_or(0))
        .with_core_num(cfg.chip.aiv_cores);
    let algorithm = match flags.mode {
        Some(m) => Algorithm::Given(m),
        None if flags.aiv || log.aiv => Algorithm::HcclAiv,
        None => Algorithm::HcclDefault,
    };
    Ok(HcclTestRun {
        call,
        algorithm,
        iters: flags.iters.or(log.echo.map(|e| e.iters)).or(cmd.iters).unwrap_or(DEFAULT_ITERS),
        warmup: flags.warmup.or(log.echo.map(|e| e.warmup)).or(cmd.warmup).unwrap_or(DEFAULT_WARMUP),
        device_time: flags.device_time || cmd.device_time == Some(true),
    })
}

/// What the command line says about an hccl_test run, over what its log says.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overrides {
    /// The operator (`--collective`).
    pub collective: Option<Kind>,
    /// Ranks (`--ranks`).
    pub ranks: Option<usize>,
    /// Element type (`--datatype`).
    pub dtype: Option<DType>,
    /// Reduction (`--op`).
    pub op: Option<ReduceOp>,
    /// One algorithm at every size (`--mode`).
    pub mode: Option<Mode>,
    /// HCCL's AIV expansion mode (`--aiv`, as `HCCL_OP_EXPANSION_MODE=AIV`).
    pub aiv: bool,
    /// `-n` (`--iters`).
    pub iters: Option<u32>,
    /// `-w` (`--warmup`).
    pub warmup: Option<u32>,
    /// `-t 1` (`--device-time`).
    pub device_time: bool,
}

impl fmt::Display for LogRow {
    /// The row as hccl_test prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:<17} | {:<14.2} | {:<20.5} | {}", self.size, self.time_us, self.algbw_gbps, self.check)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\
$ export HCCL_OP_EXPANSION_MODE=AIV
$ mpirun -n 8 ./bin/all_gather_test -b 64K -e 256K -f 2 -d bfp16 -p 8 -n 30 -w 5
data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:
65536             | 6.40           | 10.24000             | success
rank id 3, check result failed
131072            | 8.20           | 15.98439             | failed
262144            | 12.80          | 20.48000             | success
";

    #[test]
    fn a_log_gives_its_rows_command_and_expansion_mode() {
        let log = parse_log("run.log", LOG).unwrap();
        assert!(log.aiv);
        let c = log.command.as_ref().unwrap();
        assert_eq!((c.line, c.kind, c.ranks, c.dtype), (2, Some(Kind::AllGather), Some(8), Some(DType::BF16)));
        assert_eq!((c.iters, c.warmup, c.device_time), (Some(30), Some(5), None));
        let rows: Vec<(usize, u64, f64, &str)> =
            log.rows.iter().map(|r| (r.line, r.size, r.time_us, r.check.as_str())).collect();
        assert_eq!(rows, vec![(4, 65536, 6.4, "success"), (6, 131072, 8.2, "failed"), (7, 262144, 12.8, "success")]);
        assert!(log.inconsistent.is_empty(), "{:?}", log.inconsistent);
        assert_eq!(log.rows[0].to_string(), "65536             | 6.40           | 10.24000             | success");
    }

    #[test]
    fn a_bandwidth_that_is_not_size_over_time_is_noted() {
        let text = "data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:\n1048576 | 100.00 | 20.00000 | NULL\n";
        let log = parse_log("x", text).unwrap();
        assert_eq!(log.inconsistent.len(), 1);
        let (line, printed, computed) = log.inconsistent[0];
        assert_eq!((line, printed), (2, 20.0));
        assert!((computed - 10.48576).abs() < 1e-9);
    }

    #[test]
    fn malformed_logs_name_the_line_and_the_fix() {
        let head = "data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:\n";
        let err = |body: &str| parse_log("t", &format!("{head}{body}")).unwrap_err();
        assert!(err("1024 | 5.0 | 0.2\n").starts_with("t line 2: `1024 | 5.0 | 0.2` has 3 column(s)"));
        assert!(err("1K | 5.0 | 0.2 | NULL\n").contains("line 2: data_size `1K` is not a whole number"));
        assert!(err("1024 | fast | 0.2 | NULL\n").contains("line 2: aveg_time `fast` is not a number"));
        assert!(err("1024 | -5 | 0.2 | NULL\n").contains("line 2: aveg_time -5 must be a positive number"));
        assert!(err("1024 | 5 | 0.2 | ok\n").contains("line 2: check_result `ok`"));
        assert!(err("0 | 5 | 0.2 | NULL\n").contains("line 2: data_size 0 moves no bytes"));
        assert!(
            err("2048 | 5 | 0.4 | NULL\n1024 | 5 | 0.2 | NULL\n").contains("line 3: data_size 1024 does not exceed")
        );
        assert!(err(&format!("1024 | 5 | 0.2 | NULL\n{head}")).contains("line 3: a second table header"));
        assert!(parse_log("t", "hello\n").unwrap_err().contains("t: no hccl_test table"));
        assert!(parse_log("t", head).unwrap_err().contains("a header but no rows"));
        let e = parse_log("t", "mpirun -n 8 ./bin/reduce_test -b 1M\n").unwrap_err();
        assert!(e.starts_with("t line 1: `reduce_test`: ranksim models all_reduce_test"), "{e}");
        let e = parse_log("t", "mpirun -n eight ./bin/all_reduce_test\n").unwrap_err();
        assert!(e.contains("line 1: `mpirun -n eight`: expected a whole number"), "{e}");
        let e = parse_log("t", "mpirun -n 8 ./bin/all_reduce_test -d int64\n").unwrap_err();
        assert!(e.contains("line 1: `-d int64`: ranksim has fp32"), "{e}");
        let e = parse_log("t", "./all_reduce_test -n\n").unwrap_err();
        assert!(e.contains("line 1: `all_reduce_test -n` needs a value"), "{e}");
    }

    #[test]
    fn flags_override_the_log_and_the_collective_is_required() {
        let cfg = Config::default_preset();
        let log = parse_log("run.log", LOG).unwrap();
        let r = run_of(&log, &Overrides::default(), &cfg).unwrap();
        assert_eq!((r.call.kind, r.call.ranks, r.call.dtype), (Kind::AllGather, 8, DType::BF16));
        assert_eq!((r.algorithm, r.iters, r.warmup, r.device_time), (Algorithm::HcclAiv, 30, 5, false));
        let o = Overrides { mode: Some(Mode::SdmaMesh), iters: Some(7), device_time: true, ..Overrides::default() };
        let r = run_of(&log, &o, &cfg).unwrap();
        assert_eq!((r.algorithm, r.iters, r.device_time), (Algorithm::Given(Mode::SdmaMesh), 7, true));
        let bare = parse_log(
            "bare",
            "data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:\n1024 | 5 | 0.2 | NULL\n",
        )
        .unwrap();
        assert!(run_of(&bare, &Overrides::default(), &cfg).unwrap_err().contains("pass --collective allreduce"));
        let r = run_of(&bare, &Overrides { collective: Some(Kind::AllReduce), ..Overrides::default() }, &cfg).unwrap();
        assert_eq!((r.algorithm, r.iters, r.warmup), (Algorithm::HcclDefault, DEFAULT_ITERS, DEFAULT_WARMUP));
    }

    #[test]
    fn binaries_and_collective_names_give_the_operator() {
        assert_eq!(kind_of("./bin/alltoall_test"), Ok(Kind::AllToAll));
        assert_eq!(kind_of("all_reduce_test"), Ok(Kind::AllReduce));
        assert_eq!(kind_of("reduce_scatter"), Ok(Kind::ReduceScatter));
        assert!(kind_of("reduce_test").unwrap_err().contains("ranksim models hccl_test's all_reduce_test"));
        assert!(kind_of("barrier").is_err());
    }

    #[test]
    fn the_echo_line_gives_the_iterations_that_ran() {
        let text = "the minbytes is 1024, maxbytes is 2048, iters is 7, warmup_iters is 3\n\
                    data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:\n1024 | 5.12 | 0.2 | NULL\n";
        let log = parse_log("t", text).unwrap();
        assert_eq!(log.echo, Some(LogEcho { iters: 7, warmup: 3 }));
        let r = run_of(
            &log,
            &Overrides { collective: Some(Kind::AllReduce), ..Overrides::default() },
            &Config::default_preset(),
        )
        .unwrap();
        assert_eq!((r.iters, r.warmup), (7, 3));
    }

    #[test]
    fn sizes_follow_hccl_tests_loop_and_alignment() {
        let k = 1024u64;
        assert_eq!(
            sizes(Kind::AllReduce, 8, 8 * k, 64 * k, None, Some(2.0)).unwrap(),
            vec![8 * k, 16 * k, 32 * k, 64 * k]
        );
        // No -f: ten steps of (max - min) / 10.
        assert_eq!(
            sizes(Kind::Broadcast, 8, 100, 200, None, None).unwrap(),
            (0..=10).map(|i| 100 + 10 * i).collect::<Vec<u64>>()
        );
        // Equal bounds: one size.
        assert_eq!(sizes(Kind::AllReduce, 8, 4096, 4096, None, None).unwrap(), vec![4096]);
        // Split operators: multiples of the ranks, of ranks x 512 above 1 MiB.
        assert_eq!(sizes(Kind::AllGather, 3, 100, 100, None, None).unwrap(), vec![99]);
        let big = sizes(Kind::AllToAll, 3, 1 << 20, 4 << 20, None, Some(2.0)).unwrap();
        assert_eq!(big, vec![1048575, 2098176]);
        assert!(big[1..].iter().all(|s| s % 1536 == 0));
        assert!(sizes(Kind::AllReduce, 8, 0, 1, None, None).unwrap_err().contains("-b 0 moves no bytes"));
        assert!(sizes(Kind::AllReduce, 8, 2, 1, None, None).unwrap_err().contains("-e 1 is below -b 2"));
        assert!(sizes(Kind::AllReduce, 8, 1, 2, None, Some(1.0)).unwrap_err().contains("must be above 1"));
        assert!(sizes(Kind::AllReduce, 8, 1, 2, Some(0), None).unwrap_err().contains("-i 0 never moves"));
        assert!(sizes(Kind::AllReduce, 8, 1, 1 << 30, Some(1), None).unwrap_err().contains("more than 1000 sizes"));
    }

    #[test]
    fn the_loop_is_host_bound_or_device_bound_as_the_slower_side_says() {
        // Device-bound with warm-up: the stream never idles, each op costs its own time.
        assert_eq!(loop_time_us(55.0, 100.0, 20, 10).unwrap(), 100.0);
        // Host-bound: one launch per op (the start event fires after the last warm-up op).
        assert_eq!(loop_time_us(55.0, 10.0, 20, 10).unwrap(), 55.0);
        // Host-bound with no warm-up: the last op's own time is in the span as well.
        assert!((loop_time_us(55.0, 10.0, 20, 0).unwrap() - (55.0 + 10.0 / 20.0)).abs() < 1e-9);
        // No warm-up, device-bound: the first launch is inside the timed span.
        assert!((loop_time_us(5.0, 100.0, 4, 0).unwrap() - (5.0 + 400.0) / 4.0).abs() < 1e-9);
        assert!(loop_time_us(5.0, 1.0, 0, 3).unwrap_err().contains("-n 0 times no call"));
        assert!(loop_time_us(5.0, 1.0, u32::MAX, u32::MAX).unwrap_err().contains("at most"));
    }
}
