//! Measured tables: the format of the CSV files in `configs/measurements/` (embedded in the
//! binary, so `ranksim validate` works on a fresh clone) and of the tables users pass to
//! `calibrate`.
//!
//! ```text
//! # free comment lines ...
//! # source: where the numbers come from (may repeat)
//! # workload: get peer=1 chunk=64K
//! # unsized: 1M..1G       (only when the source gives no message size; see below)
//! # uncertainty: 3%       (only when the values themselves are approximate, e.g. read off a plot)
//! size,time_us
//! 4096,0.7256        # a trailing comment is allowed
//! 16K,2.9996
//! ```
//!
//! The header is `size,time_us` (microseconds per call) or `size,busbw_gbps` (nccl-tests bus
//! bandwidth, GB/s, for collective workloads). A table without a header must start with a data
//! row and is read as `size,time_us`. Sizes take K/M/G suffixes (binary), must be positive and
//! increase from row to row; values must be positive. Every error names the line and says what
//! to change.
//!
//! The `# workload:` line names the simulated program that reproduces the numbers, as a word
//! and `key=value` fields:
//!
//! - `get [peer=N] [chunk=SIZE]` — one core of rank 0 reads SIZE-chunked data from rank `peer`
//!   (default: the first rank across the links being studied, rank 1 on a flat topology);
//! - `put [peer=N] [chunk=SIZE]` — one core of rank 0 writes to `peer` and notifies;
//! - `get_async [peer=N]` — the same read over an SDMA engine (pto-isa `TGET_ASYNC`), timed
//!   on a warm channel; a chip without `[chip.sdma]` cannot run it ([`Workload::needs`](crate::workload::Workload::needs));
//! - `collective NAME [mode=M] [path=P] [core_num=N] [ranks=N] [dtype=D]` — a collective as
//!   `ranksim sweep` runs it (`mode` for allreduce, allgather, reduce_scatter and all_to_all);
//! - `transfer_batch peer=N dir=write|read via=hixl|comm_domain [window=N] [batch=SIZE]
//!   [on=MACHINE,...]` — HIXL's point-to-point benchmark: rank 0 writes (reads) a batch of
//!   `batch` bytes (128 MiB) to (from) `peer` in blocks of the row's size, each block costing
//!   the path's `host.hixl_block_us` / `host.hccl_block_us` before its SDMA post, at most
//!   `window` blocks in flight; the value is the time per block;
//! - `gemm_ar_comm [ranks=N]` — the communication kernel of pto-isa's a2a3 GEMM + AllReduce
//!   (24 AIV blocks storing into their peers), the size being its f16 output's bytes (a whole
//!   number of 128 x 1536 tile rows), timed as launch plus device time.
//!
//! `transfer_batch` and `collective` lines also take `on=MACHINE,...`: the machines (presets)
//! the table was measured on, or that stand for them; elsewhere the table is not run.
//!
//! A `# unsized: LO..HI` line says the source gives no message size: each row's size is an
//! assumption, LO..HI the sizes it may plausibly come from. `validate` then shows the model
//! over that range and leaves the table out of its exit code (a guessed size must not gate).
//! A `# uncertainty: N%` line says how far the values themselves may be off; `validate` gates
//! that table at its tolerance plus N.

use collectives::{Kind, Mode, Path};
use sim_core::DType;
use std::fmt;

/// The measured tables shipped with ranksim, by name (the file stem).
pub const SHIPPED: &[(&str, &str)] = &[
    ("t3-tget", include_str!("../../configs/measurements/t3-tget.csv")),
    ("t3-tget-async", include_str!("../../configs/measurements/t3-tget-async.csv")),
    ("t1-allreduce-2p", include_str!("../../configs/measurements/t1-allreduce-2p.csv")),
    ("t1-allreduce-4p", include_str!("../../configs/measurements/t1-allreduce-4p.csv")),
    ("t1-allgather-2p", include_str!("../../configs/measurements/t1-allgather-2p.csv")),
    ("t1-allgather-4p", include_str!("../../configs/measurements/t1-allgather-4p.csv")),
    ("ptoisa-gemm-ar-comm", include_str!("../../configs/measurements/ptoisa-gemm-ar-comm.csv")),
    ("hccl-sendrecv-2p", include_str!("../../configs/measurements/hccl-sendrecv-2p.csv")),
    ("hccl-send-op-1g", include_str!("../../configs/measurements/hccl-send-op-1g.csv")),
    ("hccl-sdma-read-1g", include_str!("../../configs/measurements/hccl-sdma-read-1g.csv")),
    ("sdma-onchip-copy-1g", include_str!("../../configs/measurements/sdma-onchip-copy-1g.csv")),
    ("hccl-aiv-allgather-8p", include_str!("../../configs/measurements/hccl-aiv-allgather-8p.csv")),
    ("hixl-a2-roce-write", include_str!("../../configs/measurements/hixl-a2-roce-write.csv")),
    ("hixl-a2-roce-read", include_str!("../../configs/measurements/hixl-a2-roce-read.csv")),
    ("hixl-a2-roce-comm-write", include_str!("../../configs/measurements/hixl-a2-roce-comm-write.csv")),
    ("hixl-a2-roce-comm-read", include_str!("../../configs/measurements/hixl-a2-roce-comm-read.csv")),
    ("hixl-a3-ub-write", include_str!("../../configs/measurements/hixl-a3-ub-write.csv")),
    ("hixl-a3-ub-read", include_str!("../../configs/measurements/hixl-a3-ub-read.csv")),
    ("hixl-a3-ub-comm-write", include_str!("../../configs/measurements/hixl-a3-ub-comm-write.csv")),
    ("hixl-a3-ub-comm-read", include_str!("../../configs/measurements/hixl-a3-ub-comm-read.csv")),
    ("hixl-a3-ub-2srv-comm-write", include_str!("../../configs/measurements/hixl-a3-ub-2srv-comm-write.csv")),
    ("hixl-a3-ub-2srv-comm-read", include_str!("../../configs/measurements/hixl-a3-ub-2srv-comm-read.csv")),
];

/// What a table's value column holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Microseconds per call (`time_us`).
    TimeUs,
    /// nccl-tests bus bandwidth in GB/s (`busbw_gbps`).
    BusbwGbps,
}

impl Unit {
    /// The header's column name.
    pub const fn column(self) -> &'static str {
        match self {
            Unit::TimeUs => "time_us",
            Unit::BusbwGbps => "busbw_gbps",
        }
    }

    /// The unit as printed next to numbers.
    pub const fn symbol(self) -> &'static str {
        match self {
            Unit::TimeUs => "us",
            Unit::BusbwGbps => "GB/s",
        }
    }
}

/// The program a workload line names.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Program {
    /// One-core remote read through UB (pto-isa `TGET`).
    Get,
    /// One-core remote write plus notify.
    Put,
    /// One-core remote read over SDMA (pto-isa `TGET_ASYNC`).
    GetAsync,
    /// A collective as `sweep` runs it.
    Collective(Kind),
    /// The communication kernel of pto-isa's a2a3 GEMM + AllReduce (24 AIV blocks).
    GemmArComm,
    /// An on-chip SDMA copy (HBM -> HBM).
    SdmaCopy,
    /// An HCCL-class HcclSend / HcclRecv pair.
    HcclSendRecv,
    /// A batch of point-to-point blocks, as HIXL's benchmark moves them.
    TransferBatch,
}

/// A parsed `# workload:` line; fields not written are `None` (the runner's defaults apply).
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadLine {
    /// The program.
    pub program: Program,
    /// The peer rank of a get / put.
    pub peer: Option<usize>,
    /// Bytes per staged chunk of a get / put.
    pub chunk: Option<u64>,
    /// The allreduce / allgather algorithm.
    pub mode: Option<Mode>,
    /// HOST or InCore.
    pub path: Option<Path>,
    /// AIV blocks per rank.
    pub core_num: Option<usize>,
    /// SDMA channels a get_async / sdma_copy stripes over.
    pub queues: Option<usize>,
    /// Ranks taking part.
    pub ranks: Option<usize>,
    /// Element type.
    pub dtype: Option<DType>,
    /// Untimed collective calls before the timed one (a measured best-of-sweep figure is warm).
    pub warmup: Option<u32>,
    /// A transfer batch's shape (`dir`, `via`, `window`, `batch`).
    pub transfer: TransferFields,
    /// The machines (preset names) the table was measured on; empty: any.
    pub on: Vec<String>,
}

/// The fields only a `transfer_batch` line takes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TransferFields {
    /// Write or read.
    pub dir: Option<crate::transfer_batch::Dir>,
    /// The software path.
    pub via: Option<crate::transfer_batch::Via>,
    /// Blocks in flight at most.
    pub window: Option<usize>,
    /// Bytes per batch.
    pub batch: Option<u64>,
}

/// The keys each program accepts (and `on`, the machines a table was measured on, which every
/// program takes).
fn keys_of(p: Program) -> &'static [&'static str] {
    match p {
        Program::Get | Program::Put => &["peer", "chunk", "on"],
        Program::GetAsync => &["peer", "queues", "on"],
        Program::SdmaCopy => &["queues", "on"],
        Program::HcclSendRecv => &["peer", "on"],
        Program::TransferBatch => &["peer", "dir", "via", "window", "batch", "on"],
        Program::GemmArComm => &["ranks", "on"],
        Program::Collective(Kind::AllReduce | Kind::AllGather | Kind::ReduceScatter | Kind::AllToAll) => {
            &["mode", "path", "core_num", "ranks", "dtype", "warmup", "on"]
        }
        Program::Collective(_) => &["path", "ranks", "dtype", "warmup", "on"],
    }
}

impl WorkloadLine {
    /// A line with only the program set.
    pub fn new(program: Program) -> WorkloadLine {
        WorkloadLine {
            program,
            peer: None,
            chunk: None,
            mode: None,
            path: None,
            core_num: None,
            queues: None,
            ranks: None,
            dtype: None,
            warmup: None,
            transfer: TransferFields::default(),
            on: Vec::new(),
        }
    }

    /// Parses `get peer=1 chunk=64K`, `collective allreduce mode=two-shot ranks=2`, ... A bare
    /// collective name (`allreduce`) is accepted for `collective allreduce`.
    pub fn parse(text: &str) -> Result<WorkloadLine, String> {
        let mut words = text.split_whitespace();
        let first = words.next().ok_or("the workload is empty; write e.g. `get peer=1` or `collective allreduce`")?;
        let program = match first {
            "get" => Program::Get,
            "put" => Program::Put,
            "get_async" => Program::GetAsync,
            "gemm_ar_comm" => Program::GemmArComm,
            "sdma_copy" => Program::SdmaCopy,
            "hccl_sendrecv" => Program::HcclSendRecv,
            "transfer_batch" => Program::TransferBatch,
            "collective" => {
                let name = words.next().ok_or("`collective` needs a name, e.g. `collective allreduce`")?;
                Program::Collective(name.parse()?)
            }
            other => match other.parse::<Kind>() {
                Ok(kind) if !other.contains('=') => Program::Collective(kind),
                _ => {
                    return Err(format!(
                        "unknown workload `{other}`: expected get, put, get_async, sdma_copy, hccl_sendrecv, transfer_batch, gemm_ar_comm or collective NAME"
                    ));
                }
            },
        };
        let mut w = WorkloadLine::new(program);
        for field in words {
            w.set(field)?;
        }
        Ok(w)
    }

    /// Applies one `key=value` field.
    fn set(&mut self, field: &str) -> Result<(), String> {
        let allowed = keys_of(self.program);
        let (key, value) = field
            .split_once('=')
            .ok_or_else(|| format!("`{field}` is not key=value; keys here: {}", allowed.join(", ")))?;
        if !allowed.contains(&key) {
            return Err(format!(
                "unknown key `{key}` for `{}`; keys here: {}",
                self.program_name(),
                allowed.join(", ")
            ));
        }
        let bad = |what: &str| format!("`{field}`: {what}");
        let count = |v: &str| v.parse::<usize>().map_err(|_| bad("expected a whole number"));
        let dup = match key {
            "peer" => self.peer.replace(count(value)?).is_some(),
            "chunk" => {
                let c = ranksim::formats::parse_size(value).map_err(|e| bad(&e))?;
                if c == 0 {
                    return Err(bad("a chunk of 0 bytes moves nothing; use e.g. chunk=64K"));
                }
                self.chunk.replace(c).is_some()
            }
            "mode" => self.mode.replace(value.parse().map_err(|e: String| bad(&e))?).is_some(),
            "path" => self.path.replace(value.parse().map_err(|e: String| bad(&e))?).is_some(),
            "core_num" => self.core_num.replace(count(value)?).is_some(),
            "queues" => self.queues.replace(count(value)?).is_some(),
            "ranks" => self.ranks.replace(count(value)?).is_some(),
            "warmup" => {
                let n = value.parse::<u32>().map_err(|_| bad("expected a whole number of calls"))?;
                self.warmup.replace(n).is_some()
            }
            "dir" => self.transfer.dir.replace(value.parse().map_err(|e: String| bad(&e))?).is_some(),
            "via" => self.transfer.via.replace(value.parse().map_err(|e: String| bad(&e))?).is_some(),
            "window" => match count(value)? {
                0 => return Err(bad("a window of 0 blocks moves nothing; use 1 or more")),
                n => self.transfer.window.replace(n).is_some(),
            },
            "batch" => {
                let b = ranksim::formats::parse_size(value).map_err(|e| bad(&e))?;
                self.transfer.batch.replace(b).is_some()
            }
            "on" => {
                let dup = !self.on.is_empty();
                self.on = value.split(',').map(str::to_string).collect();
                dup
            }
            _ => self.dtype.replace(value.parse().map_err(|e: String| bad(&e))?).is_some(),
        };
        if dup {
            return Err(format!("`{key}` is given twice; keep one"));
        }
        Ok(())
    }

    fn program_name(&self) -> String {
        match self.program {
            Program::Get => "get".into(),
            Program::Put => "put".into(),
            Program::GetAsync => "get_async".into(),
            Program::GemmArComm => "gemm_ar_comm".into(),
            Program::SdmaCopy => "sdma_copy".into(),
            Program::HcclSendRecv => "hccl_sendrecv".into(),
            Program::TransferBatch => "transfer_batch".into(),
            Program::Collective(k) => format!("collective {k}"),
        }
    }
}

impl fmt::Display for WorkloadLine {
    /// The canonical text: the program, then the fields that were given, in a fixed order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.program_name())?;
        let t = &self.transfer;
        let size = |v: Option<u64>| v.map(ranksim::formats::size_label);
        let fields = [
            ("peer", shown(self.peer)),
            ("chunk", size(self.chunk)),
            ("mode", shown(self.mode)),
            ("path", shown(self.path)),
            ("core_num", shown(self.core_num)),
            ("queues", shown(self.queues)),
            ("ranks", shown(self.ranks)),
            ("dtype", self.dtype.map(|v| v.name().to_string())),
            ("warmup", shown(self.warmup)),
            ("dir", shown(t.dir)),
            ("via", shown(t.via)),
            ("window", shown(t.window)),
            ("batch", size(t.batch)),
            ("on", (!self.on.is_empty()).then(|| self.on.join(","))),
        ];
        for (key, value) in fields {
            if let Some(v) = value {
                write!(f, " {key}={v}")?;
            }
        }
        Ok(())
    }
}

/// A given field's value as its text.
fn shown(v: Option<impl fmt::Display>) -> Option<String> {
    v.map(|v| v.to_string())
}

/// One measured row.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Row {
    /// 1-based line in the file.
    pub line: usize,
    /// Message size in bytes.
    pub size: u64,
    /// The measured value, in the table's unit.
    pub value: f64,
}

/// A parsed table.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// The file stem or the name it was given.
    pub name: String,
    /// The `# source:` lines, in order.
    pub source: Vec<String>,
    /// The `# workload:` line, if any.
    pub workload: Option<WorkloadLine>,
    /// What the value column holds.
    pub unit: Unit,
    /// The rows, sizes increasing.
    pub rows: Vec<Row>,
    /// `# unsized: LO..HI`: the source gives no size; the rows' sizes are assumed, and the
    /// measurement may come from any size in `LO..=HI` bytes.
    pub size_unknown: Option<(u64, u64)>,
    /// `# uncertainty: N%`: how far each value may be off by how it was obtained (read off a
    /// plot, say); `validate` widens its tolerance by it for this table.
    pub uncertainty_pct: f64,
}

impl Table {
    /// The workload line, or an error saying to add one.
    pub fn require_workload(&self) -> Result<&WorkloadLine, String> {
        self.workload.as_ref().ok_or_else(|| {
            format!("{}: no `# workload:` line; add one naming the program that reproduces it, e.g. `# workload: get peer=1`", self.name)
        })
    }
}

/// The recognised headers.
fn header_unit(cols: &[&str]) -> Option<Unit> {
    match cols {
        ["size", "time_us"] => Some(Unit::TimeUs),
        ["size", "busbw_gbps"] => Some(Unit::BusbwGbps),
        _ => None,
    }
}

/// Parses a table; errors read `NAME line N: ...`.
pub fn parse(name: &str, text: &str) -> Result<Table, String> {
    let mut t = Table {
        name: name.to_string(),
        source: Vec::new(),
        workload: None,
        unit: Unit::TimeUs,
        rows: Vec::new(),
        size_unknown: None,
        uncertainty_pct: 0.0,
    };
    let mut seen_header = false;
    for (i, raw) in text.lines().enumerate() {
        let at = |msg: String| format!("{name} line {}: {msg}", i + 1);
        let trimmed = raw.trim();
        if let Some(comment) = trimmed.strip_prefix('#') {
            comment_line(&mut t, comment.trim()).map_err(at)?;
            continue;
        }
        let line = trimmed.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split([',', ';', '\t']).map(str::trim).collect();
        let first_row = t.rows.is_empty() && !seen_header;
        // Only a line that starts with a word can be the header: a bad first data row (`-4K,1`,
        // `.5K,1`) is reported as the bad row it is.
        if first_row && cols[0].starts_with(|c: char| c.is_ascii_alphabetic()) {
            t.unit = header_unit(&cols).ok_or_else(|| {
                at(format!("`{line}` is not a recognised header; write `size,time_us` or `size,busbw_gbps`"))
            })?;
            seen_header = true;
            continue;
        }
        let row = data_row(&cols, line, t.unit).map_err(at)?;
        if let Some(prev) = t.rows.last()
            && row.0 <= prev.size
        {
            return Err(at(format!(
                "size {} does not exceed the previous row's {}; list sizes in increasing order, one row per size",
                row.0, prev.size
            )));
        }
        t.rows.push(Row { line: i + 1, size: row.0, value: row.1 });
    }
    if t.rows.is_empty() {
        return Err(format!("{name}: no data rows; add `size,{}` lines", t.unit.column()));
    }
    Ok(t)
}

/// Records a `# source:` or `# workload:` comment; other comments are free text.
fn comment_line(t: &mut Table, comment: &str) -> Result<(), String> {
    if let Some(s) = comment.strip_prefix("source:") {
        t.source.push(s.trim().to_string());
    } else if let Some(w) = comment.strip_prefix("workload:") {
        if t.workload.is_some() {
            return Err("a second `# workload:` line; a table has one workload".into());
        }
        t.workload = Some(WorkloadLine::parse(w.trim()).map_err(|e| format!("`# workload: {}`: {e}", w.trim()))?);
    } else if let Some(range) = comment.strip_prefix("unsized:") {
        let bad = || format!("`# unsized: {}`: write the plausible sizes as LO..HI, e.g. `1M..1G`", range.trim());
        let (lo, hi) = range.trim().split_once("..").ok_or_else(bad)?;
        let (lo, hi) = (ranksim::formats::parse_size(lo.trim())?, ranksim::formats::parse_size(hi.trim())?);
        if lo == 0 || lo > hi || hi > ranksim::measure::MAX_SIZE_TIMING {
            return Err(bad());
        }
        t.size_unknown = Some((lo, hi));
    } else if let Some(u) = comment.strip_prefix("uncertainty:") {
        let bad = || format!("`# uncertainty: {}`: write a percentage from 0 to 100, e.g. `3%`", u.trim());
        let pct: f64 = u.trim().strip_suffix('%').ok_or_else(bad)?.trim().parse().map_err(|_| bad())?;
        if !(0.0..=100.0).contains(&pct) {
            return Err(bad());
        }
        t.uncertainty_pct = pct;
    }
    Ok(())
}

/// One `size,value` row.
fn data_row(cols: &[&str], line: &str, unit: Unit) -> Result<(u64, f64), String> {
    if cols.len() != 2 {
        return Err(format!(
            "`{line}` has {} column(s); a row is `size,{}` (two columns, no more)",
            cols.len(),
            unit.column()
        ));
    }
    let size = ranksim::formats::parse_size(cols[0])?;
    if size == 0 {
        return Err("size 0 moves no bytes; remove the row or give a positive size".into());
    }
    let max = ranksim::measure::MAX_SIZE_TIMING;
    if size > max {
        return Err(format!("size {size} is more than the simulator times ({max} bytes, 16G)"));
    }
    let value: f64 = cols[1].parse().map_err(|_| format!("`{}` is not a number ({})", cols[1], unit.column()))?;
    if !(value > 0.0 && value.is_finite()) {
        return Err(format!("{} {value} must be a positive number", unit.column()));
    }
    Ok((size, value))
}

/// The shipped table called `name`, parsed.
pub fn shipped(name: &str) -> Result<Table, String> {
    let (n, text) = SHIPPED.iter().find(|(n, _)| *n == name).ok_or_else(|| {
        let names: Vec<&str> = SHIPPED.iter().map(|s| s.0).collect();
        format!("no shipped table `{name}`; the tables are {} (or pass a CSV file)", names.join(", "))
    })?;
    parse(n, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_uncertainty_line_gives_the_percentage_and_refuses_anything_else() {
        let t = parse("t", "# uncertainty: 3%\nsize,time_us\n1K,55\n").unwrap();
        assert_eq!(t.uncertainty_pct, 3.0);
        assert_eq!(parse("t", "size,time_us\n1K,55\n").unwrap().uncertainty_pct, 0.0);
        for bad in ["# uncertainty: 3", "# uncertainty: -1%", "# uncertainty: 101%", "# uncertainty: x%"] {
            let e = parse("t", &format!("{bad}\nsize,time_us\n1K,55\n")).unwrap_err();
            assert!(e.contains("write a percentage from 0 to 100"), "{bad}: {e}");
        }
    }

    #[test]
    fn an_unsized_line_gives_the_plausible_sizes() {
        let t = parse("t", "# unsized: 1M..1G\nsize,busbw_gbps\n16M,45\n").unwrap();
        assert_eq!(t.size_unknown, Some((1 << 20, 1 << 30)));
        for bad in ["# unsized: 1G..1M", "# unsized: 16M", "# unsized: 0..1M"] {
            let e = parse("t", &format!("{bad}\n16M,4\n")).unwrap_err();
            assert!(e.starts_with("t line 1: ") && e.contains("LO..HI"), "{e}");
        }
    }

    #[test]
    fn every_shipped_table_parses_with_a_source_and_a_workload() {
        for (name, _) in SHIPPED {
            let t = shipped(name).unwrap();
            assert!(!t.source.is_empty(), "{name}");
            let w = t.require_workload().unwrap();
            assert_eq!(WorkloadLine::parse(&w.to_string()).as_ref(), Ok(w), "{name}: canonical text round-trips");
        }
    }

    #[test]
    fn every_file_in_configs_measurements_is_shipped_and_nothing_else() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/measurements");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok()?.path().file_stem().map(|s| s.to_string_lossy().into_owned()))
            .collect();
        files.sort();
        let mut shipped: Vec<String> = SHIPPED.iter().map(|s| s.0.to_string()).collect();
        shipped.sort();
        assert_eq!(files, shipped);
    }

    #[test]
    fn tables_parse_headers_comments_suffixes_and_units() {
        let t =
            parse("x", "# source: here\n# workload: put chunk=4K\nsize,busbw_gbps\n4K, 0.9\n64K,2.5 # note\n1M;40\n")
                .unwrap();
        assert_eq!(t.unit, Unit::BusbwGbps);
        assert_eq!(t.source, vec!["here".to_string()]);
        assert_eq!(t.workload.unwrap().chunk, Some(4096));
        let sizes: Vec<(usize, u64)> = t.rows.iter().map(|r| (r.line, r.size)).collect();
        assert_eq!(sizes, vec![(4, 4096), (5, 65536), (6, 1 << 20)]);
        let t = parse("x", "4K,1\n8K,2\n").unwrap();
        assert_eq!((t.unit, t.rows.len(), t.workload), (Unit::TimeUs, 2, None));
    }

    #[test]
    fn bad_tables_name_the_line_and_the_fix() {
        let err = |text: &str| parse("t", text).unwrap_err();
        assert!(err("siz,time\n4K,1\n").starts_with("t line 1: `siz,time` is not a recognised header"));
        assert!(err("size,time_us\n4K,1,3\n").contains("line 2: `4K,1,3` has 3 column(s)"));
        assert!(err("size,time_us\n0,1\n").contains("line 2: size 0 moves no bytes"));
        assert!(err("4K,1\n8K,-2\n").contains("line 2: time_us -2 must be a positive number"));
        assert!(err("4K,1\n8Q,2\n").contains("line 2: invalid size `8Q`"));
        assert!(err("8K,1\n4K,2\n").contains("line 2: size 4096 does not exceed the previous row's 8192"));
        assert!(err("# only comments\n").contains("t: no data rows"));
        // A bad first row is a bad row, not an unrecognised header (issue 13).
        assert!(err("-4K,1\n8K,2\n").contains("line 1: invalid size `-4K`"), "{}", err("-4K,1\n8K,2\n"));
        assert!(err(".5K,1\n8K,2\n").contains("line 1: invalid size `.5K`"));
        assert!(err("4K,1\n32G,2\n").contains("line 2: size 34359738368 is more than the simulator times"));
        assert!(err("# workload: get\n# workload: put\n4K,1\n").contains("line 2: a second `# workload:` line"));
    }

    #[test]
    fn workload_lines_are_parsed_strictly() {
        let w = WorkloadLine::parse("collective allreduce mode=two-shot core_num=48 ranks=2").unwrap();
        assert_eq!(w.program, Program::Collective(Kind::AllReduce));
        assert_eq!((w.mode, w.core_num, w.ranks), (Some(Mode::TwoShot), Some(48), Some(2)));
        assert_eq!(w.to_string(), "collective allreduce mode=two-shot core_num=48 ranks=2");
        assert_eq!(WorkloadLine::parse("allgather").unwrap().program, Program::Collective(Kind::AllGather));
        let err = |s: &str| WorkloadLine::parse(s).unwrap_err();
        assert!(err("").contains("empty"));
        assert!(err("fetch").contains("unknown workload `fetch`"));
        assert!(err("get size=4").contains("unknown key `size` for `get`; keys here: peer, chunk"));
        assert!(err("collective broadcast mode=ring").contains("keys here: path, ranks, dtype, warmup"));
        assert!(err("get peer").contains("`peer` is not key=value"));
        assert!(err("get peer=x").contains("`peer=x`: expected a whole number"));
        assert!(err("get peer=1 peer=2").contains("`peer` is given twice"));
        assert!(err("get chunk=0").contains("chunk of 0 bytes"));
        assert!(err("collective allreduce mode=fast").contains("unknown mode `fast`"));
        assert!(err("collective").contains("needs a name"));
        let e = parse("t", "# workload: get peer=one\n4K,1\n").unwrap_err();
        assert!(e.starts_with("t line 1: `# workload: get peer=one`: `peer=one`: expected a whole number"), "{e}");
    }
}
