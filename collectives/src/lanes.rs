//! Signal cells and the self-clearing credit barrier every `pld.tensor.*` collective uses
//! (reference §3.2): `+1` into every peer's cell of this rank, wait for every local cell of a
//! peer to reach the call's generation `g` (`>=`, since a fast peer may already have added its
//! next credit), and at the end take the call's whole tally back out of the local cells.

use sim_core::{NotifyOp, Ops, Pipe, SimResult, Tensor, WaitCmp};

/// Where rank `r`'s cell sits in a signal.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum CellMap {
    /// `[r]` of a rank-1 `[NR]` signal.
    Flat,
    /// `[r, lane]` of a `[NR, stride]` signal (a block's lane; `[NR, 1]` signals use lane 0).
    Lane(usize),
    /// `[row, r]` of a ring signal `[rows, NR]`.
    Row(usize),
}

/// The coordinates of one cell of a 1-D or 2-D signal, by value: every notify and wait of a
/// barrier names one, so they are built on the stack rather than allocated. Reads as the
/// slice of its coordinates (what `Ops::notify` and `Ops::wait` take).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct CellCoords {
    /// How many of `c` are coordinates (1 or 2).
    len: usize,
    c: [usize; 2],
}

impl std::ops::Deref for CellCoords {
    type Target = [usize];

    fn deref(&self) -> &[usize] {
        &self.c[..self.len]
    }
}

/// A signal and the cell map one barrier sequence uses.
#[derive(Clone, Debug)]
pub(crate) struct Lanes {
    pub(crate) sig: Tensor,
    pub(crate) map: CellMap,
}

impl Lanes {
    pub(crate) fn new(sig: &Tensor, map: CellMap) -> Lanes {
        Lanes { sig: sig.clone(), map }
    }

    /// Block `block` of `blocks` on a `[NR]` or `[NR, stride]` signal: its lane, and how many
    /// blocks have one (`min(blocks, stride)`); `None` for a block beyond them, which does
    /// nothing (as the builtins' extra blocks return at once).
    pub(crate) fn for_block(sig: &Tensor, block: usize, blocks: usize) -> Option<(Lanes, usize)> {
        let flat = sig.shape().len() == 1;
        let stride = if flat { 1 } else { sig.shape()[1] };
        let active = blocks.min(stride);
        (block < active).then(|| (Lanes::new(sig, if flat { CellMap::Flat } else { CellMap::Lane(block) }), active))
    }

    /// The signal of rank-1 `[NR]` or `[NR, 1]` shape, addressed per rank.
    pub(crate) fn per_rank(sig: &Tensor) -> Lanes {
        Lanes::new(sig, if sig.shape().len() == 1 { CellMap::Flat } else { CellMap::Lane(0) })
    }

    /// The same signal, another row (ring rounds).
    pub(crate) fn row(&self, row: usize) -> Lanes {
        Lanes::new(&self.sig, CellMap::Row(row))
    }

    /// Coordinates of rank `r`'s cell.
    pub(crate) fn cell(&self, r: usize) -> CellCoords {
        match self.map {
            CellMap::Flat => CellCoords { len: 1, c: [r, 0] },
            CellMap::Lane(lane) => CellCoords { len: 2, c: [r, lane] },
            CellMap::Row(row) => CellCoords { len: 2, c: [row, r] },
        }
    }

    /// One barrier of generation `g`: credit every peer, then wait for every peer's credit.
    pub(crate) async fn barrier(&self, ops: &mut Ops, me: usize, n: usize, g: i32) -> SimResult<()> {
        for peer in peers(me, n) {
            ops.notify(&self.sig, peer, &self.cell(me), 1, NotifyOp::AtomicAdd)?;
        }
        for src in peers(me, n) {
            ops.wait(&self.sig, &self.cell(src), g, WaitCmp::Ge).await?;
        }
        Ok(())
    }

    /// Takes `total` credits back out of every local peer cell (self-notify), and declares
    /// those cells self-clearing (a checked run reports them if they do not end at zero).
    pub(crate) fn epilogue(&self, ops: &mut Ops, me: usize, n: usize, total: i32) -> SimResult<()> {
        let one = vec![1; self.sig.shape().len()];
        for src in peers(me, n) {
            ops.notify(&self.sig, me, &self.cell(src), -total, NotifyOp::AtomicAdd)?;
            ops.expect_clear(&self.sig, &self.cell(src), &one)?;
        }
        Ok(())
    }
}

/// One barrier of an HCCL-class AIV kernel: every pipe drained first (HCCL's kernels run
/// `PipeBarrier<PIPE_ALL>` before a flag write), a `dcci` before its flags (the flag's cache
/// line is cleaned) and one after its waits (the cache line invalidated), as HCCL keeps its
/// AIV flags coherent by hand; otherwise [`Lanes::barrier`].
pub(crate) async fn aiv_barrier(ops: &mut Ops, lanes: &Lanes, me: usize, n: usize, g: i32) -> SimResult<()> {
    ops.pipe_barrier(Pipe::All).await?;
    ops.dcci()?;
    lanes.barrier(ops, me, n, g).await?;
    ops.dcci()
}

/// Raises cell `[me, lane]` of every rank of `dests` by one: HCCL drains every pipe first
/// (`PipeBarrier<PIPE_ALL>` before each flag write) and writes one flag its readers poll, its
/// cache line cleaned first (HCCL keeps its flags coherent by hand), so one `dcci`, then a
/// notify to each reader.
pub(crate) async fn aiv_flag(
    ops: &mut Ops,
    sig: &Tensor,
    dests: impl IntoIterator<Item = usize>,
    me: usize,
    lane: usize,
) -> SimResult<()> {
    ops.pipe_barrier(Pipe::All).await?;
    ops.dcci()?;
    for dest in dests {
        ops.notify(sig, dest, &[me, lane], 1, NotifyOp::AtomicAdd)?;
    }
    Ok(())
}

/// Waits for this rank's cell `[src, lane]` to reach `v`, then invalidates its cache line.
pub(crate) async fn aiv_wait_flag(ops: &mut Ops, sig: &Tensor, src: usize, lane: usize, v: i32) -> SimResult<()> {
    ops.wait(sig, &[src, lane], v, WaitCmp::Ge).await?;
    ops.dcci()
}

/// Takes `v` back out of this rank's cell `[src, lane]` and declares it self-clearing.
pub(crate) fn take_back(ops: &mut Ops, sig: &Tensor, me: usize, src: usize, lane: usize, v: i32) -> SimResult<()> {
    if v > 0 {
        ops.notify(sig, me, &[src, lane], -v, NotifyOp::AtomicAdd)?;
    }
    ops.expect_clear(sig, &[src, lane], &[1, 1])
}

/// Every rank but `me`, ascending.
pub(crate) fn peers(me: usize, n: usize) -> impl Iterator<Item = usize> {
    (0..n).filter(move |&p| p != me)
}

/// This core's dense rank in the domain of window `t`, and the domain's size.
pub(crate) fn ranks(ops: &mut Ops, t: &Tensor, what: &'static str) -> SimResult<(usize, usize)> {
    match (t.domain(), ops.rank_in(t)) {
        (Some(d), Some(me)) => Ok((me, d.size())),
        _ => Err(ops.error(what, format!("`{}` must be a window buffer of a domain this rank belongs to", t.name()))),
    }
}

/// The peers of `me` in the order block `block` visits them: every other rank once, starting
/// `block` places after the next rank, so a rank's blocks spread over all its links.
pub(crate) fn peer_order(me: usize, n: usize, block: usize) -> Vec<usize> {
    let others = n.saturating_sub(1).max(1);
    (0..n.saturating_sub(1)).map(|k| (me + 1 + (block + k) % others) % n).collect()
}

/// `t` viewed as `[1, n]` over its whole allocation, so 32-byte-rounded tail reads fit.
pub(crate) fn padded(ops: &mut Ops, t: &Tensor, what: &'static str) -> SimResult<Tensor> {
    let n = t.capacity_bytes() / t.dtype().size();
    t.view(t.dtype(), &[1, n]).map_err(|e| ops.error(what, e.to_string()))
}

/// `t` viewed as `[rows, numel / rows]`.
pub(crate) fn rows_view(ops: &mut Ops, t: &Tensor, rows: usize, what: &'static str) -> SimResult<Tensor> {
    t.view(t.dtype(), &[rows, t.numel() / rows]).map_err(|e| ops.error(what, e.to_string()))
}

/// A tile whose valid part is its first `cols` columns.
pub(crate) fn first_cols(
    ops: &mut Ops,
    t: &sim_core::Tile,
    cols: usize,
    what: &'static str,
) -> SimResult<sim_core::Tile> {
    t.narrow(1, cols).map_err(|e| ops.error(what, e.to_string()))
}

/// Elements per tile of the HOST builtins (`kTileCount`).
pub(crate) const TILE: usize = 256;

/// Bytes per chunk of the InCore composites (`kAllReduceChunkBytes`).
pub(crate) const INCORE_CHUNK_BYTES: usize = 16 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    /// A cell's coordinates read back as the slice of the one or two given, and stay usable
    /// after being copied.
    #[test]
    fn cell_coordinates_read_as_a_slice_of_one_or_two() {
        let flat = CellCoords { len: 1, c: [3, 0] };
        let lane = CellCoords { len: 2, c: [3, 5] };
        let copy = lane;
        assert_eq!((&*flat, &*lane, &*copy), (&[3][..], &[3, 5][..], &[3, 5][..]));
        assert_ne!(flat, lane);
    }
}
