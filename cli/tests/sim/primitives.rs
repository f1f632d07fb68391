//! Semantics of every primitive (reference §2.4-2.9) on real data.

use crate::common::{a2a3, all, dispatch_store_then_copy, run_on_all, simple};
use ranksim::prelude::*;
use std::sync::Arc;

#[test]
fn self_notify_hits_the_same_cell_and_negative_add_clears_credits() {
    // PyPTO test_self_notify_credit_reset: REPS AtomicAdd(+1) to the peer, wait >= REPS, then
    // AtomicAdd(-REPS) on our own cell: every cell ends at 0.
    const REPS: i32 = 4;
    let mut w = simple(2);
    let dom = all(&mut w);
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[1, 1]).unwrap();
    let s = sig.clone();
    run_on_all(&mut w, &dom, "credits", 1, move |core| {
        let peer = 1 - core.rank();
        for _ in 0..REPS {
            core.notify(&s, peer, &[0, 0], 1, NotifyOp::AtomicAdd)?;
        }
        core.wait(&s, &[0, 0], REPS, WaitCmp::Ge)?;
        core.notify(&s, core.rank(), &[0, 0], -REPS, NotifyOp::AtomicAdd)
    });
    assert_eq!(w.read::<i32>(&sig, 0).unwrap(), vec![0]);
    assert_eq!(w.read::<i32>(&sig, 1).unwrap(), vec![0]);
}

#[test]
fn set_overwrites_and_eq_wait_compares_signed() {
    let mut w = simple(2);
    let dom = all(&mut w);
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[2]).unwrap();
    let s = sig.clone();
    run_on_all(&mut w, &dom, "set", 1, move |core| {
        if core.rank() == 0 {
            core.notify(&s, 1, &[0], 7, NotifyOp::AtomicAdd)?;
            core.notify(&s, 1, &[0], -3, NotifyOp::Set)?;
            core.notify(&s, 1, &[1], 5, NotifyOp::Set)
        } else {
            // -3 >= -5 holds only under a signed compare.
            core.wait(&s, &[0], -5, WaitCmp::Ge)?;
            core.wait(&s, &[0], -3, WaitCmp::Eq)?;
            core.wait(&s, &[1], 5, WaitCmp::Eq)
        }
    });
    assert_eq!(w.read::<i32>(&sig, 1).unwrap(), vec![-3, 5]);
}

#[test]
fn wait_all_needs_every_cell_of_the_view() {
    let mut w = simple(4);
    let dom = all(&mut w);
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[4, 1]).unwrap();
    let s = sig.clone();
    let r = run_on_all(&mut w, &dom, "gather", 1, move |core| {
        let me = core.rank();
        if me != 0 {
            core.compute(1000 * me as u64);
            core.notify(&s, 0, &[me, 0], me as i32, NotifyOp::Set)
        } else {
            core.wait_all(&s, &[1, 0], &[3, 1], 1, WaitCmp::Ge)
        }
    });
    // Rank 0 resumes only after the slowest notify (rank 3 starts it at 3 us).
    let t0 = r.of_chip(0).next().unwrap().end.as_ps();
    assert!(t0 > 3_000_000 + 1_000_000, "rank 0 resumed at {t0} ps");
    assert_eq!(w.read::<i32>(&sig, 0).unwrap(), vec![0, 1, 2, 3]);
}

#[test]
fn remote_load_valid_shape_reads_only_the_ragged_part() {
    let mut w = simple(2);
    let dom = all(&mut w);
    let x = w.alloc_window(&dom, "x", DType::F32, &[2, 8]).unwrap();
    let out = w.alloc_tensor("out", DType::F32, &[2, 8]).unwrap();
    w.write(&x, 1, &(0..16).map(|i| i as f32).collect::<Vec<_>>()).unwrap();
    let (xk, o) = (x.clone(), out.clone());
    w.dispatch(
        0,
        Dispatch::kernel("ragged", 1, move |core| {
            let t = core.remote_load_valid(&xk, 1, &[0, 0], &[2, 8], &[1, 3])?;
            assert_eq!(t.shape(), (2, 8));
            assert_eq!(t.valid_shape(), (1, 3));
            let full = Tile::from_slice(2, 8, &t.to_vec::<f32>()?)?;
            core.store(&full, &o, &[0, 0])
        })
        .in_domain(&dom),
    )
    .unwrap();
    w.run().unwrap();
    let mut want = vec![0.0f32; 16];
    want[..3].copy_from_slice(&[0.0, 1.0, 2.0]);
    assert_eq!(w.read::<f32>(&out, 0).unwrap(), want);
}

#[test]
fn remote_store_atomic_add_accumulates_every_dtype() {
    fn check<T: ranksim::sim_core::Element>(vals: impl Fn(usize) -> T + Send + Sync + 'static, want: T) {
        let mut w = simple(4);
        let dom = all(&mut w);
        let acc = w.alloc_window(&dom, "acc", T::DTYPE, &[1, 16]).unwrap();
        let a = acc.clone();
        run_on_all(&mut w, &dom, "accumulate", 1, move |core| {
            let t = Tile::from_slice(1, 16, &[vals(core.rank()); 16])?;
            core.remote_store(&t, &a, 0, &[0, 0], AtomicType::Add)
        });
        assert_eq!(w.read::<T>(&acc, 0).unwrap(), vec![want; 16], "{}", T::DTYPE);
    }
    check(|r| (r + 1) as f32 * 0.5, 5.0f32);
    check(|r| f16::from_f32((r + 1) as f32), f16::from_f32(10.0));
    check(|r| (r as i32) - 10, -34i32);
    check(|r| (r as i16) * 100, 600i16);
    check(|r| r as i8, 6i8);
}

#[test]
fn bf16_atomic_add_works_on_a2a3() {
    let mut w = a2a3();
    let dom = all(&mut w);
    let acc = w.alloc_window(&dom, "acc", DType::BF16, &[1, 16]).unwrap();
    let a = acc.clone();
    run_on_all(&mut w, &dom, "accumulate", 1, move |core| {
        let t = Tile::from_slice(1, 16, &[bf16::from_f32(1.0); 16])?;
        core.remote_store(&t, &a, 0, &[0, 0], AtomicType::Add)
    });
    assert_eq!(w.read::<bf16>(&acc, 0).unwrap(), vec![bf16::from_f32(8.0); 16]);
}

#[test]
fn put_atomic_add_into_the_root() {
    // PyPTO test_atomic_add_accumulate: INT32 16x16, root starts at 10, every rank (itself
    // included) put(atomic=Add)s 16 and notifies the root, which waits for NR notifies.
    for nr in [2usize, 4] {
        let mut w = simple(nr);
        let dom = all(&mut w);
        let src = w.alloc_tensor("src", DType::I32, &[16, 16]).unwrap();
        let dst = w.alloc_window(&dom, "dst", DType::I32, &[16, 16]).unwrap();
        let sig = w.alloc_window(&dom, "sig", DType::I32, &[1, 1]).unwrap();
        for r in 0..nr {
            w.write(&src, r, &[16i32; 256]).unwrap();
        }
        w.write(&dst, 0, &[10i32; 256]).unwrap();
        let (s, d, g) = (src.clone(), dst.clone(), sig.clone());
        run_on_all(&mut w, &dom, "accumulate", 1, move |core| {
            core.put(&d, 0, &s, &CopyOpts::new().atomic(AtomicType::Add))?;
            core.notify(&g, 0, &[0, 0], 1, NotifyOp::AtomicAdd)?;
            if core.rank() == 0 {
                core.wait(&g, &[0, 0], core.nranks() as i32, WaitCmp::Ge)?;
            }
            Ok(())
        });
        assert_eq!(w.read::<i32>(&dst, 0).unwrap(), vec![10 + 16 * nr as i32; 256]);
    }
}

#[test]
fn row_put_and_row_get_move_subregions() {
    // PyPTO test_row_put / test_row_get: row 0 of one rank goes to row 1 of the other.
    let mut w = simple(2);
    let dom = all(&mut w);
    let buf = w.alloc_window(&dom, "buf", DType::F32, &[2, 32]).unwrap();
    let got = w.alloc_tensor("got", DType::F32, &[2, 32]).unwrap();
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[2, 1]).unwrap();
    for r in 0..2 {
        let mut v = vec![0.0f32; 64];
        v[..32].iter_mut().enumerate().for_each(|(i, x)| *x = (r * 100 + i) as f32);
        w.write(&buf, r, &v).unwrap();
    }
    let (b, g, s) = (buf.clone(), got.clone(), sig.clone());
    run_on_all(&mut w, &dom, "rows", 1, move |core| {
        let (me, peer) = (core.rank(), 1 - core.rank());
        // get: peer's row 0 into my local row 0 of `got`.
        core.get(&g, peer, &b, &CopyOpts::new().region(&[0, 0], &[0, 0], &[1, 32]))?;
        // put: my row 0 into the peer's row 1.
        core.put(&b, peer, &b, &CopyOpts::new().region(&[1, 0], &[0, 0], &[1, 32]))?;
        core.notify(&s, peer, &[me, 0], 1, NotifyOp::AtomicAdd)?;
        core.wait(&s, &[peer, 0], 1, WaitCmp::Ge)
    });
    for r in 0..2usize {
        let peer = 1 - r;
        let row0: Vec<f32> = (0..32).map(|i| (r * 100 + i) as f32).collect();
        let peer_row0: Vec<f32> = (0..32).map(|i| (peer * 100 + i) as f32).collect();
        assert_eq!(w.read::<f32>(&buf, r).unwrap(), [row0, peer_row0.clone()].concat());
        assert_eq!(w.read::<f32>(&got, r).unwrap()[..32], peer_row0[..]);
    }
}

#[test]
fn chunked_ring_shuffle_with_odd_chunks() {
    // PyPTO test_chunked_ring_shuffle: chunk_rows=2, chunk_cols=32 over an [8, 64] extent;
    // here also with chunks that do not divide the extent (3 x 40).
    for (cr, cc, pipeline) in [(2, 32, false), (3, 40, false), (3, 40, true), (8, 64, false)] {
        let mut w = simple(4);
        let dom = all(&mut w);
        let x = w.alloc_tensor("x", DType::F32, &[8, 64]).unwrap();
        let y = w.alloc_window(&dom, "y", DType::F32, &[8, 64]).unwrap();
        let sig = w.alloc_window(&dom, "sig", DType::I32, &[4, 1]).unwrap();
        for r in 0..4 {
            w.write(&x, r, &(0..512).map(|i| (r * 1000 + i) as f32).collect::<Vec<_>>()).unwrap();
        }
        let (xk, yk, s) = (x.clone(), y.clone(), sig.clone());
        run_on_all(&mut w, &dom, "shuffle", 1, move |core| {
            let (me, n) = (core.rank(), core.nranks());
            core.put(&yk, (me + 1) % n, &xk, &CopyOpts::new().chunks(cr, cc).pipeline(pipeline))?;
            core.notify(&s, (me + 1) % n, &[me, 0], 1, NotifyOp::AtomicAdd)?;
            core.wait(&s, &[(me + n - 1) % n, 0], 1, WaitCmp::Ge)
        });
        for r in 0..4 {
            let src = (r + 3) % 4;
            assert_eq!(
                w.read::<f32>(&y, r).unwrap(),
                (0..512).map(|i| (src * 1000 + i) as f32).collect::<Vec<_>>(),
                "chunks {cr}x{cc}"
            );
        }
    }
}

#[test]
fn three_dimensional_windows_flatten_leading_dims() {
    let mut w = simple(2);
    let dom = all(&mut w);
    let x = w.alloc_window(&dom, "x", DType::I16, &[2, 3, 4]).unwrap();
    let out = w.alloc_tensor("out", DType::I16, &[3, 4]).unwrap();
    w.write(&x, 1, &(0..24).collect::<Vec<i16>>()).unwrap();
    let (xk, o) = (x.clone(), out.clone());
    w.dispatch(
        0,
        Dispatch::kernel("slab", 1, move |core| {
            let t = core.remote_load(&xk, 1, &[1, 0, 0], &[1, 3, 4])?;
            assert_eq!(t.shape(), (3, 4));
            core.store(&t, &o, &[0, 0])
        })
        .in_domain(&dom),
    )
    .unwrap();
    w.run().unwrap();
    assert_eq!(w.read::<i16>(&out, 0).unwrap(), (12..24).collect::<Vec<i16>>());
}

#[test]
fn tile_math_in_every_dtype_through_the_core() {
    let mut w = simple(1);
    let dom = all(&mut w);
    let out = w.alloc_tensor("out", DType::F32, &[DType::ALL.len(), 6]).unwrap();
    let o = out.clone();
    run_on_all(&mut w, &dom, "math", 1, move |core| {
        for (row, dt) in DType::ALL.into_iter().enumerate() {
            let a = Tile::from_slice(1, 2, &[3.0f32, -2.0])?;
            let b = Tile::from_slice(1, 2, &[2.0f32, 5.0])?;
            let (a, b) = (convert(&a, dt), convert(&b, dt));
            let r = [
                core.add(&a, &b)?,
                core.max(&a, &b)?,
                core.min(&a, &b)?,
                core.mul(&a, &b)?,
                core.adds(&a, 1.0)?,
                core.muls(&a, 2.0)?,
            ];
            let vals: Vec<f32> = r.iter().map(|t| t.get_f64(0, 1) as f32).collect();
            core.store(&Tile::from_slice(1, 6, &vals)?, &o, &[row, 0])?;
        }
        Ok(())
    });
    // Element 1 of each result: -2 op 5 for add, max, min, mul, adds 1, muls 2, in every dtype.
    let want = [3.0f32, 5.0, -2.0, -10.0, -1.0, -4.0];
    assert_eq!(w.read::<f32>(&out, 0).unwrap(), want.repeat(DType::ALL.len()));
}

#[test]
fn sixteen_bit_floats_round_after_every_operation() {
    // 256 + 1 is not a bf16 (8 significant bits): each add rounds back to 256, so adding 1 twice
    // stays 256, where f32 reaches 258. f16 (11 bits) holds 2049 only as 2048 the same way.
    let mut w = simple(1);
    let dom = all(&mut w);
    let got = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let g = got.clone();
    run_on_all(&mut w, &dom, "round", 1, move |core| {
        for (dt, start) in [(DType::BF16, 256.0f32), (DType::F16, 2048.0), (DType::F32, 256.0)] {
            let t = convert(&Tile::from_slice(1, 1, &[start])?, dt);
            let once = core.adds(&t, 1.0)?;
            let twice = core.adds(&once, 1.0)?;
            let sum = core.add(&once, &once)?;
            g.lock().push((dt, once.get_f64(0, 0), twice.get_f64(0, 0), sum.get_f64(0, 0)));
        }
        Ok(())
    });
    assert_eq!(
        *got.lock(),
        vec![
            (DType::BF16, 256.0, 256.0, 512.0),
            (DType::F16, 2048.0, 2048.0, 4096.0),
            (DType::F32, 257.0, 258.0, 514.0)
        ]
    );
}

/// `t` with its values converted to `dt` (host-side helper).
fn convert(t: &Tile, dt: DType) -> Tile {
    let v: Vec<f64> = (0..t.len()).map(|i| t.get_f64(0, i)).collect();
    match dt {
        DType::F32 => Tile::from_slice(1, v.len(), &v.iter().map(|&x| x as f32).collect::<Vec<_>>()),
        DType::F16 => Tile::from_slice(1, v.len(), &v.iter().map(|&x| f16::from_f64(x)).collect::<Vec<_>>()),
        DType::BF16 => Tile::from_slice(1, v.len(), &v.iter().map(|&x| bf16::from_f64(x)).collect::<Vec<_>>()),
        DType::I32 => Tile::from_slice(1, v.len(), &v.iter().map(|&x| x as i32).collect::<Vec<_>>()),
        DType::I16 => Tile::from_slice(1, v.len(), &v.iter().map(|&x| x as i16).collect::<Vec<_>>()),
        DType::I8 => Tile::from_slice(1, v.len(), &v.iter().map(|&x| x as i8).collect::<Vec<_>>()),
    }
    .unwrap()
}

#[test]
fn multi_block_tasks_see_their_block_index() {
    let mut w = a2a3();
    let dom = all(&mut w);
    let out = w.alloc_window(&dom, "out", DType::I32, &[48, 8]).unwrap();
    let o = out.clone();
    run_on_all(&mut w, &dom, "blocks", 48, move |core| {
        let (b, n) = (core.block_idx(), core.block_num());
        let t = Tile::from_slice(1, 8, &[(core.rank() * 1000 + b * 10 + n) as i32; 8])?;
        core.store(&t, &o, &[b, 0])
    });
    for r in 0..8 {
        let v = w.read::<i32>(&out, r).unwrap();
        for b in 0..48 {
            assert_eq!(v[b * 8], (r * 1000 + b * 10 + 48) as i32);
        }
    }
}

#[test]
fn windows_are_32_byte_rounded_and_laid_out_in_order() {
    let mut w = simple(2);
    let dom = all(&mut w);
    let a = w.alloc_window(&dom, "a", DType::I8, &[5]).unwrap();
    let b = w.alloc_window(&dom, "b", DType::F32, &[9]).unwrap();
    let c = w.alloc_window(&dom, "c", DType::I32, &[8]).unwrap();
    assert_eq!((a.window_offset(), b.window_offset(), c.window_offset()), (0, 32, 96));
    assert_eq!(w.window_size(&dom), 128);
    // The rounding is real tail storage: a view may use it.
    let tail = a.view(DType::I8, &[32]).unwrap();
    assert_eq!((tail.shape(), tail.window_offset(), tail.nbytes()), (&[32][..], 0, 32));
    assert!(a.view(DType::I8, &[33]).unwrap_err().to_string().contains("needs 33 bytes but the buffer has 32"));
    // Fresh windows are zero.
    assert_eq!(w.read::<f32>(&b, 1).unwrap(), vec![0.0; 9]);
}

#[test]
fn put_and_get_read_their_source_after_the_cores_own_earlier_stores() {
    // A kernel stores 8 KiB into a window and then moves it with put (or remote_stores into a
    // peer and gets it back): program order says the copy reads the stored bytes.
    const N: usize = 2048;
    let stored = |r: usize| (0..N).map(|i| (r * 10_000 + i) as f32).collect::<Vec<_>>();
    for (machine, via_get) in [("simple", false), ("simple", true), ("a2a3", false), ("a2a3", true)] {
        let mut w = if machine == "simple" { simple(2) } else { a2a3() };
        let dst = dispatch_store_then_copy(&mut w, N, via_get, stored);
        w.run().unwrap();
        for r in 0..w.size() {
            let want = if via_get { stored(r) } else { stored(r ^ 1) };
            assert_eq!(w.read::<f32>(&dst, r).unwrap(), want, "{machine}: rank {r}, via_get {via_get}");
        }
    }
}

#[test]
fn f64_values_and_scalars_round_to_nearest_even_into_16_bit_types() {
    // 1 + 2^-8 + 2^-23 lies just above the bf16 halfway point between 1 and 1 + 2^-7, and
    // 1 + 2^-11 + 2^-23 just above the f16 one between 1 and 1 + 2^-10.
    let p = |e: i32| 2f64.powi(e);
    for (dt, above_tie, up) in
        [(DType::BF16, 1.0 + p(-8) + p(-23), 1.0 + p(-7)), (DType::F16, 1.0 + p(-11) + p(-23), 1.0 + p(-10))]
    {
        let mut w = simple(1);
        let dom = all(&mut w);
        let staged = w.alloc_tensor("staged", dt, &[1, 2]).unwrap();
        let out = w.alloc_tensor("out", dt, &[2, 2]).unwrap();
        w.write_f64(&staged, 0, &[above_tie, -above_tie]).unwrap();
        let (s, o) = (staged.clone(), out.clone());
        run_on_all(&mut w, &dom, "scalars", 1, move |core| {
            let zeros = core.load(&s, &[0, 0], &[1, 2])?;
            let zeros = core.muls(&zeros, 0.0)?;
            // 0 + s and 1 * s give the scalar as rounded into the tile's dtype.
            let added = core.adds(&zeros, above_tie)?;
            let ones = core.adds(&zeros, 1.0)?;
            let scaled = core.muls(&ones, above_tie)?;
            core.store(&added, &o, &[0, 0])?;
            core.store(&scaled, &o, &[1, 0])
        });
        assert_eq!(w.read_f64(&staged, 0).unwrap(), vec![up, -up], "{dt} staged");
        assert_eq!(w.read_f64(&out, 0).unwrap(), vec![up; 4], "{dt} scalars");
    }
}

#[test]
fn host_staging_round_trips_every_dtype_exactly_and_rounds_once() {
    // Values every dtype holds exactly come back unchanged; a value between two bf16/f16
    // neighbours comes back as the nearest (ties to even), on every rank.
    let mut w = simple(2);
    let dom = all(&mut w);
    let p = |e: i32| 2f64.powi(e);
    for dt in DType::ALL {
        let t = w.alloc_window(&dom, &format!("t_{dt}"), dt, &[1, 6]).unwrap();
        let exact = [0.0, 1.0, -2.0, 100.0, -128.0, 127.0];
        for r in 0..2 {
            w.write_f64(&t, r, &exact).unwrap();
            assert_eq!(w.read_f64(&t, r).unwrap(), exact.to_vec(), "{dt} rank {r}");
        }
    }
    for (dt, tie, below, above, up) in [
        (DType::BF16, 1.0 + p(-8), 1.0 + p(-8) - p(-30), 1.0 + p(-8) + p(-30), 1.0 + p(-7)),
        (DType::F16, 1.0 + p(-11), 1.0 + p(-11) - p(-40), 1.0 + p(-11) + p(-40), 1.0 + p(-10)),
    ] {
        let t = w.alloc_window(&dom, &format!("half_{dt}"), dt, &[3]).unwrap();
        w.write_f64(&t, 1, &[tie, below, above]).unwrap();
        assert_eq!(w.read_f64(&t, 1).unwrap(), vec![1.0, 1.0, up], "{dt}");
    }
}

/// A polled cell read through the place the scheduler keeps for it (timing-only runs) answers
/// as with payload: 0 while the cell was never written (no place yet), then each value a
/// notify sets, the cell changing in place under the kept place.
#[test]
fn a_polled_cell_sees_every_value_with_and_without_payload() {
    let polls = |timing_only: bool| {
        let mut w = simple(1);
        if timing_only {
            w.set_timing_only().unwrap();
        }
        let dom = all(&mut w);
        let sig = w.alloc_window(&dom, "sig", DType::I32, &[1, 2]).unwrap();
        let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
        let log = seen.clone();
        run_on_all(&mut w, &dom, "polls", 2, move |core| {
            if core.block_idx() == 1 {
                for v in [1, 2] {
                    core.compute(3000);
                    core.notify(&sig, 0, &[0, 0], v, NotifyOp::Set)?;
                }
                return Ok(());
            }
            let mut got = Vec::new();
            for _ in 0..120 {
                got.push(core.test_signal(&sig, &[0, 0], 1, WaitCmp::Eq)?);
                core.compute(100);
            }
            log.lock().extend(got);
            Ok(())
        });
        seen.lock().clone()
    };
    let (data, timing) = (polls(false), polls(true));
    assert_eq!(data, timing);
    // Not yet set, then 1, then 2: false, true, false again.
    let flips: Vec<usize> = (1..timing.len()).filter(|&i| timing[i] != timing[i - 1]).collect();
    assert_eq!(flips.len(), 2, "{timing:?}");
    assert!(!timing[0] && timing[flips[0]] && !timing[flips[1]], "{timing:?}");
}

/// A kernel polling one cell reuses its resolution from poll to poll (the scheduler keeps the
/// cell); polls of another cell, another view of the same cells (a fresh slice each time) or
/// another tensor in between must each answer for the cell they name, and a poll of the same
/// cell for another condition for that condition, with threads and coroutines alike.
#[test]
fn test_signal_answers_for_the_cell_each_poll_names() {
    for exec in [ranksim::sim_core::KernelExec::Threads, Default::default()] {
        let mut w = simple(1);
        w.options_mut().kernel_exec = exec;
        let dom = all(&mut w);
        let sig = w.alloc_window(&dom, "sig", DType::I32, &[1, 4]).unwrap();
        let other = w.alloc_window(&dom, "other", DType::I32, &[1, 4]).unwrap();
        let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
        let log = seen.clone();
        run_on_all(&mut w, &dom, "polls", 2, move |core| {
            if core.block_idx() == 1 {
                return core.notify(&sig, 0, &[0, 1], 5, NotifyOp::Set);
            }
            core.compute(1000);
            let mut got = Vec::new();
            for _ in 0..2 {
                got.push(core.test_signal(&sig, &[0, 0], 5, WaitCmp::Eq)?);
                got.push(core.test_signal(&sig, &[0, 1], 5, WaitCmp::Eq)?);
                got.push(core.test_signal(&sig, &[0, 1], 5, WaitCmp::Eq)?);
                got.push(core.test_signal(&sig, &[0, 1], 4, WaitCmp::Eq)?);
                got.push(core.test_signal(&sig, &[0, 1], 4, WaitCmp::Ge)?);
                let col = sig.slice(&[0, 1], &[1, 1])?;
                got.push(core.test_signal(&col, &[0, 0], 5, WaitCmp::Eq)?);
                got.push(core.test_signal(&other, &[0, 1], 5, WaitCmp::Eq)?);
            }
            log.lock().extend(got);
            Ok(())
        });
        let one = [false, true, true, false, true, true, false];
        assert_eq!(*seen.lock(), [one, one].concat(), "{exec:?}");
    }
}

/// The same polls from an async kernel (the mailbox's short way for a poll of the cell polled
/// last) answer as the synchronous kernel's do.
#[test]
fn an_async_kernel_polls_answer_for_the_cell_and_condition_each_names() {
    let mut w = simple(1);
    let dom = all(&mut w);
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[1, 4]).unwrap();
    let other = w.alloc_window(&dom, "other", DType::I32, &[1, 4]).unwrap();
    let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let log = seen.clone();
    let mut d = Dispatch::new("polls");
    d.add(Task::new_async("polls", 2, move |ops| {
        let (sig, other, log) = (sig.clone(), other.clone(), log.clone());
        Box::pin(async move {
            if ops.block_idx() == 1 {
                return ops.notify(&sig, 0, &[0, 1], 5, NotifyOp::Set);
            }
            ops.compute(1000);
            let mut got = Vec::new();
            for _ in 0..2 {
                got.push(ops.test_signal(&sig, &[0, 0], 5, WaitCmp::Eq).await?);
                got.push(ops.test_signal(&sig, &[0, 1], 5, WaitCmp::Eq).await?);
                got.push(ops.test_signal(&sig, &[0, 1], 5, WaitCmp::Eq).await?);
                got.push(ops.test_signal(&sig, &[0, 1], 4, WaitCmp::Eq).await?);
                got.push(ops.test_signal(&sig, &[0, 1], 4, WaitCmp::Ge).await?);
                let col = sig.slice(&[0, 1], &[1, 1])?;
                got.push(ops.test_signal(&col, &[0, 0], 5, WaitCmp::Eq).await?);
                got.push(ops.test_signal(&other, &[0, 1], 5, WaitCmp::Eq).await?);
            }
            log.lock().extend(got);
            Ok(())
        })
    }));
    w.dispatch_all(&dom, d).unwrap();
    w.run().unwrap();
    let one = [false, true, true, false, true, true, false];
    assert_eq!(*seen.lock(), [one, one].concat());
}
