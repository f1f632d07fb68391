//! Helpers for the collective tests: worlds of any rank count, PyPTO's input recipes, and
//! numpy-style `allclose`.

use ranksim::Config;
use ranksim::prelude::*;

/// A world of the a2a3 machine with at least `p` ranks, and the domain of its first `p`.
pub fn setup(p: usize) -> (World, Domain) {
    let cfg = Config::default_preset();
    let cfg = if p > cfg.machine.ranks { cfg.with_ranks(p).unwrap() } else { cfg };
    let mut w = cfg.world().unwrap();
    let members: Vec<usize> = (0..p).collect();
    let dom = w.create_domain("comm_d0", &members, DomainOptions::default()).unwrap();
    (w, dom)
}

/// PyPTO's recipe: rank r holds `r*100 .. r*100 + size`.
pub fn arange(r: usize, size: usize) -> Vec<f32> {
    (0..size).map(|i| (r * 100 + i) as f32).collect()
}

/// numpy's `allclose(got, want, rtol, atol)`: `|got - want| <= atol + rtol * |want|`.
pub fn allclose(got: &[f64], want: &[f64], rtol: f64, atol: f64) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("length {} != {}", got.len(), want.len()));
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let ok = (g - w).abs() <= atol + rtol * w.abs() || (g == w);
        if !ok {
            return Err(format!("element {i}: got {g}, want {w}"));
        }
    }
    Ok(())
}

/// Float tolerance of a dtype as PyPTO's tests use it: f32 numpy defaults, f16 / bf16 2e-2.
pub fn tolerance(dt: DType) -> (f64, f64) {
    match dt {
        DType::F32 => (1e-5, 1e-8),
        DType::F16 | DType::BF16 => (2e-2, 2e-2),
        _ => (0.0, 0.0),
    }
}

/// Writes `vals` (as f64) into rank `r`'s copy of `t`, converted to its dtype.
pub fn write_f64(w: &mut World, t: &Tensor, r: usize, vals: &[f64]) {
    w.write_f64(t, r, vals).unwrap()
}

/// `v` as a `dt` element holds it, computed here with the standard library and `half` only
/// (never through the simulator): for the f32-exact inputs the tests stage, one rounding.
pub fn stored_as(dt: DType, v: f64) -> f64 {
    match dt {
        DType::F32 => v as f32 as f64,
        DType::F16 => f16::from_f32(v as f32).to_f64(),
        DType::BF16 => bf16::from_f32(v as f32).to_f64(),
        DType::I32 => v as i32 as f64,
        DType::I16 => v as i16 as f64,
        DType::I8 => v as i8 as f64,
    }
}

/// Rank `r`'s copy of `t`, as f64.
pub fn read_f64(w: &World, t: &Tensor, r: usize) -> Vec<f64> {
    w.read_f64(t, r).unwrap()
}

/// Asserts every cell of `sig` is zero on each of the `p` ranks.
pub fn assert_signal_clear(w: &World, sig: &Tensor, p: usize) {
    for r in 0..p {
        let v = w.read::<i32>(sig, r).unwrap();
        assert!(v.iter().all(|&x| x == 0), "signal `{}` on rank {r} is not clear: {v:?}", sig.name());
    }
}

/// Element-wise `op` over ranks, folded in ascending rank order in f64.
pub fn fold(op: ReduceOp, per_rank: &[Vec<f64>]) -> Vec<f64> {
    let mut acc = per_rank[0].clone();
    for v in &per_rank[1..] {
        for (a, b) in acc.iter_mut().zip(v) {
            *a = match op {
                ReduceOp::Sum => *a + b,
                ReduceOp::Max => a.max(*b),
                ReduceOp::Min => a.min(*b),
                ReduceOp::Prod => *a * b,
            };
        }
    }
    acc
}
