//! Slices: `win[a:b]` / `pl.tensor.slice` views at an offset of windows and GM tensors, with
//! bounds checked against the parent, used by kernels, peers, signals and the host.

use crate::common::{all, simple};
use ranksim::prelude::*;

#[test]
fn a_window_slice_is_addressed_from_its_own_origin_locally_and_by_peers() {
    let mut w = simple(2);
    let dom = all(&mut w);
    let win = w.alloc_window(&dom, "win", DType::F32, &[4, 32]).unwrap();
    let part = win.slice(&[2, 8], &[2, 16]).unwrap();
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[1]).unwrap();
    assert_eq!(part.shape(), &[2, 16]);
    assert!(!part.is_contiguous());
    let (p, s) = (part.clone(), sig.clone());
    w.dispatch_all(
        &dom,
        Dispatch::kernel("slice", 1, move |core| {
            let me = core.rank();
            let t = Tile::from_slice(1, 16, &[me as f32 + 1.0; 16])?;
            // Row 0 of my slice locally, row 1 of the peer's slice remotely.
            core.store(&t, &p, &[0, 0])?;
            core.remote_store(&t, &p, 1 - me, &[1, 0], AtomicType::None)?;
            core.notify(&s, 1 - me, &[0], 1, NotifyOp::AtomicAdd)?;
            core.wait(&s, &[0], 1, WaitCmp::Ge)
        }),
    )
    .unwrap();
    w.run().unwrap();
    for r in 0..2usize {
        let full = w.read::<f32>(&win, r).unwrap();
        let mut want = vec![0.0f32; 128];
        want[2 * 32 + 8..2 * 32 + 24].fill(r as f32 + 1.0);
        want[3 * 32 + 8..3 * 32 + 24].fill((1 - r) as f32 + 1.0);
        assert_eq!(full, want, "rank {r}");
        // The host reads the slice's own elements, row-major.
        let mine = w.read::<f32>(&part, r).unwrap();
        assert_eq!(mine, [vec![r as f32 + 1.0; 16], vec![(1 - r) as f32 + 1.0; 16]].concat());
    }
}

#[test]
fn a_signal_tail_inside_a_data_buffer_carries_notifies() {
    // One allocation: 64 f32 of data then 8 INT32 cells, as a kernel may lay out its window.
    let mut w = simple(2);
    let dom = all(&mut w);
    let buf = w.alloc_window(&dom, "buf", DType::F32, &[72]).unwrap();
    let data = buf.slice(&[0], &[64]).unwrap();
    let cells = buf.view(DType::I32, &[72]).unwrap().slice(&[64], &[8]).unwrap();
    assert!(!data.same_buffer(&cells), "the data and its signal tail share no byte");
    let (d, c) = (data.clone(), cells.clone());
    w.dispatch_all(
        &dom,
        Dispatch::kernel("tail", 1, move |core| {
            let (me, peer) = (core.rank(), 1 - core.rank());
            let t = Tile::from_slice(1, 64, &[10.0 * (me + 1) as f32; 64])?;
            core.remote_store(&t, &d, peer, &[0], AtomicType::None)?;
            core.notify(&c, peer, &[me], 1, NotifyOp::AtomicAdd)?;
            core.wait(&c, &[peer], 1, WaitCmp::Ge)?;
            let got = core.load(&d, &[0], &[64])?;
            if got.get_f64(0, 63) != 10.0 * (peer + 1) as f64 {
                return Err(SimError::invalid("the payload did not arrive before its notify"));
            }
            Ok(())
        }),
    )
    .unwrap();
    w.run().unwrap();
    for r in 0..2usize {
        let raw = w.read::<i32>(&cells, r).unwrap();
        assert_eq!(raw[1 - r], 1, "rank {r}'s cell of its peer");
        assert_eq!(w.read::<f32>(&data, r).unwrap(), vec![10.0 * (2 - r) as f32; 64]);
    }
}

#[test]
fn gm_slices_load_and_store_in_place_and_the_host_writes_through_them() {
    let mut w = simple(1);
    let dom = all(&mut w);
    let x = w.alloc_tensor("x", DType::I32, &[3, 4]).unwrap();
    let mid = x.slice(&[1, 1], &[2, 2]).unwrap();
    w.write(&mid, 0, &[1i32, 2, 3, 4]).unwrap();
    let m = mid.clone();
    w.dispatch_all(
        &dom,
        Dispatch::kernel("gm", 1, move |core| {
            let t = core.load(&m, &[0, 0], &[2, 2])?;
            let t = core.adds(&t, 100.0)?;
            core.store(&t, &m, &[0, 0])
        }),
    )
    .unwrap();
    w.run().unwrap();
    assert_eq!(w.read::<i32>(&x, 0).unwrap(), vec![0, 0, 0, 0, 0, 101, 102, 0, 0, 103, 104, 0]);
}

#[test]
fn slices_outside_their_parent_and_views_of_strided_slices_are_refused() {
    let mut w = simple(1);
    let x = w.alloc_tensor("x", DType::F32, &[4, 8]).unwrap();
    let e = x.slice(&[3, 0], &[2, 8]).unwrap_err().to_string();
    assert!(e.contains("`x`") && e.contains("dimension 0: 3 + 2 > 4"), "{e}");
    let inner = x.slice(&[1, 2], &[2, 4]).unwrap();
    let e = inner.slice(&[0, 1], &[2, 4]).unwrap_err().to_string();
    assert!(e.contains("dimension 1: 1 + 4 > 4"), "{e}");
    let e = inner.view(DType::I32, &[8]).unwrap_err().to_string();
    assert!(e.contains("not contiguous"), "{e}");
    // Whole rows are contiguous and can be viewed.
    let rows = x.slice(&[1, 0], &[2, 8]).unwrap();
    assert!(rows.is_contiguous());
    assert_eq!(rows.view(DType::I32, &[16]).unwrap().capacity_bytes(), 3 * 8 * 4);
    let e = rows.view(DType::F32, &[25]).unwrap_err().to_string();
    assert!(e.contains("needs 100 bytes") && e.contains("96"), "{e}");
    // A slice nested in a slice resolves to the parent's bytes.
    let r = w.alloc_tensor("r", DType::I32, &[4, 8]).unwrap();
    let nested = r.slice(&[1, 2], &[3, 5]).unwrap().slice(&[1, 1], &[1, 2]).unwrap();
    w.write(&nested, 0, &[7i32, 9]).unwrap();
    let full = w.read::<i32>(&r, 0).unwrap();
    assert_eq!((full[2 * 8 + 3], full[2 * 8 + 4]), (7, 9));
}
