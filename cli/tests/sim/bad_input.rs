//! Bad input gets a clear error that names the values involved, never a panic or a hang.

use crate::common::{a2a3, all, simple, simple_toml};
use ranksim::Config;
use ranksim::prelude::*;

/// Runs `kernel` on rank 0 of a 4-rank simple machine with a `[1, 256]` f32 window `x`, an
/// f32 GM tensor `g` and a `[4, 1]` INT32 signal `sig`, and returns the run's error text.
fn fails(kernel: impl Fn(&mut Core, &Tensor, &Tensor, &Tensor) -> SimResult<()> + Send + Sync + 'static) -> String {
    let mut w = simple(4);
    run_err(&mut w, kernel)
}

fn run_err(
    w: &mut World,
    kernel: impl Fn(&mut Core, &Tensor, &Tensor, &Tensor) -> SimResult<()> + Send + Sync + 'static,
) -> String {
    let dom = all(w);
    let x = w.alloc_window(&dom, "x", DType::F32, &[1, 256]).unwrap();
    let g = w.alloc_tensor("g", DType::F32, &[1, 256]).unwrap();
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[4, 1]).unwrap();
    w.dispatch(0, Dispatch::kernel("bad", 1, move |core| kernel(core, &x, &g, &sig)).in_domain(&dom)).unwrap();
    let e = w.run().unwrap_err();
    assert!(matches!(e, SimError::BadOp { .. }), "expected an argument error, got {e:?}");
    e.to_string()
}

fn has(msg: &str, parts: &[&str]) {
    for p in parts {
        assert!(msg.contains(p), "error {msg:?} does not mention {p:?}");
    }
}

#[test]
fn out_of_range_peer() {
    let e = fails(|c, x, _, _| c.remote_load(x, 5, &[0, 0], &[1, 8]).map(|_| ()));
    has(&e, &["rank 0 block 0", "remote_load", "peer 5", "`x`", "4 ranks", "0..=3"]);
    let e = fails(|c, _, _, s| c.notify(s, 4, &[0, 0], 1, NotifyOp::AtomicAdd));
    has(&e, &["notify", "peer 4", "`sig`"]);
}

#[test]
fn region_outside_the_window() {
    let e = fails(|c, x, _, _| c.load(x, &[0, 250], &[1, 10]).map(|_| ()));
    has(&e, &["load", "offsets [0, 250]", "shape [1, 10]", "`x` of shape [1, 256]", "dimension 1: 250 + 10 > 256"]);
    let e = fails(|c, x, _, _| c.remote_store(&Tile::zeros(DType::F32, 2, 8), x, 1, &[0, 0], AtomicType::None));
    has(&e, &["remote_store", "dimension 0: 0 + 2 > 1"]);
    let e = fails(|c, x, _, _| c.load(x, &[0], &[4]).map(|_| ()));
    has(&e, &["rank 2", "offsets [0]"]);
    let e = fails(|c, _, _, s| c.wait(s, &[4, 0], 1, WaitCmp::Ge));
    has(&e, &["wait", "dimension 0: 4 + 1 > 4"]);
}

/// `wait` resolves its one cell directly; every refusal reads exactly as `wait_all` over
/// the same one-cell region words it.
#[test]
fn wait_refuses_what_wait_all_over_one_cell_refuses_with_the_same_words() {
    type Pick = fn(&Tensor, &Tensor, &Tensor) -> Tensor;
    let cases: [(&[usize], Pick); 5] = [
        (&[4, 0], |_, _, s| s.clone()),
        (&[0, 1], |_, _, s| s.clone()),
        (&[0], |_, _, s| s.clone()),
        (&[0, 0], |x, _, _| x.clone()),
        (&[0, 0], |_, g, _| g.clone()),
    ];
    for (offsets, pick) in cases {
        let single = fails(move |c, x, g, s| c.wait(&pick(x, g, s), offsets, 1, WaitCmp::Ge));
        let region = fails(move |c, x, g, s| {
            let t = pick(x, g, s);
            let ones = vec![1; t.shape().len()];
            c.wait_all(&t, offsets, &ones, 1, WaitCmp::Ge)
        });
        assert_eq!(single, region, "offsets {offsets:?}");
    }
}

#[test]
fn tile_larger_than_ub() {
    let mut w = a2a3();
    let dom = all(&mut w);
    let big = w.alloc_window(&dom, "big", DType::F32, &[64, 1024]).unwrap();
    w.dispatch(0, Dispatch::kernel("big", 1, move |c| c.load(&big, &[0, 0], &[64, 1024]).map(|_| ())).in_domain(&dom))
        .unwrap();
    let e = w.run().unwrap_err().to_string();
    has(&e, &["load", "64x1024 f32 tile", "262144 bytes", "UB holds 188416"]);
    // A put stages through UB: unchunked, the whole 128 KiB extent would be one tile.
    for (opts, want) in [
        (CopyOpts::new(), "a 64x512 f32 tile needs 131072 bytes but UB holds 65536"),
        (CopyOpts::new().chunks(32, 512).pipeline(true), "2 staging tiles of 32x512 f32 need 131072 bytes"),
    ] {
        let mut w = simple(2);
        let dom = all(&mut w);
        let big = w.alloc_window(&dom, "big", DType::F32, &[64, 512]).unwrap();
        w.dispatch(0, Dispatch::kernel("put", 1, move |c| c.put(&big, 1, &big, &opts)).in_domain(&dom)).unwrap();
        has(&w.run().unwrap_err().to_string(), &["put", want]);
    }
    // Chunks that fit are fine, including two ping-pong tiles that exactly fill UB.
    let mut w = simple(2);
    let dom = all(&mut w);
    let big = w.alloc_window(&dom, "big", DType::F32, &[64, 512]).unwrap();
    w.dispatch(
        0,
        Dispatch::kernel("put", 1, move |c| c.put(&big, 1, &big, &CopyOpts::new().chunks(16, 512).pipeline(true)))
            .in_domain(&dom),
    )
    .unwrap();
    w.run().unwrap();
}

#[test]
fn dtype_mismatch_between_tile_and_window() {
    let e = fails(|c, x, _, _| c.store(&Tile::zeros(DType::F16, 1, 8), x, &[0, 0]));
    has(&e, &["store", "tile is f16", "`x` is f32"]);
    let e = fails(|c, x, _, s| c.put(s, 1, x, &CopyOpts::new().region(&[0, 0], &[0, 0], &[1, 1])));
    has(&e, &["put", "`sig` is i32", "`x` is f32"]);
}

#[test]
fn atomic_add_on_an_unsupported_dtype() {
    let mut w = simple(2);
    let dom = all(&mut w);
    let h = w.alloc_window(&dom, "h", DType::BF16, &[1, 16]).unwrap();
    w.dispatch(
        0,
        Dispatch::kernel("atomic", 1, move |c| {
            c.remote_store(&Tile::zeros(DType::BF16, 1, 16), &h, 1, &[0, 0], AtomicType::Add)
        })
        .in_domain(&dom),
    )
    .unwrap();
    let e = w.run().unwrap_err().to_string();
    has(&e, &["remote_store", "atomic Add is not supported for bf16", "`h`", "supported: f32, f16, i32, i16, i8"]);
}

#[test]
fn pipeline_without_chunks() {
    let e = fails(|c, x, g, _| c.put(x, 1, g, &CopyOpts::new().chunks(4, 0).pipeline(true)));
    has(&e, &["put", "pipeline=true requires both chunk_rows>0 and chunk_cols>0 (got chunk_rows=4, chunk_cols=0)"]);
}

#[test]
fn signal_that_is_not_int32() {
    let e = fails(|c, x, _, _| c.notify(x, 1, &[0, 0], 1, NotifyOp::AtomicAdd));
    has(&e, &["notify", "signal `x` is f32", "INT32"]);
    // A GM cell may be waited on (TWAIT on a ready queue), but only an INT32 one.
    let e = fails(|c, _, g, _| c.wait(g, &[0, 0], 1, WaitCmp::Ge));
    has(&e, &["wait", "signal `g` is f32", "INT32"]);
}

#[test]
fn gm_tensors_are_not_reachable_by_peers() {
    let e = fails(|c, _, g, _| c.remote_load(g, 1, &[0, 0], &[1, 8]).map(|_| ()));
    has(&e, &["remote_load", "`g` is a GM tensor", "window"]);
}

#[test]
fn an_ignored_error_still_fails_the_run() {
    let e = fails(|c, x, _, _| {
        let _ignored = c.remote_load(x, 9, &[0, 0], &[1, 8]);
        Ok(())
    });
    has(&e, &["peer 9"]);
}

#[test]
fn operations_after_defer_wait_are_rejected() {
    let e = fails(|c, _, _, s| {
        c.defer_wait(&[DeferCond { signal: s.clone(), offsets: vec![0, 0], expected: 0 }])?;
        c.notify(s, 1, &[0, 0], 1, NotifyOp::AtomicAdd)
    });
    has(&e, &["notify", "continued after defer_wait"]);
}

#[test]
fn a_panicking_kernel_aborts_the_run_with_its_message() {
    let mut w = simple(4);
    let dom = all(&mut w);
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[4, 1]).unwrap();
    w.dispatch_all(
        &dom,
        Dispatch::kernel("boom", 1, move |c| {
            if c.rank() == 2 {
                panic!("kernel bug on purpose");
            }
            // The others would wait forever; the panic must release them.
            c.wait(&sig, &[0, 0], 1, WaitCmp::Ge)
        }),
    )
    .unwrap();
    let e = w.run().unwrap_err();
    assert!(matches!(e, SimError::KernelPanic { .. }), "{e:?}");
    has(&e.to_string(), &["rank 2 block 0", "kernel bug on purpose"]);
}

#[test]
fn host_side_misuse() {
    let mut w = simple(2);
    let dom = all(&mut w);
    let x = w.alloc_window(&dom, "x", DType::F32, &[4]).unwrap();
    has(&w.write(&x, 0, &[1.0f32; 3]).unwrap_err().to_string(), &["3 elements given", "[4] holds 4"]);
    has(&w.write(&x, 0, &[1i32; 4]).unwrap_err().to_string(), &["i32 data", "tensor is f32"]);
    has(&w.write(&x, 2, &[1.0f32; 4]).unwrap_err().to_string(), &["rank 2", "ranks 0..=1"]);
    has(&w.alloc_window(&dom, "x", DType::F32, &[4]).unwrap_err().to_string(), &["already has a buffer named `x`"]);
    has(&w.alloc_window(&dom, "z", DType::F32, &[0, 4]).unwrap_err().to_string(), &["shape [0, 4]"]);
    has(&w.create_domain("d", &[0, 2], DomainOptions::default()).unwrap_err().to_string(), &["rank 2 does not exist"]);
    has(&w.create_domain("d", &[1, 1], DomainOptions::default()).unwrap_err().to_string(), &["lists rank 1 twice"]);
    let bad = DomainOptions { persistent: false, reset: Some(true) };
    has(&w.create_domain("d", &[0], bad).unwrap_err().to_string(), &["requires persistent=true"]);
    let k = || Dispatch::kernel("k", 5, |_| Ok(()));
    has(&w.dispatch(0, k()).unwrap_err().to_string(), &["asks for 5 blocks", "4 AIV cores"]);
    has(&w.dispatch(3, Dispatch::kernel("k", 1, |_| Ok(()))).unwrap_err().to_string(), &["rank 3", "ranks 0..=1"]);
    let sub = w.create_domain("sub", &[1], DomainOptions::default()).unwrap();
    has(
        &w.dispatch(0, Dispatch::kernel("k", 1, |_| Ok(())).in_domain(&sub)).unwrap_err().to_string(),
        &["not a member of its domain `sub`"],
    );
    let chip =
        std::sync::Arc::new(ranksim::chip_model::ChipModel::from_config(&Config::default_preset().chip).unwrap());
    let e = World::new(0, chip.clone(), Config::default_preset().network().unwrap()).err().expect("a world of 0 ranks");
    has(&e.to_string(), &["a world needs at least one rank (chip); got 0"]);
    let huge = (1 << 23) + 1;
    let e = World::new(huge, chip, Config::default_preset().network().unwrap()).err().expect("a world too large");
    has(&e.to_string(), &["at most 8388608 ranks", "got 8388609"]);
}

#[test]
fn config_errors_name_the_key() {
    let base = simple_toml(2);
    let e = Config::from_toml(&base.replace("aiv_cores = 4", "aiv_cores = 4\nbogus_key = 1"), "t.toml")
        .unwrap_err()
        .to_string();
    has(&e, &["t.toml", "unknown field `bogus_key`"]);
    let e = Config::from_toml(&base.replace("wait_poll_ns = 0.0\n", ""), "t.toml").unwrap_err().to_string();
    has(&e, &["missing field `wait_poll_ns`"]);
    let e = Config::from_toml(&base.replace("ranks = 2", "ranks = 0"), "t.toml").unwrap_err().to_string();
    has(&e, &["machine.ranks = 0"]);
    let e = Config::from_toml(&base.replace("efficiency = 1.0\nport", "efficiency = 1.5\nport"), "t.toml")
        .unwrap_err()
        .to_string();
    has(&e, &["fabric.efficiency = 1.5", "(0, 1]"]);
    let e = Config::from_toml(
        &base.replace(
            "gbps = 100.0\nissue_ns = 0.0\n\n[chip.dma.ub_to_gm]",
            "gbps = -1.0\nissue_ns = 0.0\n\n[chip.dma.ub_to_gm]",
        ),
        "t.toml",
    )
    .unwrap_err()
    .to_string();
    has(&e, &["chip.dma.gm_to_ub.gbps = -1"]);
    for key in ["port_latency_ns", "read_turnaround_ns"] {
        let e =
            Config::from_toml(&base.replace("port_gbps = inf", &format!("port_gbps = inf\n{key} = -5.0")), "t.toml")
                .unwrap_err()
                .to_string();
        has(&e, &[&format!("fabric.{key} = -5")]);
    }
    let e = Config::from_toml(&base.replace("kind = \"full_mesh\"", "kind = \"hypercube\""), "t.toml")
        .unwrap_err()
        .to_string();
    has(&e, &["hypercube"]);
    let e = Config::preset("nope").unwrap_err().to_string();
    has(&e, &["unknown preset `nope`", "a2a3"]);
    let e = Config::load(std::path::Path::new("/nonexistent/x.toml")).unwrap_err().to_string();
    has(&e, &["/nonexistent/x.toml"]);
}

#[test]
fn a_run_that_fails_while_other_cores_keep_asking_ends_cleanly_every_time() {
    // Block 0 fails at once; the other blocks keep making blocking requests, which the ended
    // run answers with an abort. Repeated, so the late answers meet the driver at every point
    // of its shutdown (a late answer once started a thread nobody joined).
    for _ in 0..40 {
        let mut w = crate::common::simple(1);
        let dom = crate::common::all(&mut w);
        let sig = w.alloc_window(&dom, "sig", DType::I32, &[1]).unwrap();
        w.dispatch_all(
            &dom,
            Dispatch::kernel("late", 4, move |core| {
                if core.block_idx() == 0 {
                    return Err(SimError::invalid("block 0 gives up"));
                }
                for _ in 0..200 {
                    core.test_signal(&sig, &[0], 1, WaitCmp::Ge)?;
                }
                Ok(())
            }),
        )
        .unwrap();
        let e = w.run().unwrap_err().to_string();
        assert!(e.contains("block 0 gives up"), "{e}");
    }
}
