//! PyPTO's distributed conformance suite (reference §7), ported: the same protocols, inputs,
//! goldens and tolerances, for P in {1, 2, 4, 8} where the item allows and the sizes each item
//! names. Test names carry the item number. Items covered in other files: 24-25 (deferred.rs),
//! 58, 60, 74 (domains.rs), 39, 59, 62, 63, 68 (programs.rs), 40, 64-66, 73 (primitives.rs).

use crate::coll_common::{
    allclose, arange, assert_signal_clear, fold, read_f64, setup, stored_as, tolerance, write_f64,
};
use collectives::{AllReduce, Mode, Path};
use ranksim::collectives;
use ranksim::prelude::*;

const PS: [usize; 4] = [1, 2, 4, 8];

fn hand_barrier(core: &mut Core, sig: &Tensor, g: i32) -> SimResult<()> {
    let (me, n) = (core.rank(), core.nranks());
    for p in (0..n).filter(|&p| p != me) {
        core.notify(sig, p, &[me, 0], 1, NotifyOp::AtomicAdd)?;
    }
    for p in (0..n).filter(|&p| p != me) {
        core.wait(sig, &[p, 0], g, WaitCmp::Ge)?;
    }
    Ok(())
}

// ---- hand-rolled collectives (items 1-6) ---------------------------------------------------

/// Item 1 input: `in[r, d, j] = r*1000 + d*100 + j`.
fn a2a_input(r: usize, p: usize, size: usize) -> Vec<f32> {
    (0..p).flat_map(|d| (0..size).map(move |j| (r * 1000 + d * 100 + j) as f32)).collect()
}

fn check_a2a(w: &World, target: &Tensor, p: usize, size: usize, offset: f32) {
    for rank in 0..p {
        let got = w.read::<f32>(target, rank).unwrap();
        for src in 0..p {
            for j in 0..size {
                assert_eq!(
                    got[src * size + j],
                    (src * 1000 + rank * 100 + j) as f32 + offset,
                    "rank {rank} src {src} j {j}"
                );
            }
        }
    }
}

#[test]
fn t01_hand_rolled_all_to_all() {
    const SIZE: usize = 64;
    for p in PS {
        let (mut w, dom) = setup(p);
        let input = w.alloc_window(&dom, "input", DType::F32, &[p, SIZE]).unwrap();
        let target = w.alloc_window(&dom, "target", DType::F32, &[p, SIZE]).unwrap();
        let sig = w.alloc_window(&dom, "sig", DType::I32, &[p, 1]).unwrap();
        for r in 0..p {
            w.write(&input, r, &a2a_input(r, p, SIZE)).unwrap();
        }
        let (i, t, s) = (input.clone(), target.clone(), sig.clone());
        w.dispatch_all(
            &dom,
            Dispatch::kernel("a2a", 1, move |c| {
                let (me, n) = (c.rank(), c.nranks());
                for d in 0..n {
                    c.put(&t, d, &i, &CopyOpts::new().region(&[me, 0], &[d, 0], &[1, SIZE]))?;
                }
                for d in 0..n {
                    c.notify(&s, d, &[me, 0], 1, NotifyOp::Set)?;
                }
                for src in 0..n {
                    c.wait(&s, &[src, 0], 1, WaitCmp::Eq)?;
                }
                Ok(())
            }),
        )
        .unwrap();
        w.run().unwrap();
        check_a2a(&w, &target, p, SIZE, 0.0);
    }
}

#[test]
fn t02_hand_rolled_allgather() {
    const SIZE: usize = 64;
    for p in PS {
        let (mut w, dom) = setup(p);
        let x = w.alloc_tensor("x", DType::F32, &[1, SIZE]).unwrap();
        let scratch = w.alloc_window(&dom, "scratch", DType::F32, &[1, SIZE]).unwrap();
        let out = w.alloc_tensor("out", DType::F32, &[p, SIZE]).unwrap();
        let sig = w.alloc_window(&dom, "sig", DType::I32, &[p, 1]).unwrap();
        for r in 0..p {
            w.write(&x, r, &arange(r, SIZE)).unwrap();
        }
        let (xk, sc, o, s) = (x.clone(), scratch.clone(), out.clone(), sig.clone());
        w.dispatch_all(
            &dom,
            Dispatch::kernel("allgather", 1, move |c| {
                let t = c.load(&xk, &[0, 0], &[1, SIZE])?;
                c.store(&t, &sc, &[0, 0])?;
                hand_barrier(c, &s, 1)?;
                for src in 0..c.nranks() {
                    let t = c.remote_load(&sc, src, &[0, 0], &[1, SIZE])?;
                    c.store(&t, &o, &[src, 0])?;
                }
                Ok(())
            }),
        )
        .unwrap();
        w.run().unwrap();
        let want: Vec<f32> = (0..p).flat_map(|r| arange(r, SIZE)).collect();
        for r in 0..p {
            assert_eq!(w.read::<f32>(&out, r).unwrap(), want, "P={p} rank {r}");
        }
    }
}

#[test]
fn t03_hand_rolled_mesh_allreduce() {
    const SIZE: usize = 256;
    for p in PS {
        let (mut w, dom) = setup(p);
        let stage = w.alloc_window(&dom, "stage", DType::F32, &[1, SIZE]).unwrap();
        let out = w.alloc_tensor("out", DType::F32, &[1, SIZE]).unwrap();
        let sig = w.alloc_window(&dom, "sig", DType::I32, &[p, 1]).unwrap();
        for r in 0..p {
            w.write(&stage, r, &arange(r, SIZE)).unwrap();
        }
        let (st, o, s) = (stage.clone(), out.clone(), sig.clone());
        w.dispatch_all(
            &dom,
            Dispatch::kernel("allreduce", 1, move |c| {
                hand_barrier(c, &s, 1)?;
                let mut acc = c.load(&st, &[0, 0], &[1, SIZE])?;
                let me = c.rank();
                for peer in (0..c.nranks()).filter(|&q| q != me) {
                    let t = c.remote_load(&st, peer, &[0, 0], &[1, SIZE])?;
                    acc = c.add(&acc, &t)?;
                }
                c.store(&acc, &o, &[0, 0])
            }),
        )
        .unwrap();
        w.run().unwrap();
        let want: Vec<f64> = (0..SIZE).map(|i| (0..p).map(|r| (r * 100 + i) as f64).sum()).collect();
        for r in 0..p {
            allclose(&read_f64(&w, &out, r), &want, 1e-5, 1e-8).unwrap();
        }
    }
}

#[test]
fn t04_hand_rolled_ring_allreduce() {
    // Per-round signal rows, remote_load from the left neighbour; out[i] = P*i + 100*P(P-1)/2.
    const SIZE: usize = 256;
    for p in [2, 4, 8] {
        let (mut w, dom) = setup(p);
        let data = w.alloc_window(&dom, "data", DType::F32, &[1, SIZE]).unwrap();
        let sig = w.alloc_window(&dom, "sig", DType::I32, &[2 * (p - 1), p]).unwrap();
        for r in 0..p {
            w.write(&data, r, &arange(r, SIZE)).unwrap();
        }
        let (d, s) = (data.clone(), sig.clone());
        w.dispatch_all(
            &dom,
            Dispatch::kernel("ring", 1, move |c| {
                let (me, n) = (c.rank(), c.nranks());
                let (left, ce) = ((me + n - 1) % n, SIZE / n);
                let round = |c: &mut Core, row: usize| -> SimResult<()> {
                    for q in (0..n).filter(|&q| q != me) {
                        c.notify(&s, q, &[row, me], 1, NotifyOp::AtomicAdd)?;
                    }
                    for q in (0..n).filter(|&q| q != me) {
                        c.wait(&s, &[row, q], 1, WaitCmp::Ge)?;
                    }
                    Ok(())
                };
                for step in 1..n {
                    round(c, step - 1)?;
                    let idx = (me + 2 * n - step - 1) % n;
                    let recv = c.remote_load(&d, left, &[0, idx * ce], &[1, ce])?;
                    let own = c.load(&d, &[0, idx * ce], &[1, ce])?;
                    let sum = c.add(&own, &recv)?;
                    c.store(&sum, &d, &[0, idx * ce])?;
                }
                for step in 1..n {
                    round(c, n - 2 + step)?;
                    let idx = (me + n - step) % n;
                    let recv = c.remote_load(&d, left, &[0, idx * ce], &[1, ce])?;
                    c.store(&recv, &d, &[0, idx * ce])?;
                }
                Ok(())
            }),
        )
        .unwrap();
        w.run().unwrap();
        let want: Vec<f32> = (0..SIZE).map(|i| (p * i + 100 * p * (p - 1) / 2) as f32).collect();
        for r in 0..p {
            assert_eq!(w.read::<f32>(&data, r).unwrap(), want, "P={p} rank {r}");
        }
    }
}

#[test]
fn t05_hand_rolled_broadcast() {
    for p in PS {
        let (mut w, dom) = setup(p);
        let stage = w.alloc_window(&dom, "stage", DType::F32, &[1, 64]).unwrap();
        let out = w.alloc_tensor("out", DType::F32, &[1, 64]).unwrap();
        let sig = w.alloc_window(&dom, "sig", DType::I32, &[p, 1]).unwrap();
        w.write(&stage, 0, &arange(0, 64)).unwrap();
        let (st, o, s) = (stage.clone(), out.clone(), sig.clone());
        w.dispatch_all(
            &dom,
            Dispatch::kernel("broadcast", 1, move |c| {
                hand_barrier(c, &s, 1)?;
                let t = c.remote_load(&st, 0, &[0, 0], &[1, 64])?;
                c.store(&t, &o, &[0, 0])
            }),
        )
        .unwrap();
        w.run().unwrap();
        for r in 0..p {
            assert_eq!(w.read::<f32>(&out, r).unwrap(), arange(0, 64));
        }
    }
}

/// Item 6 / 21 golden: `out[r] = sum_k inputs[k][r*size .. (r+1)*size]`.
fn rs_golden(p: usize, r: usize, size: usize) -> Vec<f64> {
    (0..size).map(|j| (0..p).map(|k| (k * 100 + r * size + j) as f64).sum()).collect()
}

#[test]
fn t06_hand_rolled_reduce_scatter() {
    const SIZE: usize = 64;
    for p in PS {
        let (mut w, dom) = setup(p);
        let stage = w.alloc_window(&dom, "stage", DType::F32, &[1, p * SIZE]).unwrap();
        let out = w.alloc_tensor("out", DType::F32, &[1, SIZE]).unwrap();
        let sig = w.alloc_window(&dom, "sig", DType::I32, &[p, 1]).unwrap();
        for r in 0..p {
            w.write(&stage, r, &arange(r, p * SIZE)).unwrap();
        }
        let (st, o, s) = (stage.clone(), out.clone(), sig.clone());
        w.dispatch_all(
            &dom,
            Dispatch::kernel("reduce_scatter", 1, move |c| {
                hand_barrier(c, &s, 1)?;
                let me = c.rank();
                let mut acc = c.load(&st, &[0, me * SIZE], &[1, SIZE])?;
                for peer in (0..c.nranks()).filter(|&q| q != me) {
                    let t = c.remote_load(&st, peer, &[0, me * SIZE], &[1, SIZE])?;
                    acc = c.add(&acc, &t)?;
                }
                c.store(&acc, &o, &[0, 0])
            }),
        )
        .unwrap();
        w.run().unwrap();
        for r in 0..p {
            allclose(&read_f64(&w, &out, r), &rs_golden(p, r, SIZE), 1e-5, 1e-8).unwrap();
        }
    }
}

// ---- InCore composites (items 7-21) ------------------------------------------------------

fn a2a_case(p: usize, path: Path, calls: usize) {
    const SIZE: usize = 64;
    let (mut w, dom) = setup(p);
    let input = w.alloc_window(&dom, "input", DType::F32, &[p, SIZE]).unwrap();
    let target = w.alloc_window(&dom, "target", DType::F32, &[p, SIZE]).unwrap();
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[p, 1]).unwrap();
    for call in 0..calls {
        let offset = 100_000.0 * call as f32;
        for r in 0..p {
            let v: Vec<f32> = a2a_input(r, p, SIZE).iter().map(|x| x + offset).collect();
            w.write(&input, r, &v).unwrap();
        }
        collectives::barrier(&mut w, &sig, Path::InCore).unwrap();
        collectives::all_to_all(&mut w, &input, &target, &sig, path).unwrap();
        collectives::barrier(&mut w, &sig, Path::InCore).unwrap();
        w.run().unwrap();
        check_a2a(&w, &target, p, SIZE, offset);
        assert_signal_clear(&w, &sig, p);
    }
}

#[test]
fn t07_incore_all_to_all() {
    for p in PS {
        a2a_case(p, Path::InCore, 1);
    }
}

fn a2av_case(p: usize, path: Path) {
    const MAX_RECV: usize = 4;
    const SIZE: usize = 16;
    let (mut w, dom) = setup(p);
    let input = w.alloc_window(&dom, "input", DType::F32, &[p * MAX_RECV, SIZE]).unwrap();
    let target = w.alloc_window(&dom, "target", DType::F32, &[p * MAX_RECV, SIZE]).unwrap();
    let send = w.alloc_window(&dom, "send_counts", DType::I32, &[p]).unwrap();
    let recv = w.alloc_window(&dom, "recv_counts", DType::I32, &[p, 1]).unwrap();
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[p, 1]).unwrap();
    for r in 0..p {
        let v: Vec<f32> = (0..p)
            .flat_map(|d| {
                (0..MAX_RECV).flat_map(move |k| (0..SIZE).map(move |j| (r * 1000 + d * 100 + k * 10 + j % 10) as f32))
            })
            .collect();
        w.write(&input, r, &v).unwrap();
        w.write(&send, r, &(0..p).map(|d| (p - d) as i32).collect::<Vec<_>>()).unwrap();
    }
    collectives::all_to_all_v(&mut w, &input, &target, &send, &recv, &sig, path).unwrap();
    w.run().unwrap();
    for rank in 0..p {
        let counts = w.read::<i32>(&recv, rank).unwrap();
        let rows = (p - rank).min(MAX_RECV);
        assert_eq!(counts, vec![rows as i32; p], "recv_counts on rank {rank}");
        let got = w.read::<f32>(&target, rank).unwrap();
        for src in 0..p {
            for k in 0..rows {
                for j in 0..SIZE {
                    let want = (src * 1000 + rank * 100 + k * 10 + j % 10) as f32;
                    assert_eq!(got[(src * MAX_RECV + k) * SIZE + j], want, "rank {rank} src {src} row {k}");
                }
            }
        }
    }
    assert_signal_clear(&w, &sig, p);
}

#[test]
fn t08_incore_all_to_all_v() {
    for p in PS {
        a2av_case(p, Path::InCore);
    }
}

fn allgather_case(p: usize, path: Path, calls: usize) {
    const SIZE: usize = 64;
    let (mut w, dom) = setup(p);
    let stage = w.alloc_window(&dom, "stage", DType::F32, &[1, SIZE]).unwrap();
    let target = w.alloc_window(&dom, "target", DType::F32, &[p, SIZE]).unwrap();
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[p, 1]).unwrap();
    for call in 0..calls {
        let offset = 100_000.0 * call as f32;
        for r in 0..p {
            w.write(&stage, r, &arange(r, SIZE).iter().map(|x| x + offset).collect::<Vec<_>>()).unwrap();
        }
        collectives::allgather(&mut w, &stage, &target, &sig, path).unwrap();
        collectives::barrier(&mut w, &sig, Path::InCore).unwrap();
        w.run().unwrap();
        let want: Vec<f32> = (0..p).flat_map(|r| arange(r, SIZE)).map(|x| x + offset).collect();
        for r in 0..p {
            assert_eq!(w.read::<f32>(&target, r).unwrap(), want, "P={p} call {call} rank {r}");
        }
        assert_signal_clear(&w, &sig, p);
    }
}

#[test]
fn t09_incore_allgather() {
    for p in PS {
        allgather_case(p, Path::InCore, 1);
    }
}

/// Runs one allreduce on every rank's `vals(r, i)` and checks it against the folded golden.
fn allreduce_case(p: usize, size: usize, dt: DType, spec: AllReduce, vals: impl Fn(usize, usize) -> f64, calls: usize) {
    let (mut w, dom) = setup(p);
    let data = w.alloc_window(&dom, "data", dt, &[1, size]).unwrap();
    let shape = collectives::signal_shape(collectives::Kind::AllReduce, spec.mode, spec.path, p, spec.core_num);
    let sig = w.alloc_window(&dom, "sig", DType::I32, &shape).unwrap();
    let (rtol, atol) = tolerance(dt);
    for _ in 0..calls {
        let inputs: Vec<Vec<f64>> = (0..p).map(|r| (0..size).map(|i| vals(r, i)).collect()).collect();
        for (r, v) in inputs.iter().enumerate() {
            write_f64(&mut w, &data, r, v);
        }
        // Goldens from the values as the dtype holds them, computed here.
        let stored: Vec<Vec<f64>> = inputs.iter().map(|v| v.iter().map(|&x| stored_as(dt, x)).collect()).collect();
        let want = fold(spec.op, &stored);
        collectives::allreduce(&mut w, &data, &sig, spec).unwrap();
        let report = w.run().unwrap();
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
        for r in 0..p {
            let ctx = format!("P={p} size={size} {dt} {} {} {} rank {r}", spec.op, spec.mode, spec.path);
            allclose(&read_f64(&w, &data, r), &want, rtol, atol).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        }
        assert_signal_clear(&w, &sig, p);
    }
}

fn incore(mode: Mode, op: ReduceOp) -> AllReduce {
    AllReduce { op, mode, path: Path::InCore, core_num: 1 }
}

fn host(mode: Mode, op: ReduceOp, core_num: usize) -> AllReduce {
    AllReduce { op, mode, path: Path::Host, core_num }
}

fn arange_f(r: usize, i: usize) -> f64 {
    (r * 100 + i) as f64
}

/// PyPTO's product-safe inputs: `1 + r*0.125 + (i % 5) * 0.0625`.
fn prod_input(r: usize, i: usize) -> f64 {
    1.0 + r as f64 * 0.125 + (i % 5) as f64 * 0.0625
}

/// Small values that FP16 holds well: `(r + 1) * 0.25 + (i % 7) * 0.125`.
fn fp16_input(r: usize, i: usize) -> f64 {
    (r + 1) as f64 * 0.25 + (i % 7) as f64 * 0.125
}

#[test]
fn t10_incore_mesh_allreduce_sizes() {
    for p in PS {
        for size in [1, 17, 4097, 65537] {
            allreduce_case(p, size, DType::F32, incore(Mode::Mesh, ReduceOp::Sum), arange_f, 1);
        }
    }
}

#[test]
fn t11_incore_mesh_reduce_ops() {
    for op in ReduceOp::ALL {
        for dt in [DType::F32, DType::F16] {
            let vals = if op == ReduceOp::Prod || dt == DType::F16 { prod_input } else { arange_f };
            allreduce_case(2, 256, dt, incore(Mode::Mesh, op), vals, 1);
        }
    }
}

#[test]
fn t12_incore_mesh_fp16_arbitrary_lengths() {
    for p in [1, 2, 4] {
        for size in [1, 17, 8193] {
            allreduce_case(p, size, DType::F16, incore(Mode::Mesh, ReduceOp::Sum), fp16_input, 1);
        }
    }
}

#[test]
fn t13_incore_ring_allreduce_sizes() {
    for p in PS {
        for size in [1, 17, 4097, 65537] {
            allreduce_case(p, size, DType::F32, incore(Mode::Ring, ReduceOp::Sum), arange_f, 1);
        }
    }
}

#[test]
fn t14_incore_ring_reduce_ops() {
    for op in ReduceOp::ALL {
        let vals = if op == ReduceOp::Prod { prod_input } else { arange_f };
        allreduce_case(2, 256, DType::F32, incore(Mode::Ring, op), vals, 1);
    }
}

#[test]
fn t15_incore_ring_fp16_arbitrary_lengths() {
    for p in [2, 4] {
        for size in [1, 17, 8193, 32769] {
            allreduce_case(p, size, DType::F16, incore(Mode::Ring, ReduceOp::Sum), fp16_input, 1);
        }
    }
}

#[test]
fn t16_incore_barrier_inside_a_user_kernel() {
    // Write own data, pld.tensor.barrier, remote_load the next rank: out[r] = in[(r+1)%NR].
    for p in PS {
        let (mut w, dom) = setup(p);
        let data = w.alloc_window(&dom, "data", DType::F32, &[1, 64]).unwrap();
        let out = w.alloc_tensor("out", DType::F32, &[1, 64]).unwrap();
        let sig = w.alloc_window(&dom, "sig", DType::I32, &[p, 1]).unwrap();
        let (d, o, s) = (data.clone(), out.clone(), sig.clone());
        w.dispatch_all(
            &dom,
            Dispatch::kernel("barrier_then_read", 1, move |c| {
                let me = c.rank();
                c.store(&Tile::from_slice(1, 64, &arange(me, 64))?, &d, &[0, 0])?;
                c.run(async |ops| collectives::incore::barrier(ops, &s).await)?;
                let t = c.remote_load(&d, (me + 1) % c.nranks(), &[0, 0], &[1, 64])?;
                c.store(&t, &o, &[0, 0])
            }),
        )
        .unwrap();
        w.run().unwrap();
        for r in 0..p {
            assert_eq!(w.read::<f32>(&out, r).unwrap(), arange((r + 1) % p, 64));
        }
        assert_signal_clear(&w, &sig, p);
    }
}

fn broadcast_case(p: usize, path: Path, calls: usize) {
    let (mut w, dom) = setup(p);
    let data = w.alloc_window(&dom, "data", DType::F32, &[1, 600]).unwrap();
    let shape: &[usize] = if path == Path::Host { &[p] } else { &[p, 1] };
    let sig = w.alloc_window(&dom, "sig", DType::I32, shape).unwrap();
    for call in 0..calls {
        for r in 0..p {
            w.write(&data, r, &arange(r + call, 600)).unwrap();
        }
        collectives::broadcast(&mut w, &data, &sig, 0, path).unwrap();
        w.run().unwrap();
        for r in 0..p {
            assert_eq!(w.read::<f32>(&data, r).unwrap(), arange(call, 600), "P={p} call {call} rank {r}");
        }
        if p > 1 {
            assert_ne!(w.read::<f32>(&data, 0).unwrap(), arange(1 + call, 600), "out[0] must not be in[1]");
        }
        assert_signal_clear(&w, &sig, p);
    }
}

#[test]
fn t17_incore_broadcast() {
    for p in PS {
        broadcast_case(p, Path::InCore, 1);
    }
}

#[test]
fn t18_t19_t20_incore_signal_reuse_back_to_back() {
    for p in [2, 4] {
        a2a_case(p, Path::InCore, 2);
        allgather_case(p, Path::InCore, 2);
        rs_case(p, Path::InCore, 2);
    }
}

fn rs_case(p: usize, path: Path, calls: usize) {
    const SIZE: usize = 64;
    let (mut w, dom) = setup(p);
    let data = w.alloc_window(&dom, "data", DType::F32, &[p, SIZE]).unwrap();
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[p, 1]).unwrap();
    for call in 0..calls {
        let offset = 100_000.0 * call as f64;
        for r in 0..p {
            w.write(&data, r, &arange(r, p * SIZE).iter().map(|x| x + offset as f32).collect::<Vec<_>>()).unwrap();
        }
        collectives::reduce_scatter(&mut w, &data, &sig, ReduceOp::Sum, path).unwrap();
        w.run().unwrap();
        for r in 0..p {
            let got = read_f64(&w, &data, r)[r * SIZE..(r + 1) * SIZE].to_vec();
            let want: Vec<f64> = rs_golden(p, r, SIZE).iter().map(|x| x + offset * p as f64).collect();
            allclose(&got, &want, 1e-5, 1e-8).unwrap_or_else(|e| panic!("P={p} call {call} rank {r}: {e}"));
        }
        assert_signal_clear(&w, &sig, p);
    }
}

#[test]
fn t21_incore_reduce_scatter() {
    for p in PS {
        rs_case(p, Path::InCore, 1);
    }
}

// ---- HOST builtins (items 41-56) ---------------------------------------------------------

#[test]
fn t41_t42_host_all_to_all_and_signal_reuse() {
    for p in PS {
        a2a_case(p, Path::Host, 1);
    }
    for p in [2, 4] {
        a2a_case(p, Path::Host, 2);
    }
}

#[test]
fn t43_host_all_to_all_v() {
    for p in PS {
        a2av_case(p, Path::Host);
    }
}

#[test]
fn t44_host_allgather_and_signal_reuse() {
    for p in PS {
        allgather_case(p, Path::Host, 1);
    }
    for p in [2, 4] {
        allgather_case(p, Path::Host, 2);
    }
}

#[test]
fn t45_host_allreduce_between_publish_and_consume_dispatches() {
    // publish dispatch -> builtin allreduce (rank-1 [W] signal) -> consume dispatch.
    const SIZE: usize = 256;
    for p in PS {
        let (mut w, dom) = setup(p);
        let x = w.alloc_tensor("x", DType::F32, &[1, SIZE]).unwrap();
        let y = w.alloc_tensor("y", DType::F32, &[1, SIZE]).unwrap();
        let data = w.alloc_window(&dom, "data", DType::F32, &[1, SIZE]).unwrap();
        let sig = w.alloc_window(&dom, "sig", DType::I32, &[p]).unwrap();
        for r in 0..p {
            w.write(&x, r, &arange(r, SIZE)).unwrap();
        }
        let (xk, d) = (x.clone(), data.clone());
        w.dispatch_all(
            &dom,
            Dispatch::kernel("publish", 1, move |c| {
                let t = c.load(&xk, &[0, 0], &[1, SIZE])?;
                c.store(&t, &d, &[0, 0])
            }),
        )
        .unwrap();
        collectives::allreduce(&mut w, &data, &sig, host(Mode::Mesh, ReduceOp::Sum, 1)).unwrap();
        let (d, yk) = (data.clone(), y.clone());
        w.dispatch_all(
            &dom,
            Dispatch::kernel("consume", 1, move |c| {
                let t = c.load(&d, &[0, 0], &[1, SIZE])?;
                c.store(&t, &yk, &[0, 0])
            }),
        )
        .unwrap();
        let report = w.run().unwrap();
        assert_eq!(
            report.of_chip(0).map(|d| d.name.as_str()).collect::<Vec<_>>(),
            ["publish", "builtin.tensor.allreduce__sum__fp32", "consume"]
        );
        let want: Vec<f64> = (0..SIZE).map(|i| (0..p).map(|r| arange_f(r, i)).sum()).collect();
        for r in 0..p {
            allclose(&read_f64(&w, &y, r), &want, 1e-5, 1e-8).unwrap();
        }
    }
}

#[test]
fn t46_host_allreduce_signal_reuse_three_calls() {
    for p in [2, 4] {
        allreduce_case(p, 256, DType::F32, host(Mode::Mesh, ReduceOp::Sum, 1), arange_f, 3);
    }
}

#[test]
fn t47_host_allreduce_max_is_exact() {
    allreduce_case(2, 256, DType::F32, host(Mode::Mesh, ReduceOp::Max, 1), arange_f, 1);
}

#[test]
fn t48_host_allreduce_fp16_arbitrary_lengths() {
    for size in [1, 17, 257, 8193] {
        allreduce_case(2, size, DType::F16, host(Mode::Mesh, ReduceOp::Sum, 1), fp16_input, 1);
    }
}

#[test]
fn t49_host_allreduce_fp16_reduce_ops() {
    for op in [ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod] {
        allreduce_case(2, 300, DType::F16, host(Mode::Mesh, op, 1), prod_input, 1);
    }
}

#[test]
fn t50_host_allreduce_fp32_arbitrary_lengths() {
    for size in [17, 257] {
        allreduce_case(2, size, DType::F32, host(Mode::Mesh, ReduceOp::Sum, 1), arange_f, 1);
    }
}

#[test]
fn t51_t52_host_multicore_allreduce_lanes_self_clear() {
    for (p, c, size, stride) in [(2, 2, 1, 2), (2, 4, 4127, 6), (4, 2, 1041, 2)] {
        for calls in [1, 2] {
            let (mut w, dom) = setup(p);
            let data = w.alloc_window(&dom, "data", DType::F32, &[1, size]).unwrap();
            let sig = w.alloc_window(&dom, "sig", DType::I32, &[p, stride]).unwrap();
            for _ in 0..calls {
                for r in 0..p {
                    w.write(&data, r, &arange(r, size)).unwrap();
                }
                collectives::allreduce(&mut w, &data, &sig, host(Mode::Mesh, ReduceOp::Sum, c)).unwrap();
                // Every used lane is back to 0: a wait(Eq 0) on each passes at once.
                let s = sig.clone();
                w.dispatch_all(
                    &dom,
                    Dispatch::kernel("check_lanes", 1, move |k| {
                        for q in 0..k.nranks() {
                            for lane in 0..c {
                                k.wait(&s, &[q, lane], 0, WaitCmp::Eq)?;
                            }
                        }
                        Ok(())
                    }),
                )
                .unwrap();
                w.run().unwrap();
                let want: Vec<f64> = (0..size).map(|i| (0..p).map(|r| arange_f(r, i)).sum()).collect();
                for r in 0..p {
                    allclose(&read_f64(&w, &data, r), &want, 1e-5, 1e-8).unwrap();
                }
                assert_signal_clear(&w, &sig, p);
            }
        }
    }
}

#[test]
fn t53_host_ring_allreduce_and_signal_reuse() {
    for p in PS {
        allreduce_case(p, 256, DType::F32, host(Mode::Ring, ReduceOp::Sum, 1), arange_f, 1);
    }
    for p in [2, 4] {
        allreduce_case(p, 256, DType::F32, host(Mode::Ring, ReduceOp::Sum, 1), arange_f, 3);
    }
}

#[test]
fn t54_host_barrier_and_signal_reuse() {
    for p in [2, 4] {
        for calls in [1, 2] {
            let (mut w, dom) = setup(p);
            let data = w.alloc_window(&dom, "data", DType::F32, &[1, 64]).unwrap();
            let out = w.alloc_tensor("out", DType::F32, &[1, 64]).unwrap();
            let sig = w.alloc_window(&dom, "sig", DType::I32, &[p]).unwrap();
            for call in 0..calls {
                let d = data.clone();
                w.dispatch_all(
                    &dom,
                    Dispatch::kernel("publish", 1, move |c| {
                        c.store(&Tile::from_slice(1, 64, &arange(c.rank() + call, 64))?, &d, &[0, 0])
                    }),
                )
                .unwrap();
                collectives::barrier(&mut w, &sig, Path::Host).unwrap();
                let (d, o) = (data.clone(), out.clone());
                w.dispatch_all(
                    &dom,
                    Dispatch::kernel("consume", 1, move |c| {
                        let t = c.remote_load(&d, (c.rank() + 1) % c.nranks(), &[0, 0], &[1, 64])?;
                        c.store(&t, &o, &[0, 0])
                    }),
                )
                .unwrap();
                w.run().unwrap();
                for r in 0..p {
                    assert_eq!(w.read::<f32>(&out, r).unwrap(), arange((r + 1) % p + call, 64));
                }
                assert_signal_clear(&w, &sig, p);
            }
        }
    }
}

#[test]
fn t55_host_broadcast_and_signal_reuse() {
    for p in PS {
        broadcast_case(p, Path::Host, 1);
    }
    for p in [2, 4] {
        broadcast_case(p, Path::Host, 2);
    }
}

#[test]
fn t56_host_reduce_scatter_and_signal_reuse() {
    for p in PS {
        rs_case(p, Path::Host, 1);
    }
    for p in [2, 4] {
        rs_case(p, Path::Host, 2);
    }
}

// ---- primitives (items 26, 69, 70) -----------------------------------------------------

#[test]
fn t69_subview_halves() {
    // Two half-tiles pushed to disjoint peer offsets.
    for p in [2, 4, 8] {
        let (mut w, dom) = setup(p);
        let inbox = w.alloc_window(&dom, "inbox", DType::F32, &[1, 128]).unwrap();
        let sig = w.alloc_window(&dom, "sig", DType::I32, &[p, 1]).unwrap();
        let (ib, s) = (inbox.clone(), sig.clone());
        w.dispatch_all(
            &dom,
            Dispatch::kernel("halves", 1, move |c| {
                let (me, n) = (c.rank(), c.nranks());
                let x = arange(me, 128);
                for half in 0..2 {
                    let t = Tile::from_slice(1, 64, &x[half * 64..(half + 1) * 64])?;
                    c.remote_store(&t, &ib, (me + 1) % n, &[0, half * 64], AtomicType::None)?;
                }
                c.notify(&s, (me + 1) % n, &[me, 0], 1, NotifyOp::AtomicAdd)?;
                c.wait(&s, &[(me + n - 1) % n, 0], 1, WaitCmp::Ge)
            }),
        )
        .unwrap();
        w.run().unwrap();
        for r in 0..p {
            assert_eq!(w.read::<f32>(&inbox, r).unwrap(), arange((r + p - 1) % p, 128));
        }
    }
}

#[test]
fn t70_push_of_a_computed_value() {
    // pld.tensor.remote_store(inp * 2): golden 2 * in[(r-1)%NR].
    for p in [2, 4, 8] {
        let (mut w, dom) = setup(p);
        let inp = w.alloc_tensor("inp", DType::F32, &[1, 64]).unwrap();
        let out = w.alloc_window(&dom, "out", DType::F32, &[1, 64]).unwrap();
        let sig = w.alloc_window(&dom, "sig", DType::I32, &[p, 1]).unwrap();
        for r in 0..p {
            w.write(&inp, r, &arange(r, 64)).unwrap();
        }
        let (i, o, s) = (inp.clone(), out.clone(), sig.clone());
        w.dispatch_all(
            &dom,
            Dispatch::kernel("push", 1, move |c| {
                let (me, n) = (c.rank(), c.nranks());
                let t = c.load(&i, &[0, 0], &[1, 64])?;
                let twice = c.muls(&t, 2.0)?;
                c.remote_store(&twice, &o, (me + 1) % n, &[0, 0], AtomicType::None)?;
                c.notify(&s, (me + 1) % n, &[me, 0], 1, NotifyOp::AtomicAdd)?;
                c.wait(&s, &[(me + n - 1) % n, 0], 1, WaitCmp::Ge)
            }),
        )
        .unwrap();
        w.run().unwrap();
        for r in 0..p {
            let want: Vec<f32> = arange((r + p - 1) % p, 64).iter().map(|x| 2.0 * x).collect();
            assert_eq!(w.read::<f32>(&out, r).unwrap(), want);
        }
    }
}
