//! The `[chip]` table of a machine config. Units are in the key names; every number in a
//! preset carries its source in a comment there. A rate of `inf` means unlimited.

use serde::{Deserialize, Serialize};

/// Builds [`ChipConfig`] with a field per fixed cost of [`sim_core::for_each_chip_cost`].
macro_rules! chip_config {
    (
        required { $( $(#[doc = $rdoc:literal])* $rname:ident : $rkey:ident, )* }
        optional { $( $(#[doc = $odoc:literal])* $oname:ident : $okey:ident, )* }
    ) => {
        /// One chip's parameters as written in a config. The fixed costs in ns (`notify_issue_ns`,
        /// `dcci_ns`, ...) are declared once, in `sim_core::model::ChipCosts`.
        #[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
        #[serde(deny_unknown_fields)]
        pub struct ChipConfig {
            /// Chip name (`Ascend910B`, ...), for output only.
            pub name: String,
            /// AIV (vector) cores that kernel blocks are placed on.
            pub aiv_cores: usize,
            /// AIC (cube) cores that cube tasks' blocks are placed on (only with `[chip.cube]`).
            pub aic_cores: usize,
            /// AI-core clock in GHz.
            pub clock_ghz: f64,
            /// Usable unified-buffer bytes per AIV core.
            pub ub_bytes: usize,
            /// L1 bytes per AIC core (checked by `load_l1` when the chip has `[chip.cube]`).
            pub l1_bytes: usize,
            /// HBM bandwidth of the chip in GB/s, shared by all its cores (`inf`: unlimited).
            pub hbm_gbps: f64,
            /// Fraction of the HBM rate sustained, (0, 1].
            pub hbm_efficiency: f64,
            /// Whether remote atomic Add supports bf16 destinations.
            pub bf16_atomic_add: bool,
            $(
                $(#[doc = $rdoc])*
                #[doc = ""]
                #[doc = "In ns."]
                pub $rkey: f64,
            )*
            /// Cost of one scalar read or write of a GM element (`pl.read` / `pl.write`), in ns.
            /// Absent: the same as `wait_poll_ns`, which is one scalar GM load too.
            #[serde(default)]
            pub scalar_gm_ns: Option<f64>,
            $(
                $(#[doc = $odoc])*
                #[doc = ""]
                #[doc = "In ns; absent: 0."]
                #[serde(default)]
                pub $okey: f64,
            )*
            /// HCCL's communication buffer (`HCCL_BUFFSIZE`), in MiB: the copy-engine collectives
            /// stage user data through it in chunks of at most this size. Absent: 200, HCCL's default.
            #[serde(default = "default_hccl_buffsize_mb")]
            pub hccl_buffsize_mb: u64,
            /// Per-core DMA engines.
            pub dma: DmaConfig,
            /// The vector unit.
            pub vector: VectorConfig,
            /// SDMA copy engines (`[chip.sdma]`); absent: the chip has none and `put_async` /
            /// `get_async` are errors.
            #[serde(default)]
            pub sdma: Option<SdmaConfig>,
            /// The AIC (cube) cores' buffers and matrix unit (`[chip.cube]`); absent: the chip has no
            /// cube cores and a cube task is an error at dispatch.
            #[serde(default)]
            pub cube: Option<CubeConfig>,
        }

        impl ChipConfig {
            /// The value in ns of the fixed cost whose `[chip]` key is `key`.
            pub fn cost_ns(&self, key: &str) -> Option<f64> {
                match key {
                    $( stringify!($rkey) => Some(self.$rkey), )*
                    $( stringify!($okey) => Some(self.$okey), )*
                    _ => None,
                }
            }
        }
    };
}

sim_core::for_each_chip_cost!(chip_config);

/// The AIC cores' L0 buffers, matrix unit and data paths. Matmul time is
/// `fixed_cycles + ceil(M/m0) * ceil(K/k0) * ceil(N/n0)` cycles with `[m0, k0, n0]` the
/// dtype's entry of `fractal`: one `m0 x k0 x n0` block of MACs per cycle.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CubeConfig {
    /// L0A (left operand) bytes per AIC.
    pub l0a_bytes: usize,
    /// L0B (right operand) bytes per AIC.
    pub l0b_bytes: usize,
    /// L0C (accumulator) bytes per AIC.
    pub l0c_bytes: usize,
    /// Start-up plus drain of one matmul, in cycles.
    pub fixed_cycles: u64,
    /// L1 -> L0A bytes per cycle (TMOV / TEXTRACT).
    pub l1_to_l0a_bytes_per_cycle: u64,
    /// L1 -> L0B bytes per cycle.
    pub l1_to_l0b_bytes_per_cycle: u64,
    /// `[m0, k0, n0]` MAC block per cycle, per input dtype; a dtype left out is not multiplied.
    pub fractal: FractalConfig,
    /// GM -> L1 (the AIC's MTE2).
    pub gm_to_l1: DmaPathConfig,
    /// L0C -> GM (FIXPIPE).
    pub l0c_to_gm: DmaPathConfig,
}

/// The cube's MAC block per cycle, `[m0, k0, n0]`, per input dtype (accumulating in f32, or
/// i32 for i8).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FractalConfig {
    /// `[m0, k0, n0]` for f16 inputs; absent: the cube refuses f16.
    #[serde(default)]
    pub f16: Option<[u64; 3]>,
    /// `[m0, k0, n0]` for bf16 inputs; absent: the cube refuses bf16.
    #[serde(default)]
    pub bf16: Option<[u64; 3]>,
    /// `[m0, k0, n0]` for f32 inputs; absent: the cube refuses f32.
    #[serde(default)]
    pub f32: Option<[u64; 3]>,
    /// `[m0, k0, n0]` for i8 inputs; absent: the cube refuses i8.
    #[serde(default)]
    pub i8: Option<[u64; 3]>,
}

/// The chip's SDMA copy engines: channels that move GM to GM (local or a peer's) without UB.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SdmaConfig {
    /// Channels (channel groups) per chip.
    pub channels: usize,
    /// Sustained rate of one channel in GB/s (`inf`: unlimited).
    pub channel_gbps: f64,
    /// Core-side cost of posting one transfer (descriptors and doorbell), in ns.
    pub issue_ns: f64,
    /// Channel-side cost of each descriptor before its first byte moves, in ns.
    pub descriptor_ns: f64,
    /// Largest descriptor in bytes; a longer transfer is split into several.
    pub max_descriptor_bytes: u64,
    /// Descriptors one channel holds (queued or in progress) at once.
    pub queue_depth: usize,
    /// Cost of one completion poll (`test_async`, `wait_async`), in ns.
    pub poll_ns: f64,
    /// Extra delay of each channel's first descriptor in a run (cold start), in ns.
    pub cold_start_ns: f64,
}

/// The two DMA directions of one core.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DmaConfig {
    /// GM -> UB (TLOAD, MTE2).
    pub gm_to_ub: DmaPathConfig,
    /// UB -> GM (TSTORE, MTE3).
    pub ub_to_gm: DmaPathConfig,
}

/// One DMA direction's cost curve. Read through `RawDmaPath` (every key optional) so that a
/// value of the wrong type is reported at its own key, not at the table.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(try_from = "RawDmaPath", into = "RawDmaPath")]
pub enum DmaPathConfig {
    /// `time(B) = issue_ns + B / gbps`.
    Flat {
        /// Sustained rate in GB/s (`inf`: unlimited).
        gbps: f64,
        /// Fixed cost per transfer, in ns.
        issue_ns: f64,
    },
    /// The fitted Hill curve `bw(B) = peak * B / (half_bytes + B)`, which is exactly
    /// `time(B) = half_bytes / peak + B / peak`.
    Hill {
        /// Asymptotic rate in GB/s.
        peak_gbps: f64,
        /// Size at which half the peak is reached, in bytes.
        half_bytes: f64,
    },
}

/// Element-wise vector op cost: `fixed_cycles + ceil(elements / elems_per_cycle[dtype])`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct VectorConfig {
    /// Start-up plus completion latency of one op, in cycles.
    pub fixed_cycles: u64,
    /// Elements processed per cycle, per dtype.
    pub elems_per_cycle: ElemsPerCycle,
    /// The operations with a cost of their own (`[chip.vector.ops]`); an operation left out
    /// costs what an element-wise `add` costs.
    #[serde(default)]
    pub ops: VectorOpsConfig,
}

/// The cost of each vector operation that is not in the class of `add` (see
/// `sim_core::model::VecOp`); absent: the element-wise cost.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct VectorOpsConfig {
    /// `exp` (TEXP).
    pub exp: Option<VectorOpCost>,
    /// `log` (TLOG).
    pub log: Option<VectorOpCost>,
    /// `sqrt` (TSQRT).
    pub sqrt: Option<VectorOpCost>,
    /// `rsqrt` (TRSQRT).
    pub rsqrt: Option<VectorOpCost>,
    /// `recip` (TRECIP).
    pub recip: Option<VectorOpCost>,
    /// `abs` (TABS).
    pub abs: Option<VectorOpCost>,
    /// `relu` (TRELU).
    pub relu: Option<VectorOpCost>,
    /// `div`, tile by tile (TDIV).
    pub div: Option<VectorOpCost>,
    /// `divs`, by a scalar (TDIVS).
    pub divs: Option<VectorOpCost>,
    /// `cmp`, tile with tile (TCMP).
    pub cmp: Option<VectorOpCost>,
    /// `cmps`, tile with a scalar (TCMPS).
    pub cmps: Option<VectorOpCost>,
    /// `select` / `selects` (TSEL, TSELS).
    pub select: Option<VectorOpCost>,
    /// `full` / `expands` (TEXPANDS).
    pub full: Option<VectorOpCost>,
    /// `row_expand` (TROWEXPAND).
    pub row_expand: Option<VectorOpCost>,
    /// `col_expand` (TCOLEXPAND).
    pub col_expand: Option<VectorOpCost>,
}

/// One operation's cost over a tile of `elems` elements in `rows` rows:
/// `fixed_cycles + cycles_per_repeat * ceil(elems / lanes) + cycles_per_row * rows`, where a
/// repeat is `lanes` elements: `elems_per_cycle` if given (a rate that does not depend on the
/// dtype), else the dtype's `[chip.vector.elems_per_cycle]` (one 256-byte pass in the presets).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct VectorOpCost {
    /// Start-up plus completion of one operation, in cycles.
    pub fixed_cycles: u64,
    /// Cycles per repeat (default 1).
    #[serde(default = "one")]
    pub cycles_per_repeat: u64,
    /// Elements per repeat for every dtype (absent: the dtype's lanes).
    #[serde(default)]
    pub elems_per_cycle: Option<u64>,
    /// Cycles per row of the tile, for operations issued row by row (default 0).
    #[serde(default)]
    pub cycles_per_row: u64,
}

fn one() -> u64 {
    1
}

/// Vector lanes per dtype.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ElemsPerCycle {
    /// Cycles per element for f32.
    pub f32: u64,
    /// Cycles per element for f16.
    pub f16: u64,
    /// Cycles per element for bf16.
    pub bf16: u64,
    /// Cycles per element for i32.
    pub i32: u64,
    /// Cycles per element for i16.
    pub i16: u64,
    /// Cycles per element for i8.
    pub i8: u64,
}

/// Every key a DMA curve takes, each optional; `curve` decides which must and may be there.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawDmaPath {
    curve: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    gbps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    issue_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    peak_gbps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    half_bytes: Option<f64>,
}

/// A curve written back in the keys it is read from (for printing a resolved config).
impl From<DmaPathConfig> for RawDmaPath {
    fn from(p: DmaPathConfig) -> RawDmaPath {
        let raw = |curve: &str| RawDmaPath {
            curve: curve.to_string(),
            gbps: None,
            issue_ns: None,
            peak_gbps: None,
            half_bytes: None,
        };
        match p {
            DmaPathConfig::Flat { gbps, issue_ns } => {
                RawDmaPath { gbps: Some(gbps), issue_ns: Some(issue_ns), ..raw("flat") }
            }
            DmaPathConfig::Hill { peak_gbps, half_bytes } => {
                RawDmaPath { peak_gbps: Some(peak_gbps), half_bytes: Some(half_bytes), ..raw("hill") }
            }
        }
    }
}

impl TryFrom<RawDmaPath> for DmaPathConfig {
    type Error = String;
    fn try_from(r: RawDmaPath) -> Result<DmaPathConfig, String> {
        let takes: &[&str] = match r.curve.as_str() {
            "flat" => &["gbps", "issue_ns"],
            "hill" => &["peak_gbps", "half_bytes"],
            other => return Err(format!("curve = \"{other}\" is not a DMA curve; use flat or hill")),
        };
        let keys =
            [("gbps", r.gbps), ("issue_ns", r.issue_ns), ("peak_gbps", r.peak_gbps), ("half_bytes", r.half_bytes)];
        for (key, v) in keys {
            match (takes.contains(&key), v.is_some()) {
                (true, false) => return Err(format!("curve = \"{}\" needs `{key}`", r.curve)),
                (false, true) => {
                    return Err(format!(
                        "`{key}` is not a key of curve = \"{}\" (its keys: curve, {})",
                        r.curve,
                        takes.join(", ")
                    ));
                }
                _ => {}
            }
        }
        match (r.gbps, r.issue_ns, r.peak_gbps, r.half_bytes) {
            (Some(gbps), Some(issue_ns), None, None) => Ok(DmaPathConfig::Flat { gbps, issue_ns }),
            (None, None, Some(peak_gbps), Some(half_bytes)) => Ok(DmaPathConfig::Hill { peak_gbps, half_bytes }),
            // Not reached: the loop above checked the keys against the curve.
            _ => Err(format!("curve = \"{}\" takes curve, {}", r.curve, takes.join(", "))),
        }
    }
}

/// HCCL's default `HCCL_BUFFSIZE`: 200 (MiB) (CANN's HCCL user guide, `HCCL_BUFFSIZE.md`;
/// docs/references/hardware.md §4.2).
pub(crate) const DEFAULT_HCCL_BUFFSIZE_MB: u64 = 200;

fn default_hccl_buffsize_mb() -> u64 {
    DEFAULT_HCCL_BUFFSIZE_MB
}
