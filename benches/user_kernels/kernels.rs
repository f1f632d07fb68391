//! Workloads written the way a user writes a kernel (`Task::new` / `Dispatch::kernel` with a
//! `|core| { .. }` closure): shared by `benches/workloads.rs` (speed) and
//! `tests/sim/coroutines.rs` (coroutines and threads give the same run).
//!
//! Each builds its buffers on a fresh world (staging inputs only when it keeps payload), queues
//! its dispatch on every rank and returns the windows to read back after the run.

// Shared by a bench and a test binary, which export nothing: `pub` here only crosses modules.
#![allow(unreachable_pub)]

use ranksim::sim_core::{
    AtomicType, CopyOpts, DType, Dispatch, KernelExec, NotifyOp, RunReport, SimResult, Task, Tensor, WaitCmp, World,
};

/// f32 elements in a 1 KiB row.
const ROW: usize = 256;

/// A user-kernel workload: its name and how to set it up on a world.
pub struct UserWorkload {
    /// Name in bench output.
    pub name: &'static str,
    /// Ranks it runs on (the first ones of the world).
    pub ranks: usize,
    /// Queues the workload at `scale` sixteenths of its full size ([`FULL`]); returns the
    /// windows it writes.
    pub setup: fn(&mut World, usize, u64) -> SimResult<Vec<Tensor>>,
}

/// The scale of a workload's full size (the figures in the docs below).
pub const FULL: u64 = 16;

/// Every user-kernel workload.
pub const USER_WORKLOADS: &[UserWorkload] = &[
    UserWorkload { name: "user_ring_store_1k_8r", ranks: 8, setup: ring_store },
    UserWorkload { name: "user_rs_ag_24blk_8r", ranks: 8, setup: rs_ag },
    UserWorkload { name: "user_put_get_pipeline_8r", ranks: 8, setup: put_get },
    UserWorkload { name: "user_poll_loop_8r", ranks: 8, setup: poll_loop },
    UserWorkload { name: "async_poll_loop_8r", ranks: 8, setup: poll_loop_async },
];

/// Polls of one block of [`poll_loop`] at full scale.
const POLLS: usize = 16_384;

/// Each rank's one block tests a cell nobody sets, `POLLS` times at full scale, with a little
/// work between: one request, one event and one reply each, so the run measures the
/// round trip of a blocking operation through the scheduler.
fn poll_loop(w: &mut World, ranks: usize, scale: u64) -> SimResult<Vec<Tensor>> {
    // A bounded spin on a cell nobody sets, to time polls: not a livelock (counted, never ended).
    w.options_mut().livelock_polls = u64::MAX;
    let dom = domain(w, ranks)?;
    let sig = w.alloc_window(&dom, "poll_sig", DType::I32, &[1, 1])?;
    let polls = POLLS * scale as usize / FULL as usize;
    let d = Dispatch::kernel("poll_loop", 1, move |core| {
        for _ in 0..polls.max(1) {
            if core.test_signal(&sig, &[0, 0], 1, WaitCmp::Ge)? {
                break;
            }
            core.compute(50);
        }
        Ok(())
    });
    w.dispatch_all(&dom, d.in_domain(&dom))?;
    Ok(Vec::new())
}

/// Runs `w` on `world` with synchronous kernels run as `exec`: the report and every byte of
/// the windows it writes, rank by rank.
#[allow(dead_code)] // the bench times `World::run` alone
pub fn run_user(
    world: &mut World,
    w: &UserWorkload,
    scale: u64,
    exec: KernelExec,
) -> SimResult<(RunReport, Vec<Vec<u8>>)> {
    world.options_mut().kernel_exec = exec;
    let windows = (w.setup)(world, w.ranks, scale)?;
    let report = world.run()?;
    let mut bytes = Vec::new();
    for t in &windows {
        for r in 0..w.ranks {
            bytes.push(world.read_bytes(t, r)?);
        }
    }
    Ok((report, bytes))
}

fn domain(w: &mut World, ranks: usize) -> SimResult<ranksim::sim_core::Domain> {
    let members: Vec<usize> = (0..ranks).collect();
    w.create_domain("user", &members, Default::default())
}

/// An all-gather ring over 8 MiB at full scale (each rank owns an eighth): in each of `n - 1`
/// steps a rank forwards the chunk it got last as 1 KiB rows (load, then `remote_store` to
/// the next rank), then one notify to the next rank and one wait for the previous one.
fn ring_store(w: &mut World, ranks: usize, scale: u64) -> SimResult<Vec<Tensor>> {
    let dom = domain(w, ranks)?;
    let rows_per_rank = 64 * scale.max(1) as usize; // 1 MiB per rank at full scale
    let buf = w.alloc_window(&dom, "ring", DType::F32, &[rows_per_rank * ranks, ROW])?;
    let sig = w.alloc_window(&dom, "ring_sig", DType::I32, &[1, 1])?;
    let staged = if w.has_payload() { ranks } else { 0 };
    for r in 0..staged {
        let mut v = vec![0f32; rows_per_rank * ranks * ROW];
        let own = r * rows_per_rank * ROW;
        for (i, x) in v[own..own + rows_per_rank * ROW].iter_mut().enumerate() {
            *x = (r * 7 + i % 97) as f32;
        }
        w.write(&buf, r, &v)?;
    }
    let (b, s) = (buf.clone(), sig);
    let d = Dispatch::kernel("ring_store", 1, move |core| {
        let (me, n) = (core.rank(), core.nranks());
        let next = (me + 1) % n;
        for step in 0..n - 1 {
            let chunk = (me + n - step) % n;
            for row in chunk * rows_per_rank..(chunk + 1) * rows_per_rank {
                let t = core.load(&b, &[row, 0], &[1, ROW])?;
                core.remote_store(&t, &b, next, &[row, 0], AtomicType::None)?;
            }
            core.notify(&s, next, &[0, 0], 1, NotifyOp::AtomicAdd)?;
            core.wait(&s, &[0, 0], step as i32 + 1, WaitCmp::Ge)?;
        }
        Ok(())
    });
    w.dispatch_all(&dom, d.in_domain(&dom))?;
    Ok(vec![buf])
}

/// Blocks of the reduce-scatter + all-gather.
const RS_AG_BLOCKS: usize = 24;
/// Rows of one tile (16 KiB).
const TILE_ROWS: usize = 16;

/// HCCL-AIV-style all-reduce on 24 blocks: each block reduces its piece of every rank's
/// segment into that rank's window with AtomicAdd remote stores, notifies it, and polls its
/// own cell with `test_signal` (TTEST) until every peer's piece is in; then it sends its
/// reduced piece to every peer with plain remote stores and polls again.
fn rs_ag(w: &mut World, ranks: usize, scale: u64) -> SimResult<Vec<Tensor>> {
    let dom = domain(w, ranks)?;
    // Rows per (segment, block): 32 KiB at full scale, 6 MiB a rank.
    let piece = TILE_ROWS * (2 * scale as usize / FULL as usize).max(1);
    let rows = ranks * RS_AG_BLOCKS * piece;
    let data = w.alloc_window(&dom, "rsag", DType::F32, &[rows, ROW])?;
    let sig = w.alloc_window(&dom, "rsag_sig", DType::I32, &[2, RS_AG_BLOCKS])?;
    let staged = if w.has_payload() { ranks } else { 0 };
    for r in 0..staged {
        let v: Vec<f32> = (0..rows * ROW).map(|i| ((r + 1) * (i % 13)) as f32).collect();
        w.write(&data, r, &v)?;
    }
    let (x, s) = (data.clone(), sig);
    let d = Dispatch::kernel("rs_ag", RS_AG_BLOCKS, move |core| {
        let (me, n, blk) = (core.rank(), core.nranks(), core.block_idx());
        let first = |seg: usize| (seg * RS_AG_BLOCKS + blk) * piece;
        for phase in 0..2 {
            for k in 1..n {
                let peer = (me + k) % n;
                // Reduce-scatter: my data for the peer's segment; all-gather: my reduced one.
                let seg = if phase == 0 { peer } else { me };
                let atomic = if phase == 0 { AtomicType::Add } else { AtomicType::None };
                for row in (first(seg)..first(seg) + piece).step_by(TILE_ROWS) {
                    let t = core.load(&x, &[row, 0], &[TILE_ROWS, ROW])?;
                    core.remote_store(&t, &x, peer, &[row, 0], atomic)?;
                }
                core.notify(&s, peer, &[phase, blk], 1, NotifyOp::AtomicAdd)?;
            }
            while !core.test_signal(&s, &[phase, blk], n as i32 - 1, WaitCmp::Ge)? {
                core.compute(200);
            }
        }
        Ok(())
    });
    w.dispatch_all(&dom, d.in_domain(&dom))?;
    Ok(vec![data])
}

/// Blocks of the put/get pipeline.
const PG_BLOCKS: usize = 4;

/// Each of 4 blocks puts its quarter of a GM tensor (1 MiB at full scale) into the next rank's
/// window (pipelined 4 KiB chunks) and notifies it; once its own window is complete it tells
/// the next rank so, and once the previous rank says so it gets the previous rank's window
/// quarter back into a window of its own, pipelined too.
fn put_get(w: &mut World, ranks: usize, scale: u64) -> SimResult<Vec<Tensor>> {
    let dom = domain(w, ranks)?;
    let rows = 64 * scale.max(1) as usize; // 1 MiB at full scale
    let quarter = rows / PG_BLOCKS;
    let inbox = w.alloc_window(&dom, "pg_inbox", DType::F32, &[rows, ROW])?;
    let sig = w.alloc_window(&dom, "pg_sig", DType::I32, &[2, PG_BLOCKS])?;
    let src = w.alloc_tensor("pg_src", DType::F32, &[rows, ROW])?;
    let dst = w.alloc_window(&dom, "pg_dst", DType::F32, &[rows, ROW])?;
    let staged = if w.has_payload() { ranks } else { 0 };
    for r in 0..staged {
        let v: Vec<f32> = (0..rows * ROW).map(|i| (r * 1000 + i % 1000) as f32).collect();
        w.write(&src, r, &v)?;
    }
    let (ib, s, sr, ds) = (inbox.clone(), sig, src, dst.clone());
    let d = Dispatch::kernel("put_get", PG_BLOCKS, move |core| {
        let (me, n, blk) = (core.rank(), core.nranks(), core.block_idx());
        let (next, prev) = ((me + 1) % n, (me + n - 1) % n);
        let at = [blk * quarter, 0];
        let push = CopyOpts::new().region(&at, &at, &[quarter, ROW]).chunks(4, ROW).pipeline(true);
        core.put(&ib, next, &sr, &push)?;
        core.notify(&s, next, &[0, blk], 1, NotifyOp::AtomicAdd)?;
        core.wait(&s, &[0, blk], 1, WaitCmp::Ge)?;
        core.notify(&s, next, &[1, blk], 1, NotifyOp::AtomicAdd)?;
        core.wait(&s, &[1, blk], 1, WaitCmp::Ge)?;
        let pull = CopyOpts::new().region(&at, &at, &[quarter, ROW]).chunks(4, ROW).pipeline(true);
        core.get(&ds, prev, &ib, &pull)?;
        Ok(())
    });
    w.dispatch_all(&dom, d.in_domain(&dom))?;
    Ok(vec![inbox, dst])
}

/// A kernel on `blocks` blocks of each of the first `ranks` ranks that keeps every block live
/// at once: each block notifies the same block of the next rank, does a little work on a
/// small array on its stack, and waits for the previous rank's notify (for the memory of a
/// large run: every block holds a stack).
#[allow(dead_code)] // the bench's scale run
pub fn all_blocks_live(w: &mut World, ranks: usize, blocks: usize) -> SimResult<Vec<Tensor>> {
    let dom = domain(w, ranks)?;
    let sig = w.alloc_window(&dom, "live_sig", DType::I32, &[1, blocks])?;
    let d = Dispatch::kernel("all_blocks_live", blocks, move |core| {
        let (me, n, blk) = (core.rank(), core.nranks(), core.block_idx());
        let scratch = std::hint::black_box([blk as u64; 512]);
        core.notify(&sig, (me + 1) % n, &[0, blk], 1, NotifyOp::AtomicAdd)?;
        core.compute(scratch[blk % 512] % 100);
        core.wait(&sig, &[0, blk], 1, WaitCmp::Ge)
    });
    w.dispatch_all(&dom, d.in_domain(&dom))?;
    Ok(Vec::new())
}

/// [`poll_loop`] written as an async kernel (`Task::new_async`), for the difference.
fn poll_loop_async(w: &mut World, ranks: usize, scale: u64) -> SimResult<Vec<Tensor>> {
    // A bounded spin on a cell nobody sets, to time polls: not a livelock (counted, never ended).
    w.options_mut().livelock_polls = u64::MAX;
    let dom = domain(w, ranks)?;
    let sig = w.alloc_window(&dom, "poll_sig", DType::I32, &[1, 1])?;
    let polls = (POLLS * scale as usize / FULL as usize).max(1);
    let mut d = Dispatch::new("poll_loop_async");
    d.add(Task::new_async("poll_loop_async", 1, move |ops| {
        let sig = sig.clone();
        Box::pin(async move {
            for _ in 0..polls {
                if ops.test_signal(&sig, &[0, 0], 1, WaitCmp::Ge).await? {
                    break;
                }
                ops.compute(50);
            }
            Ok(())
        })
    }));
    w.dispatch_all(&dom, d.in_domain(&dom))?;
    Ok(Vec::new())
}
