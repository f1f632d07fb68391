//! Simulated memory with real bytes: per-chip GM buffers and per-member domain windows.

use crate::dtype::DType;
use crate::engine::request::{CellRef, MemKey, Place};
use crate::tile::{ReduceOp, combine_bytes};

/// Every byte array of a world: `gm[buf][chip]` and `win[domain][member]`.
#[derive(Debug, Default, Clone)]
pub(crate) struct Memory {
    pub(crate) gm: Vec<Vec<Vec<u8>>>,
    pub(crate) win: Vec<Vec<Vec<u8>>>,
}

impl Memory {
    pub(crate) fn bytes(&self, k: MemKey) -> &[u8] {
        match k {
            MemKey::Gm { buf, chip } => &self.gm[buf][chip],
            MemKey::Win { domain, member } => &self.win[domain][member],
        }
    }

    pub(crate) fn bytes_mut(&mut self, k: MemKey) -> &mut [u8] {
        match k {
            MemKey::Gm { buf, chip } => &mut self.gm[buf][chip],
            MemKey::Win { domain, member } => &mut self.win[domain][member],
        }
    }

    /// The region's bytes, runs concatenated.
    pub(crate) fn read(&self, p: &Place) -> Vec<u8> {
        let mem = self.bytes(p.mem);
        let mut out = Vec::with_capacity(p.region.bytes());
        for &(off, len) in &p.region.runs {
            out.extend_from_slice(&mem[off..off + len]);
        }
        out
    }

    /// Writes `data` over the region's runs, or adds it element-wise when `atomic` is set.
    pub(crate) fn write(&mut self, p: &Place, data: &[u8], atomic: Option<DType>) {
        let mem = self.bytes_mut(p.mem);
        let mut pos = 0;
        for &(off, len) in &p.region.runs {
            let src = &data[pos..pos + len];
            match atomic {
                None => mem[off..off + len].copy_from_slice(src),
                Some(dt) => combine_bytes(dt, ReduceOp::Sum, &mut mem[off..off + len], src),
            }
            pos += len;
        }
    }

    /// The current value of a signal cell.
    pub(crate) fn cell(&self, c: &CellRef) -> i32 {
        let b = &self.bytes(c.mem)[c.offset..c.offset + 4];
        i32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }

    /// Overwrites a signal cell.
    pub(crate) fn set_cell(&mut self, c: &CellRef, v: i32) {
        self.bytes_mut(c.mem)[c.offset..c.offset + 4].copy_from_slice(&v.to_le_bytes());
    }
}
