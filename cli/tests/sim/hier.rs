//! The server-level hierarchical allreduce (`--mode hier`) and the grouped full-mesh
//! all_to_all (`--mode grouped-mesh`): reference results on many server shapes, the bytes and
//! signals their phases imply, their timing against the algorithms they are built from, and
//! byte-identical output for the same seed.

use crate::coll_common::{allclose, assert_signal_clear, fold, read_f64, stored_as, tolerance, write_f64};
use ranksim::Config;
use ranksim::collectives::{self, AllReduce, Call, Kind, Mode, Path};
use ranksim::prelude::*;
use ranksim::sim_core::stats::Traffic;
use ranksim_cli::sweep::{SweepSpec, run_point};
use std::process::Command;

/// An a2a3 machine of `n` ranks in servers of `g`, and the domain of all of them.
fn servers(n: usize, g: usize) -> (World, Domain) {
    let cfg = Config::default_preset();
    let cfg = if n == cfg.machine.ranks { cfg } else { cfg.with_ranks(n).unwrap() };
    let mut w = cfg.world().unwrap();
    w.set_server_ranks(g).unwrap();
    let dom = w.world_domain("comm_d0").unwrap();
    (w, dom)
}

fn value(dt: DType, r: usize, i: usize) -> f64 {
    let v = ((r * 7 + i * 3) % 17) as f64;
    if dt.is_float() { v * 0.125 - 1.0 } else { v - 8.0 }
}

/// Runs `calls` hier allreduces of `numel` elements on `n` ranks in servers of `g` and
/// returns the world, the data, the signal and the run.
fn run_hier(
    n: usize,
    g: usize,
    numel: usize,
    (dt, op, path, core_num): (DType, ReduceOp, Path, usize),
    calls: usize,
) -> (World, Tensor, Tensor, RunReport) {
    let (mut w, dom) = servers(n, g);
    let data = w.alloc_window(&dom, "data", dt, &[numel]).unwrap();
    let shape = collectives::signal_shape_on(Kind::AllReduce, Mode::Hier, path, n, core_num, g);
    let sig = w.alloc_window(&dom, "sig", DType::I32, &shape).unwrap();
    for r in 0..n {
        write_f64(&mut w, &data, r, &(0..numel).map(|i| value(dt, r, i)).collect::<Vec<_>>());
    }
    for _ in 0..calls {
        collectives::allreduce(&mut w, &data, &sig, AllReduce { op, mode: Mode::Hier, path, core_num }).unwrap();
    }
    let report = w.run().unwrap();
    (w, data, sig, report)
}

#[test]
fn hier_allreduce_gives_the_reference_on_every_server_shape() {
    // (ranks, ranks per server): one server, servers of one rank, power-of-two server counts,
    // and server counts RHD folds (3, 5, 6 servers), with sizes that cut unevenly.
    let cases = [(8, 8), (6, 1), (8, 2), (12, 4), (9, 3), (10, 2), (24, 4), (16, 8), (20, 4)];
    let how = [
        (DType::F32, ReduceOp::Sum, Path::Host, 1),
        (DType::F16, ReduceOp::Max, Path::Host, 3),
        (DType::I32, ReduceOp::Sum, Path::InCore, 1),
        (DType::BF16, ReduceOp::Min, Path::Host, 2),
    ];
    for (k, &(n, g)) in cases.iter().enumerate() {
        for (j, &(dt, op, path, core_num)) in how.iter().enumerate() {
            let numel = [1, 37, 1000, 4099][(k + j) % 4] * (1 + j);
            let (w, data, sig, _) = run_hier(n, g, numel, (dt, op, path, core_num), 1);
            let stored: Vec<Vec<f64>> =
                (0..n).map(|r| (0..numel).map(|i| stored_as(dt, value(dt, r, i))).collect()).collect();
            let want = fold(op, &stored);
            let (rtol, atol) = tolerance(dt);
            let first = read_f64(&w, &data, 0);
            for r in 0..n {
                let got = read_f64(&w, &data, r);
                let why =
                    format!("{n} ranks in servers of {g}, {dt} {op} {path} x{core_num}, {numel} elements, rank {r}");
                assert!(allclose(&got, &want, rtol, atol).is_ok(), "{why}: {:?}", allclose(&got, &want, rtol, atol));
                // Every element is reduced once, by its owner: every rank ends bit-identical.
                assert_eq!(got, first, "{why}: differs from rank 0");
            }
            assert_signal_clear(&w, &sig, n);
        }
    }
}

#[test]
fn back_to_back_hier_calls_reuse_their_signal() {
    // Max is idempotent, so three calls in one run give the one-call result; the signal ends
    // clear and no call overtakes the previous one's reads.
    for (n, g, blocks) in [(12, 4, 2), (10, 2, 1), (8, 8, 3)] {
        let (w, data, sig, _) = run_hier(n, g, 777, (DType::F32, ReduceOp::Max, Path::Host, blocks), 3);
        let stored: Vec<Vec<f64>> = (0..n).map(|r| (0..777).map(|i| value(DType::F32, r, i)).collect()).collect();
        let want = fold(ReduceOp::Max, &stored);
        for r in 0..n {
            assert_eq!(read_f64(&w, &data, r), want, "{n} ranks, servers of {g}, rank {r}");
        }
        assert_signal_clear(&w, &sig, n);
    }
}

#[test]
fn hier_with_servers_of_one_rank_is_rhd_to_the_picosecond() {
    // g = 1: no server phases, and the RHD between the "servers" is RHD on every rank, one
    // signal row further down: the same transfers at the same times.
    let rhd = |n: usize| {
        let cfg = Config::default_preset().with_ranks(n).unwrap();
        let mut w = cfg.world().unwrap();
        let dom = w.world_domain("comm_d0").unwrap();
        let data = w.alloc_window(&dom, "data", DType::F32, &[5000]).unwrap();
        let sig = w
            .alloc_window(
                &dom,
                "sig",
                DType::I32,
                &collectives::signal_shape(Kind::AllReduce, Mode::Rhd, Path::Host, n, 2),
            )
            .unwrap();
        collectives::allreduce(
            &mut w,
            &data,
            &sig,
            AllReduce { op: ReduceOp::Sum, mode: Mode::Rhd, path: Path::Host, core_num: 2 },
        )
        .unwrap();
        w.run().unwrap()
    };
    for n in [8, 12] {
        let (_, _, _, hier) = run_hier(n, 1, 5000, (DType::F32, ReduceOp::Sum, Path::Host, 2), 1);
        let rhd = rhd(n);
        assert_eq!(hier.end, rhd.end, "{n} ranks");
        assert_eq!(hier.traffic, rhd.traffic, "{n} ranks");
    }
}

/// What one rank of a hier allreduce moves when every cut is exact: the reduce-scatter reads
/// its slice from `g - 1` mates, the allgather the `g - 1` other slices once, RHD between `S =
/// 2^k` servers `2 (S-1)/S` of the slice; signals: 3 credits to each mate and 3 per RHD step,
/// a wait for each, an epilogue self-notify per mate cell and per RHD row.
fn hier_traffic(n: usize, g: usize, numel: usize, es: usize, blocks: usize) -> Traffic {
    let s = n / g;
    let k = s.ilog2() as u64;
    let (mates, b) = ((g - 1) as u64, blocks as u64);
    let slice = (numel / g * es) as u64;
    let rhd = 2 * slice * (s as u64 - 1) / s as u64;
    Traffic {
        remote_read_bytes: mates * slice + mates * slice + rhd,
        remote_notifies: b * (3 * mates + 3 * k),
        waits: b * (3 * mates + 3 * k),
        local_notifies: b * (mates + 3 * k),
        ..Traffic::default()
    }
}

#[test]
fn hier_moves_what_its_three_phases_imply() {
    for (n, g, blocks) in [(16, 4, 1), (16, 8, 2), (8, 2, 1), (8, 8, 1)] {
        // A size every block, server slice and halving cuts on the 32-byte grid.
        let numel = 8 * n * blocks * 64;
        let (_, _, _, report) = run_hier(n, g, numel, (DType::F32, ReduceOp::Sum, Path::Host, blocks), 1);
        let want = hier_traffic(n, g, numel, 4, blocks);
        for (r, t) in report.traffic.iter().enumerate().take(n) {
            let got = (t.remote_read_bytes, t.remote_write_bytes, t.remote_notifies, t.waits, t.local_notifies);
            let exp = (want.remote_read_bytes, 0, want.remote_notifies, want.waits, want.local_notifies);
            assert_eq!(got, exp, "{n} ranks, servers of {g}, {blocks} block(s), rank {r}");
        }
    }
}

fn sweep_spec(kind: Kind, mode: Mode, ranks: usize, core_num: usize) -> SweepSpec {
    SweepSpec::new(Call::new(kind, ranks).with_mode(mode).with_core_num(core_num))
}

#[test]
fn hier_sends_a_server_count_of_less_over_the_nics_than_rhd() {
    // two-node: two servers of 8 (the fabric's node), 25 GB/s RoCE NICs between them. RHD's
    // first step sends half the buffer across the NIC; hier sends 1/8 of it (a server slice)
    // and the rest over HCCS: at 16 MiB it must be clearly faster, and both are correct.
    let cfg = Config::preset("two-node").unwrap();
    assert_eq!(cfg.server_ranks(), 8);
    let size = 16 << 20;
    let hier = run_point(&cfg, &sweep_spec(Kind::AllReduce, Mode::Hier, 16, 1), size, false).unwrap().unwrap();
    let rhd = run_point(&cfg, &sweep_spec(Kind::AllReduce, Mode::Rhd, 16, 1), size, false).unwrap().unwrap();
    assert_eq!((hier.row.nwrong, rhd.row.nwrong), (Some(0), Some(0)));
    assert!(
        hier.row.busbw_gbps > 1.3 * rhd.row.busbw_gbps,
        "hier {} GB/s, rhd {} GB/s",
        hier.row.busbw_gbps,
        rhd.row.busbw_gbps
    );
}

#[test]
fn the_server_size_comes_from_the_config() {
    let k = |name: &str| Config::preset(name).unwrap().server_ranks();
    // Declared where the fabric folds the servers away; the hierarchical node elsewhere; a
    // flat fabric without the key is one server.
    assert_eq!((k("cm384"), k("atlas950-superpod"), k("a3-supernode")), (16, 64, 16));
    assert_eq!((k("cluster1024"), k("two-node"), k("a2a3"), k("ring8")), (8, 8, 8, 8));
    assert_eq!(Config::preset("cm384").unwrap().world().unwrap().server_ranks(), 16);
    // Fewer ranks than a server: one server of them; more must be whole servers.
    let pod = || Config::preset("atlas950-superpod").unwrap();
    assert_eq!(pod().with_ranks(32).unwrap().server_ranks(), 32);
    assert_eq!(pod().with_ranks(128).unwrap().world().unwrap().server_ranks(), 64);
    let e = pod().with_ranks(96).unwrap_err().to_string();
    assert!(e.contains("machine.server_ranks = 64") && e.contains("must divide machine.ranks = 96"), "{e}");
    let mut w = Config::default_preset().world().unwrap();
    assert!(w.set_server_ranks(3).unwrap_err().to_string().contains("must divide the machine's 8 ranks"));
}

#[test]
fn a_call_that_is_not_whole_servers_is_refused_with_what_to_change() {
    let (mut w, _) = servers(16, 8);
    let dom = w.create_domain("twelve", &(0..12).collect::<Vec<_>>(), DomainOptions::default()).unwrap();
    let data = w.alloc_window(&dom, "data", DType::F32, &[64]).unwrap();
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[12 + 2, 1]).unwrap();
    let how = AllReduce { op: ReduceOp::Sum, mode: Mode::Hier, path: Path::Host, core_num: 1 };
    let e = collectives::allreduce(&mut w, &data, &sig, how).unwrap_err().to_string();
    assert!(e.contains("12 ranks are not whole servers of 8") && e.contains("use a multiple of 8 ranks"), "{e}");
    // A signal shaped for one server is refused on a machine of two, naming the shape it needs.
    let (mut w, dom) = servers(16, 8);
    let data = w.alloc_window(&dom, "data", DType::F32, &[64]).unwrap();
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[18, 1]).unwrap();
    let e = collectives::allreduce(&mut w, &data, &sig, how).unwrap_err().to_string();
    assert!(e.contains("[13, 1]"), "{e}");
}

#[test]
fn grouped_mesh_all_to_all_delivers_every_block_on_any_rank_and_block_count() {
    for (ranks, core_num, bytes) in [(1, 1, 64), (2, 1, 4096), (3, 5, 1000), (8, 4, 1 << 16)] {
        let cfg = Config::default_preset();
        let p = run_point(&cfg, &sweep_spec(Kind::AllToAll, Mode::GroupedMesh, ranks, core_num), bytes, false)
            .unwrap()
            .unwrap();
        assert_eq!(p.row.nwrong, Some(0), "{ranks} ranks, {core_num} blocks");
        // Every rank writes one row block to each peer (its own stays on chip).
        let r = p.row.count;
        for t in p.report.traffic.iter().take(ranks) {
            assert_eq!(t.remote_write_bytes, (ranks as u64 - 1) * r * 4, "{ranks} ranks, {core_num} blocks");
        }
    }
    // 20 ranks: three rounds (8, 8, 3 peers).
    let cfg = Config::default_preset().with_ranks(20).unwrap();
    let p = run_point(&cfg, &sweep_spec(Kind::AllToAll, Mode::GroupedMesh, 20, 2), 20 * 256, false).unwrap().unwrap();
    assert_eq!(p.row.nwrong, Some(0));
}

#[test]
fn grouped_mesh_runs_where_posting_every_put_at_once_overflows_a_channel() {
    // 80 ranks on one block: sdma-mesh posts 80 puts on its one channel, more than the
    // chip's queue depth (chip.sdma.queue_depth = 64 on a2a3); grouped-mesh never has more
    // than 8 peers' puts posted, so it runs, and correctly.
    let cfg = Config::default_preset().with_ranks(80).unwrap();
    let run = |mode: Mode| run_point(&cfg, &sweep_spec(Kind::AllToAll, mode, 80, 1), 80 * 64, false);
    let grouped = run(Mode::GroupedMesh).unwrap().unwrap();
    assert_eq!(grouped.row.nwrong, Some(0));
    let why = match run(Mode::SdmaMesh) {
        Ok(Some(p)) => p.row.failed.unwrap_or_default(),
        Ok(None) => String::new(),
        Err(e) => e,
    };
    assert!(why.contains("more than its queue depth 64"), "{why}");
}

#[test]
fn grouped_mesh_waits_for_each_group_of_eight_peers() {
    // atlas950's one switch, 4 KiB per rank, latency-bound: a round's last put must land,
    // and the news of it come back across the switch, before the next round posts, so
    // against sdma-mesh (every put posted at once) grouped mesh pays about one round trip per
    // extra round: one more from 9 to 10 ranks (8 -> 9 peers), none from 10 to 17, one more
    // at 18.
    let cfg = Config::preset("atlas950-superpod").unwrap();
    let time = |mode: Mode, n: usize| {
        let spec = sweep_spec(Kind::AllToAll, mode, n, 1).with_warmup(1).with_timing_only(true);
        run_point(&cfg, &spec, 4096, false).unwrap().unwrap().row.time_us
    };
    let extra = |n: usize| time(Mode::GroupedMesh, n) - time(Mode::SdmaMesh, n);
    let (e9, e10, e17, e18) = (extra(9), extra(10), extra(17), extra(18));
    // A round trip: the put's flight and the news back, each the uplink and downlink
    // latencies (2 x 0.5 us), plus the round's serialisation and poll. sdma-mesh stages
    // through HCCL's buffer with a second credit barrier (its handshake), which costs it about
    // a notify and a poll more per peer (chip.notify_issue_ns + wait_poll_ns, 0.2 us here):
    // 1.4 us more at 17 ranks than at 10, 0.2 us at 18 than at 17.
    let per_peer = (cfg.chip.notify_issue_ns + cfg.chip.wait_poll_ns) / 1e3;
    assert!(e10 - e9 >= 1.9 - per_peer && e10 - e9 <= 3.0, "9 -> 10 ranks: {e9} -> {e10} us");
    assert!((e17 - e10).abs() <= 0.3 + 7.0 * per_peer, "10 -> 17 ranks (both two rounds): {e10} -> {e17} us");
    assert!(e18 - e17 >= 1.9 - per_peer && e18 - e17 <= 3.0, "17 -> 18 ranks: {e17} -> {e18} us");
}

fn ranksim(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ranksim")).args(args).output().expect("the ranksim binary runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).to_string())
}

#[test]
fn the_same_seed_gives_byte_identical_sweeps_of_both_modes() {
    for args in [
        ["sweep", "--config", "two-node", "--mode", "hier", "-e", "64K", "--seed", "7", "-n", "2"],
        ["sweep", "--collective", "all_to_all", "--mode", "grouped-mesh", "-e", "64K", "--seed", "7", "-n", "2"],
    ] {
        let (code, first) = ranksim(&args);
        assert_eq!(code, 0, "{first}");
        assert!(first.lines().any(|l| l.trim_start().starts_with("65536")), "{first}");
        assert!(first.contains("seed: 7 jitter: up to 20 ns per transfer"), "{first}");
        let (_, second) = ranksim(&args);
        assert_eq!(first, second, "{args:?}");
    }
}
