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
    let mut w = simple(1);
    let dom = all(&mut w);
    let out: Arc<Mutex<Option<T>>> = Arc::default();
    let o = out.clone();
    w.dispatch_all(
        &dom,
        Dispatch::kernel("ops", 1, move |core| {
            let v = f(core)?;
            *o.lock() = Some(v);
            Ok(())
        }),
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
