//! Every validation rule of reference §3.1 is a clear error before anything runs, and the
//! builtins' silent early returns are reproduced with a loud warning.

use crate::coll_common::{setup, tolerance};
use collectives::{AllReduce, Mode, Path};
use ranksim::collectives;
use ranksim::prelude::*;

fn err(r: SimResult<()>) -> String {
    r.expect_err("the call should have been refused").to_string()
}

fn has(msg: &str, parts: &[&str]) {
    for p in parts {
        assert!(msg.contains(p), "{msg:?} does not mention {p:?}");
    }
}

#[test]
fn reduce_scatter_is_sum_only() {
    let (mut w, dom) = setup(4);
    let d = w.alloc_window(&dom, "d", DType::F32, &[4, 8]).unwrap();
    let s = w.alloc_window(&dom, "s", DType::I32, &[4, 1]).unwrap();
    for path in [Path::Host, Path::InCore] {
        has(
            &err(collectives::reduce_scatter(&mut w, &d, &s, ReduceOp::Max, path)),
            &["reduce_scatter", "op max is not supported", "sum"],
        );
    }
}

#[test]
fn the_host_ring_is_sum_by_f32_only() {
    let (mut w, dom) = setup(4);
    let h = w.alloc_window(&dom, "h", DType::F16, &[256]).unwrap();
    let f = w.alloc_window(&dom, "f", DType::F32, &[256]).unwrap();
    let s = w.alloc_window(&dom, "s", DType::I32, &[7, 4]).unwrap();
    let ring = |op| AllReduce { op, mode: Mode::Ring, path: Path::Host, core_num: 1 };
    has(
        &err(collectives::allreduce(&mut w, &f, &s, ring(ReduceOp::Prod))),
        &["allreduce (ring host)", "op prod", "supports sum"],
    );
    has(&err(collectives::allreduce(&mut w, &h, &s, ring(ReduceOp::Sum))), &["`h` is f16", "supports f32"]);
    // The InCore ring takes every op and fp16.
    let s2 = w.alloc_window(&dom, "s2", DType::I32, &[6, 4]).unwrap();
    collectives::allreduce(
        &mut w,
        &h,
        &s2,
        AllReduce { op: ReduceOp::Prod, mode: Mode::Ring, path: Path::InCore, core_num: 1 },
    )
    .unwrap();
}

#[test]
fn signal_shapes_are_checked() {
    let (mut w, dom) = setup(4);
    let d = w.alloc_window(&dom, "d", DType::F32, &[256]).unwrap();
    let flat = w.alloc_window(&dom, "flat", DType::I32, &[4]).unwrap();
    let narrow = w.alloc_window(&dom, "narrow", DType::I32, &[4, 2]).unwrap();
    let f32sig = w.alloc_window(&dom, "f32sig", DType::F32, &[4, 1]).unwrap();
    let mesh = |c, path| AllReduce { op: ReduceOp::Sum, mode: Mode::Mesh, path, core_num: c };
    has(
        &err(collectives::allreduce(&mut w, &d, &flat, mesh(2, Path::Host))),
        &["signal `flat`", "[4] (core_num 1 only) or [4, stride >= 2]"],
    );
    has(&err(collectives::allreduce(&mut w, &d, &narrow, mesh(3, Path::Host))), &["[4, stride >= 3]"]);
    has(&err(collectives::allreduce(&mut w, &d, &flat, mesh(1, Path::InCore))), &["must be INT32 [4, 1]"]);
    has(&err(collectives::barrier(&mut w, &f32sig, Path::Host)), &["barrier", "is f32[4, 1]", "INT32"]);
    let ring = AllReduce { op: ReduceOp::Sum, mode: Mode::Ring, path: Path::Host, core_num: 1 };
    has(&err(collectives::allreduce(&mut w, &d, &narrow, ring)), &["signal `narrow` has shape [4, 2]", "needs [7, 4]"]);
    // A ring-shaped signal given to a mesh op is refused.
    let ringsig = w.alloc_window(&dom, "ringsig", DType::I32, &[6, 4]).unwrap();
    has(&err(collectives::allreduce(&mut w, &d, &ringsig, mesh(1, Path::InCore))), &["signal `ringsig`"]);
}

#[test]
fn operands_must_be_distinct_windows_of_one_domain() {
    let (mut w, dom) = setup(4);
    let other = w.create_domain("other", &[0, 1, 2, 3], DomainOptions::default()).unwrap();
    let t = w.alloc_window(&dom, "t", DType::F32, &[4, 8]).unwrap();
    let s = w.alloc_window(&dom, "s", DType::I32, &[4, 1]).unwrap();
    let far = w.alloc_window(&other, "far", DType::F32, &[4, 8]).unwrap();
    let gm = w.alloc_tensor("gm", DType::F32, &[4, 8]).unwrap();
    has(
        &err(collectives::all_to_all(&mut w, &t, &t, &s, Path::Host)),
        &["input and target are the same window buffer `t`"],
    );
    let view = t.view(DType::F32, &[32]).unwrap();
    has(&err(collectives::all_to_all(&mut w, &view, &t, &s, Path::Host)), &["same window buffer"]);
    has(
        &err(collectives::all_to_all(&mut w, &far, &t, &s, Path::Host)),
        &["input `far` in `other`", "share one comm domain"],
    );
    has(&err(collectives::all_to_all(&mut w, &gm, &t, &s, Path::Host)), &["`gm` is a GM tensor"]);
}

#[test]
fn core_num_is_bounded_by_the_aiv_count() {
    let (mut w, dom) = setup(2);
    let d = w.alloc_window(&dom, "d", DType::F32, &[256]).unwrap();
    let s = w.alloc_window(&dom, "s", DType::I32, &[2, 64]).unwrap();
    let spec = AllReduce { op: ReduceOp::Sum, mode: Mode::Mesh, path: Path::Host, core_num: 49 };
    has(&err(collectives::allreduce(&mut w, &d, &s, spec)), &["core_num 49 must be in 1..=48"]);
    let spec = AllReduce { core_num: 2, path: Path::InCore, ..spec };
    has(&err(collectives::allreduce(&mut w, &d, &s, spec)), &["InCore path runs on one block"]);
}

#[test]
fn dtypes_follow_the_builtins() {
    let (mut w, dom) = setup(2);
    let i = w.alloc_window(&dom, "i", DType::I32, &[256]).unwrap();
    let s = w.alloc_window(&dom, "s", DType::I32, &[2]).unwrap();
    let mesh = AllReduce::default();
    has(&err(collectives::allreduce(&mut w, &i, &s, mesh)), &["`i` is i32", "supports f32, f16"]);
    // two-shot is ranksim's own and takes every dtype.
    collectives::allreduce(&mut w, &i, &s, AllReduce { mode: Mode::TwoShot, ..mesh }).unwrap();
    w.write(&i, 0, &[3i32; 256]).unwrap();
    w.write(&i, 1, &[-5i32; 256]).unwrap();
    w.run().unwrap();
    assert_eq!(w.read::<i32>(&i, 1).unwrap(), vec![-2; 256]);
    assert_eq!(tolerance(DType::I32), (0.0, 0.0));
}

#[test]
fn more_than_sixteen_ranks_silently_do_nothing_with_a_warning() {
    let (mut w, dom) = setup(17);
    let d = w.alloc_window(&dom, "d", DType::F32, &[64]).unwrap();
    let s = w.alloc_window(&dom, "s", DType::I32, &[17]).unwrap();
    for r in 0..17 {
        w.write(&d, r, &[r as f32; 64]).unwrap();
    }
    collectives::allreduce(&mut w, &d, &s, AllReduce::default()).unwrap();
    assert_eq!(w.pending_warnings().len(), 1);
    let report = w.run().unwrap();
    has(&report.warnings[0], &["more than 16 ranks", "17 ranks", "moves no data"]);
    assert_eq!(w.read::<f32>(&d, 3).unwrap(), vec![3.0; 64], "the data is untouched");
    assert_eq!(report.traffic[3].remote_read_bytes, 0);
    // The InCore path has no such limit.
    let s2 = w.alloc_window(&dom, "s2", DType::I32, &[17, 1]).unwrap();
    for r in 0..17 {
        w.write(&d, r, &[r as f32; 64]).unwrap();
    }
    collectives::allreduce(&mut w, &d, &s2, AllReduce { path: Path::InCore, ..AllReduce::default() }).unwrap();
    let report = w.run().unwrap();
    assert!(report.warnings.is_empty());
    assert_eq!(w.read::<f32>(&d, 0).unwrap(), vec![136.0; 64]);
}

#[test]
fn a_ring_with_a_ragged_size_silently_does_nothing_with_a_warning() {
    let (mut w, dom) = setup(4);
    let d = w.alloc_window(&dom, "d", DType::F32, &[10]).unwrap();
    let s = w.alloc_window(&dom, "s", DType::I32, &[7, 4]).unwrap();
    w.write(&d, 1, &[1.0; 10]).unwrap();
    collectives::allreduce(&mut w, &d, &s, AllReduce { mode: Mode::Ring, ..AllReduce::default() }).unwrap();
    let report = w.run().unwrap();
    has(&report.warnings.join("\n"), &["numel (10) is not a multiple of the rank count (4)"]);
    assert_eq!(w.read::<f32>(&d, 1).unwrap(), vec![1.0; 10]);
}

#[test]
fn a_broadcast_root_out_of_range() {
    let (mut w, dom) = setup(2);
    let d = w.alloc_window(&dom, "d", DType::F32, &[8]).unwrap();
    let s = w.alloc_window(&dom, "s", DType::I32, &[2, 1]).unwrap();
    has(&err(collectives::broadcast(&mut w, &d, &s, 5, Path::InCore)), &["root 5 is out of range for 2 ranks"]);
    collectives::broadcast(&mut w, &d, &s, 5, Path::Host).unwrap();
    has(&w.run().unwrap().warnings.join("\n"), &["root 5 is out of range", "returns at once"]);
}

#[test]
fn a_composite_in_a_thread_kernel_matches_the_dispatched_composite() {
    // The same InCore allreduce, called from a user's thread kernel and dispatched as an async
    // task, gives the same data and the same timing.
    let run = |threaded: bool| {
        let (mut w, dom) = setup(4);
        let d = w.alloc_window(&dom, "d", DType::F32, &[3000]).unwrap();
        let s = w.alloc_window(&dom, "s", DType::I32, &[4, 1]).unwrap();
        for r in 0..4 {
            w.write(&d, r, &(0..3000).map(|i| (r * 3 + i) as f32 * 0.1).collect::<Vec<_>>()).unwrap();
        }
        if threaded {
            let (dk, sk) = (d.clone(), s.clone());
            let name = "builtin.tensor.allreduce__sum__fp32";
            w.dispatch_all(
                &dom,
                Dispatch::kernel(name, 1, move |c| {
                    c.run(async |ops| collectives::incore::allreduce(ops, &dk, &sk, ReduceOp::Sum, Mode::Mesh).await)
                }),
            )
            .unwrap();
        } else {
            collectives::allreduce(&mut w, &d, &s, AllReduce { path: Path::InCore, ..AllReduce::default() }).unwrap();
        }
        let report = w.run().unwrap();
        let data: Vec<Vec<f32>> = (0..4).map(|r| w.read::<f32>(&d, r).unwrap()).collect();
        (data, report.dispatches, report.stats, report.traffic)
    };
    assert_eq!(run(true), run(false));
}

#[test]
fn the_rhd_composite_called_from_a_kernel_names_the_signal_it_needs() {
    // 8 ranks need 2 + 3 x 3 = 11 rows; an [NR, 1] signal (what the other composites take)
    // is refused with the shape to allocate, not an out-of-bounds notify.
    let (mut w, dom) = setup(8);
    let d = w.alloc_window(&dom, "d", DType::F32, &[64]).unwrap();
    let s = w.alloc_window(&dom, "s", DType::I32, &[8, 1]).unwrap();
    let e = composite_allreduce_error(w, &dom, "rhd", d, s, Mode::Rhd);
    assert!(e.contains("signal `s` is [8, 1]; rhd on 8 ranks needs [11, blocks]"), "{e}");
}

/// The error of a run of `w` whose kernel `name`, on every rank of `dom`, calls the InCore
/// allreduce composite (a sum) in `mode` on `d` with the signal `s`.
fn composite_allreduce_error(mut w: World, dom: &Domain, name: &str, d: Tensor, s: Tensor, mode: Mode) -> String {
    w.dispatch_all(
        dom,
        Dispatch::kernel(name, 1, move |c| {
            c.run(async |ops| collectives::incore::allreduce(ops, &d, &s, ReduceOp::Sum, mode).await)
        }),
    )
    .unwrap();
    w.run().unwrap_err().to_string()
}

#[test]
fn an_allreduce_in_a_mode_allreduce_does_not_run_is_refused_with_the_modes_it_runs() {
    // The modes table gives grouped-mesh no allreduce row: the host API and the composite
    // refuse it by name, before anything is queued.
    let (mut w, dom) = setup(4);
    let d = w.alloc_window(&dom, "d", DType::F32, &[64]).unwrap();
    let s = w.alloc_window(&dom, "s", DType::I32, &[4, 1]).unwrap();
    let how = AllReduce { op: ReduceOp::Sum, mode: Mode::GroupedMesh, path: Path::Host, core_num: 1 };
    let e = err(collectives::allreduce(&mut w, &d, &s, how));
    assert!(
        e.contains("grouped-mesh is not an allreduce algorithm; allreduce runs as mesh, ring, two-shot, aiv-mesh, sdma-mesh, rhd, hier"),
        "{e}"
    );
    let e = composite_allreduce_error(w, &dom, "grouped", d, s, Mode::GroupedMesh);
    assert!(e.contains("grouped-mesh is not an allreduce algorithm"), "{e}");
}
