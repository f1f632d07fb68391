//! The ranges every `[chip]` number must be in, chosen so that no simulated time can overflow
//! the u64-picosecond clock (about 213 days) for any program the CLI's limits allow.
//!
//! The rule: **one operation never costs more than one second** of simulated time. Every
//! nanosecond key is at most [`MAX_COST_NS`] (1e9 ns, the same bound the fabric puts on link
//! latencies); a cycle count is at most one second of the chip's clock; a Hill curve's
//! `half_bytes` at most one second at its peak rate. Sizes and counts are bounded so a config
//! cannot ask for more memory than a machine has. A longer program can still overflow the
//! clock (a kernel computing `u64::MAX` cycles, say); the engine then ends the run with an
//! error naming the actor and the event, never a panic.
//!
//! | key | range |
//! | --- | --- |
//! | `aiv_cores`, `aic_cores` | `1..=4096`, `0..=4096` |
//! | `clock_ghz` | `0.001..=1000` |
//! | `ub_bytes`, `l1_bytes`, `cube.l0*_bytes` | at most 1 GiB (`ub_bytes` at least 1) |
//! | `hbm_gbps`, `*.gbps`, `*.peak_gbps`, `sdma.channel_gbps` | at least 1 byte per second, or `inf` |
//! | `hbm_efficiency` | `(0, 1]`, and `hbm_gbps x hbm_efficiency` at least 1 byte per second |
//! | every `*_ns` key | `0..=1e9` (1 s) |
//! | `vector.fixed_cycles`, `cube.fixed_cycles` | `0..=clock_ghz x 1e9` (1 s) |
//! | `dma.*.half_bytes` (Hill) | `0..=peak_gbps x 1e9` (an issue cost of at most 1 s) |
//! | `sdma.channels`, `sdma.queue_depth` | `1..=1024`, `1..=1048576` |

/// The largest cost of one operation a config may give, in ns (1 s).
pub const MAX_COST_NS: f64 = 1e9;

/// The most AIV (or AIC) cores a chip may have.
pub const MAX_CORES: usize = 4096;

/// The largest on-chip buffer (UB, L1, L0A / L0B / L0C) in bytes: 1 GiB.
pub const MAX_BUFFER_BYTES: usize = 1 << 30;

/// The clock range in GHz.
pub const CLOCK_GHZ: (f64, f64) = (0.001, 1000.0);

/// The most descriptors one SDMA channel may hold.
pub const MAX_QUEUE_DEPTH: usize = 1 << 20;
