//! The hierarchical HCCL-class allgather, reduce_scatter and all_to_all (`--mode hier`:
//! a mesh inside each server, halving-doubling / ring or pairwise between servers): reference
//! results on many server shapes and dtypes, back-to-back calls, the bytes their steps imply,
//! the time of a two-server allgather as the sum of its two levels, and the default sweep
//! across servers.

use crate::coll_common::{assert_signal_clear, read_f64, stored_as, write_f64};
use ranksim::Config;
use ranksim::collectives::{self, AllGather, Call, Kind, Mode, Path};
use ranksim::prelude::*;
use ranksim_cli::sweep::{SweepSpec, run_point};

/// An a2a3 machine of `n` ranks in servers of `g`, and the domain of all of them (a
/// timing-only world with `timing`).
fn machine(n: usize, g: usize, timing: bool) -> (World, Domain) {
    let cfg = Config::default_preset();
    let cfg = if n == cfg.machine.ranks { cfg } else { cfg.with_ranks(n).unwrap() };
    let mut w = cfg.world().unwrap();
    w.set_server_ranks(g).unwrap();
    if timing {
        w.set_timing_only().unwrap();
    }
    let dom = w.world_domain("comm_d0").unwrap();
    (w, dom)
}

fn servers(n: usize, g: usize) -> (World, Domain) {
    machine(n, g, false)
}

/// Small integers every dtype holds exactly, so sums of up to 32 of them are exact too.
fn value(r: usize, i: usize) -> f64 {
    (((r * 7 + i * 3) % 9) as f64) - 4.0
}

/// Server shapes: (ranks, ranks per server) — one server, servers of one rank, 2 servers
/// (ring = one exchange), powers of two from 4 (halving-doubling), and 3, 5, 6 (ring).
const SHAPES: [(usize, usize); 9] = [(8, 8), (6, 1), (16, 8), (8, 2), (16, 4), (32, 4), (12, 4), (10, 2), (12, 2)];

fn how(core_num: usize) -> AllGather {
    AllGather { mode: Mode::Hier, path: Path::Host, core_num }
}

fn signal(w: &mut World, dom: &Domain, kind: Kind, n: usize, core_num: usize) -> Tensor {
    let shape = collectives::signal_shape(kind, Mode::Hier, Path::Host, n, core_num);
    w.alloc_window(dom, "sig", DType::I32, &shape).unwrap()
}

#[test]
fn hier_allgather_gives_every_rank_every_row() {
    for (k, &(n, g)) in SHAPES.iter().enumerate() {
        let (dt, core_num) = [(DType::F32, 1), (DType::BF16, 3), (DType::I8, 2)][k % 3];
        let r = [1, 37, 300][k % 3];
        let (mut w, dom) = servers(n, g);
        let stage = w.alloc_window(&dom, "stage", dt, &[1, r]).unwrap();
        let target = w.alloc_window(&dom, "target", dt, &[n, r]).unwrap();
        let sig = signal(&mut w, &dom, Kind::AllGather, n, core_num);
        for rank in 0..n {
            write_f64(&mut w, &stage, rank, &(0..r).map(|i| value(rank, i)).collect::<Vec<_>>());
        }
        for _ in 0..2 {
            collectives::allgather_with(&mut w, &stage, &target, &sig, how(core_num)).unwrap();
        }
        w.run().unwrap();
        let want: Vec<f64> = (0..n).flat_map(|j| (0..r).map(move |i| stored_as(dt, value(j, i)))).collect();
        for rank in 0..n {
            assert_eq!(read_f64(&w, &target, rank), want, "{n} ranks in servers of {g}, {dt}, rank {rank}");
        }
        assert_signal_clear(&w, &sig, n);
    }
}

#[test]
fn hier_reduce_scatter_sums_each_row_into_its_owner() {
    for (k, &(n, g)) in SHAPES.iter().enumerate() {
        let (dt, core_num) = [(DType::F32, 1), (DType::BF16, 2), (DType::F16, 3)][k % 3];
        let r = [5, 64, 129][k % 3];
        let (mut w, dom) = servers(n, g);
        let data = w.alloc_window(&dom, "data", dt, &[n, r]).unwrap();
        let sig = signal(&mut w, &dom, Kind::ReduceScatter, n, core_num);
        for rank in 0..n {
            write_f64(&mut w, &data, rank, &(0..n * r).map(|i| value(rank, i)).collect::<Vec<_>>());
        }
        collectives::reduce_scatter_with(&mut w, &data, &sig, ReduceOp::Sum, how(core_num)).unwrap();
        w.run().unwrap();
        for rank in 0..n {
            let got = read_f64(&w, &data, rank);
            let want: Vec<f64> = (0..r).map(|i| (0..n).map(|j| value(j, rank * r + i)).sum()).collect();
            assert_eq!(&got[rank * r..(rank + 1) * r], &want[..], "{n} ranks in servers of {g}, {dt}, rank {rank}");
        }
        assert_signal_clear(&w, &sig, n);
    }
}

#[test]
fn hier_all_to_all_delivers_each_block_to_its_rank() {
    for (k, &(n, g)) in SHAPES.iter().enumerate() {
        let (dt, core_num) = [(DType::F32, 2), (DType::I16, 1), (DType::BF16, 3)][k % 3];
        let r = [3, 40, 200][k % 3];
        let (mut w, dom) = servers(n, g);
        let input = w.alloc_window(&dom, "input", dt, &[n, r]).unwrap();
        let target = w.alloc_window(&dom, "target", dt, &[n, r]).unwrap();
        let sig = signal(&mut w, &dom, Kind::AllToAll, n, core_num);
        for rank in 0..n {
            write_f64(&mut w, &input, rank, &(0..n * r).map(|i| value(rank, i)).collect::<Vec<_>>());
        }
        for _ in 0..2 {
            collectives::all_to_all_with(&mut w, &input, &target, &sig, how(core_num)).unwrap();
        }
        w.run().unwrap();
        for rank in 0..n {
            // Row j of rank's target is row `rank` of rank j's input.
            let want: Vec<f64> =
                (0..n).flat_map(|j| (0..r).map(move |i| stored_as(dt, value(j, rank * r + i)))).collect();
            assert_eq!(read_f64(&w, &target, rank), want, "{n} ranks in servers of {g}, {dt}, rank {rank}");
        }
        assert_signal_clear(&w, &sig, n);
    }
}

#[test]
fn hier_refuses_ranks_that_are_not_whole_servers() {
    // A machine of two servers of 8, and a domain of 12 of its ranks: one and a half servers.
    let (mut w, _) = servers(16, 8);
    let dom = w.create_domain("twelve", &(0..12).collect::<Vec<_>>(), DomainOptions::default()).unwrap();
    let stage = w.alloc_window(&dom, "stage", DType::F32, &[1, 4]).unwrap();
    let target = w.alloc_window(&dom, "target", DType::F32, &[12, 4]).unwrap();
    let sig = signal(&mut w, &dom, Kind::AllGather, 12, 1);
    let e = collectives::allgather_with(&mut w, &stage, &target, &sig, how(1)).unwrap_err().to_string();
    assert!(e.contains("12 ranks are not whole servers of 8"), "{e}");
}

/// What one rank of a hier call writes to other ranks when every row is `row` bytes, on `n`
/// ranks in servers of `g` (`S` servers): allgather `S - 1` rows between servers (doubling or
/// ring alike) and its `S` rows of local index `l` to each of `g - 1` mates; reduce_scatter the
/// same counts the other way round; all_to_all one row to each of the `n - 1` others.
fn written(kind: Kind, n: usize, g: usize, row: u64) -> u64 {
    let s = (n / g) as u64;
    match kind {
        Kind::AllToAll => (n as u64 - 1) * row,
        _ => ((s - 1) + (g as u64 - 1) * s) * row,
    }
}

#[test]
fn hier_writes_what_its_steps_imply() {
    for &(n, g) in &[(16, 8), (16, 4), (12, 4), (8, 1)] {
        for kind in [Kind::AllGather, Kind::ReduceScatter, Kind::AllToAll] {
            let (mut w, dom) = machine(n, g, true);
            let r = 256;
            let sig = signal(&mut w, &dom, kind, n, 1);
            let rows = w.alloc_window(&dom, "rows", DType::F32, &[n, r]).unwrap();
            match kind {
                Kind::AllGather => {
                    let stage = w.alloc_window(&dom, "stage", DType::F32, &[1, r]).unwrap();
                    collectives::allgather_with(&mut w, &stage, &rows, &sig, how(1)).unwrap();
                }
                Kind::ReduceScatter => {
                    collectives::reduce_scatter_with(&mut w, &rows, &sig, ReduceOp::Sum, how(1)).unwrap();
                }
                _ => {
                    let input = w.alloc_window(&dom, "input", DType::F32, &[n, r]).unwrap();
                    collectives::all_to_all_with(&mut w, &input, &rows, &sig, how(1)).unwrap();
                }
            }
            let report = w.run().unwrap();
            for (rank, t) in report.traffic.iter().enumerate().take(n) {
                let want = written(kind, n, g, r as u64 * 4);
                assert_eq!(t.remote_write_bytes, want, "{kind}, {n} ranks in servers of {g}, rank {rank}");
                assert_eq!(t.remote_read_bytes, 0, "{kind}: puts only");
            }
        }
    }
}

/// Rates of `cfg`'s HCCS links and RoCE NICs, bytes per us.
fn rates(cfg: &Config) -> (f64, f64) {
    let mut c = cfg.fabric.topology.clone();
    let eff = cfg.fabric.efficiency;
    let hccs = *c.link_mut(interconnect::LinkClass::Node).unwrap().0 * eff * 1e3;
    let level = interconnect::LinkClass::Level(1);
    let nic = *c.link_mut(level).unwrap().0 * c.efficiency_of(level, eff) * 1e3;
    (hccs, nic)
}

#[test]
fn a_two_server_allgather_takes_its_nic_step_then_its_mesh_step() {
    // two-node: each rank's row crosses its RoCE NIC once (the one step between two servers),
    // then its 2 rows go to each of 7 mates over their own HCCS links at once. The time is the
    // two steps' wire times plus fixed costs (posts, handshakes): between 16 and 64 MiB it
    // grows by the wire times' growth and the copy engine's per-descriptor costs (a descriptor
    // per MiB on each channel, chip.sdma.descriptor_ns each, the links idle meanwhile): no
    // less, and at most 10 % more.
    let cfg = Config::preset("two-node").unwrap();
    let (hccs, nic) = rates(&cfg);
    let wire = |size: u64| {
        let row = (size / 16) as f64;
        row / nic + 2.0 * row / hccs
    };
    let time = |mode: Mode, blocks: usize, size: u64| {
        let spec = SweepSpec::new(Call::new(Kind::AllGather, 16).with_mode(mode).with_core_num(blocks)).with_warmup(1);
        let p = run_point(&cfg, &spec, size, false).unwrap().unwrap();
        assert_eq!(p.row.nwrong, Some(0), "{mode} at {size} B");
        p.row.time_us
    };
    let (small, large) = (16u64 << 20, 64u64 << 20);
    let (t16, t64) = (time(Mode::Hier, 1, small), time(Mode::Hier, 1, large));
    let fixed = t16 - wire(small);
    assert!(fixed > 0.0 && fixed < 30.0, "fixed costs {fixed} us ({t16} us against {} us of wire)", wire(small));
    let grow = (t64 - t16) / (wire(large) - wire(small));
    assert!((1.0..1.1).contains(&grow), "{t16} -> {t64} us grows {grow} x the wire time's growth");
    // The copy-engine mesh puts 8 rows over each NIC where hier puts one: hier is well over
    // twice as fast.
    let mesh = time(Mode::SdmaMesh, 8, small);
    assert!(mesh > 2.5 * t16, "sdma-mesh {mesh} us, hier {t16} us");
}

#[test]
fn the_default_sweep_across_servers_runs_hier() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ranksim"))
        .args(["sweep", "--config", "two-node", "--collective", "all_to_all", "-b", "64K", "-e", "64K", "--no-data"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("hier"), "{text}");
    for c in ["allgather", "reduce_scatter"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ranksim"))
            .args(["sweep", "--config", "two-node", "--collective", c, "--mode", "hier", "-b", "64K", "-e", "64K"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{c}: {text}");
    }
}
