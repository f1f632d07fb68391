//! cast, row / column reductions and reshape through the core: values against goldens computed
//! here, refused pairs, and their vector cost on the simple machine (1 GHz, `10 + elems / 64`
//! cycles for f32, `/ 128` for f16).

use crate::common::{all, simple};
use parking_lot::Mutex;
use ranksim::prelude::*;
use ranksim::sim_core::cast_supported;
use std::sync::Arc;

/// Values every dtype holds exactly (and f32 too), with halves to exercise rounding.
const SAMPLES: [f64; 8] = [0.0, 1.0, -2.0, 2.5, -3.5, 100.0, 127.0, -128.0];

/// The expected result of converting `v` to `to` with round-to-nearest-even, computed with
/// the standard library only.
fn golden(v: f64, to: DType) -> f64 {
    match to {
        DType::F32 => v as f32 as f64,
        DType::F16 => f16::from_f32(v as f32).to_f64(),
        DType::BF16 => bf16::from_f32(v as f32).to_f64(),
        DType::I32 => v.round_ties_even().clamp(i32::MIN as f64, i32::MAX as f64),
        DType::I16 => v.round_ties_even().clamp(i16::MIN as f64, i16::MAX as f64),
        DType::I8 => v.round_ties_even().clamp(-128.0, 127.0),
    }
}

/// Runs `f` on one core of the simple machine; returns what it recorded.
fn on_core<T: Send + 'static>(f: impl Fn(&mut Core) -> SimResult<T> + Send + Sync + 'static) -> SimResult<T> {
    on_world(simple(1), f)
}

/// Runs `f` on one core of rank 0 of `w`; returns what it recorded.
fn on_world<T: Send + 'static>(
    mut w: World,
    f: impl Fn(&mut Core) -> SimResult<T> + Send + Sync + 'static,
) -> SimResult<T> {
    let dom = all(&mut w);
    let out: Arc<Mutex<Option<T>>> = Arc::default();
    let o = out.clone();
    w.dispatch(
        0,
        Dispatch::kernel("ops", 1, move |core| {
            let v = f(core)?;
            *o.lock() = Some(v);
            Ok(())
        })
        .in_domain(&dom),
    )?;
    w.run()?;
    let v = out.lock().take();
    Ok(v.expect("the kernel ran"))
}

/// A [1, n] tile of `dt` holding `vals` (exact in `dt`), built without the code under test.
fn tile_of(dt: DType, vals: &[f64]) -> Tile {
    let n = vals.len();
    match dt {
        DType::F32 => Tile::from_slice(1, n, &vals.iter().map(|&v| v as f32).collect::<Vec<_>>()),
        DType::F16 => Tile::from_slice(1, n, &vals.iter().map(|&v| f16::from_f32(v as f32)).collect::<Vec<_>>()),
        DType::BF16 => Tile::from_slice(1, n, &vals.iter().map(|&v| bf16::from_f32(v as f32)).collect::<Vec<_>>()),
        DType::I32 => Tile::from_slice(1, n, &vals.iter().map(|&v| v as i32).collect::<Vec<_>>()),
        DType::I16 => Tile::from_slice(1, n, &vals.iter().map(|&v| v as i16).collect::<Vec<_>>()),
        DType::I8 => Tile::from_slice(1, n, &vals.iter().map(|&v| v as i8).collect::<Vec<_>>()),
    }
    .unwrap()
}

#[test]
fn cast_converts_every_supported_pair_and_refuses_the_rest() {
    for from in DType::ALL {
        for to in DType::ALL {
            // Integers hold the samples truncated toward zero.
            let src: Vec<f64> = SAMPLES.iter().map(|&v| if from.is_float() { v } else { v.trunc() }).collect();
            let t = tile_of(from, &src);
            let got = on_core(move |core| {
                let r = core.cast(&t, to, RoundMode::Rint)?;
                Ok((0..r.len()).map(|i| r.get_f64(0, i)).collect::<Vec<f64>>())
            });
            if cast_supported(from, to) {
                let want: Vec<f64> = src.iter().map(|&v| golden(v, to)).collect();
                assert_eq!(got.unwrap(), want, "{from} -> {to}");
            } else {
                let e = got.unwrap_err().to_string();
                assert!(e.contains(&format!("cast {from} -> {to}")) && e.contains("intermediate"), "{e}");
            }
        }
    }
}

#[test]
fn cast_modes_differ_only_where_the_value_is_inexact() {
    let vals = [2.5f32, -2.5, 2.4, -2.6];
    for (mode, want) in [
        (RoundMode::Rint, [2, -2, 2, -3]),
        (RoundMode::Round, [3, -3, 2, -3]),
        (RoundMode::Floor, [2, -3, 2, -3]),
        (RoundMode::Ceil, [3, -2, 3, -2]),
        (RoundMode::Trunc, [2, -2, 2, -2]),
    ] {
        let got = on_core(move |core| {
            let t = Tile::from_slice(1, 4, &vals)?;
            core.cast(&t, DType::I32, mode)?.to_vec::<i32>()
        })
        .unwrap();
        assert_eq!(got, want, "{mode}");
    }
}

#[test]
fn reductions_and_reshape_through_the_core_with_their_cost() {
    let (vals, clock) = on_core(|core| {
        let t = Tile::from_slice(4, 256, &(0..1024).map(|i| (i % 7) as f32).collect::<Vec<_>>())?;
        let start = core.now().as_ps();
        let rows = core.row_sum(&t)?; // 10 + 1024 / 64 = 26 cycles
        let cols = core.col_max(&t)?; // 26 cycles
        let h = core.cast(&t, DType::F16, RoundMode::Rint)?; // the wider type, f32: 26 cycles
        let hs = core.row_max(&h)?; // f16: 10 + 1024 / 128 = 18 cycles
        let flat = core.reshape(&t, 1, 1024)?; // free
        let spent = core.now().as_ps() - start;
        let out = (rows.to_vec::<f32>()?, cols.to_vec::<f32>()?[..8].to_vec(), hs.get_f64(3, 0), flat.get_f64(0, 1000));
        Ok((out, spent))
    })
    .unwrap();
    // Row r holds (r*256 + c) % 7 for c in 0..256.
    let row_sums: Vec<f32> = (0..4).map(|r| (0..256).map(|c| ((r * 256 + c) % 7) as f32).sum()).collect();
    let col_max: Vec<f32> = (0..8).map(|c| (0..4).map(|r| ((r * 256 + c) % 7) as f32).fold(0.0, f32::max)).collect();
    assert_eq!(vals.0, row_sums);
    assert_eq!(vals.1, col_max);
    assert_eq!((vals.2, vals.3), (6.0, (1000 % 7) as f64));
    assert_eq!(clock, 26_000 * 3 + 18_000);
}

#[test]
fn a_reshape_that_changes_the_element_count_names_both_shapes() {
    let e = on_core(|core| core.reshape(&Tile::zeros(DType::F32, 2, 8), 3, 5)).unwrap_err().to_string();
    assert!(e.contains("reshape") && e.contains("3x5") && e.contains("16 elements") && e.contains("rank 0"), "{e}");
}

/// The `[chip.vector.ops]` table of [`ops_machine`]: round numbers, every key of the schema.
const OPS_TABLE: &str = r#"
[chip.vector.ops]
exp = { fixed_cycles = 31, elems_per_cycle = 32 }
log = { fixed_cycles = 33, elems_per_cycle = 32 }
sqrt = { fixed_cycles = 5, cycles_per_repeat = 3 }
rsqrt = { fixed_cycles = 24 }
recip = { fixed_cycles = 45, elems_per_cycle = 13 }
abs = { fixed_cycles = 7 }
relu = { fixed_cycles = 23 }
div = { fixed_cycles = 31, elems_per_cycle = 16 }
divs = { fixed_cycles = 40, elems_per_cycle = 13 }
cmp = { fixed_cycles = 36, cycles_per_repeat = 2 }
cmps = { fixed_cycles = 30, cycles_per_repeat = 2 }
select = { fixed_cycles = 25, cycles_per_repeat = 2, cycles_per_row = 30 }
full = { fixed_cycles = 24 }
row_expand = { fixed_cycles = 37, cycles_per_row = 13 }
col_expand = { fixed_cycles = 20, cycles_per_repeat = 2 }
"#;

/// The simple machine (1 GHz: a cycle is 1000 ps; add costs `10 + ceil(elems / lanes)`, lanes
/// 64 for f32 and 128 for f16) with [`OPS_TABLE`].
fn ops_machine() -> World {
    let toml = crate::common::simple_toml(1).replace("\n[host]", &format!("{OPS_TABLE}\n[host]"));
    ranksim::Config::from_toml(&toml, "ops").unwrap().world().unwrap()
}

/// Each operation of a 4 x 100 tile (400 elements: 7 repeats of 64 f32 lanes, 4 of 128 f16
/// lanes) takes exactly `fixed + cycles_per_repeat x ceil(400 / lanes) + cycles_per_row x 4`
/// cycles of its `[chip.vector.ops]` entry, and the operations in the class of add take add's
/// `10 + ceil(400 / lanes)`.
#[test]
fn each_vector_op_costs_its_configured_formula() {
    type Op = fn(&mut Core, &Tile) -> SimResult<Tile>;
    let ops: Vec<(&str, DType, Op, u64)> = vec![
        ("exp", DType::F32, |c, t| c.exp(t), 31 + 13), // 400 / 32 per cycle = 13 repeats
        ("exp f16", DType::F16, |c, t| c.exp(t), 31 + 13), // the op's own rate, whatever the dtype
        ("log", DType::BF16, |c, t| c.log(t), 33 + 13),
        ("sqrt", DType::F32, |c, t| c.sqrt(t), 5 + 3 * 7),
        ("sqrt f16", DType::F16, |c, t| c.sqrt(t), 5 + 3 * 4),
        ("rsqrt", DType::F32, |c, t| c.rsqrt(t), 24 + 7),
        ("recip", DType::F32, |c, t| c.recip(t), 45 + 31), // 400 / 13 -> 31 repeats
        ("abs", DType::F32, |c, t| c.abs(t), 7 + 7),
        ("relu", DType::F16, |c, t| c.relu(t), 23 + 4),
        ("neg", DType::F32, |c, t| c.neg(t), 10 + 7), // muls by -1
        ("div", DType::F32, |c, t| c.div(t, t), 31 + 25),
        ("divs", DType::F32, |c, t| c.divs(t, 3.0), 40 + 31),
        ("sub", DType::F32, |c, t| c.sub(t, t), 10 + 7),
        ("subs", DType::F16, |c, t| c.subs(t, 1.0), 10 + 4),
        ("maxs", DType::F32, |c, t| c.maxs(t, 1.0), 10 + 7),
        ("mins", DType::F32, |c, t| c.mins(t, 1.0), 10 + 7),
        ("cmp", DType::F32, |c, t| c.cmp(t, t, CmpOp::Lt), 36 + 2 * 7),
        ("cmps", DType::F32, |c, t| c.cmps(t, 0.5, CmpOp::Ge), 30 + 2 * 7),
        ("select", DType::F32, |c, t| c.select(t, t, t), 25 + 2 * 7 + 30 * 4),
        ("selects", DType::F32, |c, t| c.selects(t, t, 0.0), 25 + 2 * 7 + 30 * 4),
        ("full", DType::F32, |c, _| c.full(DType::F32, 4, 100, 1.0), 24 + 7),
        ("expands", DType::F16, |c, t| c.expands(t, 1.0), 24 + 4),
        ("row_expand", DType::F32, |c, t| c.row_expand(t, &t.reduce_axis(ReduceOp::Sum, Axis::Rows)), 37 + 7 + 13 * 4),
        ("col_expand", DType::F32, |c, t| c.col_expand(t, &t.reduce_axis(ReduceOp::Sum, Axis::Cols)), 20 + 2 * 7),
        ("row_min", DType::F32, |c, t| c.row_min(t), 10 + 7),
        ("col_min", DType::F32, |c, t| c.col_min(t), 10 + 7),
        ("add (unchanged)", DType::F32, |c, t| c.add(t, t), 10 + 7),
    ];
    for (name, dt, op, cycles) in ops {
        let spent = on_world(ops_machine(), move |core| {
            let t = core.full(dt, 4, 100, 2.0)?;
            let start = core.now().as_ps();
            op(core, &t)?;
            Ok(core.now().as_ps() - start)
        })
        .unwrap();
        assert_eq!(spent, cycles * 1000, "{name}");
    }
}

/// On the a2a3 preset (1.85 GHz) `exp` of 4096 f32 or f16 elements takes 31 + 4096 / 32 = 159
/// cycles (TEXP's measured fit), `div` 31 + 4096 / 16 = 287, and `add` still 33 + 4096 / 64 =
/// 97: the new table changes no existing cost.
#[test]
fn the_a2a3_preset_costs_exp_and_div_by_their_measured_fits() {
    let ps = |cycles: u64| (cycles * 1_000_000_000_000).div_ceil(1_850_000_000);
    for (dt, op, cycles) in [
        (DType::F32, "exp", 159),
        (DType::F16, "exp", 159),
        (DType::BF16, "div", 287),
        (DType::F32, "add", 97),
        (DType::F16, "add", 33 + 32),
    ] {
        let spent = on_world(crate::common::a2a3(), move |core| {
            let t = Tile::from_slice(16, 256, &vec![1.0f32; 4096])?.cast(dt, RoundMode::Rint)?;
            let start = core.now().as_ps();
            match op {
                "exp" => core.exp(&t)?,
                "div" => core.div(&t, &t)?,
                _ => core.add(&t, &t)?,
            };
            Ok(core.now().as_ps() - start)
        })
        .unwrap();
        assert_eq!(spent, ps(cycles), "{op} {dt}");
    }
}

/// Values through the core against goldens computed here from the standard library: every
/// float dtype rounds the f64 result once.
#[test]
fn new_ops_give_numpy_like_values_in_every_float_dtype() {
    let xs = [0.5, 1.0, 2.0, 3.0, 0.25, 8.0, 10.0, 100.0];
    let ys = [2.0, -1.0, 4.0, 3.0, 0.5, -2.0, 7.0, 0.125];
    for dt in [DType::F32, DType::F16, DType::BF16] {
        let round = move |v: f64| golden(v, dt);
        let (x, y) = (tile_of(dt, &xs), tile_of(dt, &ys));
        let got = on_core(move |core| {
            let rows = |t: Tile| (0..t.len()).map(|i| t.get_f64(0, i)).collect::<Vec<f64>>();
            Ok([
                rows(core.exp(&x)?),
                rows(core.log(&x)?),
                rows(core.sqrt(&x)?),
                rows(core.recip(&y)?),
                rows(core.div(&x, &y)?),
                rows(core.sub(&x, &y)?),
                {
                    let gt = core.cmp(&x, &y, CmpOp::Gt)?;
                    rows(core.select(&gt, &x, &y)?)
                },
                rows(core.cmps(&x, 2.0, CmpOp::Le)?),
                rows(core.full(dt, 1, 8, 0.1)?),
            ])
        })
        .unwrap();
        let map = |f: &dyn Fn(usize) -> f64| (0..8).map(|i| round(f(i))).collect::<Vec<f64>>();
        let want = [
            map(&|i| xs[i].exp()),
            map(&|i| xs[i].ln()),
            map(&|i| xs[i].sqrt()),
            map(&|i| 1.0 / ys[i]),
            map(&|i| xs[i] / ys[i]),
            map(&|i| xs[i] - ys[i]),
            map(&|i| xs[i].max(ys[i])),
            map(&|i| if xs[i] <= 2.0 { 1.0 } else { 0.0 }),
            map(&|_| 0.1),
        ];
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "{dt}: result {k}");
        }
    }
}

#[test]
fn refused_new_ops_name_the_op_and_what_to_change() {
    let e = on_core(|core| core.exp(&Tile::zeros(DType::I32, 1, 8))).unwrap_err().to_string();
    assert!(e.contains("exp") && e.contains("float tiles") && e.contains("rank 0"), "{e}");
    let e = on_core(|core| core.div(&Tile::zeros(DType::F32, 1, 8), &Tile::zeros(DType::F32, 2, 4)))
        .unwrap_err()
        .to_string();
    assert!(e.contains("`div`") || e.contains("div:"), "{e}");
    let e = on_core(|core| core.full(DType::F32, 1024, 1024, 0.0)).unwrap_err().to_string();
    assert!(e.contains("full") && e.contains("UB"), "{e}");
    let e = on_core(|core| core.divs(&Tile::zeros(DType::I16, 1, 8), 0.0)).unwrap_err().to_string();
    assert!(e.contains("divs") && e.contains("division by zero"), "{e}");
}

/// A padded tile at a tensor's ragged end (PyPTO's `valid_shapes` loads): the tile may reach
/// past the tensor as long as its valid part does not; the valid part past it is refused.
#[test]
fn a_padded_tile_may_reach_past_the_tensor_but_its_valid_part_may_not() {
    let mut w = simple(1);
    let dom = all(&mut w);
    let x = w.alloc_tensor("x", DType::F32, &[1, 17]).unwrap();
    w.write(&x, 0, &(0..17).map(|i| i as f32).collect::<Vec<_>>()).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (xk, sk) = (x.clone(), seen.clone());
    w.dispatch(
        0,
        Dispatch::kernel("ragged_end", 1, move |core| {
            let t = core.load_valid(&xk, &[0, 0], &[8, 64], &[1, 17])?;
            assert_eq!((t.shape(), t.valid_shape()), ((8, 64), (1, 17)));
            sk.lock().extend(t.to_vec::<f32>()?.into_iter().take(18));
            let e = core.load_valid(&xk, &[0, 8], &[1, 64], &[1, 10]).unwrap_err().to_string();
            assert!(e.contains("fall outside `x`"), "{e}");
            Ok(())
        })
        .in_domain(&dom),
    )
    .unwrap();
    assert!(w.run().is_err(), "the refused load fails the run");
    let v = seen.lock().clone();
    assert_eq!(v[..17], (0..17).map(|i| i as f32).collect::<Vec<_>>()[..]);
    assert_eq!(v[17], 0.0, "padding past the valid part is zero");
}

/// `load_valid` reads only the valid part: the tile keeps its physical shape with zeros
/// around the data, a store writes back only the valid part, and the load takes exactly as
/// long as a load of the valid region alone.
#[test]
fn a_partial_valid_load_reads_and_costs_only_the_valid_region() {
    let mut w = simple(1);
    let dom = all(&mut w);
    let x = w.alloc_tensor("x", DType::F32, &[8, 64]).unwrap();
    let out = w.alloc_tensor("out", DType::F32, &[8, 64]).unwrap();
    w.write(&x, 0, &(0..512).map(|i| i as f32).collect::<Vec<_>>()).unwrap();
    w.write(&out, 0, &vec![-1.0f32; 512]).unwrap();
    let times = Arc::new(Mutex::new(Vec::new()));
    let (xk, o, tk) = (x.clone(), out.clone(), times.clone());
    w.dispatch(
        0,
        Dispatch::kernel("ragged", 1, move |core| {
            let t0 = core.now().as_ps();
            let t = core.load_valid(&xk, &[2, 0], &[4, 64], &[3, 10])?;
            let t1 = core.now().as_ps();
            core.load(&xk, &[2, 0], &[3, 10])?;
            let t2 = core.now().as_ps();
            assert_eq!((t.shape(), t.valid_shape()), ((4, 64), (3, 10)));
            let v = t.to_vec::<f32>()?;
            assert_eq!((v[0], v[9], v[10], v[64], v[64 * 3]), (128.0, 137.0, 0.0, 192.0, 0.0));
            tk.lock().extend([t1 - t0, t2 - t1]);
            let t = core.adds(&t, 0.5)?;
            core.store(&t, &o, &[2, 0])?;
            let e = core.load_valid(&xk, &[0, 0], &[2, 8], &[3, 8]).unwrap_err().to_string();
            assert!(e.contains("valid_shape [3, 8]") && e.contains("load"), "{e}");
            Ok(())
        })
        .in_domain(&dom),
    )
    .unwrap();
    assert!(w.run().is_err(), "the refused load fails the run (argument errors are sticky)");
    let t = times.lock().clone();
    assert_eq!(t[0], t[1], "load_valid of 3x10 costs a 3x10 load");
    assert_eq!(t[0], 120 * 10, "3 x 10 f32 = 120 bytes at 100 GB/s, 10 ps each");
    let got = w.read::<f32>(&out, 0).unwrap();
    for r in 0..8 {
        for c in 0..64 {
            let want = if (2..5).contains(&r) && c < 10 { (r * 64 + c) as f32 + 0.5 } else { -1.0 };
            assert_eq!(got[r * 64 + c], want, "out[{r}, {c}]");
        }
    }
}
