//! SDMA copy engines (`put_async` / `get_async`) against closed forms, exact to the
//! picosecond, on the links-only machine of `flows.rs` (links 10 GB/s = BETA ps per byte with
//! ALPHA latency; DMA, HBM and ports unlimited) plus a `[chip.sdma]` table. A transfer posted
//! at 0 completes at ISSUE + COLD (first use of its channel) + DESC per descriptor + ALPHA per
//! link leg + n * beta, with beta the slowest resource's byte time; `wait_async` returns one
//! POLL later. Then: queue depth, handles, missing config, data and the checker.

use crate::common::logged_on_rank_0;
use crate::flows::links_only;
use parking_lot::Mutex;
use ranksim::Config;
use ranksim::prelude::*;
use std::sync::Arc;

const NS: u64 = 1_000;
/// Link latency (1 us) in ps.
const ALPHA: u64 = 1_000 * NS;
/// Link byte time at 10 GB/s in ps.
const BETA: u64 = 100;
const ISSUE: u64 = 30 * NS;
const DESC: u64 = 700 * NS;
const POLL: u64 = 50 * NS;
const COLD: u64 = 10_000 * NS;

/// The SDMA table with channels of `gbps`, descriptors of at most `max_desc` bytes and a
/// queue of `depth`; the issue cost and poll are `issue_poll_ns`.
fn sdma(gbps: f64, max_desc: u64, depth: usize, issue_poll_ns: (u64, u64)) -> String {
    format!(
        "channels = 4\nchannel_gbps = {gbps:?}\nissue_ns = {}.0\ndescriptor_ns = {}.0\nmax_descriptor_bytes = {max_desc}\n\
         queue_depth = {depth}\npoll_ns = {}.0\ncold_start_ns = {}.0\n",
        issue_poll_ns.0,
        DESC / NS,
        issue_poll_ns.1,
        COLD / NS
    )
}

/// The links-only full mesh of `ranks` with `[chip.sdma]` = `table`.
fn machine(ranks: usize, table: &str) -> World {
    let topo = "kind = \"full_mesh\"\nlink_gbps = 10.0\nlink_latency_ns = 1000.0\n";
    let toml = format!("{}\n[chip.sdma]\n{table}", links_only(ranks, 4096, topo));
    Config::from_toml(&toml, "sdma").unwrap().world().unwrap()
}

/// The default machine: channels of `gbps`, 1 MiB descriptors, queue 8, ISSUE and POLL.
fn world(ranks: usize, gbps: f64) -> World {
    machine(ranks, &sdma(gbps, 1 << 20, 8, (ISSUE / NS, POLL / NS)))
}

/// Runs `kernel` as one block on rank 0 with a `[1, cols]` f32 window `data` (2 rows: row 0
/// is the source, row 1 the destination) and returns the times it logged.
fn times(
    w: World,
    blocks: usize,
    cols: usize,
    kernel: impl Fn(&mut Core, &Tensor, &mut Vec<u64>) -> SimResult<()> + Send + Sync + 'static,
) -> Vec<u64> {
    let (mut v, _) = logged_on_rank_0(w, "sdma", blocks, &[2, cols], kernel);
    v.sort_unstable();
    v
}

/// Row 0 of rank 0's `data` into row 1 of `peer`'s, `cols` f32.
fn row(cols: usize) -> SdmaOpts {
    SdmaOpts::new().region(&[1, 0], &[0, 0], &[1, cols])
}

#[test]
fn a_put_of_n_bytes_costs_issue_cold_descriptor_alpha_and_n_times_the_slowest_beta() {
    for (gbps, beta) in [(20.0, BETA), (5.0, 200)] {
        for cols in [1usize, 1024, 1025, 16_384] {
            let n = 4 * cols as u64;
            let t = times(world(2, gbps), 1, cols, move |core, data, log| {
                let h = core.put_async(data, 1, data, &row(cols))?;
                log.push(core.now().as_ps());
                core.wait_async(h)?;
                log.push(core.now().as_ps());
                Ok(())
            });
            assert_eq!(t, vec![ISSUE, ISSUE + COLD + DESC + ALPHA + n * beta + POLL], "{gbps} GB/s, n={n}");
        }
    }
}

/// Across a switch the channel's chip learns that the put landed one route latency later:
/// the same 4-byte put, with the same 1 us of link latency on its route, completes exactly
/// 1 us later on a switch (500 ns up, 500 ns down; cut-through, the downlink adds no time)
/// than on a mesh.
#[test]
fn a_put_across_a_switch_completes_when_the_news_is_back() {
    let put = |topo: &str| {
        let table = sdma(20.0, 1 << 20, 8, (ISSUE / NS, POLL / NS));
        let toml = format!("{}\n[chip.sdma]\n{table}", links_only(2, 4096, topo));
        let w = Config::from_toml(&toml, "sdma").unwrap().world().unwrap();
        times(w, 1, 1, |core, data, log| {
            let h = core.put_async(data, 1, data, &row(1))?;
            core.wait_async(h)?;
            log.push(core.now().as_ps());
            Ok(())
        })[0]
    };
    let mesh = put("kind = \"full_mesh\"\nlink_gbps = 10.0\nlink_latency_ns = 1000.0\n");
    let switch = put("kind = \"switch\"\nlink_gbps = 10.0\nlink_latency_ns = 500.0\n");
    assert_eq!(switch - mesh, 1000 * NS);
}

/// A get sends its request as its descriptor starts, so the request's crossing and the
/// descriptor cost overlap: the data leaves at the later of the two. Here the 1 us link binds
/// (DESC is 0.7 us): ISSUE + COLD + ALPHA (request) + ALPHA (data) + n * BETA + POLL.
#[test]
fn a_get_sends_its_request_during_its_descriptor_then_the_data_comes_back() {
    let cols = 4096;
    let n = 4 * cols as u64;
    let get = move |core: &mut Core, data: &Tensor, log: &mut Vec<u64>| {
        let h = core.get_async(data, 1, data, &SdmaOpts::new().region(&[1, 0], &[0, 0], &[1, cols]))?;
        core.wait_async(h)?;
        log.push(core.now().as_ps());
        Ok(())
    };
    let t = times(world(2, 20.0), 1, cols, move |core, data, log| get(core, data, log));
    assert_eq!(t, vec![ISSUE + COLD + DESC.max(ALPHA) + ALPHA + n * BETA + POLL]);
    // With 100 ns links the descriptor binds and the request's crossing is hidden.
    let table = sdma(20.0, 1 << 20, 8, (ISSUE / NS, POLL / NS));
    let topo = "kind = \"full_mesh\"\nlink_gbps = 10.0\nlink_latency_ns = 100.0\n";
    let toml = format!("{}\n[chip.sdma]\n{table}", links_only(2, 4096, topo));
    let w = Config::from_toml(&toml, "sdma").unwrap().world().unwrap();
    let t = times(w, 1, cols, move |core, data, log| get(core, data, log));
    assert_eq!(t, vec![ISSUE + COLD + DESC + 100 * NS + n * BETA + POLL]);
}

#[test]
fn a_local_copy_crosses_no_link() {
    let cols = 4096;
    let n = 4 * cols as u64;
    // 5 GB/s channels: 200 ps per byte, HBM unlimited.
    let t = times(world(1, 5.0), 1, cols, move |core, data, log| {
        let h = core.put_async(data, 0, data, &row(cols))?;
        core.wait_async(h)?;
        log.push(core.now().as_ps());
        Ok(())
    });
    assert_eq!(t, vec![ISSUE + COLD + DESC + n * 200 + POLL]);
}

#[test]
fn a_transfer_longer_than_a_descriptor_pays_one_descriptor_cost_per_piece() {
    let cols = 16_384;
    let n = 4 * cols as u64;
    // 16 KiB descriptors: 4 of them, one after another on the channel.
    let w = machine(2, &sdma(20.0, 16_384, 8, (ISSUE / NS, POLL / NS)));
    let t = times(w, 1, cols, move |core, data, log| {
        let h = core.put_async(data, 1, data, &row(cols))?;
        core.wait_async(h)?;
        log.push(core.now().as_ps());
        Ok(())
    });
    assert_eq!(t, vec![ISSUE + COLD + 4 * DESC + ALPHA + n * BETA + POLL]);
}

#[test]
fn k_transfers_run_in_parallel_on_k_channels_and_one_after_another_on_one() {
    // 1 GB/s channels (1000 ps per byte), free issue and poll; rank 0 puts to ranks 1..=4 over
    // four links.
    let (k, cols) = (4u64, 4096usize);
    let n = 4 * cols as u64;
    for one in [false, true] {
        let w = machine(5, &sdma(1.0, 1 << 20, 8, (0, 0)));
        let t = times(w, 1, cols, move |core, data, log| {
            let mut hs = Vec::new();
            for p in 1..=k as usize {
                let o = if one { row(cols).channel(0) } else { row(cols).channel(p - 1) };
                hs.push(core.put_async(data, p, data, &o)?);
            }
            for h in hs {
                core.wait_async(h)?;
            }
            log.push(core.now().as_ps());
            Ok(())
        });
        let expect = if one { COLD + k * (DESC + n * 1000) + ALPHA } else { COLD + DESC + ALPHA + n * 1000 };
        assert_eq!(t, vec![expect], "one channel: {one}");
    }
}

#[test]
fn the_cold_start_is_paid_once_per_channel_per_run() {
    let cols = 1024;
    let one = |cold: bool| ISSUE + if cold { COLD } else { 0 } + DESC + ALPHA + 4 * cols as u64 * BETA + POLL;
    let t = times(world(2, 20.0), 1, cols, move |core, data, log| {
        for ch in [0, 0, 1, 1] {
            let h = core.put_async(data, 1, data, &row(cols).channel(ch))?;
            core.wait_async(h)?;
            log.push(core.now().as_ps());
        }
        Ok(())
    });
    let mut at = 0;
    let expect: Vec<u64> = [true, false, true, false]
        .iter()
        .map(|&c| {
            at += one(c);
            at
        })
        .collect();
    assert_eq!(t, expect);
}

#[test]
fn the_default_channel_is_the_block_index_modulo_the_channels() {
    // Blocks 0 and 4 share channel 0 (4 channels): the second transfer waits for the first.
    let cols = 1024;
    let n = 4 * cols as u64;
    let t = times(world(2, 5.0), 5, cols, move |core, data, log| {
        if core.block_idx() % 4 != 0 {
            return Ok(());
        }
        let h = core.put_async(data, 1, data, &row(cols))?;
        assert_eq!(h.channel(), 0);
        core.wait_async(h)?;
        log.push(core.now().as_ps());
        Ok(())
    });
    let first = ISSUE + COLD + DESC + ALPHA + n * 200 + POLL;
    assert_eq!(t, vec![first, first + DESC + n * 200]);
}

#[test]
fn test_async_is_false_before_completion_and_true_after() {
    let cols = 1024;
    let done = ISSUE + COLD + DESC + ALPHA + 4 * cols as u64 * BETA;
    // 1 GHz: one cycle per ns. Poll at once, then just before completion, then after it.
    let before = (done - ISSUE - POLL) / NS - 1;
    let t = times(world(2, 20.0), 1, cols, move |core, data, log| {
        let h = core.put_async(data, 1, data, &row(cols))?;
        assert!(!core.test_async(&h)?);
        core.compute(before);
        log.push(core.now().as_ps());
        assert!(!core.test_async(&h)?, "at {}", core.now());
        assert!(core.test_async(&h)?, "at {}", core.now());
        log.push(core.now().as_ps());
        core.wait_async(h)?;
        log.push(core.now().as_ps());
        Ok(())
    });
    let probe = ISSUE + POLL + before * NS;
    assert!(probe < done && probe + POLL >= done);
    assert_eq!(t, vec![probe, probe + 2 * POLL, probe + 3 * POLL]);
}

fn run_err(
    mut w: World,
    blocks: usize,
    kernel: impl Fn(&mut Core, &Tensor) -> SimResult<()> + Send + Sync + 'static,
) -> String {
    let dom = w.world_domain("comm_d0").unwrap();
    let data = w.alloc_window(&dom, "data", DType::F32, &[2, 1024]).unwrap();
    let k = Dispatch::kernel("sdma", blocks, move |core| kernel(core, &data));
    w.dispatch(0, k.in_domain(&dom)).unwrap();
    w.run().unwrap_err().to_string()
}

#[test]
fn a_machine_without_sdma_says_which_table_to_add() {
    let e = run_err(crate::common::simple(2), 1, |core, data| {
        let h = core.put_async(data, 1, data, &row(1024))?;
        core.wait_async(h)
    });
    assert!(e.contains("put_async") && e.contains("[chip.sdma]"), "{e}");
}

#[test]
fn bad_sdma_configs_name_their_key() {
    let topo = "kind = \"full_mesh\"\nlink_gbps = 10.0\nlink_latency_ns = 1000.0\n";
    for (from, to, key) in [
        ("channels = 4", "channels = 0", "chip.sdma.channels = 0"),
        ("queue_depth = 8", "queue_depth = 0", "chip.sdma.queue_depth = 0"),
        ("channel_gbps = 20.0", "channel_gbps = -1.0", "chip.sdma.channel_gbps = -1"),
        ("cold_start_ns = 10000.0", "cold_start_ns = -1.0", "chip.sdma.cold_start_ns = -1"),
        ("poll_ns = 50.0", "pol_ns = 50.0", "unknown field `pol_ns`"),
    ] {
        let table = sdma(20.0, 1 << 20, 8, (ISSUE / NS, POLL / NS)).replace(from, to);
        let toml = format!("{}\n[chip.sdma]\n{table}", links_only(2, 4096, topo));
        let e = Config::from_toml(&toml, "sdma").unwrap_err().to_string();
        assert!(e.contains(key), "{e}");
    }
}

#[test]
fn more_descriptors_than_the_queue_depth_is_an_error_naming_the_depth() {
    let w = machine(2, &sdma(20.0, 1 << 20, 2, (ISSUE / NS, POLL / NS)));
    let e = run_err(w, 1, |core, data| {
        let hs = [
            core.put_async(data, 1, data, &row(1024))?,
            core.put_async(data, 1, data, &row(1024))?,
            core.put_async(data, 1, data, &row(1024))?,
        ];
        for h in hs {
            core.wait_async(h)?;
        }
        Ok(())
    });
    assert!(e.contains("queue depth 2 (chip.sdma.queue_depth)"), "{e}");
    // One transfer that alone needs more descriptors than the queue holds.
    let w = machine(2, &sdma(20.0, 1024, 2, (ISSUE / NS, POLL / NS)));
    let e = run_err(w, 1, |core, data| {
        let h = core.put_async(data, 1, data, &row(1024))?;
        core.wait_async(h)
    });
    assert!(e.contains("needs 4 descriptors") && e.contains("chip.sdma.queue_depth"), "{e}");
}

#[test]
fn a_handle_is_waited_once_by_the_block_that_posted_it() {
    // Block 0 posts and hands the handle to block 1, which may not wait it.
    let slot: Arc<Mutex<Option<SdmaHandle>>> = Arc::new(Mutex::new(None));
    let mut w = world(2, 20.0);
    let dom = w.world_domain("comm_d0").unwrap();
    let data = w.alloc_window(&dom, "data", DType::F32, &[2, 1024]).unwrap();
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[2, 1]).unwrap();
    let k = Dispatch::kernel("handoff", 2, move |core| {
        if core.block_idx() == 0 {
            *slot.lock() = Some(core.put_async(&data, 1, &data, &row(1024))?);
            core.notify(&sig, 0, &[0, 0], 1, NotifyOp::Set)?;
            core.wait(&sig, &[1, 0], 1, WaitCmp::Ge)
        } else {
            core.wait(&sig, &[0, 0], 1, WaitCmp::Ge)?;
            let h = slot.lock().take().expect("block 0 left its handle");
            core.wait_async(h)
        }
    });
    w.dispatch(0, k.in_domain(&dom)).unwrap();
    let e = w.run().unwrap_err().to_string();
    assert!(e.contains("wait_async") && e.contains("handle #0") && e.contains("another core or block"), "{e}");
    // A block that never waits its transfer fails, naming it.
    let e = run_err(world(2, 20.0), 1, |core, data| {
        let _forgotten = core.put_async(data, 1, data, &row(1024))?;
        Ok(())
    });
    assert!(e.contains("never waited") && e.contains("handle #0 (put_async of 4096 bytes on channel 0"), "{e}");
}

/// Rank 0 copies `[1, 1024]` f32 into rank 1 with `put_async` (or rank 1 pulls it with
/// `get_async` and loads it after `wait_async`) and notifies rank 1, which loads it. `early`:
/// the notify goes before `wait_async`. Returns rank 1's destination row and the findings.
fn handoff(get: bool, early: bool) -> (Vec<f32>, Vec<Finding>) {
    let mut w = world(2, 20.0);
    w.options_mut().check = true;
    let dom = w.world_domain("comm_d0").unwrap();
    let data = w.alloc_window(&dom, "data", DType::F32, &[2, 1024]).unwrap();
    let sig = w.alloc_window(&dom, "sig", DType::I32, &[1, 1]).unwrap();
    let src: Vec<f32> = (0..2048).map(|i| if i < 1024 { i as f32 } else { -1.0 }).collect();
    w.write(&data, 0, &src).unwrap();
    w.write(&data, 1, &vec![-1.0f32; 2048]).unwrap();
    let d = data.clone();
    let k = Dispatch::kernel("handoff", 1, move |core| {
        let (me, sig, data) = (core.rank(), &sig, &d);
        match (me, get) {
            (0, false) => {
                let h = core.put_async(data, 1, data, &row(1024))?;
                if early {
                    core.notify(sig, 1, &[0, 0], 1, NotifyOp::Set)?;
                }
                core.wait_async(h)?;
                if !early {
                    core.notify(sig, 1, &[0, 0], 1, NotifyOp::Set)?;
                }
                Ok(())
            }
            (1, false) => {
                core.wait(sig, &[0, 0], 1, WaitCmp::Ge)?;
                core.load(data, &[1, 0], &[1, 1024]).map(|_| ())
            }
            // get: rank 1 pulls row 0 of rank 0 into its row 1, then reads it.
            (1, true) => {
                let h = core.get_async(data, 0, data, &row(1024))?;
                core.wait_async(h)?;
                core.load(data, &[1, 0], &[1, 1024]).map(|_| ())
            }
            _ => Ok(()),
        }
    });
    w.dispatch_all(&dom, k).unwrap();
    let r = w.run().unwrap();
    let got: Vec<f32> = w.read(&data, 1).unwrap();
    (got[1024..].to_vec(), r.findings)
}

#[test]
fn put_and_get_land_the_source_bytes() {
    let want: Vec<f32> = (0..1024).map(|i| i as f32).collect();
    for get in [false, true] {
        let (got, findings) = handoff(get, false);
        assert_eq!(got, want, "get={get}");
        assert!(findings.is_empty(), "get={get}: {findings:#?}");
    }
}

#[test]
fn a_notify_before_wait_async_does_not_order_the_data_and_the_checker_finds_the_race() {
    let (_, findings) = handoff(false, true);
    assert!(!findings.is_empty());
    let f = &findings[0];
    assert_eq!(f.kind, FindingKind::DataRace, "{findings:#?}");
    let ops: Vec<&str> = f.sites.iter().map(|s| s.op.as_str()).collect();
    assert!(ops.contains(&"put_async") && ops.contains(&"load"), "{ops:?}");
}

/// pto-isa's TGET_ASYNC device ticks (20 ns) by size in KB, docs/references/hardware.md table T3.
const T3: [(usize, f64); 6] =
    [(4, 136.51), (16, 161.40), (64, 277.25), (256, 745.54), (1024, 2624.24), (4096, 10273.68)];

#[test]
fn a2a3_get_async_tracks_the_measured_tget_async_within_ten_percent() {
    for (kb, ticks) in T3 {
        let cols = kb * 256;
        let mut w = Config::default_preset().world().unwrap();
        let dom = w.world_domain("comm_d0").unwrap();
        let data = w.alloc_window(&dom, "data", DType::F32, &[2, cols]).unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let l = log.clone();
        let k = Dispatch::kernel("t3", 1, move |core| {
            for _ in 0..2 {
                let t0 = core.now().as_ps();
                let h = core.get_async(&data, 1, &data, &row(cols))?;
                core.wait_async(h)?;
                l.lock().push(core.now().as_ps() - t0);
            }
            Ok(())
        });
        w.dispatch(0, k.in_domain(&dom)).unwrap();
        w.run().unwrap();
        let v = log.lock().clone();
        // The first use of the channel pays the 92 us cold start, the second does not.
        assert_eq!(v[0] - v[1], 92_000 * NS, "{kb} KB");
        let model = v[1] as f64 / 20_000.0;
        assert!((model / ticks - 1.0).abs() < 0.10, "{kb} KB: model {model:.2} ticks vs T3 {ticks}");
    }
}

#[test]
fn inline_reduce_puts_add_into_the_destination_and_commute_under_the_checker() {
    // Every rank adds its row into rank 0's accumulator with SDMA's inline reduce; rank 0
    // waits for one credit per rank and reads the sum. Adds from all ranks race by design:
    // atomic adds commute, so the checker must stay quiet.
    for check in [false, true] {
        let mut w = world(4, 20.0);
        w.options_mut().check = check;
        let dom = w.world_domain("comm_d0").unwrap();
        let src = w.alloc_window(&dom, "src", DType::F32, &[1, 64]).unwrap();
        let acc = w.alloc_window(&dom, "acc", DType::F32, &[1, 64]).unwrap();
        let sig = w.alloc_window(&dom, "sig", DType::I32, &[1]).unwrap();
        for r in 0..4 {
            w.write(&src, r, &(0..64).map(|i| (r * 100 + i) as f32).collect::<Vec<_>>()).unwrap();
        }
        w.write(&acc, 0, &[1000.0f32; 64]).unwrap();
        let (s, a, g) = (src.clone(), acc.clone(), sig.clone());
        w.dispatch_all(
            &dom,
            Dispatch::kernel("reduce", 1, move |core| {
                let h = core.put_async(&a, 0, &s, &SdmaOpts::new().atomic(AtomicType::Add))?;
                core.wait_async(h)?;
                core.notify(&g, 0, &[0], 1, NotifyOp::AtomicAdd)?;
                if core.rank() == 0 {
                    core.wait(&g, &[0], 4, WaitCmp::Ge)?;
                }
                Ok(())
            }),
        )
        .unwrap();
        let r = w.run().unwrap();
        let want: Vec<f32> = (0..64).map(|i| 1000.0 + (0..4).map(|r| (r * 100 + i) as f32).sum::<f32>()).collect();
        assert_eq!(w.read::<f32>(&acc, 0).unwrap(), want);
        assert!(r.findings.is_empty(), "{:#?}", r.findings);
    }
}

#[test]
fn inline_reduce_is_for_puts_of_supported_dtypes() {
    let mut w = world(2, 20.0);
    let dom = w.world_domain("comm_d0").unwrap();
    let d = w.alloc_window(&dom, "d", DType::F32, &[1, 8]).unwrap();
    w.dispatch(
        0,
        Dispatch::kernel("get-add", 1, move |core| {
            core.get_async(&d, 1, &d, &SdmaOpts::new().atomic(AtomicType::Add)).map(|_| ())
        })
        .in_domain(&dom),
    )
    .unwrap();
    let e = w.run().unwrap_err().to_string();
    assert!(e.contains("get_async") && e.contains("only available on put_async"), "{e}");
}

// ---- pto-isa's session options: block size, queues (striping), waiting the latest ----------

/// The links-only mesh of `ranks` with unlimited links (1 us latency) and `[chip.sdma]` =
/// `table`: the channels are the only rate.
fn free_links(ranks: usize, table: &str) -> World {
    let topo = "kind = \"full_mesh\"\nlink_gbps = inf\nlink_latency_ns = 1000.0\n";
    let toml = format!("{}\n[chip.sdma]\n{table}", links_only(ranks, 4096, topo));
    Config::from_toml(&toml, "sdma").unwrap().world().unwrap()
}

#[test]
fn block_bytes_cuts_one_transfer_into_descriptors_of_that_size() {
    // 64 KiB with 16 KiB blocks on a chip whose limit is 1 MiB: four descriptors in a row.
    let cols = 16_384;
    let n = 4 * cols as u64;
    let t = times(world(2, 20.0), 1, cols, move |core, data, log| {
        let h = core.put_async(data, 1, data, &row(cols).block_bytes(16_384))?;
        core.wait_async(h)?;
        log.push(core.now().as_ps());
        Ok(())
    });
    assert_eq!(t, vec![ISSUE + COLD + 4 * DESC + ALPHA + n * BETA + POLL]);
}

#[test]
fn queues_stripe_the_descriptors_over_channels_that_run_in_parallel() {
    // 1 GB/s channels (1000 ps per byte) behind unlimited links, free issue and poll; 64 KiB
    // in four 16 KiB descriptors. On one queue they run one after another; on four, each
    // channel runs one (all four cold at once).
    let (cols, d) = (16_384usize, 16_384u64);
    for (queues, expect) in [(1, COLD + 4 * (DESC + d * 1000) + ALPHA), (4, COLD + DESC + d * 1000 + ALPHA)] {
        let w = free_links(2, &sdma(1.0, 1 << 20, 8, (0, 0)));
        let t = times(w, 1, cols, move |core, data, log| {
            let h = core.put_async(data, 1, data, &row(cols).block_bytes(d).queues(queues))?;
            assert_eq!((h.channel(), h.queues()), (0, queues));
            core.wait_async(h)?;
            log.push(core.now().as_ps());
            Ok(())
        });
        assert_eq!(t, vec![expect], "{queues} queue(s)");
    }
}

#[test]
fn a_block_with_queues_starts_at_its_own_group_of_channels() {
    // pto-isa picks channel group block_idx: with 2 queues, block 1 uses channels 2 and 3.
    let t = times(world(2, 20.0), 2, 1024, move |core, data, log| {
        let h = core.put_async(data, 1, data, &row(1024).queues(2))?;
        log.push(h.channel() as u64);
        core.wait_async(h)
    });
    assert_eq!(t, vec![0, 2]);
}

#[test]
fn waiting_the_latest_transfer_through_closes_every_earlier_one() {
    // Three puts to ranks 1, 2, 3 on channels 0, 1, 2 (own links, each finishing at
    // j * ISSUE + C); waiting the third "through" waits each in order, one poll apiece, and
    // the block may end without waiting the first two itself.
    let cols = 1024;
    let c = COLD + DESC + ALPHA + 4 * cols as u64 * BETA;
    let t = times(world(4, 20.0), 1, cols, move |core, data, log| {
        let mut last = None;
        for p in 1..=3 {
            last = Some(core.put_async(data, p, data, &row(cols).channel(p - 1))?);
        }
        core.wait_async_through(last.expect("three posts"))?;
        log.push(core.now().as_ps());
        Ok(())
    });
    assert_eq!(t, vec![ISSUE + c + 3 * POLL]);
}

#[test]
fn bad_block_sizes_and_queue_counts_say_what_is_allowed() {
    let bad = |opts: SdmaOpts| {
        run_err(world(2, 20.0), 1, move |core, data| {
            let h = core.put_async(data, 1, data, &opts)?;
            core.wait_async(h)
        })
    };
    let e = bad(row(1024).queues(0));
    assert!(e.contains("queues(0)") && e.contains("1..=4 channels (chip.sdma.channels)"), "{e}");
    let e = bad(row(1024).queues(5));
    assert!(e.contains("queues(5)"), "{e}");
    for b in [0, 2, 2 << 20] {
        let e = bad(row(1024).block_bytes(b));
        assert!(e.contains(&format!("block_bytes({b})")) && e.contains("4..=1048576 bytes"), "{e}");
    }
    // Striping spreads the queue-depth limit: 8 descriptors of 512 B fit 4 queues of depth 2.
    let w = machine(2, &sdma(20.0, 1 << 20, 2, (ISSUE / NS, POLL / NS)));
    let t = times(w, 1, 1024, move |core, data, log| {
        let h = core.put_async(data, 1, data, &row(1024).block_bytes(512).queues(4))?;
        core.wait_async(h)?;
        log.push(1);
        Ok(())
    });
    assert_eq!(t, vec![1]);
    let e = run_err(machine(2, &sdma(20.0, 1 << 20, 2, (ISSUE / NS, POLL / NS))), 1, |core, data| {
        let h = core.put_async(data, 1, data, &row(1024).block_bytes(512).queues(2))?;
        core.wait_async(h)
    });
    assert!(e.contains("needs 8 descriptors") && e.contains("4 on each of its 2 channel(s)"), "{e}");
}

/// Two gets from across a switch on one channel: the second starts once the first's data has
/// cleared the channel's side of the switch, the requester's downlink (not the peer's uplink,
/// which the last byte leaves one downlink latency sooner). With 500 ns links up and down:
/// the first completes at ISSUE + COLD + 1 us (the request, up and down, with DESC under
/// it) plus 1 us (the data back) + n * BETA + POLL; the second starts when the first's last
/// byte cleared the downlink and pays its request (DESC under it) and data legs again.
#[test]
fn a_second_get_across_a_switch_waits_for_the_first_to_clear_the_requesters_side() {
    let cols = 4096;
    let n = 4 * cols as u64;
    let table = sdma(20.0, 1 << 20, 8, (ISSUE / NS, POLL / NS));
    let topo = "kind = \"switch\"\nlink_gbps = 10.0\nlink_latency_ns = 500.0\n";
    let toml = format!("{}\n[chip.sdma]\n{table}", links_only(2, 4096, topo));
    let w = Config::from_toml(&toml, "sdma").unwrap().world().unwrap();
    let t = times(w, 1, cols, move |core, data, log| {
        let o = SdmaOpts::new().region(&[1, 0], &[0, 0], &[1, cols]).channel(0);
        let a = core.get_async(data, 1, data, &o)?;
        let b = core.get_async(data, 1, data, &o)?;
        core.wait_async(a)?;
        log.push(core.now().as_ps());
        core.wait_async(b)?;
        log.push(core.now().as_ps());
        Ok(())
    });
    let (up, down) = (500 * NS, 500 * NS);
    let leg = DESC.max(up + down);
    let first = ISSUE + COLD + leg + (up + down) + n * BETA + POLL;
    // The data left at ISSUE + COLD + the request's 1 us; its last byte cleared the downlink
    // `up` later than the uplink.
    let cleared = ISSUE + COLD + leg + up + n * BETA;
    let second = cleared + leg + (up + down) + n * BETA + POLL;
    assert_eq!(t, vec![first, second]);
}
