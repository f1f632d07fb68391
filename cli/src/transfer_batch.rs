//! A batch of one-sided point-to-point transfers, as HIXL's (CANN's transfer library)
//! benchmark runs them: rank 0 hands one list of `batch / block` blocks to the library, which
//! writes them into (or reads them from) the peer's memory, and the time per block is the
//! batch's time over the block count. The library's software path costs each block
//! `host.hixl_block_us` (its client-server path) or `host.hccl_block_us` (through an HCCL
//! comm domain) before the block is posted; the posts go to the copy engines, one block per
//! SDMA channel in turn, and move over the route's links, so a block's cost overlaps the wire
//! time of the blocks before it, up to `window` blocks in flight (the library waits for the
//! oldest beyond that). The library is handed the whole list at once (HIXL passes a batch's
//! descriptors to `HcclBatchPut` / `HcclBatchGet` in one call), so it prepares a block while
//! the blocks before it are in flight and waits only to post it: `window = 1` keeps one block
//! on the wire at a time, each costing the larger of the per-block cost and its transfer
//! (descriptor, crossings, wire).

use ranksim::Config;
use sim_core::{DType, Dispatch, SdmaHandle, SdmaOpts};
use std::collections::VecDeque;
use std::fmt;
use std::str::FromStr;

/// The bytes a batch moves when the workload does not say: HIXL's benchmark moves 128 MiB per
/// call at every block size.
pub const DEFAULT_BATCH: u64 = 128 << 20;

/// Blocks in flight when the workload does not say: enough that the SDMA queues, not the
/// library, bound a batch of small blocks.
pub const DEFAULT_WINDOW: usize = 1024;

/// Which way the bytes go.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Rank 0 writes its blocks into the peer's memory (HIXL's D2rD).
    Write,
    /// Rank 0 reads the peer's blocks into its own memory (HIXL's rD2D).
    Read,
}

/// The software path a block takes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Via {
    /// HIXL's client-server path (`host.hixl_block_us` per block).
    Hixl,
    /// Through an HCCL communication domain (`host.hccl_block_us` per block).
    CommDomain,
}

impl FromStr for Dir {
    type Err = String;
    fn from_str(s: &str) -> Result<Dir, String> {
        match s {
            "write" => Ok(Dir::Write),
            "read" => Ok(Dir::Read),
            _ => Err(format!("unknown direction `{s}`: use write or read")),
        }
    }
}

impl FromStr for Via {
    type Err = String;
    fn from_str(s: &str) -> Result<Via, String> {
        match s {
            "hixl" => Ok(Via::Hixl),
            "comm_domain" => Ok(Via::CommDomain),
            _ => Err(format!("unknown transfer path `{s}`: use hixl or comm_domain")),
        }
    }
}

impl fmt::Display for Dir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Dir::Write => "write",
            Dir::Read => "read",
        })
    }
}

impl fmt::Display for Via {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Via::Hixl => "hixl",
            Via::CommDomain => "comm_domain",
        })
    }
}

/// One batch's shape: who, which way, by which path, how many blocks in flight, how many bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransferBatch {
    /// The rank rank 0 transfers with.
    pub peer: usize,
    /// Write or read.
    pub dir: Dir,
    /// The software path.
    pub via: Via,
    /// Blocks in flight at most.
    pub window: usize,
    /// Bytes per batch.
    pub batch: u64,
}

impl TransferBatch {
    /// The per-block cost of this path on `cfg`, in us.
    pub fn block_us(&self, cfg: &Config) -> f64 {
        match self.via {
            Via::Hixl => cfg.host.hixl_block_us,
            Via::CommDomain => cfg.host.hccl_block_us,
        }
    }

    /// The time per block (us) of a batch of `block`-byte blocks on `cfg`: the second of two
    /// batches (the first warms the copy engines' channels), over its block count.
    pub fn time_per_block_us(&self, cfg: &Config, block: u64) -> Result<f64, String> {
        let blocks = self.blocks(block)?;
        let e = |e: sim_core::SimError| e.to_string();
        let mut w = cfg.world().map_err(|e| e.to_string())?;
        if self.peer == 0 || self.peer >= w.size() {
            return Err(format!("a transfer batch needs ranks 0 and {}; the machine has {}", self.peer, w.size()));
        }
        w.set_timing_only().map_err(e)?;
        let dom = w.create_domain("transfer", &[0, self.peer], sim_core::DomainOptions::default()).map_err(e)?;
        let row = (block / 4) as usize;
        let remote = w.alloc_window(&dom, "remote", DType::F32, &[blocks, row]).map_err(e)?;
        let local = w.alloc_tensor("local", DType::F32, &[blocks, row]).map_err(e)?;
        let channels = cfg.chip.sdma.as_ref().map_or(1, |s| s.channels);
        let queues = self.queues(cfg, block);
        let cycles = (self.block_us(cfg) * 1e3 * cfg.chip.clock_ghz).round() as u64;
        for _ in 0..2 {
            let (l, r, dir, window) = (local.clone(), remote.clone(), self.dir, self.window);
            let k = Dispatch::kernel("transfer_batch", 1, move |c| {
                let mut open: VecDeque<SdmaHandle> = VecDeque::new();
                for j in 0..blocks {
                    c.compute(cycles);
                    if open.len() >= window
                        && let Some(h) = open.pop_front()
                    {
                        c.wait_async(h)?;
                    }
                    let opts = SdmaOpts::new().region(&[j, 0], &[j, 0], &[1, row]).channel(j % channels).queues(queues);
                    open.push_back(match dir {
                        Dir::Write => c.put_async(&r, 1, &l, &opts)?,
                        Dir::Read => c.get_async(&l, 1, &r, &opts)?,
                    });
                }
                open.into_iter().try_for_each(|h| c.wait_async(h))
            });
            w.dispatch(0, k.in_domain(&dom)).map_err(e)?;
        }
        let r = w.run().map_err(e)?;
        let last = r.dispatches.last().ok_or("the run dispatched no kernel")?;
        Ok(last.device_wall().as_us_f64() / blocks as f64)
    }

    /// The channels one block is striped over: as many as its descriptors (of at most
    /// `chip.sdma.max_descriptor_bytes`), up to the chip's channels. HCCL posts a block as one
    /// SDMA task however large (up to 4 GB); striped, the model's descriptors of one block pay
    /// the descriptor cost side by side, once, as that one task does.
    fn queues(&self, cfg: &Config, block: u64) -> usize {
        let Some(s) = cfg.chip.sdma.as_ref() else { return 1 };
        let descriptors = block.div_ceil(s.max_descriptor_bytes.max(1));
        usize::try_from(descriptors).unwrap_or(usize::MAX).clamp(1, s.channels.max(1))
    }

    /// How many `block`-byte blocks the batch holds; a block must be a positive multiple of 4
    /// bytes that divides the batch.
    fn blocks(&self, block: u64) -> Result<usize, String> {
        if block == 0 || !block.is_multiple_of(4) || !self.batch.is_multiple_of(block) {
            return Err(format!(
                "a block of {block} B does not divide the batch of {} B in whole 4-byte words",
                self.batch
            ));
        }
        Ok((self.batch / block) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A two-rank mesh with one SDMA channel, no descriptor or poll costs and a 1 GB/s link,
    /// so a block's wire time is its bytes in ns.
    fn machine(block_us: f64) -> Config {
        let mut cfg = Config::preset("a2a3").unwrap();
        cfg.machine.ranks = 2;
        cfg.host.hixl_block_us = block_us;
        if let interconnect::TopologyConfig::FullMesh(m) = &mut cfg.fabric.topology {
            (m.ranks, m.link_gbps, m.link_latency_ns) = (None, 1.0, 0.0);
        }
        cfg.fabric.efficiency = 1.0;
        let sdma = cfg.chip.sdma.as_mut().unwrap();
        (sdma.descriptor_ns, sdma.issue_ns, sdma.poll_ns) = (0.0, 0.0, 0.0);
        cfg
    }

    fn batch(dir: Dir, window: usize) -> TransferBatch {
        TransferBatch { peer: 1, dir, via: Via::Hixl, window, batch: 64 << 10 }
    }

    /// Blocks overlap: the per-block time is the larger of the block cost and the wire
    /// time; one at a time (`window = 1`), the larger of the block cost and the whole transfer
    /// (wire plus the link's latency, twice for a read: request and data), since the library
    /// prepares the next block while one is in flight.
    #[test]
    fn blocks_overlap_up_to_the_window() {
        // 16 blocks of 4 KiB: 4.096 us on the wire each.
        let cfg = machine(10.0);
        let t = batch(Dir::Write, 64).time_per_block_us(&cfg, 4096).unwrap();
        assert!((t - 10.0).abs() < 0.6, "block cost binds: {t}");
        let cfg = machine(1.0);
        let t = batch(Dir::Write, 64).time_per_block_us(&cfg, 4096).unwrap();
        assert!((t - 4.096).abs() < 0.3, "wire binds: {t}");
        let t = batch(Dir::Read, 1).time_per_block_us(&cfg, 4096).unwrap();
        assert!((t - 4.096).abs() < 0.3, "one at a time, the cost hidden: wire: {t}");
        let mut slow = machine(1.0);
        if let interconnect::TopologyConfig::FullMesh(m) = &mut slow.fabric.topology {
            m.link_latency_ns = 2000.0;
        }
        // Only the first block's cost (1 us) is not hidden: (1 + 16 x transfer) / 16.
        let t = batch(Dir::Write, 1).time_per_block_us(&slow, 4096).unwrap();
        assert!((t - (1.0 + 16.0 * (4.096 + 2.0)) / 16.0).abs() < 0.02, "write: wire + one crossing: {t}");
        let t = batch(Dir::Read, 1).time_per_block_us(&slow, 4096).unwrap();
        assert!((t - (1.0 + 16.0 * (4.096 + 4.0)) / 16.0).abs() < 0.02, "read: request + data + wire: {t}");
        // Cost-bound, only the last block's transfer shows: (16 x 9 + 4.096) / 16.
        let t = batch(Dir::Read, 1).time_per_block_us(&machine(9.0), 4096).unwrap();
        assert!((t - (16.0 * 9.0 + 4.096) / 16.0).abs() < 0.02, "the block cost binds one at a time too: {t}");
        let t = batch(Dir::Read, 64).time_per_block_us(&slow, 4096).unwrap();
        // In flight together, the crossings show once: (1 + 4 + 16 x 4.096) / 16.
        assert!((t - (1.0 + 4.0 + 16.0 * 4.096) / 16.0).abs() < 0.02, "the crossings overlap: {t}");
    }

    /// A block longer than a descriptor is striped over channels, so its descriptors pay the
    /// descriptor cost side by side, once: with 1 us descriptors of at most 2 KiB, 4 KiB
    /// blocks one at a time take (1 + 16 x (1 + 4.096)) / 16 us each, not 2 + 4.096.
    #[test]
    fn a_long_block_pays_one_descriptor_cost() {
        let mut cfg = machine(1.0);
        let sdma = cfg.chip.sdma.as_mut().unwrap();
        (sdma.descriptor_ns, sdma.max_descriptor_bytes) = (1000.0, 2048);
        assert_eq!(batch(Dir::Write, 1).queues(&cfg, 4096), 2);
        assert_eq!(batch(Dir::Write, 1).queues(&cfg, 2048), 1);
        let t = batch(Dir::Write, 1).time_per_block_us(&cfg, 4096).unwrap();
        assert!((t - (1.0 + 16.0 * (1.0 + 4.096)) / 16.0).abs() < 0.02, "{t}");
    }

    #[test]
    fn a_block_must_divide_the_batch() {
        let cfg = machine(1.0);
        let e = batch(Dir::Write, 1).time_per_block_us(&cfg, 3000).unwrap_err();
        assert!(e.contains("does not divide the batch"), "{e}");
        let b = TransferBatch { peer: 5, ..batch(Dir::Write, 1) };
        assert!(b.time_per_block_us(&cfg, 4096).unwrap_err().contains("needs ranks 0 and 5"));
    }
}
