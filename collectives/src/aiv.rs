//! The steps the AIV kernels share, whichever collective they serve: how large a UB tile is
//! ([`tile_elems`], [`aiv_batch_bytes`]), which tiles a block takes ([`tiles`]), and the
//! double-buffered pull / store pipeline ([`pipelined`], and [`reduce_tile`] for a reduction).

use sim_core::{Ops, ReduceOp, SimResult, Tensor, Tile, TileLoad};

/// UB tiles a block keeps: the accumulator and two loads in flight.
const UB_TILES: usize = 3;

/// Elements per tile: a third of UB, in whole 32-byte blocks.
pub(crate) fn tile_elems(ub_bytes: usize, esize: usize) -> usize {
    ((ub_bytes / UB_TILES) & !31).max(32) / esize
}

/// This block's tiles of `[lo, hi)`: `(start, len)`.
pub(crate) fn tiles(
    lo: usize,
    hi: usize,
    block: usize,
    blocks: usize,
    tile: usize,
) -> impl Iterator<Item = (usize, usize)> {
    (lo + block * tile..hi).step_by(blocks * tile).map(move |s| (s, tile.min(hi - s)))
}

/// Bytes one AIV copy step stages through UB: half the UB (HCCL double-buffers its 190 KiB
/// transfers as two 95 KiB halves, docs/references/hardware.md §4.2), in whole 32-byte blocks.
pub(crate) fn aiv_batch_bytes(ub_bytes: usize) -> usize {
    ((ub_bytes / 2).min(95 * 1024) & !31).max(32)
}

/// Reduces tile `(base, w)` of row `row` of `t` on every peer into the local one and stores
/// the sum there, the next peer's tile in flight while the current one is added (the AIV
/// reduce-scatter step, shared with reduce_scatter's aiv-mesh).
pub(crate) async fn reduce_tile(
    ops: &mut Ops,
    op: ReduceOp,
    t: &Tensor,
    row: usize,
    peers: &[usize],
    (base, w): (usize, usize),
) -> SimResult<()> {
    let at = [row, base];
    let own = ops.load_async(t, &at, &[1, w])?;
    let mut next = match peers.first() {
        Some(&p) => Some(ops.remote_load_async(t, p, &at, &[1, w])?),
        None => None,
    };
    let mut acc = ops.wait_load(own).await?;
    for i in 0..peers.len() {
        let Some(cur) = next.take() else { break };
        if let Some(&p) = peers.get(i + 1) {
            next = Some(ops.remote_load_async(t, p, &at, &[1, w])?);
        }
        let tile = ops.wait_load(cur).await?;
        acc = ops.reduce(op, &acc, &tile)?;
    }
    ops.store(&acc, t, &at)
}

/// For each item: a load `pull` starts, and the previous item's tile is `store`d while it is in
/// flight (one load ahead), in order. The pull / store pipeline of the AIV kernels.
pub(crate) async fn pipelined<T>(
    ops: &mut Ops,
    items: &[T],
    pull: impl Fn(&mut Ops, &T) -> SimResult<TileLoad>,
    store: impl Fn(&mut Ops, &T, &Tile) -> SimResult<()>,
) -> SimResult<()> {
    let mut next = match items.first() {
        Some(p) => Some(pull(ops, p)?),
        None => None,
    };
    for (i, item) in items.iter().enumerate() {
        let Some(cur) = next.take() else { break };
        if let Some(p) = items.get(i + 1) {
            next = Some(pull(ops, p)?);
        }
        let t = ops.wait_load(cur).await?;
        store(ops, item, &t)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aiv_tiles_are_half_the_ub_at_most_95_kib() {
        // a2a3: 188416 bytes of UB -> 94208-byte tiles.
        assert_eq!(aiv_batch_bytes(188_416), 94_208);
        assert_eq!(aiv_batch_bytes(1 << 20), 95 * 1024);
        assert_eq!(aiv_batch_bytes(40), 32);
    }

    #[test]
    fn three_tiles_fit_in_ub() {
        // a2a3: 188416 bytes of UB -> 62784-byte tiles (15696 f32).
        assert_eq!(tile_elems(188_416, 4), 15_696);
        assert!(3 * tile_elems(188_416, 2) * 2 <= 188_416);
        assert_eq!(tile_elems(65_536, 4), 5_456);
    }
}
