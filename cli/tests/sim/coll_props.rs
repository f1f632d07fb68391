//! Property tests of the collectives: for random rank counts (1..=16), sizes, dtypes, ops,
//! modes and paths, every collective gives the reference result, leaves its signal all zero,
//! (ring and two-shot) gives bit-identical results on every rank, and moves exactly the bytes,
//! notifies and waits per rank that reference §3.13 lists for the HOST builtins.

use crate::coll_common::{allclose, assert_signal_clear, fold, read_f64, setup, stored_as, tolerance, write_f64};
use collectives::{AllReduce, Kind, Mode, Path};
use proptest::prelude::*;
use ranksim::collectives;
use ranksim::prelude::*;
use ranksim::sim_core::stats::Traffic;

/// Values that keep every op and dtype well inside range and precision: near 1 for
/// products, small multiples of 1/8 otherwise.
fn value(op: ReduceOp, dt: DType, r: usize, i: usize) -> f64 {
    match (op, dt.is_float()) {
        (ReduceOp::Prod, true) => 1.0 + (((r + i) % 3) as f64 - 1.0) * 0.0078125,
        (ReduceOp::Prod, false) => [1.0, 1.0, -1.0][(r + i) % 3],
        (_, true) => ((r * 7 + i) % 13) as f64 * 0.125 - 0.5,
        (_, false) => ((r * 7 + i) % 13) as f64 - 6.0,
    }
}

/// What §3.13 says one rank of a HOST allreduce moves, and for ranksim's own algorithms
/// (two-shot, aiv-mesh, sdma-mesh, rhd; no PyPTO table covers them) what their definition implies:
/// a direct reduce-scatter pulls (or pushes) every peer's copy of this rank's slice, the
/// allgather moves every other slice once, behind three lane barriers.
///
/// `one_shot`: the call runs HCCL's one-shot AIV kernel (aiv-mesh, a small sum the chip adds
/// atomically, a block per rank): each peer's whole buffer is read once, each rank flags
/// every peer twice (data ready, read done) and waits three times per peer (the ready flag,
/// the read-done flag, its own block 0's leave to add), taking back four counts per peer.
fn allreduce_traffic(
    spec: AllReduce,
    nr: usize,
    me: usize,
    numel: usize,
    es: usize,
    stride: usize,
    one_shot: bool,
) -> Traffic {
    let peers = (nr - 1) as u64;
    let mut t = Traffic::default();
    if nr == 1 {
        return t;
    }
    let active = spec.core_num.min(stride);
    if one_shot {
        t.remote_read_bytes = peers * (numel * es) as u64;
        (t.remote_notifies, t.waits, t.local_notifies) = (2 * peers, 3 * peers, 4 * peers);
        return t;
    }
    match spec.mode {
        Mode::Mesh => {
            // §3.13: per block b, (NR-1) x its chunks' transfer bytes read and (NR-1)(K_b + 1)
            // notifies. Summed over the blocks, every one of the K = ceil(N/256) chunks is read
            // once from each peer, 32-byte rounded (§3.4), and the blocks' K_b add up to K.
            let k = numel.div_ceil(256);
            let last = numel - 256 * (k - 1);
            let round32 = |bytes: usize| bytes.div_ceil(32) * 32;
            t.remote_read_bytes = peers * ((k - 1) * round32(256 * es) + round32(last * es)) as u64;
            t.remote_notifies = peers * (k + active) as u64;
            t.waits = t.remote_notifies;
            t.local_notifies = peers * active as u64;
        }
        Mode::Ring => {
            t.remote_read_bytes = 2 * peers * (numel / nr * 4) as u64;
            t.remote_notifies = peers * (2 * nr as u64 - 1);
            t.waits = t.remote_notifies;
            t.local_notifies = t.remote_notifies;
        }
        Mode::SdmaMesh => {
            // Copy-engine puts: every other slice added into its owner, then this rank's slice
            // to every peer; the same three barriers as two-shot.
            let slice = |i: usize| (i + 1) * numel / nr - i * numel / nr;
            t.remote_write_bytes = ((numel - slice(me)) as u64 + peers * slice(me) as u64) * es as u64;
            t.remote_notifies = 3 * peers * active as u64;
            t.waits = t.remote_notifies;
            t.local_notifies = peers * active as u64;
        }
        Mode::Rhd => {
            // p = 2^k ranks halve then double: 2 (p-1)/p of the data read from partners (the
            // sizes are exact when numel is a multiple of p x 32 bytes), one notify per
            // partner per ready, gather-ready and read-done signal, k of each; the e = nr - p
            // extra ranks hand their whole buffer to a buddy and pull the result back.
            let k = nr.ilog2() as u64;
            let p = 1usize << k;
            let bytes = (numel * es) as u64;
            let extra = me >= p;
            let buddy = me + p < nr;
            t.remote_read_bytes = if extra { bytes } else { 2 * bytes * (p as u64 - 1) / p as u64 };
            if buddy {
                t.remote_read_bytes += bytes;
            }
            t.remote_notifies = if extra { 2 } else { 3 * k + u64::from(buddy) };
            t.local_notifies = if extra { 1 } else { 3 * k + 2 * u64::from(buddy) };
            t.waits = t.local_notifies;
            return scale_blocks(t, active);
        }
        Mode::Hier | Mode::GroupedMesh => unreachable!("allreduce_strategy draws the first six modes only"),
        Mode::TwoShot | Mode::AivMesh => {
            let slice = |i: usize| (i + 1) * numel / nr - i * numel / nr;
            t.remote_read_bytes = (peers * slice(me) as u64 + (numel - slice(me)) as u64) * es as u64;
            t.remote_notifies = 3 * peers * active as u64;
            t.waits = t.remote_notifies;
            t.local_notifies = peers * active as u64;
        }
    }
    t
}

/// Per-rank signal counts of `blocks` blocks that each run the algorithm on their own slice
/// (the bytes add up to the whole buffer already).
fn scale_blocks(mut t: Traffic, blocks: usize) -> Traffic {
    let b = blocks as u64;
    (t.remote_notifies, t.local_notifies, t.waits) = (b * t.remote_notifies, b * t.local_notifies, b * t.waits);
    t
}

/// Whether every block's range of an rhd call on `p` ranks halves exactly on the 32-byte grid
/// (f32 and f16), so [`allreduce_traffic`]'s `2 (p-1)/p` is the bytes read to the byte.
fn rhd_traffic_is_exact(p: usize, size: usize, blocks: usize) -> bool {
    size.is_multiple_of((1usize << p.ilog2()) * 16 * blocks)
}

/// The counters §3.13 covers (local bytes are not part of the table).
fn table_view(t: &Traffic) -> (u64, u64, u64, u64, u64) {
    (t.remote_read_bytes, t.remote_write_bytes, t.remote_notifies, t.waits, t.local_notifies)
}

fn allreduce_strategy() -> impl Strategy<Value = (usize, usize, DType, ReduceOp, Mode, Path, usize)> {
    (1usize..=16, 1usize..=2500, 0usize..2, 0usize..4, 0usize..6, 0usize..2, 1usize..=3).prop_map(
        |(p, size, dt, op, mode, path, c)| {
            let mode = Mode::ALL[mode];
            let path = [Path::Host, Path::InCore][path];
            let mut dt = [DType::F32, DType::F16][dt];
            let mut op = ReduceOp::ALL[op];
            let mut size = size;
            if mode == Mode::Ring && path == Path::Host {
                // The HOST ring is Sum x f32 and needs numel % NR == 0.
                dt = DType::F32;
                op = ReduceOp::Sum;
                size = size.div_ceil(p) * p;
            }
            if mode == Mode::SdmaMesh {
                // Inline reduce is an add, in the dtypes the chip's atomic add supports.
                op = ReduceOp::Sum;
                dt = [DType::F32, DType::BF16][size % 2];
            }
            if matches!(mode, Mode::TwoShot | Mode::AivMesh) && c == 3 {
                dt = [DType::I32, DType::BF16][size % 2];
            }
            let core_num = if path == Path::Host && mode != Mode::Ring { c } else { 1 };
            if mode == Mode::Rhd && size % 2 == 0 {
                // Half the cases on a size whose halvings fall on the 32-byte grid, where the
                // traffic is exact (see `rhd_traffic_is_exact`); the rest on any size.
                let grid = (1usize << p.ilog2()) * 16 * core_num;
                size = size.div_ceil(grid) * grid;
            }
            (p, size, dt, op, mode, path, core_num)
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    #[test]
    fn allreduce_matches_the_reference((p, size, dt, op, mode, path, core_num) in allreduce_strategy()) {
        let spec = AllReduce { op, mode, path, core_num };
        let (mut w, dom) = setup(p);
        let data = w.alloc_window(&dom, "data", dt, &[size]).unwrap();
        let shape = collectives::signal_shape(Kind::AllReduce, mode, path, p, core_num);
        let sig = w.alloc_window(&dom, "sig", DType::I32, &shape).unwrap();
        for r in 0..p {
            write_f64(&mut w, &data, r, &(0..size).map(|i| value(op, dt, r, i)).collect::<Vec<_>>());
        }
        // Goldens from the values as the dtype holds them, computed here.
        let stored: Vec<Vec<f64>> =
            (0..p).map(|r| (0..size).map(|i| stored_as(dt, value(op, dt, r, i))).collect()).collect();
        let want = fold(op, &stored);
        collectives::allreduce(&mut w, &data, &sig, spec).unwrap();
        let report = w.run().unwrap();
        let (rtol, atol) = tolerance(dt);
        let results: Vec<Vec<f64>> = (0..p).map(|r| read_f64(&w, &data, r)).collect();
        for (r, got) in results.iter().enumerate() {
            prop_assert!(allclose(got, &want, rtol, atol).is_ok(), "rank {}: {:?}", r, allclose(got, &want, rtol, atol));
        }
        assert_signal_clear(&w, &sig, p);
        if mode != Mode::Mesh {
            for r in 1..p {
                prop_assert!(results[r] == results[0], "{} results differ between rank 0 and rank {}", mode, r);
            }
        }
        if path == Path::Host && (mode != Mode::Rhd || rhd_traffic_is_exact(p, size, core_num)) {
            let stride = if shape.len() == 2 && mode != Mode::Ring { shape[1] } else { 1 };
            // HCCL's one-shot AIV kernel: at most 64 KiB (every size drawn here), a sum the
            // chip adds atomically, at least a block and a signal lane per rank.
            let one_shot = mode == Mode::AivMesh
                && op == ReduceOp::Sum
                && w.chip().atomic_add_supported(dt)
                && core_num.min(stride) >= p
                && size * dt.size() <= 64 * 1024;
            for (me, t) in report.traffic.iter().enumerate().take(p) {
                let want = allreduce_traffic(spec, p, me, size, dt.size(), stride, one_shot);
                prop_assert_eq!(table_view(t), table_view(&want), "rank {}", me);
            }
        }
    }

    #[test]
    fn data_movement_collectives_match_the_reference(p in 1usize..=16, r in 1usize..=700, path in 0usize..2, root in 0usize..16, which in 0usize..5) {
        let path = [Path::Host, Path::InCore][path];
        let root = root % p;
        let (mut w, dom) = setup(p);
        let es = 4u64;
        let peers = (p - 1) as u64;
        let sig_shape: &[usize] = &[p, 1];
        let sig = w.alloc_window(&dom, "sig", DType::I32, sig_shape).unwrap();
        let v = |rank: usize, i: usize| (rank * 10_000 + i) as f32;
        // (per-rank check, expected §3.13 traffic of rank `me`).
        let report;
        let expect: Box<dyn Fn(usize) -> Traffic>;
        match which {
            0 => {
                let stage = w.alloc_window(&dom, "stage", DType::F32, &[1, r]).unwrap();
                let target = w.alloc_window(&dom, "target", DType::F32, &[p, r]).unwrap();
                for k in 0..p { w.write(&stage, k, &(0..r).map(|i| v(k, i)).collect::<Vec<_>>()).unwrap(); }
                collectives::allgather(&mut w, &stage, &target, &sig, path).unwrap();
                report = w.run().unwrap();
                let want: Vec<f32> = (0..p).flat_map(|k| (0..r).map(move |i| v(k, i))).collect();
                for k in 0..p { prop_assert_eq!(w.read::<f32>(&target, k).unwrap(), want.clone()); }
                expect = Box::new(move |_| Traffic { remote_write_bytes: peers * r as u64 * es, remote_notifies: peers, waits: peers, local_notifies: peers, ..Traffic::default() });
            }
            1 => {
                let data = w.alloc_window(&dom, "data", DType::F32, &[p, r]).unwrap();
                for k in 0..p { w.write(&data, k, &(0..p * r).map(|i| v(k, i)).collect::<Vec<_>>()).unwrap(); }
                collectives::reduce_scatter(&mut w, &data, &sig, ReduceOp::Sum, path).unwrap();
                report = w.run().unwrap();
                for k in 0..p {
                    let got = &w.read::<f32>(&data, k).unwrap()[k * r..(k + 1) * r];
                    let want: Vec<f64> = (0..r).map(|i| (0..p).map(|q| v(q, k * r + i) as f64).sum()).collect();
                    let got: Vec<f64> = got.iter().map(|&x| x as f64).collect();
                    prop_assert!(allclose(&got, &want, 1e-5, 1e-8).is_ok());
                }
                expect = Box::new(move |_| Traffic { remote_read_bytes: peers * r as u64 * es, remote_notifies: 2 * peers, waits: 2 * peers, local_notifies: peers, ..Traffic::default() });
            }
            2 => {
                let input = w.alloc_window(&dom, "input", DType::F32, &[p, r]).unwrap();
                let target = w.alloc_window(&dom, "target", DType::F32, &[p, r]).unwrap();
                for k in 0..p { w.write(&input, k, &(0..p * r).map(|i| v(k, i)).collect::<Vec<_>>()).unwrap(); }
                collectives::all_to_all(&mut w, &input, &target, &sig, path).unwrap();
                report = w.run().unwrap();
                for k in 0..p {
                    let want: Vec<f32> = (0..p).flat_map(|src| (0..r).map(move |i| v(src, k * r + i))).collect();
                    prop_assert_eq!(w.read::<f32>(&target, k).unwrap(), want);
                }
                expect = Box::new(move |_| Traffic { remote_write_bytes: peers * r as u64 * es, remote_notifies: peers, waits: peers, local_notifies: peers, ..Traffic::default() });
            }
            3 => {
                let data = w.alloc_window(&dom, "data", DType::F32, &[1, r]).unwrap();
                for k in 0..p { w.write(&data, k, &(0..r).map(|i| v(k, i)).collect::<Vec<_>>()).unwrap(); }
                collectives::broadcast(&mut w, &data, &sig, root, path).unwrap();
                report = w.run().unwrap();
                for k in 0..p { prop_assert_eq!(w.read::<f32>(&data, k).unwrap(), (0..r).map(|i| v(root, i)).collect::<Vec<_>>()); }
                let tiles = r.div_ceil(256) as u64;
                expect = Box::new(move |me| Traffic {
                    remote_read_bytes: if me == root { 0 } else { r as u64 * es },
                    remote_notifies: peers * tiles,
                    waits: peers * tiles,
                    local_notifies: peers,
                    ..Traffic::default()
                });
            }
            _ => {
                collectives::barrier(&mut w, &sig, path).unwrap();
                report = w.run().unwrap();
                expect = Box::new(move |_| Traffic { remote_notifies: peers, waits: peers, local_notifies: peers, ..Traffic::default() });
            }
        }
        assert_signal_clear(&w, &sig, p);
        if path == Path::Host {
            for me in 0..p {
                prop_assert_eq!(table_view(&report.traffic[me]), table_view(&expect(me)), "collective {} rank {}", which, me);
            }
        }
    }
}
