//! Every configured cost, end to end: each test runs a machine on which one number of the
//! `[chip]`, `[fabric]` or `[host]` schema is the only cost or the bottleneck, and asserts the
//! exact time (integer ps) the formula gives from that number.
//!
//! | key | test |
//! |-----|------|
//! | chip.clock_ghz | `timing::local_costs_compute_vector_and_dma`, `the_clock_scales_compute` (here) |
//! | chip.aiv_cores | `aiv_cores_bound_how_many_blocks_run_at_once` |
//! | chip.ub_bytes | `capacities::ub_holds_exactly_ub_bytes`, `bad_input` UB tests, `pipes::loads_in_flight_must_fit_in_ub_together` |
//! | chip.l1_bytes, chip.cube.l0a_bytes / l0b_bytes / l0c_bytes | `capacities` (exactly the capacity fits, one step more is refused) |
//! | chip.sdma.max_descriptor_bytes, chip.sdma.queue_depth | `capacities::a_descriptor_holds_exactly_max_descriptor_bytes`, `a_channel_queues_exactly_queue_depth_descriptors` |
//! | chip.hbm_gbps, chip.hbm_efficiency | `hbm_rate_times_efficiency_bounds_a_local_load` |
//! | chip.bf16_atomic_add | `primitives::bf16_atomic_add_works_on_a2a3`, `bf16_atomic_add_is_refused_where_the_chip_lacks_it` |
//! | chip.notify_issue_ns | `notify_issue_advances_the_issuing_core` |
//! | chip.wait_poll_ns | `wait_poll_is_paid_at_once_and_after_a_wake`, `pipes::a_polling_loop_...` (test_signal) |
//! | chip.dcci_ns | `dcci_costs_its_configured_time_on_the_core` |
//! | chip.hccl_aiv_launch_ns | `hccl_class::the_aiv_allgather_pays_its_launch_once` |
//! | chip.hccl_buffsize_mb | `staging::a_staged_collective_costs_the_sum_of_its_chunks` |
//! | chip.scalar_gm_ns | `pipes::scalar_reads_and_writes_cost_one_scalar_access_and_see_program_order` |
//! | chip.dispatch_launch_ns, chip.task_start_ns | `timing::dispatches_on_a_chip_run_one_after_another` |
//! | chip.dma.*.gbps, issue_ns (flat) | `flat_dma_pays_its_issue_cost_then_the_bytes` |
//! | chip.dma.*.peak_gbps, half_bytes (hill) | `hill_dma_pays_half_bytes_over_peak_then_the_bytes` |
//! | chip.vector.fixed_cycles, elems_per_cycle.* | `each_dtype_runs_at_its_own_vector_lanes` |
//! | chip.vector.ops.* (fixed_cycles, cycles_per_repeat, elems_per_cycle, cycles_per_row) | `tile_ops::each_vector_op_costs_its_configured_formula`, `tile_ops::the_a2a3_preset_costs_exp_and_div_by_their_measured_fits` |
//! | chip.sdma.* | `sdma::*` (issue, descriptor, cold start, poll, channel rate, descriptors, queue depth) |
//! | fabric.packet_bytes | `closed_form::two_flows_on_one_link_each_get_half_its_bandwidth` (notifies queue one packet each), `packets_cut_a_flow_into_interleaving_units` |
//! | fabric.efficiency | `link_efficiency_scales_every_link` |
//! | fabric.core_write_efficiency | `core_write_efficiency_slows_a_cores_stores_and_not_its_notify` |
//! | fabric.port_gbps | `the_ingress_port_rate_bounds_incast` |
//! | fabric.port_latency_ns, fabric.read_turnaround_ns | `closed_form::a_remote_read_pays_both_legs_...` |
//! | fabric.ordering | `checker::a_relaxed_fabric_in_the_config_lets_notifies_overtake` |
//! | fabric.topology (link_gbps, link_latency_ns, per kind) | `closed_form::*` |
//! | host.hccl_launch_us, host.hccl_setup_us | `an_hccl_op_costs_its_setup_and_no_less_than_its_launch` |
//! | host.bind_us, host.finalize_us | `host_costs_widen_the_strace_host_wall` |

use crate::common::{all, logged_on_rank_0, simple_toml};
use crate::flows::{Flow, land_times, links_only};
use parking_lot::Mutex;
use ranksim::Config;
use ranksim::prelude::*;
use std::sync::Arc;

/// The simple machine on `ranks` ranks with each `(from, to)` text replacement applied (each
/// must match, so a renamed key fails loudly).
fn machine_toml(ranks: usize, edits: &[(&str, &str)]) -> String {
    let mut toml = simple_toml(ranks);
    for (from, to) in edits {
        assert!(toml.contains(from), "`{from}` is not in the simple machine");
        toml = toml.replacen(from, to, 1);
    }
    toml
}

fn machine(ranks: usize, edits: &[(&str, &str)]) -> World {
    Config::from_toml(&machine_toml(ranks, edits), "costs").unwrap().world().unwrap()
}

/// Runs `kernel` on rank 0 with a `[4, 1024]` f32 window; returns the times it logged and the
/// dispatch's end.
fn on_rank0(
    w: World,
    blocks: usize,
    kernel: impl Fn(&mut Core, &Tensor, &mut Vec<u64>) -> SimResult<()> + Send + Sync + 'static,
) -> (Vec<u64>, u64) {
    let (logged, r) = logged_on_rank_0(w, "cost", blocks, &[4, 1024], kernel);
    (logged, r.of_chip(0).map(|d| d.end.as_ps()).max().unwrap_or(0))
}

const GM_TO_UB: &str = "[chip.dma.gm_to_ub]\ncurve = \"flat\"\ngbps = 100.0\nissue_ns = 0.0";
const UB_TO_GM: &str = "[chip.dma.ub_to_gm]\ncurve = \"flat\"\ngbps = 100.0\nissue_ns = 0.0";

#[test]
fn the_clock_scales_compute() {
    let w = machine(1, &[("clock_ghz = 1.0", "clock_ghz = 2.5")]);
    let (t, _) = on_rank0(w, 1, |core, _, log| {
        core.compute(1000);
        log.push(core.now().as_ps());
        Ok(())
    });
    // 1000 cycles at 2.5 GHz.
    assert_eq!(t, vec![400_000]);
}

/// One core loads 4 KiB and stores it back: the clock after each, and the dispatch's end.
fn load_then_store(w: World) -> (Vec<u64>, u64) {
    on_rank0(w, 1, |core, data, log| {
        let tile = core.load(data, &[0, 0], &[1, 1024])?;
        log.push(core.now().as_ps());
        core.store(&tile, data, &[1, 0])?;
        log.push(core.now().as_ps());
        Ok(())
    })
}

#[test]
fn flat_dma_pays_its_issue_cost_then_the_bytes() {
    let w = machine(
        1,
        &[
            (GM_TO_UB, "[chip.dma.gm_to_ub]\ncurve = \"flat\"\ngbps = 50.0\nissue_ns = 30.0"),
            (UB_TO_GM, "[chip.dma.ub_to_gm]\ncurve = \"flat\"\ngbps = 25.0\nissue_ns = 70.0"),
        ],
    );
    let (t, end) = load_then_store(w);
    // Load: 30 ns issue + 4096 B at 50 GB/s (81 920 ps). Store: the core pays 70 ns issue +
    // 4096 B at 25 GB/s (163 840 ps); the bytes land when MTE3 has moved them.
    let load = 30_000 + 81_920;
    let store = 70_000 + 163_840;
    assert_eq!(t, vec![load, load + store]);
    assert_eq!(end, load + store);
}

#[test]
fn hill_dma_pays_half_bytes_over_peak_then_the_bytes() {
    let w = machine(
        1,
        &[
            (GM_TO_UB, "[chip.dma.gm_to_ub]\ncurve = \"hill\"\npeak_gbps = 50.0\nhalf_bytes = 5000"),
            (UB_TO_GM, "[chip.dma.ub_to_gm]\ncurve = \"hill\"\npeak_gbps = 20.0\nhalf_bytes = 1000"),
        ],
    );
    let (t, end) = load_then_store(w);
    // time(B) = K / peak + B / peak: load (5000 + 4096) / 50 GB/s, store (1000 + 4096) / 20 GB/s.
    let load = 100_000 + 81_920;
    let store = 50_000 + 204_800;
    assert_eq!(t, vec![load, load + store]);
    assert_eq!(end, load + store);
}

#[test]
fn hbm_rate_times_efficiency_bounds_a_local_load() {
    for (eff, want) in [("1.0", 204_800u64), ("0.5", 409_600)] {
        let w = machine(
            1,
            &[
                ("hbm_gbps = inf", "hbm_gbps = 20.0"),
                ("hbm_efficiency = 1.0", &format!("hbm_efficiency = {eff}")),
                (GM_TO_UB, "[chip.dma.gm_to_ub]\ncurve = \"flat\"\ngbps = inf\nissue_ns = 0.0"),
            ],
        );
        let (t, _) = on_rank0(w, 1, |core, data, log| {
            core.load(data, &[0, 0], &[1, 1024])?;
            log.push(core.now().as_ps());
            Ok(())
        });
        // 4096 B through HBM at 20 GB/s x efficiency.
        assert_eq!(t, vec![want], "efficiency {eff}");
    }
}

#[test]
fn dcci_costs_its_configured_time_on_the_core() {
    let at = |edits: &[(&str, &str)]| {
        let w = machine(1, edits);
        let (log, _) = on_rank0(w, 1, |core, _, log| {
            for _ in 0..3 {
                core.dcci()?;
            }
            log.push(core.now().as_ps());
            Ok(())
        });
        log[0]
    };
    // Absent: free. 35 ns: three of them take 105 ns.
    assert_eq!(at(&[]), 0);
    assert_eq!(at(&[("task_start_ns = 0.0", "task_start_ns = 0.0\ndcci_ns = 35.0")]), 3 * 35_000);
}

#[test]
fn notify_issue_advances_the_issuing_core() {
    let mut w = machine(2, &[("notify_issue_ns = 10.0", "notify_issue_ns = 25.0")]);
    let dom = all(&mut w);
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[1]).unwrap();
    let log = Arc::new(Mutex::new(0u64));
    let l = log.clone();
    w.dispatch(
        0,
        Dispatch::kernel("notify", 1, move |core| {
            for _ in 0..3 {
                core.notify(&sig, 1, &[0], 1, NotifyOp::AtomicAdd)?;
            }
            *l.lock() = core.now().as_ps();
            Ok(())
        })
        .in_domain(&dom),
    )
    .unwrap();
    w.run().unwrap();
    assert_eq!(*log.lock(), 3 * 25_000);
}

/// Rank 1 notifies rank 0 at once; rank 0 waits on a cell that already holds, then on the
/// notified one. Returns (after the first wait, after the second).
fn waits(poll_ns: &str) -> (u64, u64) {
    let mut w = machine(2, &[("wait_poll_ns = 0.0", &format!("wait_poll_ns = {poll_ns}"))]);
    let dom = all(&mut w);
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[2]).unwrap();
    let log = Arc::new(Mutex::new((0, 0)));
    let l = log.clone();
    w.dispatch_all(
        &dom,
        Dispatch::kernel("waits", 1, move |core| {
            if core.rank() == 1 {
                return core.notify(&sig, 0, &[1], 1, NotifyOp::AtomicAdd);
            }
            core.wait(&sig, &[0], 0, WaitCmp::Ge)?;
            let first = core.now().as_ps();
            core.wait(&sig, &[1], 1, WaitCmp::Ge)?;
            *l.lock() = (first, core.now().as_ps());
            Ok(())
        }),
    )
    .unwrap();
    w.run().unwrap();
    *log.lock()
}

#[test]
fn wait_poll_is_paid_at_once_and_after_a_wake() {
    let (free_first, free_woken) = waits("0.0");
    assert_eq!(free_first, 0);
    let (first, woken) = waits("30.0");
    // A wait that holds at once costs one poll; a woken one resumes one poll after the notify
    // landed (the landing itself does not depend on the poll cost).
    assert_eq!(first, 30_000);
    assert_eq!(woken, free_woken + 30_000);
}

#[test]
fn each_dtype_runs_at_its_own_vector_lanes() {
    let lanes = "f32 = 64\nf16 = 32\nbf16 = 16\ni32 = 8\ni16 = 4\ni8 = 2\n";
    let w = machine(
        1,
        &[
            ("f32 = 64\nf16 = 128\nbf16 = 128\ni32 = 64\ni16 = 128\ni8 = 256\n", lanes),
            ("fixed_cycles = 10", "fixed_cycles = 7"),
        ],
    );
    let (t, _) = on_rank0(w, 1, |core, _, log| {
        for dt in DType::ALL {
            let tile = Tile::zeros(dt, 1, 256);
            let start = core.now().as_ps();
            core.adds(&tile, 1.0)?;
            log.push(core.now().as_ps() - start);
        }
        Ok(())
    });
    // fixed + ceil(256 / lanes) cycles at 1 GHz, in DType::ALL order (f32, f16, bf16, i32, i16, i8).
    let want: Vec<u64> = [64u64, 32, 16, 8, 4, 2].iter().map(|l| (7 + 256 / l) * 1000).collect();
    assert_eq!(t, want);
}

#[test]
fn aiv_cores_bound_how_many_blocks_run_at_once() {
    for (cores, waves) in [("4", 2u64), ("8", 1)] {
        let mut w = machine(1, &[("aiv_cores = 4", &format!("aiv_cores = {cores}"))]);
        let dom = all(&mut w);
        let mut d = Dispatch::new("two tasks");
        for name in ["a", "b"] {
            d.add(Task::new(name, 4, |core| {
                core.compute(1000);
                Ok(())
            }));
        }
        w.dispatch(0, d.in_domain(&dom)).unwrap();
        let r = w.run().unwrap();
        // Two independent tasks of 4 blocks x 1 us on `cores` cores: they run side by side
        // when 8 cores hold them, one after the other on 4.
        assert_eq!(r.end.as_ps(), waves * 1_000_000, "{cores} cores");
    }
}

#[test]
fn bf16_atomic_add_is_refused_where_the_chip_lacks_it() {
    let mut w = machine(2, &[]);
    let dom = all(&mut w);
    let acc = w.alloc_window(&dom, "acc", DType::BF16, &[1, 16]).unwrap();
    w.dispatch(
        0,
        Dispatch::kernel("add", 1, move |core| {
            let t = Tile::zeros(DType::BF16, 1, 16);
            core.remote_store(&t, &acc, 1, &[0, 0], AtomicType::Add)
        })
        .in_domain(&dom),
    )
    .unwrap();
    let e = w.run().unwrap_err().to_string();
    assert!(e.contains("atomic Add is not supported for bf16") && e.contains("supported: f32"), "{e}");
}

/// Link latency and byte time of the links-only mesh, ps.
const ALPHA: u64 = 1_000_000;
const BETA: u64 = 100;

fn mesh(ranks: usize, fabric_edit: Option<(&str, &str)>) -> String {
    let topo = "kind = \"full_mesh\"\nlink_gbps = 10.0\nlink_latency_ns = 1000.0\n";
    let toml = links_only(ranks, 4096, topo);
    match fabric_edit {
        Some((from, to)) => {
            assert!(toml.contains(from), "`{from}` is not in the links-only machine");
            toml.replacen(from, to, 1)
        }
        None => toml,
    }
}

#[test]
fn link_efficiency_scales_every_link() {
    let n = 65_536u64;
    let half = mesh(2, Some(("\nefficiency = 1.0", "\nefficiency = 0.5")));
    // Half the byte rate: the payload and the 4-byte notify behind it take twice as long.
    assert_eq!(land_times(&half, &[Flow::new(0, 1, n as usize)]), vec![ALPHA + 2 * (n + 4) * BETA]);
}

#[test]
fn core_write_efficiency_slows_a_cores_stores_and_not_its_notify() {
    let n = 65_536u64;
    let half = mesh(2, Some(("\nefficiency = 1.0", "\nefficiency = 1.0\ncore_write_efficiency = 0.5")));
    // The put's chunks are a core's stores: they hold the link for 2n bytes; the 4-byte
    // notify behind them is not bulk data and keeps its own time.
    assert_eq!(land_times(&half, &[Flow::new(0, 1, n as usize)]), vec![ALPHA + (2 * n + 4) * BETA]);
}

#[test]
fn the_ingress_port_rate_bounds_incast() {
    let n = 65_536u64;
    let flows: Vec<Flow> = (1..4).map(|s| Flow::new(s, 0, n as usize)).collect();
    // Three links into rank 0 each carry one flow: unlimited port, every flow lands alone.
    let free = land_times(&mesh(4, None), &flows);
    assert_eq!(free, vec![ALPHA + (n + 4) * BETA; 3]);
    // A port as fast as one link: the three payloads and notifies share it, so the last byte
    // through it leaves 3 (n + 4) bytes after the first arrived.
    let port = land_times(&mesh(4, Some(("port_gbps = inf", "port_gbps = 10.0"))), &flows);
    assert_eq!(port.iter().max(), Some(&(ALPHA + 3 * (n + 4) * BETA)), "{port:?}");
}

#[test]
fn packets_cut_a_flow_into_interleaving_units() {
    // Two flows share one link; the first to finish its payload does so one packet before the
    // second: its notify waits behind one packet of the other flow at most.
    let n = 65_536u64;
    for packet in [4096u64, 16_384] {
        let topo = "kind = \"full_mesh\"\nlink_gbps = 10.0\nlink_latency_ns = 1000.0\n";
        let toml = links_only(2, packet, topo);
        let t = land_times(&toml, &[Flow::new(0, 1, n as usize), Flow::new(0, 1, n as usize)]);
        // Both payloads end after 2n bytes on the link; the notifies follow in issue order.
        assert_eq!(t, vec![ALPHA + (2 * n + 4) * BETA, ALPHA + (2 * n + 8) * BETA], "packet {packet}");
    }
}

/// The time of one `hccl_sendrecv` op of `size` bytes on a 2-rank links-only mesh with SDMA,
/// with `[host]` edited by `edits`.
fn sendrecv_us(size: u64, launch_us: f64, setup_us: f64) -> f64 {
    use ranksim_cli::{measurements::WorkloadLine, workload::Workload};
    let topo = "kind = \"full_mesh\"\nlink_gbps = 10.0\nlink_latency_ns = 1000.0\n";
    let sdma = "channels = 4\nchannel_gbps = 20.0\nissue_ns = 0.0\ndescriptor_ns = 500.0\nmax_descriptor_bytes = 1048576\n\
                queue_depth = 8\npoll_ns = 0.0\ncold_start_ns = 0.0\n";
    let host = format!("finalize_us = 2.0\nhccl_launch_us = {launch_us:?}\nhccl_setup_us = {setup_us:?}");
    let toml = format!("{}\n[chip.sdma]\n{sdma}", links_only(2, 4096, topo)).replacen("finalize_us = 2.0", &host, 1);
    let cfg = Config::from_toml(&toml, "hccl").unwrap();
    let w = Workload::resolve(&WorkloadLine::parse("hccl_sendrecv peer=1").unwrap(), &cfg, 1).unwrap();
    w.time_us(&cfg, size).unwrap()
}

#[test]
fn an_hccl_op_costs_its_setup_and_no_less_than_its_launch() {
    // Device time alone: the staging copy and the pull of 64 KiB (each a 0.5 us descriptor,
    // the pull 6.5536 us on the 10 GB/s link after 1 us of latency each way) and two notifies.
    let device = sendrecv_us(65_536, 0.0, 0.0);
    assert!(device > 6.5536 + 2.0 && device < 20.0, "{device}");
    // The setup is in series with the device work.
    assert!((sendrecv_us(65_536, 0.0, 30.0) - (device + 30.0)).abs() < 1e-9);
    // A launch longer than setup + device bounds the op from below (the host launches one op
    // after another); a shorter one changes nothing.
    assert_eq!(sendrecv_us(65_536, 100.0, 30.0), 100.0);
    assert!((sendrecv_us(65_536, 1.0, 30.0) - (device + 30.0)).abs() < 1e-9);
}

#[test]
fn host_costs_widen_the_strace_host_wall() {
    use ranksim::formats::StraceLog;
    use ranksim::formats::benchmark_stats::{BenchmarkStats, Metric};
    let toml = machine_toml(2, &[("bind_us = 1.0", "bind_us = 3.25"), ("finalize_us = 2.0", "finalize_us = 0.5")]);
    let cfg = Config::from_toml(&toml, "costs").unwrap();
    let mut w = cfg.world().unwrap();
    let dom = all(&mut w);
    w.dispatch_all(
        &dom,
        Dispatch::kernel("work", 1, |core| {
            core.compute(7000);
            Ok(())
        }),
    )
    .unwrap();
    let report = w.run().unwrap();
    let mut log = StraceLog::new(&cfg.host);
    log.add_run(&report);
    let s = BenchmarkStats::from_l3(log.invocations().to_vec(), 1, 0).with_names(log.names().clone());
    // Device wall 7 us; the host span adds bind and finalize from the config.
    assert_eq!(s.per_rank(Metric::Device).unwrap()[&41_000], vec![7.0]);
    assert_eq!(s.per_rank(Metric::Host).unwrap()[&41_000], vec![7.0 + cfg.host.bind_us + cfg.host.finalize_us]);
    assert_eq!(cfg.host.bind_us + cfg.host.finalize_us, 3.75);
}
