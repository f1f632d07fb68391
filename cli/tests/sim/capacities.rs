//! Capacities pinned like costs (issue 28): every configured capacity (UB, L1, L0A, L0B, L0C,
//! the SDMA descriptor size and queue depth) accepts exactly its size and refuses one step
//! more, so a check that moves (doubled, off by one, `<` for `<=`) fails here. On the cube
//! machine of `common::cube_toml`: UB 64 KiB, L1 64 KiB, L0A / L0B 16 KiB, L0C 32 KiB.

use crate::common::{all, cube};
use crate::flows::links_only;
use ranksim::Config;
use ranksim::prelude::*;

/// Runs `kernel` as one block on rank 0 of the cube machine (an AIC block when `on_cube`)
/// with a `[256, 256]` f16 tensor and a `[1, 32768]` f32 one: `Ok`, or the run's error text.
fn outcome(
    on_cube: bool,
    kernel: impl Fn(&mut Core, &Tensor, &Tensor) -> SimResult<()> + Send + Sync + 'static,
) -> Result<(), String> {
    let mut w = cube(1);
    let dom = all(&mut w);
    let x = w.alloc_tensor("x", DType::F16, &[256, 256]).unwrap();
    let y = w.alloc_tensor("y", DType::F32, &[1, 32768]).unwrap();
    w.write(&x, 0, &vec![f16::from_f32(1.0); 256 * 256]).unwrap();
    w.write(&y, 0, &vec![1.0f32; 32768]).unwrap();
    let task = Task::new("k", 1, move |core| kernel(core, &x, &y));
    let mut d = Dispatch::new("d");
    d.add(if on_cube { task.on_cube() } else { task });
    w.dispatch_all(&dom, d).unwrap();
    w.run().map(|_| ()).map_err(|e| e.to_string())
}

/// `Ok` at the capacity, an error naming `key` one step above it.
fn pinned(at: Result<(), String>, above: Result<(), String>, key: &str) {
    assert_eq!(at, Ok(()), "{key}: a tile of exactly the capacity fits");
    let e = above.expect_err(key);
    assert!(e.contains(key), "{key}: {e}");
}

#[test]
fn ub_holds_exactly_ub_bytes() {
    // 16384 f32 = 65536 B; 8 more elements are the next 32-byte block.
    let at = outcome(false, |core, _, y| core.load(y, &[0, 0], &[1, 16384]).map(|_| ()));
    let above = outcome(false, |core, _, y| core.load(y, &[0, 0], &[1, 16392]).map(|_| ()));
    pinned(at, above, "UB holds 65536");
}

#[test]
fn l1_holds_exactly_l1_bytes() {
    // 128 x 256 f16 = 65536 B; one more row is over.
    let at = outcome(true, |core, x, _| core.load_l1(x, &[0, 0], &[128, 256]).map(|_| ()));
    let above = outcome(true, |core, x, _| core.load_l1(x, &[0, 0], &[129, 256]).map(|_| ()));
    pinned(at, above, "chip.l1_bytes");
}

#[test]
fn l0a_and_l0b_hold_exactly_their_bytes() {
    // 64 x 128 f16 = 16384 B in each; 65 rows are over.
    for b in [false, true] {
        let to = move |core: &mut Core, t: &CubeTile| if b { core.to_l0b(t) } else { core.to_l0a(t) }.map(|_| ());
        let rows = move |r: usize| {
            move |core: &mut Core, x: &Tensor, _: &Tensor| {
                let t = core.load_l1(x, &[0, 0], &[r, 128])?;
                to(core, &t)
            }
        };
        let (at, above) = (outcome(true, rows(64)), outcome(true, rows(65)));
        pinned(at, above, if b { "chip.cube.l0b_bytes" } else { "chip.cube.l0a_bytes" });
    }
}

#[test]
fn l0c_holds_exactly_l0c_bytes() {
    // A 64 x 128 f32 accumulator is 32768 B; 64 x 144 is over.
    let mm = |n: usize| {
        move |core: &mut Core, x: &Tensor, _: &Tensor| {
            let a = core.load_l1(x, &[0, 0], &[64, 16])?;
            let b = core.load_l1(x, &[0, 0], &[16, n])?;
            let (a, b) = (core.to_l0a(&a)?, core.to_l0b(&b)?);
            core.matmul(&a, &b).map(|_| ())
        }
    };
    pinned(outcome(true, mm(128)), outcome(true, mm(144)), "chip.cube.l0c_bytes");
}

/// A links-only 2-rank machine with copy engines of `max_desc`-byte descriptors and a queue
/// of `depth` per channel; rank 0's one block runs `kernel` on a `[2, 2048]` f32 window.
fn sdma_outcome(
    max_desc: u64,
    depth: usize,
    kernel: impl Fn(&mut Core, &Tensor) -> SimResult<()> + Send + Sync + 'static,
) -> Result<(), String> {
    let topo = "kind = \"full_mesh\"\nlink_gbps = 10.0\nlink_latency_ns = 1000.0\n";
    let table = format!(
        "channels = 4\nchannel_gbps = 20.0\nissue_ns = 30.0\ndescriptor_ns = 700.0\nmax_descriptor_bytes = {max_desc}\n\
         queue_depth = {depth}\npoll_ns = 50.0\ncold_start_ns = 0.0\n"
    );
    let toml = format!("{}\n[chip.sdma]\n{table}", links_only(2, 4096, topo));
    let mut w = Config::from_toml(&toml, "sdma").unwrap().world().unwrap();
    let dom = w.world_domain("comm_d0").unwrap();
    let data = w.alloc_window(&dom, "data", DType::F32, &[2, 2048]).unwrap();
    w.dispatch(0, Dispatch::kernel("k", 1, move |core| kernel(core, &data)).in_domain(&dom)).unwrap();
    w.run().map(|_| ()).map_err(|e| e.to_string())
}

/// Row 0 of rank 0's `data` into row 1 of rank 1's, `cols` f32.
fn put(core: &mut Core, data: &Tensor, cols: usize) -> SimResult<SdmaHandle> {
    core.put_async(data, 1, data, &SdmaOpts::new().region(&[1, 0], &[0, 0], &[1, cols]))
}

#[test]
fn a_descriptor_holds_exactly_max_descriptor_bytes() {
    // Queue depth 1: 1024 f32 = 4096 B is one descriptor; 1032 f32 needs two, which the queue
    // cannot hold.
    let at = sdma_outcome(4096, 1, |core, d| {
        let h = put(core, d, 1024)?;
        core.wait_async(h)
    });
    let above = sdma_outcome(4096, 1, |core, d| {
        let h = put(core, d, 1032)?;
        core.wait_async(h)
    });
    pinned(at, above, "needs 2 descriptors of at most 4096 bytes (chip.sdma.max_descriptor_bytes)");
}

#[test]
fn a_channel_queues_exactly_queue_depth_descriptors() {
    let posts = |n: usize| {
        move |core: &mut Core, d: &Tensor| {
            let hs = (0..n).map(|_| put(core, d, 256)).collect::<SimResult<Vec<_>>>()?;
            hs.into_iter().try_for_each(|h| core.wait_async(h))
        }
    };
    pinned(sdma_outcome(1 << 20, 3, posts(3)), sdma_outcome(1 << 20, 3, posts(4)), "chip.sdma.queue_depth");
}
