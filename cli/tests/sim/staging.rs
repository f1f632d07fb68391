//! HCCL's communication-buffer staging (`chip.hccl_buffsize_mb`): the copy-engine
//! all_to_all and reduce_scatter move a buffer-full at a time, each chunk copied
//! in, moved, handshaken and copied out before the next starts, so a call's time is a fixed
//! part plus the sum of its chunks' own times.

use collectives::{Call, Kind, Mode};
use ranksim::Config;
use ranksim_cli::hccl_test::{Algorithm, HcclTestRun};

const MIB: u64 = 1 << 20;

/// a2a3 with HCCL's buffer set to `mb` MiB.
fn a2a3_with_buffer(mb: u64) -> Config {
    let text = include_str!("../../../configs/a2a3.toml");
    let from = "hccl_buffsize_mb = 200 ";
    assert!(text.contains(from), "a2a3 names its HCCL buffer");
    Config::from_toml(&text.replacen(from, &format!("hccl_buffsize_mb = {mb} "), 1), "a2a3-buffer").unwrap()
}

/// The warm device time (us) of one sdma-mesh call of `kind` at `size` bytes on 8 ranks and
/// `blocks` blocks.
fn time_on(cfg: &Config, kind: Kind, size: u64, blocks: usize) -> f64 {
    let call = Call::new(kind, 8).with_mode(Mode::SdmaMesh).with_core_num(blocks);
    let run = HcclTestRun { call, algorithm: Algorithm::Given(Mode::SdmaMesh), iters: 1, warmup: 1, device_time: true };
    run.device_us(cfg, size).unwrap()
}

/// [`time_on`] on every AIV core, as the sweep's HCCL series runs.
fn time_us(cfg: &Config, kind: Kind, size: u64) -> f64 {
    time_on(cfg, kind, size, cfg.chip.aiv_cores)
}

/// Bytes of the nccl-tests size column that make `chunks` buffer-fulls of `buffer` bytes:
/// reduce_scatter stages one rank's output (an eighth of the size), all_to_all one rank's
/// send data (the size).
fn size_of(kind: Kind, chunks: f64, buffer: u64) -> u64 {
    let per_rank = (chunks * buffer as f64) as u64;
    if kind == Kind::ReduceScatter { 8 * per_rank } else { per_rank }
}

/// With a 1 MiB buffer a call costs its first buffer-full, then the same again for every
/// further one (within 1 ns: after the first, every chunk starts from the same state, one
/// handshake after the last), and a half buffer-full after whole ones costs what it costs after
/// one: 4 buffer-fulls are the first plus 3 alike, 2.5 the first, one alike and the half. One
/// buffer-full costs the same whatever the buffer holds beyond it.
#[test]
fn a_staged_collective_costs_the_sum_of_its_chunks() {
    let small = a2a3_with_buffer(1);
    let default = Config::default_preset();
    for kind in [Kind::ReduceScatter, Kind::AllToAll] {
        // One block a rank: HCCL runs a rank's loop as one sequence on its main stream.
        let t = |chunks: f64| time_on(&small, kind, size_of(kind, chunks, MIB), 1);
        let (t1, t2, t3, t4) = (t(1.0), t(2.0), t(3.0), t(4.0));
        let chunk = t3 - t2;
        assert!(chunk > 0.0 && t1 > chunk * 0.5, "{kind}: {t1} {t2} {t3} {t4}");
        assert!((t4 - (t1 + 3.0 * chunk)).abs() < 1e-3, "{kind}: 4 chunks {t4} vs {t1} + 3 x {chunk}");
        assert!((t2 - (t1 + chunk)).abs() < 0.05 * chunk, "{kind}: the second chunk {} vs {chunk}", t2 - t1);
        let half = t(1.5) - t1;
        assert!(half > 0.0 && half < chunk, "{kind}: half a chunk {half} vs {chunk}");
        assert!((t(2.5) - (t1 + chunk + half)).abs() < 1e-3, "{kind}: 2.5 chunks vs {t1} + {chunk} + {half}");
        let one = size_of(kind, 1.0, MIB);
        assert_eq!(time_on(&default, kind, one, 1), t1, "{kind}: one chunk is one chunk at any buffer size");
    }
}

/// What staging costs a chunk: the copy in (and for reduce_scatter and broadcast the copy
/// out) is in series with the transfers, so a chunk takes longer than its transfers alone
/// take in the allgather of the same per-link bytes, by at least the copies' HBM time
/// (each copy reads and writes its bytes once: `chip.hbm_gbps x hbm_efficiency` each way).
#[test]
fn staging_adds_its_copies_to_each_chunk() {
    let cfg = Config::default_preset();
    let hbm_gbps = cfg.chip.hbm_gbps * cfg.chip.hbm_efficiency;
    let copy_us = |bytes: u64| bytes as f64 / hbm_gbps / 1e3;
    let size = 16 * MIB;
    // allgather moves size/8 per link one way, unstaged: the transfers' time.
    let transfers = time_us(&cfg, Kind::AllGather, size);
    // all_to_all moves the same per-link bytes after copying the whole send buffer in.
    let a2a = time_us(&cfg, Kind::AllToAll, size);
    assert!(a2a > transfers + copy_us(size), "all_to_all {a2a} vs {transfers} + copy {}", copy_us(size));
    // reduce_scatter copies a rank's eighth in and out around the same per-link bytes.
    let rs = time_us(&cfg, Kind::ReduceScatter, size);
    assert!(rs > transfers + 2.0 * copy_us(size / 8), "reduce_scatter {rs} vs {transfers} + copies");
}
