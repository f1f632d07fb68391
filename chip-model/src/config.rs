//! The `[chip]` table of a machine config. Units are in the key names; every number in a
//! preset carries its source in a comment there.

use serde::Deserialize;

/// One chip's parameters as written in a config.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ChipConfig {
    /// Chip name (`Ascend910B`, ...), for output only.
    pub name: String,
    /// AIV (vector) cores that kernel blocks are placed on.
    pub aiv_cores: usize,
    /// AIC (cube) cores; informational until cube kernels are modelled.
    pub aic_cores: usize,
    /// AI-core clock in GHz.
    pub clock_ghz: f64,
    /// Usable unified-buffer bytes per AIV core.
    pub ub_bytes: usize,
    /// L1 bytes per AIC core; informational.
    pub l1_bytes: usize,
    /// Whether remote atomic Add supports bf16 destinations.
    pub bf16_atomic_add: bool,
    /// Cost of one notify on the issuing core, in ns.
    pub notify_issue_ns: f64,
    /// Delay from a satisfying signal write to the waiting core resuming, in ns.
    pub wait_poll_ns: f64,
    /// Device-side gap between consecutive dispatches on one chip, in ns.
    pub dispatch_launch_ns: f64,
    /// Time from placing a task on a core to its kernel starting, in ns.
    pub task_start_ns: f64,
    /// Per-core DMA engines.
    pub dma: DmaConfig,
    /// The vector unit.
    pub vector: VectorConfig,
}

/// The two DMA directions of one core.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DmaConfig {
    /// GM -> UB (TLOAD, MTE2).
    pub gm_to_ub: DmaPathConfig,
    /// UB -> GM (TSTORE, MTE3).
    pub ub_to_gm: DmaPathConfig,
}

/// One DMA direction: `time(B) = issue_ns + B / (gbps * 1e9)`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DmaPathConfig {
    /// Sustained rate in GB/s (1 GB = 1e9 B).
    pub gbps: f64,
    /// Fixed cost per transfer, in ns.
    pub issue_ns: f64,
}

/// Element-wise vector op cost: `fixed_cycles + ceil(bytes / bytes_per_cycle)` cycles.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct VectorConfig {
    /// Start-up plus completion latency of one op, in cycles.
    pub fixed_cycles: u64,
    /// Bytes of operand processed per cycle.
    pub bytes_per_cycle: u64,
}
