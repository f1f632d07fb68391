//! Recursive halving-doubling allreduce (Rabenseifner's algorithm; HCCL's RHD, which the
//! vendor library runs between servers and at scale): a reduce-scatter by recursive halving,
//! then an allgather by recursive doubling. With `p = 2^k` ranks, step `s` of the halving pairs
//! each rank with the one `p / 2^(s+1)` away, keeps half of its current range and pulls the
//! partner's copy of that half to reduce it; after `k` steps rank `v` owns range `v` fully
//! reduced, and the doubling runs the steps backwards, pulling the partner's range each time.
//! Every rank moves `2 (p-1)/p` of the data in `2 log2 p` steps and signals only its partners,
//! so a call costs `O(p log p)` notifies in all, against `O(p^2)` or more for the mesh and
//! ring builtins: the algorithm that runs on a thousand ranks.
//!
//! With `n` not a power of two, the `e = n - p` extra ranks (`p..n`) fold in first: each hands
//! its whole buffer to its buddy `r - p`, which reduces it before the halving, and pulls the
//! result back after the doubling.
//!
//! Signals: `[2 + 3k, stride]`, one column per block, and every cell is notified by exactly one
//! peer once per call: row 0 (fold: an extra's "my data is ready" to its buddy, the buddy's
//! "the result is final" to its extra), row 1 (the extra's "done reading" to its buddy), then
//! per step `s` a halving-ready row, a doubling-ready row and a doubling-read-done row. A rank
//! waits for every read-done before it returns, so a next call cannot overwrite data a peer is
//! still reading. The epilogue takes `1` back out of every cell the rank was notified on.
//!
//! With several blocks (HOST path), block `b` runs the whole algorithm on its own contiguous
//! slice of the data, on its own signal column. Tiles are as large as a sixth of UB (two loads
//! of each side in flight), with overlapping pipes, as the vendor library's AIV kernels run.
//!
//! A simplification: the data moves as AIV-core remote loads through UB, where the vendor
//! library moves RHD's inter-server steps with RDMA writes. Over RoCE the NIC, not the core,
//! sets a large step's time either way; a small step's time includes the core's issue costs.

use super::{Args, slice};
use crate::algorithm::{Algorithm, kernel};
use crate::lanes::ranks;
use sim_core::{NotifyOp, Ops, SimResult, Tensor, TileLoad, WaitCmp};

const WHAT: &str = "allreduce rhd";

/// Signal row of the fold's ready / final notifies.
const FOLD: usize = 0;
/// Signal row of an extra rank's "done reading" notify to its buddy.
const FOLD_DONE: usize = 1;

/// Halving (and doubling) steps on `n` ranks: `log2` of the largest power of two `<= n`.
pub(crate) fn steps(n: usize) -> usize {
    if n <= 1 { 0 } else { n.ilog2() as usize }
}

/// Rows of the signal on `n` ranks: the two fold rows and three per step.
pub(crate) fn signal_rows(n: usize) -> usize {
    2 + 3 * steps(n)
}

/// The signal on the table's terms (the modes table's `Signal::Own`): `[2 + 3 log2(NR), blocks]`.
pub(crate) fn signal(of: &crate::spec::SignalOf) -> Vec<usize> {
    vec![signal_rows(of.nranks), of.blocks]
}

fn ready_row(s: usize) -> usize {
    2 + s
}

fn gather_row(k: usize, s: usize) -> usize {
    2 + k + s
}

fn done_row(k: usize, s: usize) -> usize {
    2 + 2 * k + s
}

/// `x` rounded up to a multiple of `align`.
fn round_up(x: usize, align: usize) -> usize {
    x.div_ceil(align) * align
}

/// Block `b`'s slice of `numel` elements over `blocks`, its bounds on `align`-element grid.
pub(crate) fn block_slice(b: usize, numel: usize, blocks: usize, align: usize) -> (usize, usize) {
    let (lo, hi) = slice(b, numel, blocks);
    (round_up(lo, align).min(numel), round_up(hi, align).min(numel))
}

/// The two halves of `[lo, hi)`, cut on the `align` grid.
fn halves((lo, hi): (usize, usize), align: usize) -> ((usize, usize), (usize, usize)) {
    let mid = (lo + round_up((hi - lo) / 2, align)).min(hi);
    ((lo, mid), (mid, hi))
}

/// The halving of `p` ranks as rank `v` walks it: per step, its partner, the half it keeps
/// and the half it hands over.
type Step = (usize, (usize, usize), (usize, usize));

fn halving(v: usize, p: usize, range: (usize, usize), align: usize) -> Vec<Step> {
    let mut out = Vec::new();
    let mut range = range;
    for s in 0..steps(p) {
        let dist = p >> (s + 1);
        let (low, high) = halves(range, align);
        let (keep, give) = if v & dist == 0 { (low, high) } else { (high, low) };
        out.push((v ^ dist, keep, give));
        range = keep;
    }
    out
}

/// The ranks one RHD runs among: member `v` of `size` is the domain's rank `base + v * stride`
/// (the whole domain: base 0, stride 1; the hierarchical allreduce's servers: the ranks with
/// one local index, `stride` = ranks per server).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Group {
    /// This rank's member index.
    pub(crate) v: usize,
    /// Members.
    pub(crate) size: usize,
    /// The domain rank of member 0.
    pub(crate) base: usize,
    /// Domain ranks between consecutive members.
    pub(crate) stride: usize,
}

impl Group {
    /// The domain rank of member `v`.
    fn rank(&self, v: usize) -> usize {
        self.base + v * self.stride
    }
}

/// What one block works with: its signal column, the signal row its rows start at, and its
/// tiles.
pub(crate) struct Lane<'a> {
    pub(crate) sig: &'a Tensor,
    pub(crate) col: usize,
    pub(crate) row0: usize,
    pub(crate) flat: Tensor,
    pub(crate) tile: usize,
}

impl Lane<'_> {
    fn notify(&self, ops: &mut Ops, peer: usize, row: usize) -> SimResult<()> {
        ops.notify(self.sig, peer, &[self.row0 + row, self.col], 1, NotifyOp::AtomicAdd)
    }

    async fn wait(&self, ops: &mut Ops, row: usize) -> SimResult<()> {
        ops.wait(self.sig, &[self.row0 + row, self.col], 1, WaitCmp::Ge).await
    }

    /// Takes the call's credit back out of each of `rows` and declares them self-clearing.
    fn epilogue(&self, ops: &mut Ops, me: usize, rows: impl Iterator<Item = usize>) -> SimResult<()> {
        for row in rows {
            let at = [self.row0 + row, self.col];
            ops.notify(self.sig, me, &at, -1, NotifyOp::AtomicAdd)?;
            ops.expect_clear(self.sig, &at, &[1, 1])?;
        }
        Ok(())
    }

    /// `(start, len)` tiles of `[lo, hi)`.
    fn tiles(&self, (lo, hi): (usize, usize)) -> Vec<(usize, usize)> {
        (lo..hi).step_by(self.tile).map(|s| (s, self.tile.min(hi - s))).collect()
    }

    /// Reduces `peer`'s copy of `range` into the local one, the next tile's loads in flight
    /// while the current one is reduced and stored.
    async fn reduce_from(&self, ops: &mut Ops, a: &Args, peer: usize, range: (usize, usize)) -> SimResult<()> {
        let tiles = self.tiles(range);
        let issue = |ops: &mut Ops, &(base, w): &(usize, usize)| -> SimResult<(TileLoad, TileLoad)> {
            let own = ops.load_async(&self.flat, &[0, base], &[1, w])?;
            Ok((own, ops.remote_load_async(&self.flat, peer, &[0, base], &[1, w])?))
        };
        let mut next = tiles.first().map(|t| issue(ops, t)).transpose()?;
        for (i, &(base, _)) in tiles.iter().enumerate() {
            let Some((own, recv)) = next.take() else { break };
            next = tiles.get(i + 1).map(|t| issue(ops, t)).transpose()?;
            let own = ops.wait_load(own).await?;
            let recv = ops.wait_load(recv).await?;
            let acc = ops.reduce(a.op, &own, &recv)?;
            ops.store(&acc, &self.flat, &[0, base])?;
        }
        Ok(())
    }

    /// Copies `peer`'s `range` into the local one, the next tile in flight while the current
    /// one is stored.
    async fn copy_from(&self, ops: &mut Ops, peer: usize, range: (usize, usize)) -> SimResult<()> {
        let tiles = self.tiles(range);
        let issue = |ops: &mut Ops, &(base, w): &(usize, usize)| -> SimResult<TileLoad> {
            ops.remote_load_async(&self.flat, peer, &[0, base], &[1, w])
        };
        let mut next = tiles.first().map(|t| issue(ops, t)).transpose()?;
        for (i, &(base, _)) in tiles.iter().enumerate() {
            let Some(cur) = next.take() else { break };
            next = tiles.get(i + 1).map(|t| issue(ops, t)).transpose()?;
            let t = ops.wait_load(cur).await?;
            ops.store(&t, &self.flat, &[0, base])?;
        }
        Ok(())
    }
}

/// Elements per tile: a sixth of UB (own and peer tile, each double-buffered, and the sum),
/// in whole 32-byte blocks.
pub(crate) fn tile_elems(ub_bytes: usize, esize: usize) -> usize {
    ((ub_bytes / 6) & !31).max(32) / esize
}

/// One block of the RHD allreduce (HOST path: `[rows, stride]` signal, block `b` on column
/// `b`; InCore: one block on `[rows, 1]`).
pub(crate) async fn block(ops: &mut Ops, a: &Args) -> SimResult<()> {
    let (me, n) = ranks(ops, &a.data, WHAT)?;
    let stride = signal_columns(ops, &a.sig, n)?;
    let (b, active) = (ops.block_idx(), ops.block_num().min(stride));
    if n <= 1 || b >= active {
        return Ok(());
    }
    ops.overlap_pipes();
    let (numel, esize) = (a.data.numel(), a.data.dtype().size());
    let align = (32 / esize).max(1);
    let flat = a.data.view(a.data.dtype(), &[1, numel]).map_err(|e| ops.error(WHAT, e.to_string()))?;
    let lane = Lane { sig: &a.sig, col: b, row0: 0, flat, tile: tile_elems(ops.chip().ub_bytes(), esize) };
    let range = block_slice(b, numel, active, align);
    run(ops, a, &lane, Group { v: me, size: n, base: 0, stride: 1 }, range, align).await
}

/// The RHD allreduce of `range` among the members of `group`, on `lane`'s rows (from
/// `lane.row0`, [`signal_rows`]`(group.size)` of them): the members beyond the largest power
/// of two fold in, the core halves and doubles.
pub(crate) async fn run(
    ops: &mut Ops,
    a: &Args,
    lane: &Lane<'_>,
    group: Group,
    range: (usize, usize),
    align: usize,
) -> SimResult<()> {
    let p = 1 << steps(group.size);
    if group.v >= p {
        return extra(ops, lane, group, group.v - p, range).await;
    }
    participant(ops, a, lane, group, p, range, align).await
}

/// The columns (block lanes) of `sig`, once it is known to have the rows `n` ranks need: the
/// host API checks the shape, a kernel calling the composite gets the same message here.
fn signal_columns(ops: &mut Ops, sig: &Tensor, n: usize) -> SimResult<usize> {
    let rows = signal_rows(n);
    match sig.shape() {
        &[r, cols] if r == rows && cols >= 1 => Ok(cols),
        shape => Err(ops.error(
            WHAT,
            format!(
                "signal `{}` is {shape:?}; rhd on {n} ranks needs [{rows}, blocks] (2 + 3 log2 ranks rows)",
                sig.name()
            ),
        )),
    }
}

/// A rank of the power-of-two core: fold its extra in (if it has one), halve, double, hand
/// the result to its extra, and wait until every peer has finished reading from it.
async fn participant(
    ops: &mut Ops,
    a: &Args,
    lane: &Lane<'_>,
    group: Group,
    p: usize,
    range: (usize, usize),
    align: usize,
) -> SimResult<()> {
    let (v, k) = (group.v, steps(p));
    let me = group.rank(v);
    let extra = (v + p < group.size).then(|| group.rank(v + p));
    if let Some(x) = extra {
        lane.wait(ops, FOLD).await?;
        lane.reduce_from(ops, a, x, range).await?;
    }
    let plan = halving(v, p, range, align);
    for (s, &(partner, keep, _)) in plan.iter().enumerate() {
        let partner = group.rank(partner);
        lane.notify(ops, partner, ready_row(s))?;
        lane.wait(ops, ready_row(s)).await?;
        lane.reduce_from(ops, a, partner, keep).await?;
    }
    for (s, &(partner, _, give)) in plan.iter().enumerate().rev() {
        let partner = group.rank(partner);
        lane.notify(ops, partner, gather_row(k, s))?;
        lane.wait(ops, gather_row(k, s)).await?;
        lane.copy_from(ops, partner, give).await?;
        lane.notify(ops, partner, done_row(k, s))?;
    }
    if let Some(x) = extra {
        lane.notify(ops, x, FOLD)?;
    }
    for s in 0..k {
        lane.wait(ops, done_row(k, s)).await?;
    }
    if extra.is_some() {
        lane.wait(ops, FOLD_DONE).await?;
    }
    let fold = extra.map(|_| [FOLD, FOLD_DONE]).into_iter().flatten();
    let own = (0..k).flat_map(|s| [ready_row(s), gather_row(k, s), done_row(k, s)]);
    lane.epilogue(ops, me, fold.chain(own))
}

/// A member beyond the power-of-two core: hand its data to its buddy (member `buddy`), then
/// pull the result back.
async fn extra(ops: &mut Ops, lane: &Lane<'_>, group: Group, buddy: usize, range: (usize, usize)) -> SimResult<()> {
    let buddy = group.rank(buddy);
    lane.notify(ops, buddy, FOLD)?;
    lane.wait(ops, FOLD).await?;
    lane.copy_from(ops, buddy, range).await?;
    lane.notify(ops, buddy, FOLD_DONE)?;
    lane.epilogue(ops, group.rank(group.v), [FOLD].into_iter())
}

/// Recursive halving-doubling: any reduction and element type, the table's signal.
pub(crate) const ALGORITHM: Algorithm = Algorithm::both(
    |_, o| {
        o.op_and_dtype(&sim_core::ReduceOp::ALL, &sim_core::DType::ALL)?;
        o.table_signal()
    },
    kernel!(block),
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_and_rows_follow_the_largest_power_of_two() {
        let got: Vec<(usize, usize)> =
            [1, 2, 3, 4, 7, 8, 9, 1024].iter().map(|&n| (steps(n), signal_rows(n))).collect();
        assert_eq!(got, vec![(0, 2), (1, 5), (1, 5), (2, 8), (2, 8), (3, 11), (3, 11), (10, 32)]);
    }

    #[test]
    fn after_halving_rank_v_owns_range_v_and_partners_agree() {
        let p = 8;
        for v in 0..p {
            let plan = halving(v, p, (0, 64), 1);
            assert_eq!(plan.last().map(|s| s.1), Some((8 * v, 8 * v + 8)));
            for (s, &(partner, keep, give)) in plan.iter().enumerate() {
                // The partner keeps what this rank gives, and gives what it keeps.
                let theirs = halving(partner, p, (0, 64), 1)[s];
                assert_eq!((theirs.0, theirs.1, theirs.2), (v, give, keep));
            }
        }
    }

    #[test]
    fn halves_cut_on_the_alignment_grid_and_cover_the_range() {
        assert_eq!(halves((0, 100), 8), ((0, 56), (56, 100)));
        assert_eq!(halves((16, 20), 8), ((16, 20), (20, 20)));
        assert_eq!(halves((0, 0), 8), ((0, 0), (0, 0)));
        assert_eq!(block_slice(1, 100, 3, 8), (40, 72));
        assert_eq!(block_slice(2, 100, 3, 8), (72, 100));
    }

    #[test]
    fn a_tile_is_a_sixth_of_ub_in_32_byte_blocks() {
        // a2a3: 188416 bytes of UB -> 31392-byte tiles.
        assert_eq!(tile_elems(188_416, 4), 7_848);
        assert!(6 * tile_elems(188_416, 2) * 2 <= 188_416);
    }
}
