//! The validated chip model: configured floats are converted once to integer picoseconds and
//! bytes per second.

use crate::config::{ChipConfig, CubeConfig, DmaPathConfig, ElemsPerCycle, SdmaConfig, VectorOpCost, VectorOpsConfig};
use crate::limits::{CLOCK_GHZ, MAX_BUFFER_BYTES, MAX_CORES, MAX_COST_NS, MAX_QUEUE_DEPTH};
use sim_core::{
    Bandwidth, DType, Frequency, SimDuration,
    model::{ChipCosts, ChipTiming, CubeParams, DmaCost, DmaDir, SdmaParams, VecOp},
};
use thiserror::Error;

/// A `[chip]` value that cannot describe a chip.
#[derive(Debug, Error, Clone, PartialEq)]
#[error("chip.{key} = {value}: {why}")]
pub struct ChipConfigError {
    /// Dotted key inside `[chip]`.
    pub key: String,
    /// The offending value as written.
    pub value: String,
    /// What is wrong and what is allowed.
    pub why: String,
}

/// `hccl_buffsize_mb` in bytes: 1 MiB to 1 TiB.
fn buffer_bytes(mb: u64) -> Result<u64, ChipConfigError> {
    if (1..=1 << 20).contains(&mb) {
        Ok(mb << 20)
    } else {
        Err(err("hccl_buffsize_mb", mb, "give HCCL's buffer in MiB, from 1 to 1048576 (HCCL's default is 200)"))
    }
}

fn err(key: &str, value: impl ToString, why: &str) -> ChipConfigError {
    ChipConfigError { key: key.to_string(), value: value.to_string(), why: why.to_string() }
}

#[derive(Clone, Debug)]
struct DmaPath {
    rate: Option<Bandwidth>,
    issue: SimDuration,
}

/// A chip's timing, ready for the scheduler.
#[derive(Clone, Debug)]
pub struct ChipModel {
    name: String,
    aiv_cores: usize,
    ub_bytes: usize,
    clock: Frequency,
    hbm: Option<Bandwidth>,
    gm_to_ub: DmaPath,
    ub_to_gm: DmaPath,
    vector_fixed: u64,
    lanes: ElemsPerCycle,
    /// The configured cost of each operation of `[chip.vector.ops]` given there.
    op_costs: Vec<(VecOp, OpCost)>,
    costs: ChipCosts,
    scalar_gm: SimDuration,
    hccl_buffer_bytes: u64,
    bf16_atomic_add: bool,
    sdma: Option<SdmaParams>,
    cube: Option<CubeParams>,
}

impl ChipModel {
    /// Validates a config and converts it to integer time.
    pub fn from_config(c: &ChipConfig) -> Result<ChipModel, ChipConfigError> {
        if c.aiv_cores == 0 || c.aiv_cores > MAX_CORES {
            return Err(err("aiv_cores", c.aiv_cores, &format!("must be in 1..={MAX_CORES}")));
        }
        if c.aic_cores > MAX_CORES {
            return Err(err("aic_cores", c.aic_cores, &format!("must be in 0..={MAX_CORES}")));
        }
        if c.ub_bytes == 0 {
            return Err(err("ub_bytes", c.ub_bytes, "the unified buffer must hold at least one byte"));
        }
        for (key, v) in [("ub_bytes", c.ub_bytes), ("l1_bytes", c.l1_bytes)] {
            if v > MAX_BUFFER_BYTES {
                return Err(err(key, v, &format!("must be at most {MAX_BUFFER_BYTES} (1 GiB)")));
            }
        }
        let (lo, hi) = CLOCK_GHZ;
        if !(c.clock_ghz.is_finite() && (lo..=hi).contains(&c.clock_ghz)) {
            return Err(err("clock_ghz", c.clock_ghz, &format!("must be a number of GHz from {lo} to {hi}")));
        }
        let clock = Frequency::from_ghz_f64(c.clock_ghz)
            .ok_or_else(|| err("clock_ghz", c.clock_ghz, "must be a positive number of GHz"))?;
        let l = &c.vector.elems_per_cycle;
        for (dt, v) in [("f32", l.f32), ("f16", l.f16), ("bf16", l.bf16), ("i32", l.i32), ("i16", l.i16), ("i8", l.i8)]
        {
            if v == 0 {
                return Err(err(&format!("vector.elems_per_cycle.{dt}"), v, "must be positive"));
            }
        }
        cycles("vector.fixed_cycles", c.vector.fixed_cycles, c.clock_ghz)?;
        let op_costs = vector_ops(&c.vector.ops, c.clock_ghz)?;
        if !(c.hbm_efficiency > 0.0 && c.hbm_efficiency <= 1.0) {
            return Err(err("hbm_efficiency", c.hbm_efficiency, "must be in (0, 1]"));
        }
        rate("hbm_gbps", c.hbm_gbps)?;
        let hbm = rate("hbm_gbps", c.hbm_gbps * c.hbm_efficiency).map_err(|_| {
            err(
                "hbm_efficiency",
                c.hbm_efficiency,
                &format!(
                    "hbm_gbps x hbm_efficiency = {} GB/s is below 1 byte per second; raise hbm_efficiency (in (0, 1])",
                    c.hbm_gbps * c.hbm_efficiency
                ),
            )
        })?;
        Ok(ChipModel {
            name: c.name.clone(),
            aiv_cores: c.aiv_cores,
            ub_bytes: c.ub_bytes,
            clock,
            hbm,
            gm_to_ub: dma_path("dma.gm_to_ub", &c.dma.gm_to_ub)?,
            ub_to_gm: dma_path("dma.ub_to_gm", &c.dma.ub_to_gm)?,
            vector_fixed: c.vector.fixed_cycles,
            lanes: c.vector.elems_per_cycle.clone(),
            op_costs,
            costs: ChipCosts::from_keys(|key| ns(key, c.cost_ns(key).unwrap_or_default()))?,
            scalar_gm: ns("scalar_gm_ns", c.scalar_gm_ns.unwrap_or(c.wait_poll_ns))?,
            hccl_buffer_bytes: buffer_bytes(c.hccl_buffsize_mb)?,
            bf16_atomic_add: c.bf16_atomic_add,
            sdma: c.sdma.as_ref().map(sdma).transpose()?,
            cube: c.cube.as_ref().map(|cube_cfg| cube(c, cube_cfg)).transpose()?,
        })
    }

    /// The chip's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Vector lanes (elements per cycle) of `dtype`.
    fn lanes_of(&self, dtype: DType) -> u64 {
        match dtype {
            DType::F32 => self.lanes.f32,
            DType::F16 => self.lanes.f16,
            DType::BF16 => self.lanes.bf16,
            DType::I32 => self.lanes.i32,
            DType::I16 => self.lanes.i16,
            DType::I8 => self.lanes.i8,
        }
    }
}

fn ns(key: &str, v: f64) -> Result<SimDuration, ChipConfigError> {
    if !(v.is_finite() && (0.0..=MAX_COST_NS).contains(&v)) {
        return Err(err(key, v, "must be a number of nanoseconds from 0 to 1e9 (1 s)"));
    }
    Ok(SimDuration::from_ns_f64(v))
}

/// A cycle count that costs at most one second at `clock_ghz` (see [`crate::limits`]).
fn cycles(key: &str, v: u64, clock_ghz: f64) -> Result<u64, ChipConfigError> {
    let max = clock_ghz * MAX_COST_NS;
    if v as f64 > max {
        return Err(err(key, v, &format!("must be at most {max} cycles (1 s at clock_ghz = {clock_ghz})")));
    }
    Ok(v)
}

/// A GB/s figure: positive, or `inf` for unlimited (`None`).
fn rate(key: &str, gbps: f64) -> Result<Option<Bandwidth>, ChipConfigError> {
    if gbps == f64::INFINITY {
        return Ok(None);
    }
    Bandwidth::from_gbps_f64(gbps).map(Some).ok_or_else(|| err(key, gbps, "must be a positive rate in GB/s, or inf"))
}

/// One vector operation's configured cost (see `VectorOpCost`).
#[derive(Clone, Copy, Debug)]
struct OpCost {
    fixed: u64,
    per_repeat: u64,
    lanes: Option<u64>,
    per_row: u64,
}

/// The `[chip.vector.ops]` entries, each validated under its key.
fn vector_ops(o: &VectorOpsConfig, clock_ghz: f64) -> Result<Vec<(VecOp, OpCost)>, ChipConfigError> {
    let entries = [
        (VecOp::Exp, &o.exp),
        (VecOp::Log, &o.log),
        (VecOp::Sqrt, &o.sqrt),
        (VecOp::Rsqrt, &o.rsqrt),
        (VecOp::Recip, &o.recip),
        (VecOp::Abs, &o.abs),
        (VecOp::Relu, &o.relu),
        (VecOp::Div, &o.div),
        (VecOp::Divs, &o.divs),
        (VecOp::Cmp, &o.cmp),
        (VecOp::Cmps, &o.cmps),
        (VecOp::Select, &o.select),
        (VecOp::Full, &o.full),
        (VecOp::RowExpand, &o.row_expand),
        (VecOp::ColExpand, &o.col_expand),
    ];
    let mut out = Vec::new();
    for (op, cost) in entries {
        let Some(VectorOpCost { fixed_cycles, cycles_per_repeat, elems_per_cycle, cycles_per_row }) = cost else {
            continue;
        };
        let key = |k: &str| format!("vector.ops.{}.{k}", op.name());
        cycles(&key("fixed_cycles"), *fixed_cycles, clock_ghz)?;
        cycles(&key("cycles_per_repeat"), *cycles_per_repeat, clock_ghz)?;
        cycles(&key("cycles_per_row"), *cycles_per_row, clock_ghz)?;
        if *elems_per_cycle == Some(0) {
            return Err(err(&key("elems_per_cycle"), 0, "must be positive (or left out: the dtype's lanes)"));
        }
        let c = OpCost {
            fixed: *fixed_cycles,
            per_repeat: *cycles_per_repeat,
            lanes: *elems_per_cycle,
            per_row: *cycles_per_row,
        };
        out.push((op, c));
    }
    Ok(out)
}

fn sdma(c: &SdmaConfig) -> Result<SdmaParams, ChipConfigError> {
    if c.channels == 0 || c.channels > 1024 {
        return Err(err("sdma.channels", c.channels, "must be in 1..=1024 (or leave out [chip.sdma] for no SDMA)"));
    }
    if c.queue_depth == 0 || c.queue_depth > MAX_QUEUE_DEPTH {
        return Err(err(
            "sdma.queue_depth",
            c.queue_depth,
            &format!("a channel holds 1..={MAX_QUEUE_DEPTH} descriptors"),
        ));
    }
    if c.max_descriptor_bytes == 0 {
        return Err(err(
            "sdma.max_descriptor_bytes",
            c.max_descriptor_bytes,
            "a descriptor must move at least one byte",
        ));
    }
    Ok(SdmaParams {
        channels: c.channels,
        rate: rate("sdma.channel_gbps", c.channel_gbps)?,
        issue: ns("sdma.issue_ns", c.issue_ns)?,
        descriptor: ns("sdma.descriptor_ns", c.descriptor_ns)?,
        max_descriptor_bytes: c.max_descriptor_bytes,
        queue_depth: c.queue_depth,
        poll: ns("sdma.poll_ns", c.poll_ns)?,
        cold_start: ns("sdma.cold_start_ns", c.cold_start_ns)?,
    })
}

fn cube(c: &ChipConfig, k: &CubeConfig) -> Result<CubeParams, ChipConfigError> {
    if c.aic_cores == 0 {
        return Err(err(
            "aic_cores",
            c.aic_cores,
            "[chip.cube] needs at least one AIC core (or leave out [chip.cube])",
        ));
    }
    for (key, v) in [
        ("l1_bytes", c.l1_bytes),
        ("cube.l0a_bytes", k.l0a_bytes),
        ("cube.l0b_bytes", k.l0b_bytes),
        ("cube.l0c_bytes", k.l0c_bytes),
    ] {
        if v == 0 || v > MAX_BUFFER_BYTES {
            return Err(err(key, v, &format!("a cube core's buffer holds 1..={MAX_BUFFER_BYTES} bytes")));
        }
    }
    cycles("cube.fixed_cycles", k.fixed_cycles, c.clock_ghz)?;
    for (key, v) in [
        ("cube.l1_to_l0a_bytes_per_cycle", k.l1_to_l0a_bytes_per_cycle),
        ("cube.l1_to_l0b_bytes_per_cycle", k.l1_to_l0b_bytes_per_cycle),
    ] {
        if v == 0 {
            return Err(err(key, v, "must be positive"));
        }
    }
    let f = &k.fractal;
    let mut fractal = Vec::new();
    for (name, dtype, v) in
        [("f16", DType::F16, f.f16), ("bf16", DType::BF16, f.bf16), ("f32", DType::F32, f.f32), ("i8", DType::I8, f.i8)]
    {
        if let Some(b) = v {
            if b.contains(&0) {
                return Err(err(
                    &format!("cube.fractal.{name}"),
                    format!("{b:?}"),
                    "every block dimension must be positive",
                ));
            }
            fractal.push((dtype, b));
        }
    }
    if fractal.is_empty() {
        return Err(err("cube.fractal", "{}", "give the MAC block of at least one input dtype (f16, bf16, f32, i8)"));
    }
    let cost = |key: &str, p: &DmaPathConfig| dma_path(key, p).map(|d| DmaCost { issue: d.issue, rate: d.rate });
    Ok(CubeParams {
        cores: c.aic_cores,
        l1_bytes: c.l1_bytes,
        l0a_bytes: k.l0a_bytes,
        l0b_bytes: k.l0b_bytes,
        l0c_bytes: k.l0c_bytes,
        fixed_cycles: k.fixed_cycles,
        fractal,
        l1_to_l0a: k.l1_to_l0a_bytes_per_cycle,
        l1_to_l0b: k.l1_to_l0b_bytes_per_cycle,
        gm_to_l1: cost("cube.gm_to_l1", &k.gm_to_l1)?,
        l0c_to_gm: cost("cube.l0c_to_gm", &k.l0c_to_gm)?,
    })
}

fn dma_path(key: &str, p: &DmaPathConfig) -> Result<DmaPath, ChipConfigError> {
    match *p {
        DmaPathConfig::Flat { gbps, issue_ns } => {
            Ok(DmaPath { rate: rate(&format!("{key}.gbps"), gbps)?, issue: ns(&format!("{key}.issue_ns"), issue_ns)? })
        }
        DmaPathConfig::Hill { peak_gbps, half_bytes } => {
            let r = rate(&format!("{key}.peak_gbps"), peak_gbps)?
                .ok_or_else(|| err(&format!("{key}.peak_gbps"), peak_gbps, "a Hill curve needs a finite peak"))?;
            let max = peak_gbps * MAX_COST_NS;
            if !(half_bytes.is_finite() && (0.0..=max).contains(&half_bytes)) {
                return Err(err(
                    &format!("{key}.half_bytes"),
                    half_bytes,
                    &format!("must be a byte count from 0 to peak_gbps x 1e9 = {max} (an issue cost of at most 1 s)"),
                ));
            }
            // time(B) = K / peak + B / peak: the issue cost is K bytes at the peak rate.
            let issue = SimDuration::from_ns_f64(half_bytes / (peak_gbps * 1e9) * 1e9);
            Ok(DmaPath { rate: Some(r), issue })
        }
    }
}

impl ChipTiming for ChipModel {
    fn aiv_cores(&self) -> usize {
        self.aiv_cores
    }

    fn ub_bytes(&self) -> usize {
        self.ub_bytes
    }

    fn clock(&self) -> Frequency {
        self.clock
    }

    fn dma_issue(&self, dir: DmaDir) -> SimDuration {
        match dir {
            DmaDir::GmToUb => self.gm_to_ub.issue,
            DmaDir::UbToGm => self.ub_to_gm.issue,
        }
    }

    fn dma_rate(&self, dir: DmaDir) -> Option<Bandwidth> {
        match dir {
            DmaDir::GmToUb => self.gm_to_ub.rate,
            DmaDir::UbToGm => self.ub_to_gm.rate,
        }
    }

    fn hbm_rate(&self) -> Option<Bandwidth> {
        self.hbm
    }

    fn atomic_add_supported(&self, dtype: DType) -> bool {
        dtype != DType::BF16 || self.bf16_atomic_add
    }

    fn vector_op(&self, dtype: DType, elems: u64) -> SimDuration {
        self.clock.cycles(self.vector_fixed + elems.div_ceil(self.lanes_of(dtype)))
    }

    fn vector_op_of(&self, op: VecOp, dtype: DType, elems: u64, rows: u64) -> SimDuration {
        let Some((_, c)) = self.op_costs.iter().find(|(o, _)| *o == op) else {
            return self.vector_op(dtype, elems);
        };
        let repeats = elems.div_ceil(c.lanes.unwrap_or_else(|| self.lanes_of(dtype)));
        let cycles =
            c.fixed.saturating_add(c.per_repeat.saturating_mul(repeats)).saturating_add(c.per_row.saturating_mul(rows));
        self.clock.cycles(cycles)
    }

    fn costs(&self) -> &ChipCosts {
        &self.costs
    }

    fn scalar_gm_access(&self) -> SimDuration {
        self.scalar_gm
    }

    fn hccl_buffer_bytes(&self) -> u64 {
        self.hccl_buffer_bytes
    }

    fn sdma(&self) -> Option<&SdmaParams> {
        self.sdma.as_ref()
    }

    fn cube(&self) -> Option<&CubeParams> {
        self.cube.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{DmaConfig, VectorConfig};

    fn config() -> ChipConfig {
        ChipConfig {
            name: "t".into(),
            aiv_cores: 4,
            aic_cores: 2,
            clock_ghz: 1.0,
            ub_bytes: 1024,
            l1_bytes: 0,
            hbm_gbps: 1000.0,
            hbm_efficiency: 0.5,
            bf16_atomic_add: false,
            notify_issue_ns: 10.0,
            wait_poll_ns: 20.0,
            scalar_gm_ns: None,
            dcci_ns: 0.0,
            hccl_aiv_launch_ns: 0.0,
            hccl_buffsize_mb: crate::config::DEFAULT_HCCL_BUFFSIZE_MB,
            dispatch_launch_ns: 0.0,
            task_start_ns: 0.0,
            dma: DmaConfig {
                gm_to_ub: DmaPathConfig::Flat { gbps: 100.0, issue_ns: 5.0 },
                ub_to_gm: DmaPathConfig::Hill { peak_gbps: 50.0, half_bytes: 500.0 },
            },
            vector: VectorConfig {
                fixed_cycles: 10,
                elems_per_cycle: ElemsPerCycle { f32: 64, f16: 128, bf16: 128, i32: 64, i16: 128, i8: 256 },
                ops: VectorOpsConfig::default(),
            },
            sdma: None,
            cube: None,
        }
    }

    fn cube_config() -> CubeConfig {
        CubeConfig {
            l0a_bytes: 65536,
            l0b_bytes: 65536,
            l0c_bytes: 131072,
            fixed_cycles: 20,
            l1_to_l0a_bytes_per_cycle: 256,
            l1_to_l0b_bytes_per_cycle: 128,
            fractal: crate::config::FractalConfig {
                f16: Some([16, 16, 16]),
                bf16: Some([16, 16, 16]),
                f32: Some([16, 8, 16]),
                i8: None,
            },
            gm_to_l1: DmaPathConfig::Flat { gbps: 200.0, issue_ns: 10.0 },
            l0c_to_gm: DmaPathConfig::Hill { peak_gbps: 50.0, half_bytes: 500.0 },
        }
    }

    #[test]
    fn cube_is_optional_and_validated_by_key() {
        assert_eq!(ChipModel::from_config(&config()).unwrap().cube(), None);
        let mut c = config();
        c.l1_bytes = 1 << 19;
        c.cube = Some(cube_config());
        let m = ChipModel::from_config(&c).unwrap();
        let k = m.cube().unwrap();
        assert_eq!((k.cores, k.l1_bytes, k.l0c_bytes), (2, 1 << 19, 131072));
        // 100 x 40 by 40 x 33 f16: ceil(100/16) ceil(40/16) ceil(33/16) = 7 * 3 * 3 = 63, + 20.
        assert_eq!(k.matmul_cycles(DType::F16, 100, 40, 33), Some(83));
        // f32 takes k0 = 8: 7 * 5 * 3 = 105, + 20.
        assert_eq!(k.matmul_cycles(DType::F32, 100, 40, 33), Some(125));
        assert_eq!(k.matmul_cycles(DType::I8, 16, 16, 16), None);
        assert_eq!(k.gm_to_l1.time(2000), SimDuration::from_ns(20));
        assert_eq!(k.l0c_to_gm.time(1000), SimDuration::from_ns(30));
        let bad = |f: fn(&mut ChipConfig)| {
            let mut c = config();
            c.l1_bytes = 1 << 19;
            c.cube = Some(cube_config());
            f(&mut c);
            ChipModel::from_config(&c).unwrap_err().to_string()
        };
        assert!(bad(|c| c.aic_cores = 0).starts_with("chip.aic_cores = 0"));
        assert!(bad(|c| c.l1_bytes = 0).starts_with("chip.l1_bytes = 0"));
        assert!(bad(|c| c.cube.as_mut().unwrap().l0c_bytes = 0).starts_with("chip.cube.l0c_bytes = 0"));
        assert!(bad(|c| c.cube.as_mut().unwrap().fractal.f16 = Some([16, 0, 16])).starts_with("chip.cube.fractal.f16"));
        assert!(bad(|c| c.cube.as_mut().unwrap().fractal = Default::default()).starts_with("chip.cube.fractal"));
        assert!(bad(|c| c.cube.as_mut().unwrap().l1_to_l0b_bytes_per_cycle = 0).contains("l1_to_l0b"));
        assert!(
            bad(|c| c.cube.as_mut().unwrap().gm_to_l1 = DmaPathConfig::Flat { gbps: 0.0, issue_ns: 0.0 })
                .starts_with("chip.cube.gm_to_l1.gbps")
        );
    }

    fn sdma_config() -> SdmaConfig {
        SdmaConfig {
            channels: 4,
            channel_gbps: 20.0,
            issue_ns: 50.0,
            descriptor_ns: 1000.0,
            max_descriptor_bytes: 1 << 20,
            queue_depth: 8,
            poll_ns: 100.0,
            cold_start_ns: 92_000.0,
        }
    }

    #[test]
    fn sdma_is_optional_and_validated_by_key() {
        assert_eq!(ChipModel::from_config(&config()).unwrap().sdma(), None);
        let mut c = config();
        c.sdma = Some(sdma_config());
        let m = ChipModel::from_config(&c).unwrap();
        let s = m.sdma().unwrap();
        assert_eq!((s.channels, s.queue_depth, s.max_descriptor_bytes), (4, 8, 1 << 20));
        assert_eq!(s.rate, Bandwidth::from_gbps_f64(20.0));
        assert_eq!(s.descriptor, SimDuration::from_ns(1000));
        assert_eq!(s.cold_start, SimDuration::from_ns(92_000));
        let bad = |f: fn(&mut SdmaConfig)| {
            let mut c = config();
            let mut s = sdma_config();
            f(&mut s);
            c.sdma = Some(s);
            ChipModel::from_config(&c).unwrap_err().to_string()
        };
        assert!(bad(|s| s.channels = 0).starts_with("chip.sdma.channels = 0"));
        assert!(bad(|s| s.queue_depth = 0).starts_with("chip.sdma.queue_depth = 0"));
        assert!(bad(|s| s.max_descriptor_bytes = 0).starts_with("chip.sdma.max_descriptor_bytes = 0"));
        assert!(bad(|s| s.channel_gbps = -1.0).starts_with("chip.sdma.channel_gbps = -1"));
        assert!(bad(|s| s.descriptor_ns = f64::NAN).starts_with("chip.sdma.descriptor_ns = NaN"));
        assert!(bad(|s| s.cold_start_ns = -5.0).starts_with("chip.sdma.cold_start_ns = -5"));
        assert!(bad(|s| s.poll_ns = -5.0).starts_with("chip.sdma.poll_ns"));
        assert!(bad(|s| s.issue_ns = -5.0).starts_with("chip.sdma.issue_ns"));
    }

    #[test]
    fn costs_are_integer_picoseconds() {
        let m = ChipModel::from_config(&config()).unwrap();
        // 1000 bytes at 100 GB/s = 10 ns, plus 5 ns issue.
        assert_eq!(m.dma(DmaDir::GmToUb, 1000), SimDuration::from_ns(15));
        // Hill: K/peak = 500 B / 50 GB/s = 10 ns, plus 1000 B / 50 GB/s = 20 ns.
        assert_eq!(m.dma(DmaDir::UbToGm, 1000), SimDuration::from_ns(30));
        // 256 f32 = 4 cycles + 10 fixed; 256 i8 = 1 cycle + 10 at 1 GHz.
        assert_eq!(m.vector_op(DType::F32, 256), SimDuration::from_ns(14));
        assert_eq!(m.vector_op(DType::I8, 256), SimDuration::from_ns(11));
        assert_eq!(m.hbm_rate(), Bandwidth::from_gbps_f64(500.0));
        assert!(!m.atomic_add_supported(DType::BF16));
        assert!(m.atomic_add_supported(DType::I8));
    }

    #[test]
    fn vector_ops_cost_their_formula_and_default_to_the_element_wise_cost() {
        let mut c = config();
        let cost = |fixed_cycles, cycles_per_repeat, elems_per_cycle, cycles_per_row| {
            Some(VectorOpCost { fixed_cycles, cycles_per_repeat, elems_per_cycle, cycles_per_row })
        };
        c.vector.ops.exp = cost(31, 1, Some(32), 0);
        c.vector.ops.div = cost(20, 4, None, 0);
        c.vector.ops.select = cost(25, 2, None, 30);
        let m = ChipModel::from_config(&c).unwrap();
        // 1000 f16 elements at 32 per cycle: 32 repeats + 31 (the dtype's lanes do not matter).
        assert_eq!(m.vector_op_of(VecOp::Exp, DType::F16, 1000, 4), SimDuration::from_ns(63));
        // div: the dtype's lanes, 4 cycles each: f32 256 -> 4 repeats = 16, + 20.
        assert_eq!(m.vector_op_of(VecOp::Div, DType::F32, 256, 1), SimDuration::from_ns(36));
        // select: 8 rows x 64 f32 = 8 repeats x 2 + 8 rows x 30 + 25.
        assert_eq!(m.vector_op_of(VecOp::Select, DType::F32, 512, 8), SimDuration::from_ns(281));
        // Not configured: the element-wise cost (10 + 256 / 64).
        assert_eq!(m.vector_op_of(VecOp::Log, DType::F32, 256, 1), m.vector_op(DType::F32, 256));
        assert_eq!(m.vector_op_of(VecOp::Log, DType::F32, 256, 1), SimDuration::from_ns(14));
        let bad = |f: fn(&mut VectorOpsConfig)| {
            let mut c = config();
            f(&mut c.vector.ops);
            ChipModel::from_config(&c).unwrap_err().to_string()
        };
        let e = bad(|o| {
            o.sqrt = Some(VectorOpCost {
                fixed_cycles: 1,
                cycles_per_repeat: 1,
                elems_per_cycle: Some(0),
                cycles_per_row: 0,
            })
        });
        assert!(e.starts_with("chip.vector.ops.sqrt.elems_per_cycle = 0"), "{e}");
        let e = bad(|o| {
            o.cmp = Some(VectorOpCost {
                fixed_cycles: u64::MAX,
                cycles_per_repeat: 1,
                elems_per_cycle: None,
                cycles_per_row: 0,
            })
        });
        assert!(e.starts_with("chip.vector.ops.cmp.fixed_cycles"), "{e}");
        let e = bad(|o| {
            o.full = Some(VectorOpCost {
                fixed_cycles: 0,
                cycles_per_repeat: 1,
                elems_per_cycle: None,
                cycles_per_row: u64::MAX,
            })
        });
        assert!(e.starts_with("chip.vector.ops.full.cycles_per_row"), "{e}");
    }

    /// Every operation with a cost of its own has its key in `[chip.vector.ops]`, named as the
    /// kernel API names it.
    #[test]
    fn every_vec_op_has_its_config_key() {
        for op in VecOp::ALL {
            let toml = format!("{} = {{ fixed_cycles = 7 }}", op.name());
            let o: VectorOpsConfig = toml::from_str(&toml).unwrap_or_else(|e| panic!("{}: {e}", op.name()));
            let mut c = config();
            c.vector.ops = o;
            let m = ChipModel::from_config(&c).unwrap();
            // 7 + 64 f32 / 64 lanes x 1.
            assert_eq!(m.vector_op_of(op, DType::F32, 64, 1), SimDuration::from_ns(8), "{}", op.name());
        }
        let e = toml::from_str::<VectorOpsConfig>("tanh = { fixed_cycles = 7 }").unwrap_err().to_string();
        assert!(e.contains("tanh"), "{e}");
    }

    #[test]
    fn inf_means_unlimited() {
        let mut c = config();
        c.hbm_gbps = f64::INFINITY;
        c.dma.gm_to_ub = DmaPathConfig::Flat { gbps: f64::INFINITY, issue_ns: 0.0 };
        let m = ChipModel::from_config(&c).unwrap();
        assert_eq!(m.hbm_rate(), None);
        assert_eq!(m.dma(DmaDir::GmToUb, 1 << 20), SimDuration::ZERO);
    }

    #[test]
    fn bad_values_name_their_key() {
        let mut c = config();
        c.dma.ub_to_gm = DmaPathConfig::Flat { gbps: 0.0, issue_ns: 1.0 };
        assert_eq!(ChipModel::from_config(&c).unwrap_err().key, "dma.ub_to_gm.gbps");
        let mut c = config();
        c.aiv_cores = 0;
        assert!(ChipModel::from_config(&c).unwrap_err().to_string().contains("chip.aiv_cores = 0"));
        let mut c = config();
        c.vector.elems_per_cycle.bf16 = 0;
        assert_eq!(ChipModel::from_config(&c).unwrap_err().key, "vector.elems_per_cycle.bf16");
    }
}
