//! AIC (cube) cores: L1 / L0 staging, matmul values against goldens computed here, closed-form
//! times in integer picoseconds on the cube machine of `common::cube_toml` (1 GHz; GM -> L1
//! 100 GB/s, L1 -> L0A 256 B/cycle, L1 -> L0B 128 B/cycle, matmul `10 + ceil(M/16) ceil(K/k0)
//! ceil(N/16)` cycles with k0 = 16 for f16 / bf16 and 8 for f32, L0C -> GM 50 GB/s), capacity
//! and placement errors, a two-rank sharded GEMM and a cube -> vector task chain.

use crate::common::{all, cube, simple};
use parking_lot::Mutex;
use ranksim::prelude::*;
use std::sync::Arc;

/// Deterministic small values exact in f16 / bf16 (multiples of 1/4 in [-4, 4)).
fn vals(n: usize, seed: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 7 + seed * 13) % 32) as f32 / 4.0 - 4.0).collect()
}

/// `a (m x k) @ b (k x n)` in f64 (exact for these values).
fn golden(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|x| a[i * k + x] as f64 * b[x * n + j] as f64).sum::<f64>() as f32;
        }
    }
    c
}

fn f16s(v: &[f32]) -> Vec<f16> {
    v.iter().map(|&x| f16::from_f32(x)).collect()
}

/// One cube block computing `c = a @ b` (f16 in, `c`'s dtype out) with whole tiles.
fn gemm_kernel(a: Tensor, b: Tensor, c: Tensor, m: usize, k: usize, n: usize) -> Task {
    Task::new("gemm", 1, move |core| {
        let la = core.load_l1(&a, &[0, 0], &[m, k])?;
        let lb = core.load_l1(&b, &[0, 0], &[k, n])?;
        let (xa, xb) = (core.to_l0a(&la)?, core.to_l0b(&lb)?);
        let acc = core.matmul(&xa, &xb)?;
        core.store_acc(&acc, &c, &[0, 0])
    })
    .on_cube()
}

/// Runs one cube GEMM of f16 inputs on the cube machine; returns `c` and the dispatch end (ps).
fn run_gemm(m: usize, k: usize, n: usize, out: DType) -> (Vec<f64>, u64) {
    let mut w = cube(1);
    let dom = all(&mut w);
    let a = w.alloc_tensor("a", DType::F16, &[m, k]).unwrap();
    let b = w.alloc_tensor("b", DType::F16, &[k, n]).unwrap();
    let c = w.alloc_tensor("c", out, &[m, n]).unwrap();
    w.write(&a, 0, &f16s(&vals(m * k, 1))).unwrap();
    w.write(&b, 0, &f16s(&vals(k * n, 2))).unwrap();
    let mut d = Dispatch::new("gemm");
    d.add(gemm_kernel(a, b, c.clone(), m, k, n));
    w.dispatch_all(&dom, d).unwrap();
    let r = w.run().unwrap();
    (w.read_f64(&c, 0).unwrap(), r.end.as_ps())
}

#[test]
fn a_small_matmul_matches_its_golden() {
    // Shapes that are not multiples of 16.
    let (m, k, n) = (20, 24, 12);
    let want = golden(&vals(m * k, 1), &vals(k * n, 2), m, k, n);
    let (c, _) = run_gemm(m, k, n, DType::F32);
    assert_eq!(c, want.iter().map(|&x| x as f64).collect::<Vec<_>>());
    // Through the fixpipe's f32 -> f16 conversion (these sums are exact in f16 too).
    let (c16, _) = run_gemm(m, k, n, DType::F16);
    assert_eq!(c16, want.iter().map(|&x| f16::from_f32(x).to_f64()).collect::<Vec<_>>());
}

#[test]
fn a_matmul_takes_its_closed_form_time() {
    // 32 x 32 x 32 f16, one block starting at 0 (no launch or task-start cost):
    //   load_l1 a, b: 2048 B at 100 GB/s = 20 480 ps each (one packet, no latency)
    //   to_l0a: 2048 / 256 = 8 cycles; to_l0b: 2048 / 128 = 16 cycles
    //   matmul: 10 + 2 * 2 * 2 = 18 cycles
    //   store_acc: 32 x 32 f32 = 4096 B at 50 GB/s = 81 920 ps; the block ends when it lands.
    let (_, end) = run_gemm(32, 32, 32, DType::F32);
    assert_eq!(end, 2 * 20_480 + 8_000 + 16_000 + 18_000 + 81_920);
    // A 16 x 48 x 16 f16 matmul: 10 + 1 * 3 * 1 cycles; loads 1536 B each = 15 360 ps; L0A 6
    // cycles, L0B 12 cycles; store 1024 B at 50 GB/s = 20 480 ps.
    let (_, end) = run_gemm(16, 48, 16, DType::F32);
    assert_eq!(end, 2 * 15_360 + 6_000 + 12_000 + 13_000 + 20_480);
}

#[test]
fn f32_inputs_use_their_own_block_and_a_k_loop_accumulates() {
    // c = a @ b over K = 32 in two halves of 16 (matmul then matmul_acc), f32 inputs: k0 = 8,
    // so each 16 x 16 x 16 step is 10 + 1 * 2 * 1 = 12 cycles.
    let (m, k, n) = (16, 32, 16);
    let (av, bv) = (vals(m * k, 3), vals(k * n, 4));
    let mut w = cube(1);
    let dom = all(&mut w);
    let a = w.alloc_tensor("a", DType::F32, &[m, k]).unwrap();
    let b = w.alloc_tensor("b", DType::F32, &[k, n]).unwrap();
    let c = w.alloc_tensor("c", DType::F32, &[m, n]).unwrap();
    w.write(&a, 0, &av).unwrap();
    w.write(&b, 0, &bv).unwrap();
    let times: Arc<Mutex<Vec<u64>>> = Arc::default();
    let (ak, bk, ck, tk) = (a.clone(), b.clone(), c.clone(), times.clone());
    let mut d = Dispatch::new("kloop");
    d.add(
        Task::new("kloop", 1, move |core| {
            let mut acc: Option<CubeTile> = None;
            for h in 0..2 {
                let la = core.load_l1(&ak, &[0, 16 * h], &[16, 16])?;
                let lb = core.load_l1(&bk, &[16 * h, 0], &[16, 16])?;
                let (xa, xb) = (core.to_l0a(&la)?, core.to_l0b(&lb)?);
                let t0 = core.now().as_ps();
                acc = Some(match &acc {
                    None => core.matmul(&xa, &xb)?,
                    Some(c) => core.matmul_acc(c, &xa, &xb)?,
                });
                tk.lock().push(core.now().as_ps() - t0);
            }
            let acc = acc.expect("two steps");
            assert_eq!((acc.buf(), acc.dtype(), acc.shape()), (CubeBuf::L0C, DType::F32, (16, 16)));
            core.store_acc(&acc, &ck, &[0, 0])
        })
        .on_cube(),
    );
    w.dispatch_all(&dom, d).unwrap();
    w.run().unwrap();
    assert_eq!(*times.lock(), vec![12_000, 12_000]);
    let want: Vec<f64> = golden(&av, &bv, m, k, n).iter().map(|&x| x as f64).collect();
    assert_eq!(w.read_f64(&c, 0).unwrap(), want);
}

/// Runs `kernel` as one block of a task of `kind` on the cube machine; the run's error text.
fn run_err(kind: CoreKind, kernel: impl Fn(&mut Core, &Tensor) -> SimResult<()> + Send + Sync + 'static) -> String {
    let mut w = cube(1);
    let dom = all(&mut w);
    let x = w.alloc_tensor("x", DType::F16, &[256, 256]).unwrap();
    let task = Task::new("k", 1, move |core| kernel(core, &x));
    let task = if kind == CoreKind::Cube { task.on_cube() } else { task };
    let mut d = Dispatch::new("d");
    d.add(task);
    w.dispatch_all(&dom, d).unwrap();
    w.run().unwrap_err().to_string()
}

/// The error of a cube run that multiplies an `a`-shaped tile of `x` by a `b`-shaped one, each
/// loaded into L1 and moved to L0A / L0B.
fn matmul_err(a: [usize; 2], b: [usize; 2]) -> String {
    run_err(CoreKind::Cube, move |core, x| {
        let a = core.load_l1(x, &[0, 0], &a)?;
        let b = core.load_l1(x, &[0, 0], &b)?;
        let (a, b) = (core.to_l0a(&a)?, core.to_l0b(&b)?);
        core.matmul(&a, &b).map(|_| ())
    })
}

#[test]
fn tiles_that_do_not_fit_l1_or_l0_are_errors_naming_shapes_and_capacities() {
    // 128 x 128 f16 = 32 768 B fits L1 (64 KiB) but not L0A (16 KiB).
    let e = run_err(CoreKind::Cube, |core, x| {
        let l1 = core.load_l1(x, &[0, 0], &[128, 128])?;
        core.to_l0a(&l1).map(|_| ())
    });
    assert!(e.contains("to_l0a") && e.contains("128x128 f16") && e.contains("32768 bytes of L0A"), "{e}");
    assert!(e.contains("16384 bytes") && e.contains("chip.cube.l0a_bytes"), "{e}");
    // 256 x 256 f16 = 128 KiB does not fit L1.
    let e = run_err(CoreKind::Cube, |core, x| core.load_l1(x, &[0, 0], &[256, 256]).map(|_| ()));
    assert!(e.contains("256x256 f16") && e.contains("65536 bytes") && e.contains("chip.l1_bytes"), "{e}");
    // 96 x 16 by 16 x 96 fits L0A / L0B, but the 96 x 96 f32 accumulator (36 864 B) not L0C.
    let e = matmul_err([96, 16], [16, 96]);
    assert!(e.contains("96x96 f32") && e.contains("36864 bytes of L0C") && e.contains("32768"), "{e}");
    // K mismatch and operands in the wrong buffer.
    let e = matmul_err([16, 32], [16, 16]);
    assert!(e.contains("K must match (32 vs 16)"), "{e}");
    let e = run_err(CoreKind::Cube, |core, x| {
        let a = core.load_l1(x, &[0, 0], &[16, 16])?;
        core.matmul(&a, &a).map(|_| ())
    });
    assert!(e.contains("left operand must be in L0A"), "{e}");
}

#[test]
fn aic_blocks_refuse_ub_work_and_aiv_blocks_refuse_cube_work() {
    let e = run_err(CoreKind::Cube, |core, x| core.load(x, &[0, 0], &[1, 16]).map(|_| ()));
    assert!(
        e.contains("`load` works on UB tiles") && e.contains("AIC (cube) cores") && e.contains("Task::after"),
        "{e}"
    );
    let e = run_err(CoreKind::Cube, |core, _| core.adds(&Tile::zeros(DType::F16, 1, 16), 1.0).map(|_| ()));
    assert!(e.contains("`adds` works on UB tiles"), "{e}");
    let e = run_err(CoreKind::Vector, |core, x| core.load_l1(x, &[0, 0], &[16, 16]).map(|_| ()));
    assert!(e.contains("`load_l1` needs an AIC (cube) core") && e.contains("Task::on_cube()"), "{e}");
}

#[test]
fn cube_tasks_need_cube_cores() {
    let mut w = simple(1);
    let dom = all(&mut w);
    let mut d = Dispatch::new("d");
    d.add(Task::new("mm", 1, |_| Ok(())).on_cube());
    let e = w.dispatch_all(&dom, d).unwrap_err().to_string();
    assert!(e.contains("task `mm`") && e.contains("[chip.cube]") && e.contains("chip.cube"), "{e}");
    let mut w = cube(1);
    let dom = all(&mut w);
    let mut d = Dispatch::new("d");
    d.add(Task::new("mm", 3, |_| Ok(())).on_cube());
    let e = w.dispatch_all(&dom, d).unwrap_err().to_string();
    assert!(e.contains("3 blocks on cube cores") && e.contains("2 AIC cores"), "{e}");
    let mut d = Dispatch::new("d");
    d.add(Task::new("mm", 1, |_| Ok(())).on_cube().lanes(2));
    assert!(w.dispatch_all(&dom, d).unwrap_err().to_string().contains("2 lanes on cube cores"));
}

/// A dispatch's (chip, start ps, end ps).
type Record = (usize, u64, u64);

/// PyPTO's `test_gemm_two_rank_sharded_a`: each rank multiplies its own shard `a[r]` by the
/// shared `b`, `c[r] = a[r] @ b`, with 2 AIC blocks per rank taking half the rows each.
/// Returns each rank's `c` and the run's dispatch records.
fn sharded_gemm() -> (Vec<Vec<f64>>, Vec<Record>) {
    let (m, k, n) = (64, 32, 32);
    let mut w = cube(2);
    let dom = all(&mut w);
    let a = w.alloc_tensor("a", DType::BF16, &[m, k]).unwrap();
    let b = w.alloc_tensor("b", DType::BF16, &[k, n]).unwrap();
    let c = w.alloc_window(&dom, "c", DType::F32, &[m, n]).unwrap();
    for r in 0..2 {
        let av: Vec<bf16> = vals(m * k, 10 + r).iter().map(|&x| bf16::from_f32(x)).collect();
        w.write(&a, r, &av).unwrap();
        w.write(&b, r, &vals(k * n, 5).iter().map(|&x| bf16::from_f32(x)).collect::<Vec<_>>()).unwrap();
    }
    let (ak, bk, ck) = (a.clone(), b.clone(), c.clone());
    let mut d = Dispatch::new("gemm_sharded_a");
    d.add(
        Task::new("gemm", 2, move |core| {
            let rows = m / core.block_num();
            let r0 = core.block_idx() * rows;
            let la = core.load_l1(&ak, &[r0, 0], &[rows, k])?;
            let lb = core.load_l1(&bk, &[0, 0], &[k, n])?;
            let (xa, xb) = (core.to_l0a(&la)?, core.to_l0b(&lb)?);
            let acc = core.matmul(&xa, &xb)?;
            core.store_acc(&acc, &ck, &[r0, 0])
        })
        .on_cube(),
    );
    w.dispatch_all(&dom, d).unwrap();
    let rep = w.run().unwrap();
    let cs = (0..2).map(|r| w.read_f64(&c, r).unwrap()).collect();
    (cs, rep.dispatches.iter().map(|d| (d.chip, d.start.as_ps(), d.end.as_ps())).collect())
}

#[test]
fn two_ranks_multiply_their_shards_deterministically() {
    let (m, k, n) = (64, 32, 32);
    let (cs, recs) = sharded_gemm();
    for (r, c) in cs.iter().enumerate() {
        let want: Vec<f64> = golden(&vals(m * k, 10 + r), &vals(k * n, 5), m, k, n).iter().map(|&x| x as f64).collect();
        assert_eq!(c, &want, "rank {r}");
    }
    // Per block: a half 32 x 32 bf16 and b 32 x 32, 2048 B each; both blocks load through the
    // unlimited HBM on their own engines, so in parallel: 2 x 20 480 ps, then 8 + 16 cycles of
    // L0 moves, 10 + 2 * 2 * 2 = 18 cycles of matmul, 4096 B at 50 GB/s to GM.
    let each = 2 * 20_480 + 24_000 + 18_000 + 81_920;
    assert_eq!(recs, vec![(0, 0, each), (1, 0, each)]);
    // Same program, same results and times.
    assert_eq!(sharded_gemm(), (cs, recs));
}

#[test]
fn a_cube_producer_feeds_a_vector_consumer_through_gm() {
    // PyPTO's tensor-parallel FFN shape: on each of 2 ranks the cube computes h = x[r] @ w (to
    // GM), then an AIV task (after it) adds a bias and all-reduces h by atomic adds into every
    // rank's window: y = sum_r (x[r] @ w + 1).
    let (m, k, n) = (16, 32, 16);
    let mut w = cube(2);
    let dom = all(&mut w);
    let x = w.alloc_tensor("x", DType::F16, &[m, k]).unwrap();
    let wt = w.alloc_tensor("w", DType::F16, &[k, n]).unwrap();
    let h = w.alloc_tensor("h", DType::F32, &[m, n]).unwrap();
    let y = w.alloc_window(&dom, "y", DType::F32, &[m, n]).unwrap();
    for r in 0..2 {
        w.write(&x, r, &f16s(&vals(m * k, 20 + r))).unwrap();
        w.write(&wt, r, &f16s(&vals(k * n, 7))).unwrap();
    }
    let mut d = Dispatch::new("ffn");
    let mm = d.add(gemm_kernel(x.clone(), wt.clone(), h.clone(), m, k, n));
    let (hk, yk) = (h.clone(), y.clone());
    d.add(
        Task::new("bias_allreduce", 1, move |core| {
            let t = core.load(&hk, &[0, 0], &[m, n])?;
            let t = core.adds(&t, 1.0)?;
            for peer in 0..core.nranks() {
                core.remote_store(&t, &yk, peer, &[0, 0], AtomicType::Add)?;
            }
            Ok(())
        })
        .after(&[mm]),
    );
    w.dispatch_all(&dom, d).unwrap();
    let rep = w.run().unwrap();
    let h0 = golden(&vals(m * k, 20), &vals(k * n, 7), m, k, n);
    let h1 = golden(&vals(m * k, 21), &vals(k * n, 7), m, k, n);
    let want: Vec<f64> = h0.iter().zip(&h1).map(|(a, b)| (a + 1.0) as f64 + (b + 1.0) as f64).collect();
    for r in 0..2 {
        assert_eq!(w.read_f64(&y, r).unwrap(), want, "rank {r}");
    }
    for d in &rep.dispatches {
        let [cube_task, vec_task] = &d.tasks[..] else { panic!("two tasks: {:?}", d.tasks) };
        // The cube task (16 x 32 x 16: loads of 1024 B each = 10 240 ps, L0 moves 4 + 8 cycles,
        // matmul 10 + 1 * 2 * 1 cycles, 1024 B to GM at 50 GB/s) ends before the vector task starts.
        assert_eq!((cube_task.name.as_str(), cube_task.end.as_ps()), ("gemm", 2 * 10_240 + 12_000 + 12_000 + 20_480));
        assert_eq!(vec_task.start, cube_task.end);
    }
}

#[test]
fn the_a2a3_preset_prices_a_matmul_from_its_cube_table() {
    // 128 x 128 x 128 f16 on a 910B AIC: 14 + 8 * 8 * 8 = 526 cycles at 1.85 GHz; a 32 KiB
    // L1 -> L0A move is 128 cycles at 256 B/cycle, L0B 256 cycles at 128 B/cycle.
    let mut w = crate::common::a2a3();
    let dom = all(&mut w);
    let x = w.alloc_tensor("x", DType::F16, &[128, 128]).unwrap();
    let y = w.alloc_tensor("y", DType::F32, &[128, 128]).unwrap();
    let times: Arc<Mutex<Vec<u64>>> = Arc::default();
    let (xk, yk, tk) = (x.clone(), y.clone(), times.clone());
    let mut d = Dispatch::new("mm");
    d.add(
        Task::new("mm", 24, move |core| {
            let l1 = core.load_l1(&xk, &[0, 0], &[128, 128])?;
            let t0 = core.now().as_ps();
            let a = core.to_l0a(&l1)?;
            let t1 = core.now().as_ps();
            let b = core.to_l0b(&l1)?;
            let t2 = core.now().as_ps();
            let c = core.matmul(&a, &b)?;
            if core.block_idx() == 0 {
                tk.lock().extend([t1 - t0, t2 - t1, core.now().as_ps() - t2]);
                core.store_acc(&c, &yk, &[0, 0])?;
            }
            Ok(())
        })
        .on_cube(),
    );
    w.dispatch(0, d.in_domain(&dom)).unwrap();
    w.options_mut().check = true;
    w.options_mut().trace = true;
    let rep = w.run().unwrap();
    let clock = w.chip().clock();
    let cyc = |n| clock.cycles(n).as_ps();
    assert_eq!(*times.lock(), vec![cyc(128), cyc(256), cyc(526)]);
    assert!(w.last_findings().is_empty(), "{:?}", w.last_findings());
    // The trace shows the AIC cores after the 48 AIV cores.
    let cores: std::collections::BTreeSet<usize> = rep.trace.unwrap().ops.iter().map(|o| o.core).collect();
    assert_eq!(cores, (48..72).collect());
}
