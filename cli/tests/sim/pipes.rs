//! Core pipes (MTE2, V, MTE3, S) and the scalar unit, as closed forms in integer picoseconds on
//! the simple machine: 1 GHz, DMA 100 GB/s each way with no issue cost, unlimited HBM, vector
//! ops `10 + elems / 64` cycles for f32.

use crate::common::{all, simple, simple_toml};
use parking_lot::Mutex;
use ranksim::Config;
use ranksim::prelude::*;
use std::sync::Arc;

/// Elements per tile (4 KiB of f32: one packet).
const N: usize = 1024;
/// Load or store of one tile: 4096 B at 100 GB/s.
const L: u64 = 40_960;
/// One `adds` on a tile: 10 + 1024 / 64 = 26 cycles at 1 GHz.
const ADD: u64 = 26_000;

/// How the loop of [`run_loop`] is written.
#[derive(Copy, Clone, Debug, PartialEq)]
enum Style {
    /// Blocking loads, serial core: load, compute, store, one after another.
    Serial,
    /// Overlapping pipes, the next tile's load issued before this tile's compute.
    DoubleBuffered,
    /// Overlapping pipes, one buffer: each load waits for the previous store (a flag).
    SingleBufferFlags,
    /// Double-buffered, but with `pipe_barrier(All)` after every store.
    Barriered,
}

/// Runs `tiles` iterations of load -> `adds` x `adds` -> store over [tiles, N] f32 on one core;
/// returns the dispatch's end (ps) and checks every output element.
fn run_loop(style: Style, tiles: usize, adds: usize) -> u64 {
    run_loop_with(style, tiles, adds, false).0
}

/// [`run_loop`], optionally checked and traced; also returns the findings and trace spans.
fn run_loop_with(style: Style, tiles: usize, adds: usize, observe: bool) -> (u64, usize, usize) {
    let mut w = simple(1);
    w.options_mut().check = observe;
    w.options_mut().trace = observe;
    let dom = all(&mut w);
    let x = w.alloc_tensor("x", DType::F32, &[tiles, N]).unwrap();
    let y = w.alloc_tensor("y", DType::F32, &[tiles, N]).unwrap();
    let input: Vec<f32> = (0..tiles * N).map(|i| (i % 1000) as f32).collect();
    w.write(&x, 0, &input).unwrap();
    let (xk, yk) = (x.clone(), y.clone());
    w.dispatch_all(
        &dom,
        Dispatch::kernel("pipeline", 1, move |core| {
            let compute = |core: &mut Core, t: &Tile| -> SimResult<Tile> {
                let mut t = t.clone();
                for _ in 0..adds {
                    t = core.adds(&t, 1.0)?;
                }
                Ok(t)
            };
            match style {
                Style::Serial => {
                    for i in 0..tiles {
                        let t = core.load(&xk, &[i, 0], &[1, N])?;
                        let r = compute(core, &t)?;
                        core.store(&r, &yk, &[i, 0])?;
                    }
                }
                Style::DoubleBuffered | Style::Barriered => {
                    core.overlap_pipes();
                    let mut next = Some(core.load_async(&xk, &[0, 0], &[1, N])?);
                    for i in 0..tiles {
                        let this = next.take();
                        if i + 1 < tiles {
                            next = Some(core.load_async(&xk, &[i + 1, 0], &[1, N])?);
                        }
                        let t = core.wait_load(this.expect("issued"))?;
                        let r = compute(core, &t)?;
                        core.store(&r, &yk, &[i, 0])?;
                        if style == Style::Barriered {
                            core.pipe_barrier(Pipe::All)?;
                        }
                    }
                }
                Style::SingleBufferFlags => {
                    core.overlap_pipes();
                    for i in 0..tiles {
                        if i > 0 {
                            core.wait_flag(Pipe::Mte3, Pipe::Mte2, 0)?;
                        }
                        let h = core.load_async(&xk, &[i, 0], &[1, N])?;
                        let t = core.wait_load(h)?;
                        let r = compute(core, &t)?;
                        core.store(&r, &yk, &[i, 0])?;
                        core.set_flag(Pipe::Mte3, Pipe::Mte2, 0)?;
                    }
                }
            }
            Ok(())
        }),
    )
    .unwrap();
    let r = w.run().unwrap();
    let want: Vec<f32> = input.iter().map(|v| v + adds as f32).collect();
    assert_eq!(w.read::<f32>(&y, 0).unwrap(), want, "{style:?}");
    let spans = r.trace.as_ref().map_or(0, |t| t.ops.len());
    (r.dispatches[0].end.as_ps(), r.findings.len(), spans)
}

#[test]
fn a_serial_core_pays_load_compute_and_store_for_every_tile() {
    let n = 8u64;
    assert_eq!(run_loop(Style::Serial, 8, 3), n * (L + 3 * ADD + L));
}

#[test]
fn a_double_buffered_loop_costs_n_times_the_slowest_pipe_plus_fill_and_drain() {
    let n = 8u64;
    // Compute-bound (3 adds = 78 ns > 40.96 ns per load or store): the first load fills,
    // the vector pipe runs back to back, the last store drains.
    assert_eq!(run_loop(Style::DoubleBuffered, 8, 3), L + n * 3 * ADD + L);
    // Load-bound (one add = 26 ns): loads run back to back on MTE2; after the last one, its
    // add and its store.
    assert_eq!(run_loop(Style::DoubleBuffered, 8, 1), n * L + ADD + L);
}

#[test]
fn flags_and_barriers_order_pipes_as_written() {
    let n = 8u64;
    // One buffer: each load waits for the previous store through the MTE3 -> MTE2 flag.
    assert_eq!(run_loop(Style::SingleBufferFlags, 8, 1), n * (L + ADD + L));
    // A barrier after each store drains every pipe: the next tile's load was already issued
    // before it, so only compute and store serialise with it.
    let barriered = run_loop(Style::Barriered, 8, 3);
    assert_eq!(barriered, L + n * (3 * ADD + L));
}

#[test]
fn overlapped_pipes_are_checked_and_traced_without_changing_times() {
    for style in [Style::DoubleBuffered, Style::SingleBufferFlags, Style::Barriered] {
        let plain = run_loop(style, 4, 2);
        let (observed, findings, spans) = run_loop_with(style, 4, 2, true);
        assert_eq!((observed, findings), (plain, 0), "{style:?}");
        // 4 loads, 8 adds, 4 stores.
        assert!(spans >= 16, "{style:?}: {spans} spans");
    }
}

#[test]
fn waiting_on_a_flag_nobody_set_names_the_pipes_and_the_event() {
    let mut w = simple(1);
    let dom = all(&mut w);
    w.dispatch_all(
        &dom,
        Dispatch::kernel("no-flag", 1, |core| {
            core.overlap_pipes();
            core.set_flag(Pipe::Vector, Pipe::Mte3, 1)?;
            core.wait_flag(Pipe::Vector, Pipe::Mte3, 1)?;
            core.wait_flag(Pipe::Mte2, Pipe::Vector, 3)
        }),
    )
    .unwrap();
    let e = w.run().unwrap_err().to_string();
    for want in ["wait_flag(MTE2 -> V, event 3)", "no set_flag", "deadlock", "rank 0"] {
        assert!(e.contains(want), "`{want}` missing from: {e}");
    }
}

#[test]
fn a_flag_between_one_pipe_and_itself_or_all_is_refused() {
    let mut w = simple(1);
    let dom = all(&mut w);
    w.dispatch_all(&dom, Dispatch::kernel("bad-flag", 1, |core| core.set_flag(Pipe::Vector, Pipe::All, 0))).unwrap();
    let e = w.run().unwrap_err().to_string();
    assert!(e.contains("set_flag(V -> ALL)") && e.contains("pipe_barrier(Pipe::All)"), "{e}");
}

#[test]
fn loads_in_flight_must_fit_in_ub_together() {
    let mut w = simple(1); // 64 KiB of UB
    let dom = all(&mut w);
    let x = w.alloc_tensor("x", DType::F32, &[2, 10_240]).unwrap();
    w.dispatch_all(
        &dom,
        Dispatch::kernel("overfill", 1, move |core| {
            let a = core.load_async(&x, &[0, 0], &[1, 10_240])?;
            let _b = core.load_async(&x, &[1, 0], &[1, 10_240])?;
            core.wait_load(a).map(|_| ())
        }),
    )
    .unwrap();
    let e = w.run().unwrap_err().to_string();
    assert!(e.contains("needs 40960 bytes") && e.contains("hold 40960 of the 65536 bytes of UB"), "{e}");
}

/// The simple machine with a 50 ns poll and a 30 ns scalar GM access.
fn with_scalar_costs(ranks: usize) -> World {
    let toml = simple_toml(ranks).replace("wait_poll_ns = 0.0", "wait_poll_ns = 50.0\nscalar_gm_ns = 30.0");
    Config::from_toml(&toml, "simple").unwrap().world().unwrap()
}

/// Rank 1 waits for rank 0's notify, by `wait` or by polling `test_signal` with 100 cycles of
/// work between polls; returns rank 1's end time and the number of polls.
fn notified(poll: bool) -> (u64, u64) {
    let mut w = with_scalar_costs(2);
    let dom = all(&mut w);
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[1]).unwrap();
    let polls = Arc::new(Mutex::new(0u64));
    let (p, s) = (polls.clone(), sig.clone());
    w.dispatch_all(
        &dom,
        Dispatch::kernel("ready", 1, move |core| {
            if core.rank() == 0 {
                return core.notify(&s, 1, &[0], 1, NotifyOp::AtomicAdd);
            }
            if !poll {
                return core.wait(&s, &[0], 1, WaitCmp::Ge);
            }
            loop {
                *p.lock() += 1;
                if core.test_signal(&s, &[0], 1, WaitCmp::Ge)? {
                    return Ok(());
                }
                core.compute(100);
            }
        }),
    )
    .unwrap();
    let r = w.run().unwrap();
    let end = r.dispatches.iter().find(|d| d.chip == 1).unwrap().end.as_ps();
    let n = *polls.lock();
    (end, n)
}

#[test]
fn a_polling_loop_sees_the_notify_at_its_first_poll_after_the_arrival() {
    // The blocking wait resumes one poll (50 ns) after the notify lands.
    let (woken, _) = notified(false);
    let arrival = woken - 50_000;
    // Poll k reads the cell at k * (50 + 100) ns; the first at or after the arrival succeeds
    // and ends one poll later.
    let period = 150_000;
    let k = arrival.div_ceil(period);
    let (end, polls) = notified(true);
    assert_eq!(polls, k + 1);
    assert_eq!(end, k * period + 50_000);
    assert!(end > woken, "polling ({end} ps) cannot beat the blocking wait ({woken} ps)");
}

#[test]
fn scalar_reads_and_writes_cost_one_scalar_access_and_see_program_order() {
    let mut w = with_scalar_costs(1);
    let dom = all(&mut w);
    let t = w.alloc_tensor("t", DType::BF16, &[4, 4]).unwrap();
    w.write_f64(&t, 0, &(0..16).map(|i| i as f64).collect::<Vec<_>>()).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (tk, s) = (t.clone(), seen.clone());
    w.dispatch_all(
        &dom,
        Dispatch::kernel("scalar", 1, move |core| {
            core.write_scalar(&tk, &[2, 3], 1.0 + 2f64.powi(-8) + 2f64.powi(-23))?;
            let v = core.read_scalar(&tk, &[2, 3])?;
            s.lock().push((core.now().as_ps(), v));
            let mut sum = 0.0;
            for i in 0..4 {
                sum += core.read_scalar(&tk, &[i, 0])?;
            }
            s.lock().push((core.now().as_ps(), sum));
            Ok(())
        }),
    )
    .unwrap();
    w.run().unwrap();
    // The write lands at 30 ns; the read of the same element is applied then and answers one
    // access later, with the value rounded to nearest even in bf16. Then four reads, 30 ns each.
    assert_eq!(*seen.lock(), vec![(60_000, 1.0 + 2f64.powi(-7)), (180_000, 0.0 + 4.0 + 8.0 + 12.0)]);
    assert_eq!(w.read_f64(&t, 0).unwrap()[11], 1.0 + 2f64.powi(-7));
}

#[test]
fn a_scalar_read_sees_the_cores_own_notify_into_its_window() {
    // Each rank credits its peer four times, waits for the peer's four credits, then takes
    // them back with one self-notify of -4 and reads its own cell: program order on the core
    // makes the read see 0 (the self-notify landed first), not the 4 still in memory.
    let mut w = simple(2);
    let dom = all(&mut w);
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[1, 1]).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    w.dispatch_all(
        &dom,
        Dispatch::kernel("credit", 1, move |core| {
            let (me, peer) = (core.rank(), 1 - core.rank());
            for _ in 0..4 {
                core.notify(&sig, peer, &[0, 0], 1, NotifyOp::AtomicAdd)?;
            }
            core.wait(&sig, &[0, 0], 4, WaitCmp::Ge)?;
            core.notify(&sig, me, &[0, 0], -4, NotifyOp::AtomicAdd)?;
            let v = core.read_scalar(&sig, &[0, 0])?;
            s.lock().push(v);
            Ok(())
        }),
    )
    .unwrap();
    w.run().unwrap();
    assert_eq!(*seen.lock(), vec![0.0, 0.0]);
}

/// Loads row 0, runs five `adds` on it, then loads row 1 (issued after the vector work in
/// program order) and records when row 1 is in UB.
fn load_after_vector_work(overlap: bool) -> u64 {
    let mut w = simple(1);
    let dom = all(&mut w);
    let x = w.alloc_tensor("x", DType::F32, &[2, N]).unwrap();
    let seen = Arc::new(Mutex::new(0u64));
    let s = seen.clone();
    w.dispatch_all(
        &dom,
        Dispatch::kernel("v-then-load", 1, move |core| {
            if overlap {
                core.overlap_pipes();
            }
            let mut t = core.load(&x, &[0, 0], &[1, N])?;
            for _ in 0..5 {
                t = core.adds(&t, 1.0)?;
            }
            let h = core.load_async(&x, &[1, 0], &[1, N])?;
            core.wait_load(h)?;
            *s.lock() = core.now().as_ps();
            core.store(&t, &x, &[0, 0])
        }),
    )
    .unwrap();
    w.run().unwrap();
    *seen.lock()
}

#[test]
fn vector_work_holds_only_the_vector_pipe_once_pipes_overlap() {
    // Serial: the second load starts after the five adds. Overlapped: the scalar unit issues
    // it while the vector pipe works, so it lands one load after the first.
    assert_eq!(load_after_vector_work(false), L + 5 * ADD + L);
    assert_eq!(load_after_vector_work(true), 2 * L);
}

#[test]
fn a_load_a_block_never_collected_does_not_reach_the_next_block_on_its_core() {
    // Task `a` stores x, starts loading it (held behind the store) and ends without collecting
    // it; task `b` then runs on the same (only) core and loads y with the same ticket number.
    let toml = crate::common::simple_toml(1).replace("aiv_cores = 4", "aiv_cores = 1");
    let mut w = Config::from_toml(&toml, "one-core").unwrap().world().unwrap();
    let dom = all(&mut w);
    let x = w.alloc_tensor("x", DType::F32, &[1, N]).unwrap();
    let y = w.alloc_tensor("y", DType::F32, &[1, N]).unwrap();
    let out = w.alloc_tensor("out", DType::F32, &[1, N]).unwrap();
    w.write(&y, 0, &[5.0f32; N]).unwrap();
    let mut d = Dispatch::new("two blocks");
    let xa = x.clone();
    let a = d.add(Task::new("a", 1, move |core| {
        core.overlap_pipes();
        core.store(&Tile::from_slice(1, N, &[7.0f32; N])?, &xa, &[0, 0])?;
        let _forgotten = core.load_async(&xa, &[0, 0], &[1, N])?;
        Ok(())
    }));
    let (yb, ob) = (y.clone(), out.clone());
    d.add(
        Task::new("b", 1, move |core| {
            let h = core.load_async(&yb, &[0, 0], &[1, N])?;
            let t = core.wait_load(h)?;
            core.store(&t, &ob, &[0, 0])
        })
        .after(&[a]),
    );
    w.dispatch(0, d.in_domain(&dom)).unwrap();
    w.run().unwrap();
    assert_eq!(w.read::<f32>(&out, 0).unwrap(), vec![5.0; N]);
}
