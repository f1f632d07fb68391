//! The HCCL-class sweep modes against the bounds the a2a3 preset implies.

use ranksim::Config;
use ranksim::collectives::{Call, Kind, Mode, Path};
use ranksim::prelude::*;
use ranksim_cli::sweep::{SweepSpec, run_point};

fn spec(mode: Mode, ranks: usize, core_num: usize) -> SweepSpec {
    with_warmup(mode, ranks, core_num, 0)
}

fn with_warmup(mode: Mode, ranks: usize, core_num: usize, warmup: u32) -> SweepSpec {
    SweepSpec::new(Call::new(Kind::AllReduce, ranks).with_mode(mode).with_core_num(core_num)).with_warmup(warmup)
}

#[test]
fn aiv_mesh_allreduce_runs_close_to_the_mesh_link_bound() {
    let cfg = Config::default_preset();
    // Every rank has 7 HCCS links of 28 GB/s at efficiency 0.7: a full-mesh reduce-scatter +
    // allgather cannot beat busbw = 7 x 19.6 GB/s (the ingress port, 196 x 0.7, is the same).
    let bound = 7.0 * 28.0 * 0.7;
    let p = run_point(&cfg, &spec(Mode::AivMesh, 8, 48), 16 << 20, false).unwrap().unwrap();
    assert_eq!(p.row.nwrong, Some(0));
    let busbw = p.row.busbw_gbps;
    assert!(busbw <= bound, "{busbw} GB/s above the {bound} GB/s link bound");
    assert!(busbw >= 0.8 * bound, "{busbw} GB/s: less than 80 % of the {bound} GB/s link bound");
}

#[test]
fn aiv_mesh_on_two_ranks_is_one_link() {
    let cfg = Config::default_preset();
    let p = run_point(&cfg, &spec(Mode::AivMesh, 2, 48), 8 << 20, false).unwrap().unwrap();
    assert_eq!(p.row.nwrong, Some(0));
    let link = 28.0 * 0.7;
    assert!(p.row.busbw_gbps <= link && p.row.busbw_gbps >= 0.9 * link, "{} GB/s", p.row.busbw_gbps);
}

#[test]
fn sdma_mesh_allreduce_runs_close_to_the_mesh_link_bound_once_its_channels_are_warm() {
    let cfg = Config::default_preset();
    let bound = 7.0 * 28.0 * 0.7;
    let size = 16 << 20;
    let warm = run_point(&cfg, &with_warmup(Mode::SdmaMesh, 8, 48, 1), size, false).unwrap().unwrap();
    assert_eq!(warm.row.nwrong, Some(0));
    let busbw = warm.row.busbw_gbps;
    assert!(busbw <= bound && busbw >= 0.8 * bound, "{busbw} GB/s against the {bound} GB/s bound");
    // The first call pays the channels' cold start (chip.sdma.cold_start_ns, 92 us) once, all
    // channels at the same time: at most 92 us more, and less only by the time a warm call
    // spends waiting for the ranks that finished the previous call late.
    let cold = run_point(&cfg, &spec(Mode::SdmaMesh, 8, 48), size, false).unwrap().unwrap();
    let extra = cold.row.time_us - warm.row.time_us;
    assert!((0.8 * 92.0..=92.0).contains(&extra), "a cold call is {extra} us slower");
}

fn allgather_spec(ranks: usize, core_num: usize, warmup: u32) -> SweepSpec {
    let call = Call::new(Kind::AllGather, ranks).with_mode(Mode::SdmaMesh).with_core_num(core_num);
    SweepSpec::new(call).with_warmup(warmup)
}

#[test]
fn sdma_allgather_delivers_every_row_on_any_rank_and_block_count() {
    let cfg = Config::default_preset();
    for (ranks, core_num, bytes) in [(2, 1, 4096), (3, 5, 1000), (8, 48, 1 << 16)] {
        let p = run_point(&cfg, &allgather_spec(ranks, core_num, 0), bytes, false).unwrap().unwrap();
        assert_eq!(p.row.nwrong, Some(0), "{ranks} ranks, {core_num} blocks");
    }
}

#[test]
fn sdma_allgather_runs_close_to_the_link_bound() {
    let cfg = Config::default_preset();
    // busbw = (n-1)/n x algbw: each rank receives (n-1) rows, one per link. At 16 MiB on 48
    // channels each descriptor moves 43 KiB (8 ranks) and costs chip.sdma.descriptor_ns first,
    // which leaves the links idle up to a fifth of the time: 80 % of the bound is the floor.
    for (ranks, links) in [(2, 1.0), (8, 7.0)] {
        let bound = links * 28.0 * 0.7;
        let p = run_point(&cfg, &allgather_spec(ranks, 48, 1), 16 << 20, false).unwrap().unwrap();
        assert_eq!(p.row.nwrong, Some(0));
        let busbw = p.row.busbw_gbps;
        assert!(busbw <= bound && busbw >= 0.8 * bound, "{ranks} ranks: {busbw} GB/s against {bound}");
    }
}

#[test]
fn allgather_modes_are_the_builtin_sdma_mesh_or_aiv_mesh() {
    let mut w = Config::default_preset().world().unwrap();
    let dom = w.world_domain("comm_d0").unwrap();
    let stage = w.alloc_window(&dom, "stage", DType::F32, &[1, 8]).unwrap();
    let target = w.alloc_window(&dom, "target", DType::F32, &[8, 8]).unwrap();
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[8, 1]).unwrap();
    let how = ranksim::collectives::AllGather { mode: Mode::TwoShot, path: Path::Host, core_num: 1 };
    let e = ranksim::collectives::allgather_with(&mut w, &stage, &target, &sig, how).unwrap_err().to_string();
    assert!(
        e.contains(
            "allgather runs as mesh, sdma-mesh, aiv-mesh, ring, hier (mesh: PyPTO's builtin; the others HCCL-class), not \
             two-shot"
        ),
        "{e}"
    );
    let how = ranksim::collectives::AllGather { mode: Mode::SdmaMesh, path: Path::Host, core_num: 4 };
    let e = ranksim::collectives::allgather_with(&mut w, &stage, &target, &sig, how).unwrap_err().to_string();
    assert!(e.contains("[8, 4]"), "{e}");
}

fn ring_allgather(ranks: usize, core_num: usize, warmup: u32) -> SweepSpec {
    let call = Call::new(Kind::AllGather, ranks).with_mode(Mode::Ring).with_core_num(core_num);
    SweepSpec::new(call).with_warmup(warmup)
}

/// HCCL's ring allgather (`--mode ring`): every rank ends with every rank's row on 2, 3 and 8
/// ranks, on one block or several, rows that do not split evenly over the blocks included;
/// checked with jitter, it is clean.
#[test]
fn the_ring_allgather_delivers_every_row_and_runs_clean_under_jitter() {
    let cfg = Config::default_preset();
    for (ranks, core_num, bytes) in
        [(2, 1, 4096), (2, 3, 1000), (3, 1, 1000), (3, 5, 1000), (8, 1, 256), (8, 4, 1 << 16)]
    {
        let p = run_point(&cfg, &ring_allgather(ranks, core_num, 0), bytes, false).unwrap().unwrap();
        assert_eq!(p.row.nwrong, Some(0), "{ranks} ranks, {core_num} blocks, {bytes} B");
    }
    let c = ranksim_cli::checker::catalogue().into_iter().find(|c| c.name == "allgather-ring-host").unwrap();
    let r = ranksim_cli::checker::check(&cfg, &c, 8, &CheckOptions { seeds: 2, ..CheckOptions::default() }).unwrap();
    assert!(r.is_clean(), "{r:?}");
}

/// A ring keeps one link per rank busy for `NR - 1` steps of one row each, so a call whose
/// gathered buffer is `S` bytes (a row of `S / NR` per rank, the sweep's size) takes at least
/// `(NR - 1) S / NR / link` (busbw at most one link's 28 GB/s at 0.7), and at 8 MiB the steps'
/// signals and descriptors add little to that: within 15 %, on 2, 4 and 8 ranks. The mesh on
/// the same 8 ranks uses all seven links (within 80 % of them on 48 blocks at 16 MiB, as
/// `sdma_allgather_runs_close_to_the_link_bound` holds), so there the ring takes over
/// 7 x 0.8 = 5.6 times as long.
#[test]
fn the_ring_allgather_takes_its_steps_at_one_links_rate() {
    let cfg = Config::default_preset();
    let link = 28.0 * 0.7; // GB/s, i.e. kB/us
    let bytes = 8u64 << 20;
    for ranks in [2usize, 4, 8] {
        let p = run_point(&cfg, &ring_allgather(ranks, 8, 1), bytes, false).unwrap().unwrap();
        assert_eq!(p.row.nwrong, Some(0));
        let row = bytes as f64 / ranks as f64;
        let floor_us = (ranks - 1) as f64 * row / (link * 1e3);
        let t = p.row.time_us;
        assert!(t >= floor_us && t <= 1.15 * floor_us, "{ranks} ranks: {t} us against {floor_us} us");
    }
    let mesh = run_point(&cfg, &allgather_spec(8, 48, 1), 16 << 20, false).unwrap().unwrap();
    let ring = run_point(&cfg, &ring_allgather(8, 8, 1), 16 << 20, false).unwrap().unwrap();
    assert!(ring.row.time_us > 5.6 * mesh.row.time_us, "ring {} us, mesh {} us", ring.row.time_us, mesh.row.time_us);
}

fn rhd(ranks: usize, core_num: usize) -> SweepSpec {
    spec(Mode::Rhd, ranks, core_num)
}

#[test]
fn rhd_on_a_full_mesh_keeps_one_link_busy_at_a_time() {
    // Every step of the halving and the doubling talks to one partner over one HCCS link, so
    // busbw (2 (n-1)/n x algbw, the bytes each rank sends over the time) tends to one link's
    // 28 GB/s x 0.7 as the per-step latencies amortise, and never passes it.
    let cfg = Config::default_preset();
    let link = 28.0 * 0.7;
    let p = run_point(&cfg, &rhd(8, 1), 16 << 20, false).unwrap().unwrap();
    assert_eq!(p.row.nwrong, Some(0));
    let busbw = p.row.busbw_gbps;
    assert!(busbw <= link && busbw >= 0.95 * link, "{busbw} GB/s against one link's {link}");
}

#[test]
fn rhd_runs_above_the_builtin_cap_where_the_builtins_do_nothing() {
    let cfg = Config::preset("a2a3").and_then(|c| c.with_ranks(48)).unwrap();
    // 48 = 32 + 16 extra ranks folded into their buddies; several blocks each on a slice.
    for core_num in [1, 3] {
        let p = run_point(&cfg, &rhd(48, core_num), 1 << 16, false).unwrap().unwrap();
        assert_eq!(p.row.nwrong, Some(0), "{core_num} block(s)");
    }
    let mesh = run_point(&cfg, &spec(Mode::Mesh, 48, 1), 1 << 16, false).unwrap().unwrap();
    let why = mesh.row.failed.unwrap_or_default();
    assert!(why.contains("kMaxSupportedRanks") && why.contains("moves no data"), "{why}");
}

#[test]
fn rhd_signals_only_its_partners_so_notifies_grow_as_n_log_n() {
    // Timing-only, 64 = 2^6 ranks: every rank sends 3 notifies per step (halving ready,
    // doubling ready, doubling read done) to that step's partner, 18 in all, where the mesh
    // builtins' barriers send n - 1 per barrier.
    let cfg = Config::preset("a2a3").and_then(|c| c.with_ranks(64)).unwrap();
    let p = run_point(&cfg, &rhd(64, 1).with_timing_only(true), 1 << 20, false).unwrap().unwrap();
    for (r, t) in p.report.traffic.iter().enumerate() {
        assert_eq!((t.remote_notifies, t.waits, t.local_notifies), (18, 18, 18), "rank {r}");
        // 2 x 63/64 of 1 MiB pulled from partners.
        assert_eq!(t.remote_read_bytes, 2 * (1 << 20) * 63 / 64, "rank {r}");
    }
}

#[test]
fn above_the_builtin_cap_a_default_sweep_runs_rhd_alone() {
    let cfg = Config::preset("cluster1024").unwrap();
    assert_eq!(cfg.machine.ranks, 1024);
    let default = ranksim_cli::commands::sweep::SweepArgs::new(None);
    let labels: Vec<String> = ranksim_cli::commands::sweep::combos(&default, &cfg, 1024)
        .iter()
        .map(|c| format!("{} {} {} -w {}", c.kind, c.mode, c.core_num, c.warmup))
        .collect();
    assert_eq!(labels, ["allreduce rhd 1 -w 0"]);
    // At 16 ranks the builtins still run; on two servers the HCCL-class series is RHD (the
    // vendor library's algorithm between servers), on one server the full-mesh ones.
    let sixteen = Config::preset("two-node").unwrap();
    let labels: Vec<String> =
        ranksim_cli::commands::sweep::combos(&default, &sixteen, 16).iter().map(|c| c.mode.to_string()).collect();
    assert_eq!(labels, ["mesh", "rhd"]);
    let one_server: Vec<String> = ranksim_cli::commands::sweep::combos(&default, &sixteen, 8)
        .iter()
        .map(|c| if c.auto { "hccl".to_string() } else { c.mode.to_string() })
        .collect();
    assert_eq!(one_server, ["mesh", "hccl"]);
}

/// The default sweep's HCCL-class series runs, at each size, what HCCL's selector picks on a
/// 910B server in its AIV mode, and says so after each row: allgather's small-count AIV kernel
/// up to 700 KiB per rank and its other AIV kernel above; every element right.
#[test]
fn the_hccl_series_runs_and_names_hccls_pick_at_each_size() {
    use ranksim_cli::commands::sweep::{SweepArgs, sweep};
    let a = SweepArgs {
        collectives: vec![Kind::AllGather, Kind::Broadcast],
        min_bytes: 4 << 20,
        max_bytes: 8 << 20,
        ..SweepArgs::new(None)
    };
    let mut out = Vec::new();
    sweep(&mut out, &a).unwrap();
    let text = String::from_utf8(out).unwrap();
    let row = |size: &str, kind: &str| {
        text.split("# ranksim ")
            .find(|s| s.contains(&format!("collective {kind} mode hccl")))
            .and_then(|s| s.lines().find(|l| l.trim_start().starts_with(size)).map(str::to_string))
    };
    // 4 MiB over 8 ranks is 512 KiB per rank, 8 MiB 1 MiB.
    let small = row("4194304", "allgather").expect(&text);
    assert!(small.ends_with("       0  aiv-mesh (AllGatherMeshAivSmallCountExecutor)"), "{small}");
    let big = row("8388608", "allgather").expect(&text);
    assert!(big.ends_with("       0  aiv-mesh (AllGatherMeshAivExecutor)"), "{big}");
    let bc = row("8388608", "broadcast").expect(&text);
    assert!(bc.ends_with("       0  aiv-mesh (BroadcastMeshAivExecutor)"), "{bc}");
    assert!(text.contains("# allgather hccl core_num 48: HCCL-class"), "{text}");
    // The JSON rows carry it too; other series' rows have no such field.
    let row = ranksim::formats::ResultRow {
        algorithm: Some("aiv-mesh (X)".into()),
        ..ranksim::formats::ResultRow::failed(1, 1, "float", "none", -1, "x".into())
    };
    let json = serde_json::to_string(&row).unwrap();
    assert!(json.contains("\"algorithm\":\"aiv-mesh (X)\""), "{json}");
    let plain =
        serde_json::to_string(&ranksim::formats::ResultRow::failed(1, 1, "float", "none", -1, "x".into())).unwrap();
    assert!(!plain.contains("algorithm"), "{plain}");
}

/// The HCCL-class copy-engine reduce_scatter and all_to_all (issue 28): every element right,
/// and busbw at 64 MiB near the links' bound without exceeding it, where PyPTO's one-block
/// builtins stay below 4 GB/s; both run under the checker without a finding.
#[test]
fn sdma_mesh_reduce_scatter_and_all_to_all_are_right_and_near_the_bound() {
    use ranksim_cli::commands::Status;
    use ranksim_cli::commands::sweep::{SweepArgs, sweep};
    for kind in [Kind::ReduceScatter, Kind::AllToAll, Kind::AllToAllV] {
        let a = SweepArgs {
            collectives: vec![kind],
            modes: Some(vec![Mode::SdmaMesh]),
            core_num: Some(48),
            warmup: 1,
            min_bytes: 1 << 20,
            max_bytes: 1 << 20,
            ..SweepArgs::new(None)
        };
        let mut out = Vec::new();
        assert_eq!(sweep(&mut out, &a), Ok(Status::Ok), "{}", String::from_utf8_lossy(&out));
        let text = String::from_utf8_lossy(&out).into_owned();
        assert!(text.contains("# Out of bounds values : 0 OK"), "{text}");
        assert!(text.contains(&format!("{kind} sdma-mesh core_num 48 -w 1: HCCL-class")), "{text}");
        let timed = SweepArgs { min_bytes: 64 << 20, max_bytes: 64 << 20, no_data: true, ..a };
        let mut out = Vec::new();
        sweep(&mut out, &timed).unwrap();
        let text = String::from_utf8_lossy(&out).into_owned();
        let row = text.lines().find(|l| l.trim_start().starts_with("67108864")).expect(&text);
        let busbw: f64 = row.split_whitespace().nth(7).unwrap().parse().unwrap();
        // all_to_all first copies its whole send buffer into HCCL's buffer (the staging of
        // docs/references/hardware.md §4.5), which costs it about a fifth at 64 MiB.
        let floor = if kind == Kind::AllToAll { 95.0 } else { 110.0 };
        assert!(busbw > floor && busbw <= 137.2, "{kind}: {busbw} GB/s\n{text}");
    }
    let cfg = Config::default_preset();
    for name in ["reduce_scatter-sdma-mesh-host", "all_to_all-sdma-mesh-host", "all_to_all_v-sdma-mesh-host"] {
        let c = ranksim_cli::checker::catalogue().into_iter().find(|c| c.name == name).expect(name);
        let r =
            ranksim_cli::checker::check(&cfg, &c, 8, &CheckOptions { seeds: 1, ..CheckOptions::default() }).unwrap();
        assert!(r.is_clean(), "{name}: {r:?}");
    }
}

/// Every element right on any rank and block count, parts that do not divide evenly included
/// (reduce_scatter, all_to_all and broadcast, which scatters from its root then allgathers).
#[test]
fn sdma_mesh_reduce_scatter_and_all_to_all_deliver_on_any_rank_and_block_count() {
    let cfg = Config::default_preset();
    for kind in [Kind::ReduceScatter, Kind::AllToAll, Kind::AllToAllV, Kind::Broadcast] {
        for (ranks, blocks) in [(2, 1), (3, 5), (5, 7), (8, 48)] {
            // Broadcast from the last rank: the scatter and the forwarding skip it, not rank 0.
            let call = Call::new(kind, ranks).with_mode(Mode::SdmaMesh).with_core_num(blocks).with_root(ranks - 1);
            for size in [4 * ranks as u64 * 7, 40_000] {
                let p = run_point(&cfg, &SweepSpec::new(call), size, false).unwrap().unwrap();
                assert_eq!(p.row.nwrong, Some(0), "{kind} {ranks} ranks {blocks} blocks {size} B: {:?}", p.row);
                assert!(p.row.failed.is_none(), "{:?}", p.row);
            }
        }
    }
}

/// The SDMA broadcast scatters then allgathers, so each link carries a slice: at 64 MiB on 8
/// ranks about n/2 links' worth (19.6 x 8 / 2 = 78.4 GB/s less the barriers), where PyPTO's
/// builtin pulls tile by tile from the root (0.54 GB/s).
#[test]
fn sdma_mesh_broadcast_moves_a_slice_per_link() {
    let cfg = Config::default_preset();
    let call = Call::new(Kind::Broadcast, 8).with_mode(Mode::SdmaMesh).with_core_num(48);
    let spec = SweepSpec::new(call).with_warmup(1).with_timing_only(true);
    let p = run_point(&cfg, &spec, 64 << 20, false).unwrap().unwrap();
    assert!(p.row.busbw_gbps > 60.0 && p.row.busbw_gbps < 78.4, "{:?}", p.row);
    let c = ranksim_cli::checker::catalogue().into_iter().find(|c| c.name == "broadcast-sdma-mesh-host").unwrap();
    let r = ranksim_cli::checker::check(&cfg, &c, 8, &CheckOptions { seeds: 1, ..CheckOptions::default() }).unwrap();
    assert!(r.is_clean(), "{r:?}");
}

#[test]
fn aiv_mesh_reduce_scatter_and_all_to_all_are_right_and_near_the_link_bound() {
    // Every element checked at 4 MiB on 48 blocks (and on 5, where tiles and blocks do not
    // divide evenly); at 64 MiB timing-only the busbw stays under 7 links x 19.6 GB/s and
    // reaches most of it, as the AIV allreduce does.
    let cfg = Config::default_preset();
    let bound = 7.0 * 28.0 * 0.7;
    for kind in [Kind::ReduceScatter, Kind::AllToAll] {
        let call = |core_num| Call::new(kind, 8).with_mode(Mode::AivMesh).with_core_num(core_num);
        for core_num in [48, 5] {
            let p = run_point(&cfg, &SweepSpec::new(call(core_num)), 4 << 20, false).unwrap().unwrap();
            assert_eq!(p.row.nwrong, Some(0), "{kind} on {core_num} blocks");
        }
        let timing = SweepSpec::new(call(48)).with_timing_only(true);
        let busbw = run_point(&cfg, &timing, 64 << 20, false).unwrap().unwrap().row.busbw_gbps;
        assert!(busbw <= bound && busbw >= 0.75 * bound, "{kind}: {busbw} GB/s against {bound}");
    }
}

#[test]
fn aiv_mesh_is_refused_where_hccl_has_no_such_kernel_and_names_the_modes() {
    let mut w = Config::default_preset().world().unwrap();
    let dom = w.world_domain("comm_d0").unwrap();
    let target = w.alloc_window(&dom, "target", DType::F32, &[8, 8]).unwrap();
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[8, 4]).unwrap();
    let data = w.alloc_window(&dom, "data", DType::F32, &[8]).unwrap();
    let how = ranksim::collectives::AllGather { mode: Mode::Rhd, path: Path::Host, core_num: 4 };
    let e = ranksim::collectives::broadcast_with(&mut w, &data, &sig, 0, how).unwrap_err().to_string();
    assert!(e.contains("broadcast runs as mesh, sdma-mesh, aiv-mesh") && e.contains("not rhd"), "{e}");
    let zero = ranksim::collectives::AllGather { mode: Mode::AivMesh, core_num: 0, ..how };
    let e = ranksim::collectives::reduce_scatter_with(&mut w, &target, &sig, ReduceOp::Sum, zero).unwrap_err();
    assert!(e.to_string().contains("core_num 0 must be in 1..=48"), "{e}");
}

/// bf16 (and the integer types) wherever HCCL's kernels take them: every HCCL-class allreduce
/// and reduce_scatter mode on a2a3 (bf16 atomic add exists on 910B, so the SDMA mesh too),
/// every element checked; PyPTO's builtins (mesh, ring) take FP16 / FP32 only, as PyPTO does.
#[test]
fn hccl_class_reductions_take_bf16() {
    let cfg = Config::default_preset();
    let modes = [
        (Kind::AllReduce, Mode::TwoShot),
        (Kind::AllReduce, Mode::AivMesh),
        (Kind::AllReduce, Mode::SdmaMesh),
        (Kind::AllReduce, Mode::Rhd),
        (Kind::ReduceScatter, Mode::AivMesh),
        (Kind::ReduceScatter, Mode::SdmaMesh),
    ];
    for (kind, mode) in modes {
        for dt in [DType::BF16, DType::I16] {
            if mode == Mode::SdmaMesh && dt == DType::I16 && !cfg.world().unwrap().chip().atomic_add_supported(dt) {
                continue;
            }
            let call = Call::new(kind, 8).with_mode(mode).with_core_num(8).with_dtype(dt);
            let p = run_point(&cfg, &SweepSpec::new(call), 64 << 10, false).unwrap().unwrap();
            assert_eq!(p.row.nwrong, Some(0), "{kind} {mode} {dt}");
        }
    }
    let ring = Call::new(Kind::AllReduce, 8).with_mode(Mode::Ring).with_core_num(1).with_dtype(DType::BF16);
    let e = run_point(&cfg, &SweepSpec::new(ring), 64 << 10, false).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("`data` is bf16") && e.contains("supports f32"), "{e}");
}

fn aiv_allreduce(ranks: usize, core_num: usize) -> SweepSpec {
    SweepSpec::new(Call::new(Kind::AllReduce, ranks).with_mode(Mode::AivMesh).with_core_num(core_num))
}

/// HCCL's one-shot AIV allreduce (up to 64 KiB, a block per rank, sums the chip adds
/// atomically) and the two-shot kernel it hands over to (above 64 KiB, fewer blocks than ranks,
/// max): every element right over repeated calls, in every dtype the one shot takes, and clean
/// under the checker with jitter on a machine where it runs one shot.
#[test]
fn the_one_shot_aiv_allreduce_sums_right_and_hands_over_to_two_shot() {
    let cfg = Config::default_preset();
    for (ranks, core_num) in [(2, 2), (3, 48), (8, 8), (8, 5)] {
        for bytes in [4 * ranks as u64, 4000, 64 << 10, (64 << 10) + 4 * ranks as u64] {
            for dt in [DType::F32, DType::F16, DType::BF16, DType::I32] {
                let spec = aiv_allreduce(ranks, core_num);
                let spec = SweepSpec { call: spec.call.with_dtype(dt), ..spec }.with_iters(2);
                let p = run_point(&cfg, &spec, bytes, false).unwrap().unwrap();
                assert_eq!(p.row.nwrong, Some(0), "{ranks} ranks, {core_num} blocks, {bytes} B, {dt}: {:?}", p.row);
            }
        }
        let max = aiv_allreduce(ranks, core_num);
        let max = SweepSpec { call: max.call.with_op(ReduceOp::Max), ..max }.with_iters(2);
        assert_eq!(run_point(&cfg, &max, 4096, false).unwrap().unwrap().row.nwrong, Some(0));
    }
    let c = ranksim_cli::checker::catalogue().into_iter().find(|c| c.name == "allreduce-aiv-mesh-host").unwrap();
    let r = ranksim_cli::checker::check(&cfg, &c, 4, &CheckOptions { seeds: 3, ..CheckOptions::default() }).unwrap();
    assert!(r.is_clean(), "{r:?}");
}

/// The one shot's fixed cost in closed form: the launch once (every block at once), and six
/// `dcci` on its critical path — a peer's readable flag written (1) and waited for (2), the
/// read-done flag written (3) and waited for by block 0 (4), block 0's leave to add written (5)
/// and waited for (6).
#[test]
fn the_one_shot_aiv_allreduce_pays_one_launch_and_six_dcci() {
    let time = |launch: &str, dcci: &str, bytes: u64| {
        let text = include_str!("../../../configs/a2a3.toml")
            .replace("hccl_aiv_launch_ns = 3400.0", &format!("hccl_aiv_launch_ns = {launch}"))
            .replace("dcci_ns = 50.0", &format!("dcci_ns = {dcci}"));
        let cfg = Config::from_toml(&text, "aiv").unwrap();
        let p = run_point(&cfg, &aiv_allreduce(8, 8).with_timing_only(true), bytes, false).unwrap().unwrap();
        p.row.time_us
    };
    for bytes in [1024, 64 << 10] {
        let base = time("0.0", "0.0", bytes);
        let launched = time("3400.0", "0.0", bytes);
        assert!((launched - base - 3.4).abs() < 0.011, "{bytes} B: {base} us, {launched} us with the launch");
    }
    // At 1 KiB nothing else is on the path (at 64 KiB the transfers hide some of it).
    let (base, dcci) = (time("0.0", "0.0", 1024), time("0.0", "500.0", 1024));
    assert!((dcci - base - 6.0 * 0.5).abs() < 0.011, "{base} us, {dcci} us with dcci 500 ns");
    // One shot at 64 KiB, two-shot just above it: about the same time at HCCL's threshold.
    let (at, above) = (time("3400.0", "50.0", 64 << 10), time("3400.0", "50.0", (64 << 10) + 32));
    assert!((at / above - 1.0).abs() < 0.1, "one shot {at} us at 64 KiB, two-shot {above} us above");
}

fn aiv_allgather(ranks: usize, core_num: usize) -> SweepSpec {
    SweepSpec::new(Call::new(Kind::AllGather, ranks).with_mode(Mode::AivMesh).with_core_num(core_num))
}

#[test]
fn the_aiv_allgather_delivers_every_row_on_any_rank_and_block_count() {
    let cfg = Config::default_preset();
    // Fewer blocks than ranks (a block serves several peers), more (the extra ones idle), one.
    for (ranks, core_num, bytes) in [(2, 1, 4096), (3, 2, 1000), (8, 3, 1 << 16), (8, 48, 3 << 20)] {
        let p = run_point(&cfg, &aiv_allgather(ranks, core_num).with_iters(2), bytes, false).unwrap().unwrap();
        assert_eq!(p.row.nwrong, Some(0), "{ranks} ranks, {core_num} blocks");
    }
}

/// The AIV allgather's fixed start-up (chip.hccl_aiv_launch_ns) is paid once per call, on
/// every block at once: the time moves by exactly the configured amount, at any size.
#[test]
fn the_aiv_allgather_pays_its_launch_once() {
    let time = |launch: &str, bytes: u64| {
        let text = include_str!("../../../configs/a2a3.toml")
            .replace("hccl_aiv_launch_ns = 3400.0", &format!("hccl_aiv_launch_ns = {launch}"));
        let cfg = Config::from_toml(&text, "aiv").unwrap();
        let p = run_point(&cfg, &aiv_allgather(8, 8).with_timing_only(true), bytes, false).unwrap().unwrap();
        p.row.time_us
    };
    for bytes in [90_112, 2_883_584] {
        let (none, some) = (time("0.0", bytes), time("3400.0", bytes));
        assert!((some - none - 3.4).abs() < 0.011, "{bytes} B: {none} us without, {some} us with");
    }
}

fn aiv_broadcast(ranks: usize, core_num: usize, root: usize) -> SweepSpec {
    let call = Call::new(Kind::Broadcast, ranks).with_mode(Mode::AivMesh).with_core_num(core_num).with_root(root);
    SweepSpec::new(call)
}

/// HCCL's AIV broadcast: one shot up to 190 KiB, the relay on NR - 1 blocks above it (steps
/// that do not divide evenly, a root in the middle, two ranks with no relay), every element
/// right over repeated calls, and clean under the checker on both paths.
#[test]
fn the_aiv_broadcast_delivers_in_one_shot_and_through_its_relay() {
    let cfg = Config::default_preset();
    for (ranks, core_num, root) in [(2, 2, 1), (3, 5, 0), (5, 5, 2), (8, 48, 7), (8, 8, 3)] {
        for bytes in [4 * ranks as u64, 190 * 1024, 190 * 1024 + 4, 3 << 20, (5 << 20) + 12] {
            let p =
                run_point(&cfg, &aiv_broadcast(ranks, core_num, root).with_iters(2), bytes, false).unwrap().unwrap();
            assert_eq!(p.row.nwrong, Some(0), "{ranks} ranks, {core_num} blocks, root {root}, {bytes} B: {:?}", p.row);
            assert!(p.row.failed.is_none(), "{:?}", p.row);
        }
    }
    let c = ranksim_cli::checker::catalogue().into_iter().find(|c| c.name == "broadcast-aiv-mesh-host").unwrap();
    let r = ranksim_cli::checker::check(&cfg, &c, 8, &CheckOptions { seeds: 2, ..CheckOptions::default() }).unwrap();
    assert!(r.is_clean(), "{r:?}");
}

#[test]
fn the_aiv_broadcast_needs_a_block_per_rank() {
    let mut w = Config::default_preset().world().unwrap();
    let dom = w.world_domain("comm_d0").unwrap();
    let data = w.alloc_window(&dom, "data", DType::F32, &[64]).unwrap();
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[8, 7]).unwrap();
    let how = ranksim::collectives::AllGather { mode: Mode::AivMesh, path: Path::Host, core_num: 7 };
    let e = ranksim::collectives::broadcast_with(&mut w, &data, &sig, 0, how).unwrap_err().to_string();
    assert!(e.contains("core_num 7 must be at least 8"), "{e}");
    let wrong = w.alloc_window(&dom, "sig8", DType::I32, &[8, 8]).unwrap();
    let how = ranksim::collectives::AllGather { core_num: 8, ..how };
    let e = ranksim::collectives::broadcast_with(&mut w, &data, &wrong, 0, how).unwrap_err().to_string();
    assert!(e.contains("[8, 7]"), "{e}");
}

/// a2a3 with one `[chip]` number replaced.
fn a2a3_with(key_line: &str, value: &str) -> Config {
    let text = include_str!("../../../configs/a2a3.toml");
    let key = key_line.split('=').next().unwrap().trim();
    assert!(text.contains(key_line), "{key_line}");
    Config::from_toml(&text.replace(key_line, &format!("{key} = {value}")), "a2a3-variant").unwrap()
}

fn time_us(cfg: &Config, spec: &SweepSpec, bytes: u64) -> f64 {
    run_point(cfg, &spec.clone().with_timing_only(true), bytes, false).unwrap().unwrap().row.time_us
}

/// The fixed costs every HCCL-class AIV kernel pays (issue 41). Its launch
/// (chip.hccl_aiv_launch_ns) is paid once per call, by every block at once, so on 8 ranks the
/// time moves by exactly the configured amount at any size. The cache maintenance of its
/// flags (chip.dcci_ns): on two ranks (one flag each way, nothing queued behind another) and
/// small (8 KiB, one tile per block) the time moves by a whole number of dcci, those on
/// the critical path: 4 for the one-shot
/// broadcast (the root's flag, the peer's read of it, the peer's flag back, the root's read of
/// it; the broadcast drains its pipes before each flag, as HCCL's kernel does), 1 for the
/// one-shot allgather (the read of its flag: the dcci before the flag overlaps its last store,
/// which the flag's release ordering waits for anyway), 4 for reduce_scatter and
/// all_to_all (two barriers, each a dcci before its flags and one after its waits), 6 for
/// allreduce (three such barriers: ready, reduce-scatter stored, allgather read).
#[test]
fn every_aiv_kernel_pays_its_launch_once_and_a_dcci_per_flag_access() {
    let rs = |n| SweepSpec::new(Call::new(Kind::ReduceScatter, n).with_mode(Mode::AivMesh).with_core_num(8));
    let a2a = |n| SweepSpec::new(Call::new(Kind::AllToAll, n).with_mode(Mode::AivMesh).with_core_num(8));
    let ar = |n| SweepSpec::new(Call::new(Kind::AllReduce, n).with_mode(Mode::AivMesh).with_core_num(8));
    let cases = [
        ("broadcast", aiv_broadcast(8, 8, 0), aiv_broadcast(2, 8, 0), 4),
        ("allgather", aiv_allgather(8, 8), aiv_allgather(2, 8), 1),
        ("reduce_scatter", rs(8), rs(2), 4),
        ("all_to_all", a2a(8), a2a(2), 4),
        ("allreduce", ar(8), ar(2), 6),
    ];
    let launch = "hccl_aiv_launch_ns = 3400.0";
    let dcci = "dcci_ns = 50.0";
    for (what, eight, two, dccis) in cases {
        for bytes in [1024u64, 8192, 65536, 1 << 20] {
            let none = time_us(&a2a3_with(launch, "0.0"), &eight, bytes);
            let some = time_us(&a2a3_with(launch, "3400.0"), &eight, bytes);
            assert!((some - none - 3.4).abs() < 0.0011, "{what} {bytes} B: {none} us without the launch, {some} with");
            if bytes != 8192 {
                // Larger: more tiles per block, whose packets interleave differently once the
                // flags move (and the broadcast's relay raises a flag per step).
                continue;
            }
            let zero = time_us(&a2a3_with(dcci, "0.0"), &two, bytes);
            let slow = time_us(&a2a3_with(dcci, "10.0"), &two, bytes);
            let n = (slow - zero) / 0.01;
            assert!((n - dccis as f64).abs() < 0.01, "{what} {bytes} B: {n} dcci of 10 ns on the critical path");
        }
    }
}

/// One bf16 call of `kind` in `mode` on `ranks` ranks of `cfg` (8 blocks where the mode takes
/// them), rank `r`'s element `i` staged as `v(r, i)`; every rank's data buffer afterwards.
fn bf16_call(
    cfg: &Config,
    kind: Kind,
    mode: Mode,
    ranks: usize,
    count: usize,
    v: &dyn Fn(usize, usize) -> f64,
) -> Vec<Vec<f64>> {
    let cfg = cfg.clone().with_ranks(ranks).unwrap();
    let mut w = cfg.world().unwrap();
    let dom = w.world_domain("comm_bf16").unwrap();
    let call = Call::new(kind, ranks).with_mode(mode).with_core_num(8).with_dtype(DType::BF16);
    let call = if mode == Mode::Rhd || mode == Mode::Hier { call.with_core_num(1) } else { call };
    let b = call.alloc(&mut w, &dom, count).unwrap();
    let data = b.input.clone().unwrap();
    for r in 0..ranks {
        let vals: Vec<f64> = (0..data.numel()).map(|i| v(r, i)).collect();
        w.write_f64(&data, r, &vals).unwrap();
    }
    call.queue(&mut w, &b).unwrap();
    w.run().unwrap();
    (0..ranks).map(|r| w.read_f64(&data, r).unwrap()).collect()
}

/// The bf16 nearest to `x` (ties to even), from `x`'s f32 bits: the reference rounding.
fn bf16_nearest(x: f32) -> f64 {
    let bits = x.to_bits();
    let rounded = bits.wrapping_add(0x7fff + ((bits >> 16) & 1)) & 0xffff_0000;
    f64::from(f32::from_bits(rounded))
}

/// bf16 in every HCCL-class reduction (issue 41, item 5), against reference values computed
/// here in Rust (no golden of the measure library, no numpy): (1) sums of signed sixteenths
/// on 8 ranks (16 on two-node for hier), whose partial sums bf16 holds exactly in any order,
/// so every algorithm must give the exact sum; (2) on 2 ranks, one addition that bf16 must
/// round, `1 + k/128` plus a few thousandths, which every algorithm must round to the nearest
/// bf16, ties to even, as the reference does.
#[test]
fn every_hccl_class_reduction_sums_bf16_as_the_rust_reference_does() {
    let a2a3 = Config::default_preset();
    let two_node = Config::preset("two-node").unwrap();
    let cases: [(&Config, Kind, Mode, usize); 7] = [
        (&a2a3, Kind::AllReduce, Mode::TwoShot, 8),
        (&a2a3, Kind::AllReduce, Mode::AivMesh, 8),
        (&a2a3, Kind::AllReduce, Mode::SdmaMesh, 8),
        (&a2a3, Kind::AllReduce, Mode::Rhd, 8),
        (&two_node, Kind::AllReduce, Mode::Hier, 16),
        (&a2a3, Kind::ReduceScatter, Mode::AivMesh, 8),
        (&a2a3, Kind::ReduceScatter, Mode::SdmaMesh, 8),
    ];
    let count = 1000;
    let sixteenths = |r: usize, i: usize| ((i * 7 + r * 3) % 16) as f64 / 16.0 - 0.5;
    for (cfg, kind, mode, ranks) in cases {
        let got = bf16_call(cfg, kind, mode, ranks, count, &sixteenths);
        for (r, row) in got.iter().enumerate() {
            // allreduce: every element summed everywhere; reduce_scatter: row r of rank r.
            let (lo, hi) = if kind == Kind::AllReduce { (0, row.len()) } else { (r * count, (r + 1) * count) };
            for (i, &got) in row.iter().enumerate().take(hi).skip(lo) {
                let want: f64 = (0..ranks).map(|q| sixteenths(q, i)).sum();
                assert_eq!(got, want, "{kind} {mode} rank {r} element {i}");
            }
        }
        if mode == Mode::Hier {
            continue; // hier needs whole servers: two ranks are not
        }
        let a = |i: usize| 1.0 + (i % 8) as f64 / 128.0;
        let b = |i: usize| ((i % 13) + 1) as f64 * 0.0009765625 * 1.5; // 1.5 k / 1024: below a's ulp, many ties
        let two = |r: usize, i: usize| if r == 0 { a(i) } else { b(i) };
        let got = bf16_call(cfg, kind, mode, 2, count, &two);
        let mut rounded = 0;
        for (r, row) in got.iter().enumerate() {
            let (lo, hi) = if kind == Kind::AllReduce { (0, row.len()) } else { (r * count, (r + 1) * count) };
            for (i, &got) in row.iter().enumerate().take(hi).skip(lo) {
                let exact = bf16_nearest(two(0, i) as f32) as f32 + bf16_nearest(two(1, i) as f32) as f32;
                let want = bf16_nearest(exact);
                rounded += usize::from(want != f64::from(exact));
                assert_eq!(got, want, "{kind} {mode} 2 ranks, rank {r} element {i}: {exact} rounds to {want}");
            }
        }
        assert!(rounded > 100, "{kind} {mode}: only {rounded} sums needed rounding");
    }
}
