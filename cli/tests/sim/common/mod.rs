//! Helpers shared by the integration tests.

use ranksim::Config;
use ranksim::prelude::*;

/// A machine whose costs make hand arithmetic easy: 1 GHz, DMA 100 GB/s both ways with no
/// issue cost, unlimited HBM and ports, notify 10 ns, no poll / launch / task-start cost, a full
/// mesh of 10 GB/s links with 1 us latency, 4 KiB packets, 4 AIV cores, 64 KiB of UB.
pub fn simple_toml(ranks: usize) -> String {
    format!(
        r#"
[machine]
name = "simple"
ranks = {ranks}

[chip]
name = "simple"
aiv_cores = 4
aic_cores = 2
clock_ghz = 1.0
ub_bytes = 65536
l1_bytes = 0
hbm_gbps = inf
hbm_efficiency = 1.0
bf16_atomic_add = false
notify_issue_ns = 10.0
wait_poll_ns = 0.0
dispatch_launch_ns = 0.0
task_start_ns = 0.0

[chip.dma.gm_to_ub]
curve = "flat"
gbps = 100.0
issue_ns = 0.0

[chip.dma.ub_to_gm]
curve = "flat"
gbps = 100.0
issue_ns = 0.0

[chip.vector]
fixed_cycles = 10

[chip.vector.elems_per_cycle]
f32 = 64
f16 = 128
bf16 = 128
i32 = 64
i16 = 128
i8 = 256

[host]
bind_us = 1.0
finalize_us = 2.0

[fabric]
packet_bytes = 4096
efficiency = 1.0
port_gbps = inf

[fabric.topology]
kind = "full_mesh"
link_gbps = 10.0
link_latency_ns = 1000.0
"#
    )
}

/// The simple machine with 2 AIC cores per chip (`[chip.cube]`): L1 64 KiB, L0A / L0B 16 KiB,
/// L0C 32 KiB, matmul `10 + ceil(M/16) ceil(K/k0) ceil(N/16)` cycles (k0 16 for f16 / bf16, 8
/// for f32), L1 -> L0A 256 B and L1 -> L0B 128 B per cycle, GM -> L1 100 GB/s and L0C -> GM
/// 50 GB/s with no issue cost.
pub fn cube_toml(ranks: usize) -> String {
    simple_toml(ranks).replace("l1_bytes = 0", "l1_bytes = 65536").replace(
        "[host]",
        r#"[chip.cube]
l0a_bytes = 16384
l0b_bytes = 16384
l0c_bytes = 32768
fixed_cycles = 10
l1_to_l0a_bytes_per_cycle = 256
l1_to_l0b_bytes_per_cycle = 128

[chip.cube.fractal]
f16 = [16, 16, 16]
bf16 = [16, 16, 16]
f32 = [16, 8, 16]

[chip.cube.gm_to_l1]
curve = "flat"
gbps = 100.0
issue_ns = 0.0

[chip.cube.l0c_to_gm]
curve = "flat"
gbps = 50.0
issue_ns = 0.0

[host]"#,
    )
}

/// A world of the simple machine with cube cores ([`cube_toml`]).
pub fn cube(ranks: usize) -> World {
    Config::from_toml(&cube_toml(ranks), "cube").unwrap().world().unwrap()
}

/// A world of the simple machine.
pub fn simple(ranks: usize) -> World {
    Config::from_toml(&simple_toml(ranks), "simple").unwrap().world().unwrap()
}

/// A world of the default a2a3 preset.
pub fn a2a3() -> World {
    Config::default_preset().world().unwrap()
}

/// The domain of every rank of `world`.
pub fn all(world: &mut World) -> Domain {
    world.world_domain("comm_d0").unwrap()
}
