//! Helpers shared by the integration tests.

use parking_lot::Mutex;
use ranksim::Config;
use ranksim::prelude::*;
use std::sync::Arc;

/// A machine whose costs make hand arithmetic easy: 1 GHz, DMA 100 GB/s both ways with no
/// issue cost, unlimited HBM and ports, notify 10 ns, no poll / launch / task-start cost, a full
/// mesh of 10 GB/s links with 1 us latency, 4 KiB packets, 4 AIV cores, 64 KiB of UB.
pub fn simple_toml(ranks: usize) -> String {
    format!(
        r#"
[machine]
name = "simple"
ranks = {ranks}

[chip]
name = "simple"
aiv_cores = 4
aic_cores = 2
clock_ghz = 1.0
ub_bytes = 65536
l1_bytes = 0
hbm_gbps = inf
hbm_efficiency = 1.0
bf16_atomic_add = false
notify_issue_ns = 10.0
wait_poll_ns = 0.0
dispatch_launch_ns = 0.0
task_start_ns = 0.0

[chip.dma.gm_to_ub]
curve = "flat"
gbps = 100.0
issue_ns = 0.0

[chip.dma.ub_to_gm]
curve = "flat"
gbps = 100.0
issue_ns = 0.0

[chip.vector]
fixed_cycles = 10

[chip.vector.elems_per_cycle]
f32 = 64
f16 = 128
bf16 = 128
i32 = 64
i16 = 128
i8 = 256

[host]
bind_us = 1.0
finalize_us = 2.0

[fabric]
packet_bytes = 4096
efficiency = 1.0
port_gbps = inf

[fabric.topology]
kind = "full_mesh"
link_gbps = 10.0
link_latency_ns = 1000.0
"#
    )
}

/// The simple machine with 2 AIC cores per chip (`[chip.cube]`): L1 64 KiB, L0A / L0B 16 KiB,
/// L0C 32 KiB, matmul `10 + ceil(M/16) ceil(K/k0) ceil(N/16)` cycles (k0 16 for f16 / bf16, 8
/// for f32), L1 -> L0A 256 B and L1 -> L0B 128 B per cycle, GM -> L1 100 GB/s and L0C -> GM
/// 50 GB/s with no issue cost.
pub fn cube_toml(ranks: usize) -> String {
    simple_toml(ranks).replace("l1_bytes = 0", "l1_bytes = 65536").replace(
        "[host]",
        r#"[chip.cube]
l0a_bytes = 16384
l0b_bytes = 16384
l0c_bytes = 32768
fixed_cycles = 10
l1_to_l0a_bytes_per_cycle = 256
l1_to_l0b_bytes_per_cycle = 128

[chip.cube.fractal]
f16 = [16, 16, 16]
bf16 = [16, 16, 16]
f32 = [16, 8, 16]

[chip.cube.gm_to_l1]
curve = "flat"
gbps = 100.0
issue_ns = 0.0

[chip.cube.l0c_to_gm]
curve = "flat"
gbps = 50.0
issue_ns = 0.0

[host]"#,
    )
}

/// A fresh scratch directory for a test's files: `ranksim-{name}-{pid}` under the system's
/// temporary directory (the name tells the test; the process id, the run).
pub fn scratch_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("ranksim-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Dispatches the kernel `name` of `blocks` blocks on every rank of `dom` and runs `w`; the
/// run's report.
pub fn run_on_all(
    w: &mut World,
    dom: &Domain,
    name: &str,
    blocks: usize,
    kernel: impl Fn(&mut Core) -> SimResult<()> + Send + Sync + 'static,
) -> RunReport {
    w.dispatch_all(dom, Dispatch::kernel(name, blocks, kernel)).unwrap();
    w.run().unwrap()
}

/// A world of the simple machine with cube cores ([`cube_toml`]).
pub fn cube(ranks: usize) -> World {
    Config::from_toml(&cube_toml(ranks), "cube").unwrap().world().unwrap()
}

/// A world of the simple machine.
pub fn simple(ranks: usize) -> World {
    Config::from_toml(&simple_toml(ranks), "simple").unwrap().world().unwrap()
}

/// A world of the default a2a3 preset.
pub fn a2a3() -> World {
    Config::default_preset().world().unwrap()
}

/// The domain of every rank of `world`.
pub fn all(world: &mut World) -> Domain {
    world.world_domain("comm_d0").unwrap()
}

/// PyPTO's `test_two_groups_independent_swap`, dispatched on a 3-rank `w` but not run: domains
/// `group_a` {0,1} and `group_b` {1,2} (chip 1 in both, with a window in each) each swap the
/// tensor `in` (one row of `size` f32, `input(chip)` on each chip) between their two members
/// through a staging window and a signal, into `outs_a` and `outs_b`, which it returns.
pub fn dispatch_two_group_swap(w: &mut World, size: usize, input: impl Fn(usize) -> Vec<f32>) -> [Tensor; 2] {
    let a = w.create_domain("group_a", &[0, 1], DomainOptions::default()).unwrap();
    let b = w.create_domain("group_b", &[1, 2], DomainOptions::default()).unwrap();
    let tensor = w.alloc_tensor("in", DType::F32, &[1, size]).unwrap();
    let outs = [
        w.alloc_tensor("outs_a", DType::F32, &[1, size]).unwrap(),
        w.alloc_tensor("outs_b", DType::F32, &[1, size]).unwrap(),
    ];
    for chip in 0..3 {
        w.write(&tensor, chip, &input(chip)).unwrap();
    }
    for (dom, out) in [(&a, &outs[0]), (&b, &outs[1])] {
        let stage = w.alloc_window(dom, "stage", DType::F32, &[1, size]).unwrap();
        let sig = w.alloc_window(dom, "sig", DType::I32, &[2, 1]).unwrap();
        let (i, o) = (tensor.clone(), out.clone());
        w.dispatch_all(
            dom,
            Dispatch::kernel("swap", 1, move |core| {
                let (me, peer) = (core.rank(), 1 - core.rank());
                let t = core.load(&i, &[0, 0], &[1, size])?;
                core.store(&t, &stage, &[0, 0])?;
                core.notify(&sig, peer, &[me, 0], 1, NotifyOp::AtomicAdd)?;
                core.wait(&sig, &[peer, 0], 1, WaitCmp::Ge)?;
                let got = core.remote_load(&stage, peer, &[0, 0], &[1, size])?;
                core.store(&got, &o, &[0, 0])
            }),
        )
        .unwrap();
    }
    outs
}

/// One epoch of PyPTO's deferred-completion protocol (`test_l3_deferred_completion.py`), a
/// dispatch for every rank of a domain: `waiters` tasks register `flag >= epoch` (`defer_wait`,
/// or a blocking `wait` with `blocking`), a publisher pushes `[epoch, 10*me + 1 ..]` to the
/// next rank and Set-notifies the epoch, and a consumer per waiter copies the payload out once
/// it is ready.
pub fn epoch_dispatch(
    waiters: usize,
    epoch: i32,
    flag: &Tensor,
    payload: &Tensor,
    out: &Tensor,
    blocking: bool,
) -> Dispatch {
    let mut d = Dispatch::new("deferred_epoch");
    let mut ids = Vec::new();
    for i in 0..waiters {
        let f = flag.clone();
        ids.push(d.add(Task::new(&format!("waiter{i}"), 1, move |core| {
            if blocking {
                core.wait(&f, &[0, 0], epoch, WaitCmp::Ge)
            } else {
                core.defer_wait(&[DeferCond { signal: f.clone(), offsets: vec![0, 0], expected: epoch as u32 }])
            }
        })));
    }
    let (f, p) = (flag.clone(), payload.clone());
    d.add(Task::new("publisher", 1, move |core| {
        let (me, n) = (core.rank(), core.nranks());
        let vals: Vec<i32> = (0..8).map(|j| if j == 0 { epoch } else { (me * 10 + j) as i32 }).collect();
        core.remote_store(&Tile::from_slice(1, 8, &vals)?, &p, (me + 1) % n, &[0, 0], AtomicType::None)?;
        core.notify(&f, (me + 1) % n, &[0, 0], epoch, NotifyOp::Set)
    }));
    for (i, id) in ids.into_iter().enumerate() {
        let (p, o) = (payload.clone(), out.clone());
        d.add(
            Task::new(&format!("consumer{i}"), 1, move |core| {
                let t = core.load(&p, &[0, 0], &[1, 8])?;
                core.store(&t, &o, &[i, 0])
            })
            .after(&[id]),
        );
    }
    d
}

/// A store then a copy, dispatched on every rank of `w` (a pair of ranks, `rank ^ 1` the peer)
/// but not run: each rank makes a tile of `n` f32, `stored(rank)`, then either stores it into
/// its own `stage` window and `put`s that into the peer's `dst`, or (`via_get`) stores it
/// into the peer's `stage` and `get`s it back into its own `dst`; a notify and a wait close
/// it. Program order says the copy reads the stored bytes. Returns `dst`.
pub fn dispatch_store_then_copy(
    w: &mut World,
    n: usize,
    via_get: bool,
    stored: impl Fn(usize) -> Vec<f32> + Send + Sync + 'static,
) -> Tensor {
    let dom = all(w);
    let stage = w.alloc_window(&dom, "stage", DType::F32, &[1, n]).unwrap();
    let dst = w.alloc_window(&dom, "dst", DType::F32, &[1, n]).unwrap();
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[1, 1]).unwrap();
    let d = dst.clone();
    w.dispatch_all(
        &dom,
        Dispatch::kernel("store-then-copy", 1, move |core| {
            let (me, peer) = (core.rank(), core.rank() ^ 1);
            let t = Tile::from_slice(1, n, &stored(me))?;
            if via_get {
                core.remote_store(&t, &stage, peer, &[0, 0], AtomicType::None)?;
                core.get(&d, peer, &stage, &CopyOpts::new())?;
            } else {
                core.store(&t, &stage, &[0, 0])?;
                core.put(&d, peer, &stage, &CopyOpts::new())?;
            }
            core.notify(&sig, peer, &[0, 0], 1, NotifyOp::AtomicAdd)?;
            core.wait(&sig, &[0, 0], 1, WaitCmp::Ge)
        }),
    )
    .unwrap();
    dst
}

/// Runs `kernel` as the task `name` of `blocks` blocks on rank 0 of `w`, with an f32 window
/// `data` of `shape` on every rank; returns the times its blocks logged (block by block, as
/// each ended) and the run's report.
pub fn logged_on_rank_0(
    mut w: World,
    name: &str,
    blocks: usize,
    shape: &[usize],
    kernel: impl Fn(&mut Core, &Tensor, &mut Vec<u64>) -> SimResult<()> + Send + Sync + 'static,
) -> (Vec<u64>, RunReport) {
    let dom = all(&mut w);
    let data = w.alloc_window(&dom, "data", DType::F32, shape).unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    let k = Dispatch::kernel(name, blocks, move |core| {
        let mut mine = Vec::new();
        let r = kernel(core, &data, &mut mine);
        l.lock().extend(mine);
        r
    });
    w.dispatch(0, k.in_domain(&dom)).unwrap();
    let report = w.run().unwrap();
    let logged = log.lock().clone();
    (logged, report)
}
