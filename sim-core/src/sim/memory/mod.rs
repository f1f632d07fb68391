//! Simulated memory: per-chip GM buffers and per-member domain windows, with real bytes.
//!
//! In timing-only mode (`payload = false`) no payload byte is stored: reads return zeros and
//! writes are dropped, so a sweep to 1 GiB fits in memory. Signal cells are still real (kept
//! sparsely), because protocols branch on them; times are identical to a run with payload.

use crate::base::addr::{CellRef, MemKey, Place};
use crate::base::dtype::DType;
use crate::base::elems::{ReduceOp, combine};
use crate::base::payload::Payload;
use rustc_hash::FxHashMap;
use std::sync::Arc;

mod gm_bytes;

use gm_bytes::GmBytes;

/// Every byte array of a world: `gm[buf][chip]` and `win[domain][member]`.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Memory {
    payload: bool,
    gm: Vec<Vec<GmBytes>>,
    win: Vec<Vec<Vec<u8>>>,
    /// Signal cells in timing-only mode.
    cells: CellPages<i32>,
    /// Byte buffers of landed writes, for later reads to fill: a buffer stays warm in the
    /// cache and in pages the process already has, where a fresh allocation per load would
    /// fault new heap pages in.
    #[serde(skip)]
    spare: Vec<Arc<Vec<u8>>>,
}

/// Buffers kept for reuse at most, and the largest kept.
const SPARE_BUFFERS: usize = 64;
const SPARE_BYTES: usize = 1 << 20;

impl Default for Memory {
    fn default() -> Memory {
        Memory::new(true)
    }
}

impl Memory {
    /// Empty memory; `payload = false` stores no payload bytes.
    pub(crate) fn new(payload: bool) -> Memory {
        Memory { payload, gm: Vec::new(), win: Vec::new(), cells: CellPages::default(), spare: Vec::new() }
    }

    /// Whether payload bytes are stored.
    pub(crate) fn has_payload(&self) -> bool {
        self.payload
    }

    /// Adds a GM buffer of `nbytes` on each of `chips` chips; returns its id.
    pub(crate) fn add_gm(&mut self, nbytes: usize, chips: usize) -> usize {
        let len = if self.payload { nbytes } else { 0 };
        // One zeroed allocation per chip (`vec![vec![0; len]; chips]` would clone, writing
        // every byte): the allocator hands large ones out as fresh zero pages, which the OS
        // maps only when first touched.
        self.gm.push((0..chips).map(|_| GmBytes::Own(zeroed(len))).collect());
        self.gm.len() - 1
    }

    /// Adds the (empty) windows of a domain of `members` members; returns its id.
    pub(crate) fn add_domain(&mut self, members: usize) -> usize {
        self.win.push(vec![Vec::new(); members]);
        self.win.len() - 1
    }

    /// Grows every window of `domain` to `len` bytes (new bytes are zero). Each becomes one
    /// zeroed allocation (`resize` would write every zero), which the allocator hands out as
    /// fresh zero pages that the OS maps only when first touched; a window with bytes keeps
    /// them, copied only where they are not zero ([`copy_nonzero`]): a reallocation would
    /// copy, and so map, every page of a window nothing wrote yet (the second buffer of a
    /// domain cost 0.3 s of page faults behind a 64 MiB first one on 8 ranks).
    pub(crate) fn grow_window(&mut self, domain: usize, len: usize) {
        if self.payload {
            for w in &mut self.win[domain] {
                let mut grown = zeroed(len);
                copy_nonzero(&mut grown[..w.len()], w);
                *w = grown;
            }
        }
    }

    /// Drops the bytes of every window of `domain` (released and past its run fence).
    pub(crate) fn free_window(&mut self, domain: usize) {
        self.win[domain].iter_mut().for_each(|w| *w = Vec::new());
        self.cells.forget_domain(domain);
    }

    /// Zeroes every window of `domain`.
    pub(crate) fn zero_window(&mut self, domain: usize) {
        self.win[domain].iter_mut().for_each(|w| w.fill(0));
        self.cells.forget_domain(domain);
    }

    /// Takes over from `other` (a partition's copy after a split run) the bytes and cells of
    /// every chip `theirs` says it owned; `chip_of(domain, member)` is the chip holding a
    /// window.
    pub(crate) fn adopt(
        &mut self,
        mut other: Memory,
        theirs: &dyn Fn(usize) -> bool,
        chip_of: &dyn Fn(usize, usize) -> usize,
    ) {
        for (mine, from) in self.gm.iter_mut().zip(other.gm.iter_mut()) {
            for (chip, (m, f)) in mine.iter_mut().zip(from.iter_mut()).enumerate() {
                if theirs(chip) {
                    std::mem::swap(m, f);
                }
            }
        }
        for (domain, (mine, from)) in self.win.iter_mut().zip(other.win.iter_mut()).enumerate() {
            for (member, (m, f)) in mine.iter_mut().zip(from.iter_mut()).enumerate() {
                if theirs(chip_of(domain, member)) {
                    std::mem::swap(m, f);
                }
            }
        }
        self.cells.adopt(other.cells, &|k: MemKey| theirs(k.chip()));
    }

    /// Drops the bytes and cells of every chip `mine` does not pick (what a partition of a
    /// split run sends the others: only its own chips changed).
    pub(crate) fn keep_only(&mut self, mine: &dyn Fn(usize) -> bool, chip_of: &dyn Fn(usize, usize) -> usize) {
        for bufs in &mut self.gm {
            for (chip, b) in bufs.iter_mut().enumerate() {
                if !mine(chip) {
                    *b = GmBytes::default();
                }
            }
        }
        for (domain, wins) in self.win.iter_mut().enumerate() {
            for (member, w) in wins.iter_mut().enumerate() {
                if !mine(chip_of(domain, member)) {
                    *w = Vec::new();
                }
            }
        }
        self.cells.adopt(CellPages::default(), &|k: MemKey| !mine(k.chip()));
    }

    /// Appends `len` bytes at `off` of memory `k` to `out` (zeros in timing-only mode).
    pub(crate) fn host_read(&self, k: MemKey, off: usize, len: usize, out: &mut Vec<u8>) {
        if !self.payload {
            out.resize(out.len() + len, 0);
            return;
        }
        out.extend_from_slice(&self.bytes(k)[off..off + len]);
    }

    /// Copies the bytes at `off` of memory `k` into `out` (zeros in timing-only mode); nothing
    /// to copy when `out` is the buffer the host lent there.
    pub(crate) fn host_read_into(&self, k: MemKey, off: usize, out: &mut [u8]) {
        if self.is_lent_at(k, off, out.as_ptr()) {
            return;
        }
        if self.payload {
            out.copy_from_slice(&self.bytes(k)[off..off + out.len()]);
        } else {
            out.fill(0);
        }
    }

    /// Writes `data` at `off` of memory `k` (dropped in timing-only mode; nothing to write
    /// when `data` is the buffer the host lent there).
    pub(crate) fn host_write(&mut self, k: MemKey, off: usize, data: &[u8]) {
        if self.payload && !self.is_lent_at(k, off, data.as_ptr()) {
            self.bytes_mut(k)[off..off + data.len()].copy_from_slice(data);
        }
    }

    /// The `len` bytes at `off` of memory `k`, for the host to write in place (none in
    /// timing-only mode).
    pub(crate) fn host_bytes_mut(&mut self, k: MemKey, off: usize, len: usize) -> Option<&mut [u8]> {
        if !self.payload {
            return None;
        }
        Some(&mut self.bytes_mut(k)[off..off + len])
    }

    /// Lends GM buffer `buf` on `chip` the host's `len` bytes at `ptr` (nothing in timing-only
    /// mode); the world's own bytes there are dropped.
    ///
    /// # Safety
    /// As [`crate::World::lend`].
    pub(crate) unsafe fn lend(&mut self, buf: usize, chip: usize, ptr: *mut u8, len: usize, writable: bool) {
        if self.payload {
            // SAFETY: the caller's promise.
            self.gm[buf][chip] = unsafe { GmBytes::lent(ptr, len, writable) };
        }
    }

    /// Ends every loan: each lent GM copy is zeros again.
    pub(crate) fn end_loans(&mut self) {
        self.gm.iter_mut().flatten().for_each(|b| b.end_loan(zeroed));
    }

    /// Whether `ptr` is where the host's buffer lent to memory `k` has byte `off`.
    fn is_lent_at(&self, k: MemKey, off: usize, ptr: *const u8) -> bool {
        match k {
            MemKey::Gm { buf, chip } => self.gm[buf as usize][chip as usize].is_lent_at(ptr.wrapping_sub(off)),
            MemKey::Win { .. } => false,
        }
    }

    fn bytes(&self, k: MemKey) -> &[u8] {
        match k {
            MemKey::Gm { buf, chip } => self.gm[buf as usize][chip as usize].get(),
            MemKey::Win { domain, member, .. } => &self.win[domain as usize][member as usize],
        }
    }

    fn bytes_mut(&mut self, k: MemKey) -> &mut [u8] {
        match k {
            MemKey::Gm { buf, chip } => self.gm[buf as usize][chip as usize].get_mut(),
            MemKey::Win { domain, member, .. } => &mut self.win[domain as usize][member as usize],
        }
    }

    /// The region's bytes, runs concatenated (only their count in timing-only mode), in a
    /// spare buffer when one is large enough.
    pub(crate) fn read(&mut self, p: &Place) -> Payload {
        if !self.payload {
            return Payload::Absent(p.region.bytes());
        }
        let n = p.region.bytes();
        let mut buf = match self.spare.last() {
            Some(b) if b.capacity() >= n => self.spare.pop().unwrap_or_default(),
            _ => Arc::new(Vec::with_capacity(n)),
        };
        // A spare buffer is unshared (see `recycle`): `make_mut` copies nothing.
        let out = Arc::make_mut(&mut buf);
        out.clear();
        let mem = self.bytes(p.mem);
        for &(off, len) in &p.region.runs {
            out.extend_from_slice(&mem[off..off + len]);
        }
        Payload::Bytes(buf)
    }

    /// As [`Memory::read`], without taking a spare buffer (for reports, which hold `&self`).
    pub(crate) fn peek(&self, p: &Place) -> Payload {
        if !self.payload {
            return Payload::Absent(p.region.bytes());
        }
        let mem = self.bytes(p.mem);
        let mut out = Vec::with_capacity(p.region.bytes());
        for &(off, len) in &p.region.runs {
            out.extend_from_slice(&mem[off..off + len]);
        }
        Payload::of(out)
    }

    /// Keeps the buffer of a payload that has landed for a later [`Memory::read`], unless a
    /// tile still shares it.
    pub(crate) fn recycle(&mut self, data: Payload) {
        if let Payload::Bytes(mut b) = data
            && Arc::get_mut(&mut b).is_some()
            && (4096..=SPARE_BYTES).contains(&b.capacity())
            && self.spare.len() < SPARE_BUFFERS
        {
            self.spare.push(b);
        }
    }

    /// Writes `data` over the region's runs, or adds it element-wise when `atomic` is set.
    /// Absent bytes (a timing-only tile stored into payload memory) write zeros.
    pub(crate) fn write(&mut self, p: &Place, data: &Payload, atomic: Option<DType>) {
        if !self.payload {
            return;
        }
        let zeros;
        let data = match data.bytes() {
            Some(b) => b,
            None => {
                zeros = vec![0u8; data.len()];
                &zeros
            }
        };
        write_runs(self.bytes_mut(p.mem), &p.region.runs, data, atomic);
    }

    /// The current value of a signal cell.
    pub(crate) fn cell(&self, c: &CellRef) -> i32 {
        self.cell_at(c.mem, c.offset)
    }

    /// The value of signal cell `c`, and where a timing-only run keeps it once it has a value
    /// (its page exists), for [`Memory::cell_in`]: a test polled again reads its cell without
    /// a map lookup. A place stays the cell's until a window is freed or zeroed, or memories
    /// are merged, which never happens while an engine owns the memory (a run). No place with
    /// payload, for an unaligned cell, or for a cell never written.
    pub(crate) fn cell_and_place(&self, c: &CellRef) -> (i32, Option<usize>) {
        if self.payload {
            return (self.cell(c), None);
        }
        match self.cells.lookup(c.mem, c.offset) {
            Ok(place) => (self.cells.values[place], Some(place)),
            Err(v) => (v.copied().unwrap_or(0), None),
        }
    }

    /// The value of the cell kept at `place` (from [`Memory::cell_and_place`], this run).
    pub(crate) fn cell_in(&self, place: usize) -> i32 {
        self.cells.values[place]
    }

    /// The INT32 at byte `offset` of `mem`.
    pub(crate) fn cell_at(&self, mem: MemKey, offset: usize) -> i32 {
        if !self.payload {
            return self.cells.get(mem, offset).copied().unwrap_or(0);
        }
        let b = &self.bytes(mem)[offset..offset + 4];
        i32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }

    /// Replaces a signal cell's value `v` with `f(v)` and returns both, with one map lookup in
    /// timing-only mode (a notify reads and writes its cell).
    pub(crate) fn update_cell(&mut self, c: &CellRef, f: impl FnOnce(i32) -> i32) -> (i32, i32) {
        if !self.payload {
            let v = self.cells.entry(c.mem, c.offset);
            let old = *v;
            *v = f(old);
            return (old, *v);
        }
        let old = self.cell(c);
        let new = f(old);
        self.set_cell(c, new);
        (old, new)
    }

    /// Overwrites a signal cell.
    pub(crate) fn set_cell(&mut self, c: &CellRef, v: i32) {
        if !self.payload {
            *self.cells.entry(c.mem, c.offset) = v;
            return;
        }
        self.bytes_mut(c.mem)[c.offset..c.offset + 4].copy_from_slice(&v.to_le_bytes());
    }
}

/// `len` zero bytes of simulated memory: one zeroed allocation, which the allocator takes as
/// fresh zero pages from the OS for a large one, mapped only where first touched. Left in the
/// OS's ordinary pages: advised into transparent huge pages (as it was), the gemm_ar-class
/// payload workload (benches/payload.rs) spent 0.25-0.30 s of system time in `World::run`
/// instead of 0.07-0.11 s, and 0.88 s of CPU for the whole process instead of 0.61 s
/// (farm-bench medians), on this project's 2-core VM: a huge page comes from memory the host
/// has to back afresh, where small pages come warm from the kernel's free lists.
fn zeroed(len: usize) -> Vec<u8> {
    vec![0; len]
}

/// Copies `src` into `dst`, a zeroed buffer of the same length, block by block, leaving out
/// blocks of zeros: pages of `dst` that would only get zeros stay unmapped, and pages `src`
/// never wrote are only read (the OS maps them to its shared zero page, no new memory).
fn copy_nonzero(dst: &mut [u8], src: &[u8]) {
    const BLOCK: usize = 4096;
    for (d, s) in dst.chunks_mut(BLOCK).zip(src.chunks(BLOCK)) {
        // An OR over the block, which the compiler vectorises (an early-exit `any` it does not).
        if s.iter().fold(0u8, |acc, &b| acc | b) != 0 {
            d.copy_from_slice(s);
        }
    }
}

/// Writes `data` over the `(offset, len)` runs of `mem` in order, or adds it element-wise
/// when `atomic` is set (claiming the runs' pages for writing first: [`claim_pages`]).
fn write_runs(mem: &mut [u8], runs: &[(usize, usize)], data: &[u8], atomic: Option<DType>) {
    if atomic.is_some() {
        let mut claimed = None;
        for &(off, len) in runs {
            claimed = claim_pages(&mut mem[off..off + len], claimed);
        }
    }
    let mut pos = 0;
    for &(off, len) in runs {
        let src = &data[pos..pos + len];
        match atomic {
            None => mem[off..off + len].copy_from_slice(src),
            Some(dt) => combine(dt, ReduceOp::Sum, &mut mem[off..off + len], src),
        }
        pos += len;
    }
}

/// Bytes of a memory page (the smallest the OS maps; a larger page is only claimed more
/// often than it needs).
const PAGE_BYTES: usize = 4096;

/// Touches every page under `run` for writing, once (pages up to `claimed`, the address of
/// the last page this write claimed, are skipped); returns the last page's address. An
/// atomic add reads its bytes before it writes them, and a read of a page never touched maps
/// the OS's shared zero page, which the write then has to replace: two page faults and a TLB
/// flush per page where an atomic compare-exchange, a write to the CPU, costs one. Changes no
/// byte (it writes back what it finds).
fn claim_pages(run: &mut [u8], claimed: Option<usize>) -> Option<usize> {
    use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
    let base = run.as_mut_ptr();
    let mut last = claimed;
    let mut i = 0;
    while i < run.len() {
        let page = (base as usize + i) / PAGE_BYTES;
        if last.is_none_or(|l| page > l) {
            // SAFETY: byte `i` lies inside `run`, which this function borrows exclusively, and
            // a byte is always aligned for `AtomicU8`.
            let cell = unsafe { AtomicU8::from_ptr(base.add(i)) };
            let _ = cell.compare_exchange(0, 0, Relaxed, Relaxed);
            last = Some(page);
        }
        i += PAGE_BYTES - (base as usize + i) % PAGE_BYTES;
    }
    last
}

/// Cells a page of [`CellPages`] holds (a 512-byte stretch of one memory).
const PAGE: usize = 128;

/// A value per signal cell, kept sparsely by page: the map finds the page of a cell's
/// 512-byte stretch, and the cells of one signal tensor (a 1024-rank all_to_all's flags, one
/// per peer) sit side by side in it. A map with an entry per cell grows to a million entries
/// there, and nearly every notify and test missed the cache on it; the page map stays a
/// thousand times smaller. A cell not at a multiple of 4 bytes (which no INT32 tensor has)
/// is kept alone, so overlapping cells stay apart exactly as with a map per cell.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct CellPages<T> {
    /// The page of each `(memory, offset / (4 * PAGE))` that holds a cell: its values are
    /// `values[page * PAGE..][..PAGE]`.
    index: FxHashMap<(MemKey, usize), u32>,
    values: Vec<T>,
    /// Pages of forgotten windows, reused before `values` grows.
    free: Vec<u32>,
    /// Cells at offsets that are not a multiple of 4.
    odd: FxHashMap<(MemKey, usize), T>,
}

impl<T> Default for CellPages<T> {
    fn default() -> CellPages<T> {
        CellPages { index: FxHashMap::default(), values: Vec::new(), free: Vec::new(), odd: FxHashMap::default() }
    }
}

impl<T: Default> CellPages<T> {
    /// The value of the cell at `offset` of `mem`, if its page (or itself, when odd) exists:
    /// a cell never written may read as the default.
    pub(crate) fn get(&self, mem: MemKey, offset: usize) -> Option<&T> {
        match self.lookup(mem, offset) {
            Ok(place) => Some(&self.values[place]),
            Err(v) => v,
        }
    }

    /// The index in `values` of the cell at `offset` of `mem` when it is aligned and its page
    /// exists; otherwise its value, if it has one (an unaligned cell kept alone).
    fn lookup(&self, mem: MemKey, offset: usize) -> Result<usize, Option<&T>> {
        if !offset.is_multiple_of(4) {
            return Err(self.odd.get(&(mem, offset)));
        }
        let (page, slot) = CellPages::<T>::place(offset);
        self.index.get(&(mem, page)).map(|&i| i as usize * PAGE + slot).ok_or(None)
    }

    /// The value of the cell at `offset` of `mem`, made the default if new.
    pub(crate) fn entry(&mut self, mem: MemKey, offset: usize) -> &mut T {
        if !offset.is_multiple_of(4) {
            return self.odd.entry((mem, offset)).or_default();
        }
        let (page, slot) = CellPages::<T>::place(offset);
        let (values, free) = (&mut self.values, &mut self.free);
        let i = *self.index.entry((mem, page)).or_insert_with(|| match free.pop() {
            Some(i) => {
                values[i as usize * PAGE..][..PAGE].iter_mut().for_each(|v| *v = T::default());
                i
            }
            None => {
                values.resize_with(values.len() + PAGE, T::default);
                (values.len() / PAGE - 1) as u32
            }
        });
        &mut self.values[i as usize * PAGE + slot]
    }

    /// Replaces the cells of every memory `theirs` picks with `other`'s.
    pub(crate) fn adopt(&mut self, other: CellPages<T>, theirs: &dyn Fn(MemKey) -> bool)
    where
        T: Clone,
    {
        let free = &mut self.free;
        self.index.retain(|(k, _), i| {
            let keep = !theirs(*k);
            if !keep {
                free.push(*i);
            }
            keep
        });
        self.odd.retain(|(k, _), _| !theirs(*k));
        let mut pages: Vec<(&(MemKey, usize), &u32)> = other.index.iter().filter(|((k, _), _)| theirs(*k)).collect();
        pages.sort_unstable();
        for (&(k, page), &i) in pages {
            // Makes the page here (or finds it), then copies the partition's values into it.
            let _ = self.entry(k, page * 4 * PAGE);
            let base = self.index[&(k, page)] as usize * PAGE;
            self.values[base..base + PAGE].clone_from_slice(&other.values[i as usize * PAGE..][..PAGE]);
        }
        for ((k, off), v) in other.odd {
            if theirs(k) {
                self.odd.insert((k, off), v);
            }
        }
    }

    /// Drops every cell of the windows of `domain`.
    pub(crate) fn forget_domain(&mut self, domain: usize) {
        let of_domain = |k: &MemKey| matches!(k, MemKey::Win { domain: d, .. } if *d as usize == domain);
        let free = &mut self.free;
        self.index.retain(|(k, _), i| {
            let keep = !of_domain(k);
            if !keep {
                free.push(*i);
            }
            keep
        });
        self.odd.retain(|(k, _), _| !of_domain(k));
    }

    /// The page number and the slot in it of the cell at `offset` (a multiple of 4).
    fn place(offset: usize) -> (usize, usize) {
        let cell = offset / 4;
        (cell / PAGE, cell % PAGE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::addr::Coords;
    use std::sync::Arc;

    #[test]
    fn a_grown_window_keeps_its_bytes_and_gains_zeros() {
        let mut m = Memory::new(true);
        let domain = m.add_domain(2);
        m.grow_window(domain, 3 * 4096 + 100);
        // Bytes in the first and last blocks (the last one partial); the middle blocks zero.
        let k = MemKey::win(domain, 1, 1);
        m.host_write(k, 5, &[1, 2, 3]);
        m.host_write(k, 3 * 4096 + 90, &[9; 10]);
        m.grow_window(domain, 5 * 4096);
        let mut out = Vec::new();
        m.host_read(k, 0, 5 * 4096, &mut out);
        let mut want = vec![0u8; 5 * 4096];
        want[5..8].copy_from_slice(&[1, 2, 3]);
        want[3 * 4096 + 90..3 * 4096 + 100].copy_from_slice(&[9; 10]);
        assert_eq!(out, want);
        let mut other = Vec::new();
        m.host_read(MemKey::win(domain, 0, 0), 0, 5 * 4096, &mut other);
        assert!(other.iter().all(|&b| b == 0));
    }

    #[test]
    fn claiming_pages_changes_no_byte_and_names_the_last_page_claimed() {
        let mut v: Vec<u8> = (0..4 * PAGE_BYTES).map(|i| (i % 251) as u8).collect();
        let want = v.clone();
        let base = v.as_ptr() as usize;
        let page = |i: usize| (base + i) / PAGE_BYTES;
        let (first, last) = (page(10), page(2 * PAGE_BYTES + 5));
        assert_eq!(claim_pages(&mut v[10..2 * PAGE_BYTES + 6], None), Some(last));
        // Runs on pages already claimed keep the answer; a later run moves it on.
        assert_eq!(claim_pages(&mut v[20..30], Some(last)), Some(last));
        assert_eq!(claim_pages(&mut v[3 * PAGE_BYTES..3 * PAGE_BYTES + 1], Some(last)), Some(page(3 * PAGE_BYTES)));
        assert_eq!(claim_pages(&mut [], Some(first)), Some(first));
        assert_eq!(claim_pages(&mut [], None), None);
        assert_eq!(v, want);
    }

    /// Runs written in order, or added as f16 (the claim before the add changes nothing).
    #[test]
    fn runs_are_written_or_added_in_order() {
        let h = |x: f32| half::f16::from_f32(x).to_le_bytes();
        let mut mem: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0].iter().flat_map(|&x| h(x)).collect();
        let data: Vec<u8> = [0.5f32, 0.25].iter().flat_map(|&x| h(x)).collect();
        write_runs(&mut mem, &[(6, 2), (0, 2)], &data, Some(DType::F16));
        let got: Vec<f32> = mem.chunks(2).map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32()).collect();
        assert_eq!(got, [1.25, 2.0, 3.0, 4.5]);
        write_runs(&mut mem, &[(2, 4)], &[9, 8, 7, 6], None);
        assert_eq!(&mem[2..6], &[9, 8, 7, 6]);
    }

    /// An atomic add into memory nothing touched yet faults each page in once: its first
    /// access is a write. Read first (as the add itself does), a page would be mapped to the
    /// OS's shared zero page and then replaced: two faults.
    #[cfg(target_os = "linux")]
    #[test]
    fn an_atomic_add_into_fresh_memory_faults_each_page_once() {
        fn faults() -> i64 {
            // SAFETY: getrusage only writes the struct it is given.
            unsafe {
                let mut u: libc::rusage = std::mem::zeroed();
                libc::getrusage(libc::RUSAGE_THREAD, &mut u);
                u.ru_minflt
            }
        }
        // Above glibc's largest mmap threshold (32 MiB): fresh pages from the OS, untouched.
        let mut mem = zeroed(64 << 20);
        // 2048 rows of 512 bytes at a 3 KiB stride (a gemm_ar subtile's shape): 1536 pages.
        let runs: Vec<(usize, usize)> = (0..2048).map(|r| (r * 3072, 512)).collect();
        let data = vec![0x3c; 2048 * 512];
        let pages = (2048 * 3072 / PAGE_BYTES) as i64;
        let before = faults();
        write_runs(&mut mem, &runs, &data, Some(DType::F16));
        let taken = faults() - before;
        assert!(taken <= pages + pages / 8, "{taken} page faults for {pages} pages");
        assert_eq!(&mem[3072..3076], &[0x3c, 0x3c, 0x3c, 0x3c]);
    }

    #[test]
    fn update_cell_reads_and_writes_a_cell_in_both_modes() {
        for payload in [false, true] {
            let mut m = Memory::new(payload);
            let domain = m.add_domain(2);
            m.grow_window(domain, 16);
            let c = CellRef {
                mem: MemKey::win(domain, 1, 1),
                offset: 8,
                buffer: Arc::from("sig"),
                coords: Coords::default(),
            };
            assert_eq!(m.update_cell(&c, |v| v + 3), (0, 3));
            assert_eq!(m.update_cell(&c, |v| v * 2), (3, 6));
            assert_eq!((m.cell(&c), m.cell_at(c.mem, 4)), (6, 0));
        }
    }

    /// Timing-only cells: neighbours on one page, far offsets, overlapping unaligned cells
    /// and other windows stay apart; a freed domain's cells read 0 again, and their pages are
    /// reused without carrying old values.
    #[test]
    fn timing_only_cells_are_kept_apart_and_forgotten_with_their_domain() {
        let mut m = Memory::new(false);
        let (a, b) = (m.add_domain(2), m.add_domain(1));
        let cell = |mem, offset| CellRef { mem, offset, buffer: Arc::from("sig"), coords: Coords::default() };
        let (wa, wa1, wb) = (MemKey::win(a, 0, 0), MemKey::win(a, 1, 1), MemKey::win(b, 0, 0));
        let offsets = [0, 4, 508, 512, 1 << 20, 2, 6];
        for (i, &off) in offsets.iter().enumerate() {
            m.set_cell(&cell(wa, off), i as i32 + 1);
            m.update_cell(&cell(wb, off), |v| v - (i as i32 + 1));
        }
        for (i, &off) in offsets.iter().enumerate() {
            assert_eq!(
                (m.cell_at(wa, off), m.cell_at(wb, off), m.cell_at(wa1, off)),
                (i as i32 + 1, -(i as i32 + 1), 0)
            );
        }
        assert_eq!(m.cell_at(wa, 8), 0);
        m.free_window(a);
        assert!(offsets.iter().all(|&off| m.cell_at(wa, off) == 0));
        m.set_cell(&cell(wa1, 12), 9);
        assert_eq!((m.cell_at(wa1, 12), m.cell_at(wa1, 8), m.cell_at(wb, 4)), (9, 0, -2));
    }
}
