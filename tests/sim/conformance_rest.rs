//! The rest of PyPTO's distributed conformance suite (reference §7) that the simulator can
//! express, after `conformance.rs`: each test names the PyPTO test it ports and its item
//! number. Goldens are computed here from the staged inputs; float results are compared with
//! numpy's `allclose` at PyPTO's tolerances. Communication tests also run under the protocol
//! checker (unperturbed and on several jitter seeds) and must be clean; their goldens are
//! checked on what the last checked run left.

use crate::coll_common::{allclose, arange, read_f64, setup, stored_as};
use ranksim::Config;
use ranksim::prelude::*;

/// Jittered reruns each communication port is checked on.
const SEEDS: u64 = 6;

/// Runs the queued program under the checker (unperturbed, then `SEEDS` jittered reruns)
/// and asserts every run was clean.
fn run_checked(w: &mut World) {
    let opts = CheckOptions { seeds: SEEDS, op_jitter: SimDuration::from_us(1), ..CheckOptions::default() };
    let report = w.check(&opts).unwrap();
    assert_eq!(report.runs, SEEDS as usize + 1);
    assert!(report.is_clean(), "{:#?}", report.findings);
}

/// f32 values as f64, for `allclose`.
fn f64s(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| x as f64).collect()
}

/// `a - b` on the core: the tile API has `add` and `muls`; `a + (-1) * b` is exact in f32 for
/// the inputs used here.
fn sub(core: &mut Core, a: &Tile, b: &Tile) -> SimResult<Tile> {
    let neg = core.muls(b, -1.0)?;
    core.add(a, &neg)
}

/// Queues on `chip` (no domain, no window: no communication) `f = a + b` when `add`, else
/// `f = a - b`, over `[rows, cols]` f32 tensors in row blocks of `step`.
#[allow(clippy::too_many_arguments)]
fn queue_binary(w: &mut World, chip: usize, add: bool, a: &Tensor, b: &Tensor, f: &Tensor, rows: usize, cols: usize, step: usize) {
    let (ak, bk, fk) = (a.clone(), b.clone(), f.clone());
    w.dispatch(
        chip,
        Dispatch::kernel(if add { "add" } else { "sub" }, 1, move |core| {
            for r0 in (0..rows).step_by(step) {
                let ta = core.load(&ak, &[r0, 0], &[step, cols])?;
                let tb = core.load(&bk, &[r0, 0], &[step, cols])?;
                let t = if add { core.add(&ta, &tb)? } else { sub(core, &ta, &tb)? };
                core.store(&t, &fk, &[r0, 0])?;
            }
            Ok(())
        }),
    )
    .unwrap();
}

/// `queue_binary` with `a + b` on chip 0 and `a - b` on chip 1.
fn add_on_0_sub_on_1(w: &mut World, a: &Tensor, b: &Tensor, f: &Tensor, rows: usize, cols: usize, step: usize) {
    queue_binary(w, 0, true, a, b, f, rows, cols, step);
    queue_binary(w, 1, false, a, b, f, rows, cols, step);
}

// ---- host-level programs without communication (items 23, 27, 30, 31, 36, 67, 76) ----------

/// Item 23, `test_l3_composite_shape_dim.py::test_execute`: two devices, no communication;
/// device 0 computes `a + b`, device 1 `a - b`, on tensors whose first dimension is `M * 2`.
/// Inputs: `a` on chip r is PyPTO's `arange(r*100, ..)`, `b` is `arange((r+10)*100, ..)`.
#[test]
fn t23_composite_shape_dim_execute() {
    const M: usize = 8;
    const N: usize = 64;
    let (mut w, _) = setup(2);
    let a = w.alloc_tensor("a", DType::F32, &[M * 2, N]).unwrap();
    let b = w.alloc_tensor("b", DType::F32, &[M * 2, N]).unwrap();
    let f = w.alloc_tensor("f", DType::F32, &[M * 2, N]).unwrap();
    for chip in 0..2 {
        w.write(&a, chip, &arange(chip, M * 2 * N)).unwrap();
        w.write(&b, chip, &arange(chip + 10, M * 2 * N)).unwrap();
    }
    add_on_0_sub_on_1(&mut w, &a, &b, &f, M * 2, N, M);
    let report = w.run().unwrap();
    for chip in 0..2 {
        let (av, bv) = (f64s(&arange(chip, M * 2 * N)), f64s(&arange(chip + 10, M * 2 * N)));
        let want: Vec<f64> = av.iter().zip(&bv).map(|(x, y)| if chip == 0 { x + y } else { x - y }).collect();
        allclose(&read_f64(&w, &f, chip), &want, 1e-5, 1e-8).unwrap_or_else(|e| panic!("chip {chip}: {e}"));
        let t = &report.traffic[chip];
        assert_eq!((t.remote_read_bytes, t.remote_write_bytes, t.remote_notifies), (0, 0, 0), "no communication");
    }
}

/// Item 31, `test_l3_distributed.py::test_execute_inline` (and item 36,
/// `test_l3_explicit_dispatch_onboard.py::test_l3_explicit_dispatch_multi_chip`, whose
/// explicit per-chip handles are `World::dispatch(chip, ..)` here): two devices, `a = 2.0`,
/// `b = 3.0`; golden sum 5.0 on device 0 and difference -1.0 on device 1.
#[test]
fn t31_t36_two_devices_add_and_sub() {
    const N: usize = 128;
    let (mut w, _) = setup(2);
    let a = w.alloc_tensor("a", DType::F32, &[N, N]).unwrap();
    let b = w.alloc_tensor("b", DType::F32, &[N, N]).unwrap();
    let f = w.alloc_tensor("f", DType::F32, &[N, N]).unwrap();
    for chip in 0..2 {
        w.write(&a, chip, &vec![2.0f32; N * N]).unwrap();
        w.write(&b, chip, &vec![3.0f32; N * N]).unwrap();
    }
    add_on_0_sub_on_1(&mut w, &a, &b, &f, N, N, 32);
    w.run().unwrap();
    allclose(&read_f64(&w, &f, 0), &vec![5.0; N * N], 1e-5, 1e-8).unwrap();
    allclose(&read_f64(&w, &f, 1), &vec![-1.0; N * N], 1e-5, 1e-8).unwrap();
}

/// Item 30, `test_l3_distributed.py::test_execute`: the HOST orchestrator runs a chip `add`
/// on 128 x 128 tensors (`a = 2.0`, `b = 3.0`); PyPTO's SubWorker then verifies `f == 5.0`,
/// which is this test's assertion (a SubWorker is host Python, not simulated).
#[test]
fn t30_distributed_execute_chip_add() {
    const N: usize = 128;
    let (mut w, _) = setup(1);
    let a = w.alloc_tensor("a", DType::F32, &[N, N]).unwrap();
    let b = w.alloc_tensor("b", DType::F32, &[N, N]).unwrap();
    let f = w.alloc_tensor("f", DType::F32, &[N, N]).unwrap();
    w.write(&a, 0, &vec![2.0f32; N * N]).unwrap();
    w.write(&b, 0, &vec![3.0f32; N * N]).unwrap();
    queue_binary(&mut w, 0, true, &a, &b, &f, N, N, 32);
    w.run().unwrap();
    allclose(&read_f64(&w, &f, 0), &vec![5.0; N * N], 1e-5, 1e-8).unwrap();
}

/// Item 27, `test_l3_device_tensor.py::test_resident_weight_reused_across_dispatches`: one chip,
/// a resident weight `b` staged once, three submits through two bounded frames (submit k uses
/// frame `k % 2` for its `a` and `f`); golden `f = a + b` after each submit, `b` unchanged.
#[test]
fn t27_resident_weight_reused_across_dispatches() {
    const R: usize = 16;
    const C: usize = 64;
    let (mut w, _) = setup(1);
    let b = w.alloc_tensor("b", DType::F32, &[R, C]).unwrap();
    let frames: Vec<(Tensor, Tensor)> = (0..2)
        .map(|i| {
            let a = w.alloc_tensor(&format!("a{i}"), DType::F32, &[R, C]).unwrap();
            let f = w.alloc_tensor(&format!("f{i}"), DType::F32, &[R, C]).unwrap();
            (a, f)
        })
        .collect();
    let weight: Vec<f32> = (0..R * C).map(|i| 0.5 * i as f32).collect();
    w.write(&b, 0, &weight).unwrap();
    for submit in 0..3 {
        let (a, f) = frames[submit % 2].clone();
        let input = arange(submit + 1, R * C);
        w.write(&a, 0, &input).unwrap();
        let (ak, bk, fk) = (a.clone(), b.clone(), f.clone());
        w.dispatch(
            0,
            Dispatch::kernel("add", 1, move |core| {
                let ta = core.load(&ak, &[0, 0], &[R, C])?;
                let tb = core.load(&bk, &[0, 0], &[R, C])?;
                let t = core.add(&ta, &tb)?;
                core.store(&t, &fk, &[0, 0])
            }),
        )
        .unwrap();
        w.run().unwrap();
        let want: Vec<f64> = input.iter().zip(&weight).map(|(&x, &y)| x as f64 + y as f64).collect();
        allclose(&read_f64(&w, &f, 0), &want, 1e-5, 1e-8).unwrap_or_else(|e| panic!("submit {submit}: {e}"));
        assert_eq!(w.read::<f32>(&b, 0).unwrap(), weight, "the resident weight is untouched by submit {submit}");
    }
}

/// Item 67, `test_l3_rank_slice_dispatch.py::test_rank_slice_no_dummy`: a per-rank child whose
/// only arguments are the rank's own GM slices (no window, no dummy window argument); golden
/// `out[r] = in[r] + 1`. The domain allocates no window at all.
#[test]
fn t67_rank_slice_no_dummy() {
    const SIZE: usize = 128;
    for p in [2, 4] {
        let (mut w, dom) = setup(p);
        let inp = w.alloc_tensor("in", DType::F32, &[1, SIZE]).unwrap();
        let out = w.alloc_tensor("out", DType::F32, &[1, SIZE]).unwrap();
        for r in 0..p {
            w.write(&inp, r, &arange(r, SIZE)).unwrap();
        }
        let (i, o) = (inp.clone(), out.clone());
        w.dispatch_all(
            &dom,
            Dispatch::kernel("child", 1, move |core| {
                let t = core.load(&i, &[0, 0], &[1, SIZE])?;
                let t = core.adds(&t, 1.0)?;
                core.store(&t, &o, &[0, 0])
            }),
        )
        .unwrap();
        assert_eq!(w.window_size(&dom), 0, "no window is allocated");
        run_checked(&mut w);
        for r in 0..p {
            let want: Vec<f64> = arange(r, SIZE).iter().map(|&x| x as f64 + 1.0).collect();
            allclose(&read_f64(&w, &out, r), &want, 1e-5, 1e-8).unwrap_or_else(|e| panic!("P={p} rank {r}: {e}"));
        }
    }
}

/// Item 76, `test_l3_tuple_return.py::test_execute`: one chip function returns a tuple
/// `(a + b, a - b)`; both outputs match their goldens. Run on two chips with PyPTO's inputs.
#[test]
fn t76_tuple_return() {
    const SIZE: usize = 256;
    let (mut w, dom) = setup(2);
    let a = w.alloc_tensor("a", DType::F32, &[1, SIZE]).unwrap();
    let b = w.alloc_tensor("b", DType::F32, &[1, SIZE]).unwrap();
    let sum = w.alloc_tensor("sum", DType::F32, &[1, SIZE]).unwrap();
    let diff = w.alloc_tensor("diff", DType::F32, &[1, SIZE]).unwrap();
    let bv = |r: usize| -> Vec<f32> { (0..SIZE).map(|i| 0.25 * i as f32 - r as f32).collect() };
    for r in 0..2 {
        w.write(&a, r, &arange(r, SIZE)).unwrap();
        w.write(&b, r, &bv(r)).unwrap();
    }
    let (ak, bk, s, d) = (a.clone(), b.clone(), sum.clone(), diff.clone());
    w.dispatch_all(
        &dom,
        Dispatch::kernel("tuple", 1, move |core| {
            let ta = core.load(&ak, &[0, 0], &[1, SIZE])?;
            let tb = core.load(&bk, &[0, 0], &[1, SIZE])?;
            let t = core.add(&ta, &tb)?;
            core.store(&t, &s, &[0, 0])?;
            let t = sub(core, &ta, &tb)?;
            core.store(&t, &d, &[0, 0])
        }),
    )
    .unwrap();
    w.run().unwrap();
    for r in 0..2 {
        let (av, bv) = (f64s(&arange(r, SIZE)), f64s(&bv(r)));
        let want_sum: Vec<f64> = av.iter().zip(&bv).map(|(x, y)| x + y).collect();
        let want_diff: Vec<f64> = av.iter().zip(&bv).map(|(x, y)| x - y).collect();
        allclose(&read_f64(&w, &sum, r), &want_sum, 1e-5, 1e-8).unwrap();
        allclose(&read_f64(&w, &diff, r), &want_diff, 1e-5, 1e-8).unwrap();
    }
}

/// Companion example `examples/distributed/02_programming_model.py` (the tutorial programs
/// cover the others): `y[r] = x[r] * (r + 1)`, at P = 2, 3, 4 as the dynamic-rank-count example
/// runs it.
#[test]
fn companion_programming_model() {
    const SIZE: usize = 64;
    for p in [2, 3, 4] {
        let (mut w, dom) = setup(p);
        let x = w.alloc_tensor("x", DType::F32, &[1, SIZE]).unwrap();
        let y = w.alloc_tensor("y", DType::F32, &[1, SIZE]).unwrap();
        for r in 0..p {
            w.write(&x, r, &arange(r, SIZE)).unwrap();
        }
        let (xk, yk) = (x.clone(), y.clone());
        w.dispatch_all(
            &dom,
            Dispatch::kernel("scale", 1, move |core| {
                let t = core.load(&xk, &[0, 0], &[1, SIZE])?;
                let t = core.muls(&t, (core.rank() + 1) as f64)?;
                core.store(&t, &yk, &[0, 0])
            }),
        )
        .unwrap();
        w.run().unwrap();
        for r in 0..p {
            let want: Vec<f64> = arange(r, SIZE).iter().map(|&v| v as f64 * (r + 1) as f64).collect();
            allclose(&read_f64(&w, &y, r), &want, 1e-5, 1e-8).unwrap();
        }
    }
}
