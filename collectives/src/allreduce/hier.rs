//! The server-level hierarchical allreduce (HCCL's two-level allreduce, server first): the
//! ranks of a domain form servers of `g` consecutive ranks (`g` is the machine's ranks per
//! server, [`World::server_ranks`](sim_core::World::server_ranks), capped at the domain's
//! size); rank `me` is local index `l = me % g` of server `s = me / g`, and each server cuts
//! the data into `g` slices.
//!
//! 1. **Reduce-scatter inside the server**: rank `(s, l)` pulls slice `l` from every other rank
//!    of its server and reduces it into its own copy (UB tiles of up to a third of UB, as many
//!    mates' tiles in flight as UB holds, the mates visited from `l + 1` on so no rank is read
//!    by all of them at once).
//! 2. **Allreduce between servers**: the `n / g` ranks holding slice `l` (one per server,
//!    `(0, l), (1, l), ...`) run recursive halving-doubling on it, exactly as [`Mode::Rhd`]
//!    runs on a whole domain (folding in the servers beyond the largest power of two).
//! 3. **Allgather inside the server**: rank `(s, l)` pulls every other slice from its owner,
//!    as many tiles in flight as UB holds.
//!
//! Each rank moves `2 (g-1)/g` of the data inside its server and `2 (S-1)/S` of a `1/g`
//! slice between servers (`S = n / g` servers): the links between servers carry `1/g` of
//! what a flat algorithm puts on them, and only `2 log2 S` steps cross them.
//!
//! Signals: `[g + 2 + 3 log2(S), stride]`, one column per block. Rows `0..g` are the server's
//! credit cells, row `j` notified by the server's rank `j`: ready (`>= 1`, before the
//! reduce-scatter reads), slice final (`>= 2`, before the allgather reads it), reads done
//! (`>= 3`, so a next call cannot overwrite a slice a mate is still reading); epilogue `-3`.
//! The rows from `g` on are the RHD rows of phase 2 ([`rhd`](super::rhd)'s layout).
//!
//! With several blocks (HOST path), block `b` runs the whole algorithm on its own contiguous
//! slice of the data, on its own signal column. With one server (`g = n`) it is a direct
//! reduce-scatter + allgather; with `g = 1` it is RHD on every rank.

use super::Args;
use super::rhd::{self, Group, Lane};
use crate::algorithm::{Algorithm, kernel};
use crate::lanes::ranks;
use sim_core::{NotifyOp, Ops, ReduceOp, SimResult, Tensor, WaitCmp};
use std::collections::VecDeque;

const WHAT: &str = "allreduce hier";

/// The server size a call on `n` ranks uses when the machine's servers hold `server_ranks`:
/// the whole domain if it fits in one server; an error (saying what to change) when `n` is not
/// a whole number of servers.
pub(crate) fn group(n: usize, server_ranks: usize) -> Result<usize, String> {
    let g = server_ranks.clamp(1, n.max(1));
    if !n.is_multiple_of(g) {
        return Err(format!(
            "{n} ranks are not whole servers of {g} (the machine's ranks per server, [machine] server_ranks); \
             use a multiple of {g} ranks, or at most {g}"
        ));
    }
    Ok(g)
}

/// Rows of the signal on `n` ranks in servers of `g`: `g` credit rows and the RHD rows of the
/// `n / g` servers.
pub(crate) fn signal_rows(n: usize, g: usize) -> usize {
    g + rhd::signal_rows(n / g.max(1))
}

/// The signal on the table's terms (the modes table's `Signal::Own`): `[g + 2 + 3 log2(NR / g),
/// blocks]` for servers of `g = min(server_ranks, NR)` (the same `g` when the ranks are not
/// whole servers, which the host API refuses).
pub(crate) fn signal(of: &crate::spec::SignalOf) -> Vec<usize> {
    let n = of.nranks;
    let g = group(n, of.server_ranks).unwrap_or(of.server_ranks.clamp(1, n.max(1)));
    vec![signal_rows(n, g), of.blocks]
}

/// Slice `i` of `g` of `range`, its bounds on the `align` grid.
fn sub_slice((lo, hi): (usize, usize), i: usize, g: usize, align: usize) -> (usize, usize) {
    let cut = |j: usize| (lo + (j * (hi - lo) / g).div_ceil(align) * align).min(hi);
    (cut(i), cut(i + 1))
}

/// `(start, len)` tiles of `[lo, hi)` of at most `tile` elements.
fn tiles((lo, hi): (usize, usize), tile: usize) -> impl Iterator<Item = (usize, usize)> {
    (lo..hi).step_by(tile.max(1)).map(move |s| (s, tile.min(hi - s)))
}

/// The other ranks of a server of `g` starting at domain rank `first`, seen from local `l`:
/// from local `l + 1` on, wrapping, so at each step the mates read different ranks.
fn mates(first: usize, l: usize, g: usize) -> Vec<usize> {
    (1..g).map(|k| first + (l + k) % g).collect()
}

/// The server credit cells of one block: row `j` of column `col` is notified by local rank `j`.
struct Server<'a> {
    sig: &'a Tensor,
    col: usize,
    /// This rank's local index, and the domain rank of local 0.
    l: usize,
    first: usize,
    g: usize,
}

impl Server<'_> {
    fn mates(&self) -> Vec<usize> {
        mates(self.first, self.l, self.g)
    }

    /// Credits every mate's cell of this rank.
    fn notify_all(&self, ops: &mut Ops) -> SimResult<()> {
        for m in self.mates() {
            ops.notify(self.sig, m, &[self.l, self.col], 1, NotifyOp::AtomicAdd)?;
        }
        Ok(())
    }

    /// Waits until mate `m`'s cell holds `generation` credits.
    async fn wait(&self, ops: &mut Ops, m: usize, generation: i32) -> SimResult<()> {
        ops.wait(self.sig, &[m - self.first, self.col], generation, WaitCmp::Ge).await
    }

    /// Takes `total` credits back out of every mate's cell and declares them self-clearing.
    fn epilogue(&self, ops: &mut Ops, total: i32) -> SimResult<()> {
        let me = self.first + self.l;
        for m in self.mates() {
            let at = [m - self.first, self.col];
            ops.notify(self.sig, me, &at, -total, NotifyOp::AtomicAdd)?;
            ops.expect_clear(self.sig, &at, &[1, 1])?;
        }
        Ok(())
    }
}

/// One block of the hierarchical allreduce (HOST path: `[rows, stride]` signal, block `b` on
/// column `b`; InCore: one block on `[rows, 1]`).
pub(crate) async fn block(ops: &mut Ops, a: &Args) -> SimResult<()> {
    let (me, n) = ranks(ops, &a.data, WHAT)?;
    let g = group(n, a.server).map_err(|e| ops.error(WHAT, e))?;
    let stride = signal_columns(ops, &a.sig, n, g)?;
    let (b, active) = (ops.block_idx(), ops.block_num().min(stride));
    if n <= 1 || b >= active {
        return Ok(());
    }
    ops.overlap_pipes();
    let (numel, esize) = (a.data.numel(), a.data.dtype().size());
    let align = (32 / esize).max(1);
    let flat = a.data.view(a.data.dtype(), &[1, numel]).map_err(|e| ops.error(WHAT, e.to_string()))?;
    let range = rhd::block_slice(b, numel, active, align);
    let (s, l) = (me / g, me % g);
    let server = Server { sig: &a.sig, col: b, l, first: s * g, g };
    let mine = sub_slice(range, l, g, align);
    let tile = crate::aiv::tile_elems(ops.chip().ub_bytes(), esize);
    if g > 1 {
        server.notify_all(ops)?;
        let mates = server.mates();
        for &m in &mates {
            server.wait(ops, m, 1).await?;
        }
        for t in tiles(mine, tile) {
            reduce_tile(ops, a.op, &flat, &mates, t).await?;
        }
    }
    if n > g {
        let lane = Lane {
            sig: &a.sig,
            col: b,
            row0: g,
            flat: flat.clone(),
            tile: rhd::tile_elems(ops.chip().ub_bytes(), esize),
        };
        rhd::run(ops, a, &lane, Group { v: s, size: n / g, base: l, stride: g }, mine, align).await?;
    }
    if g > 1 {
        server.notify_all(ops)?;
        let mates = server.mates();
        let pulls: Vec<(usize, usize, usize)> = mates
            .iter()
            .flat_map(|&m| tiles(sub_slice(range, m - server.first, g, align), tile).map(move |(base, w)| (m, base, w)))
            .collect();
        gather(ops, &server, &flat, &pulls).await?;
        server.notify_all(ops)?;
        for &m in &mates {
            server.wait(ops, m, 3).await?;
        }
        server.epilogue(ops, 3)?;
    }
    Ok(())
}

/// Loads a block keeps in flight of `w`-element tiles of `esize` bytes: as many as fit in UB
/// beside one more tile (the sum being built, or the tile being stored), at least one. Small
/// slices (a small message over many ranks per server) thus have many mates' tiles on the way
/// at once, as the vendor library's AIV kernels pull from every peer at once on many cores; a
/// third-of-UB tile keeps two, as the AIV mesh does.
fn depth(ub_bytes: usize, w: usize, esize: usize) -> usize {
    (ub_bytes / (w * esize).max(1)).saturating_sub(1).max(1)
}

/// Reduces tile `(base, w)` of every mate's copy into the local one and stores the sum,
/// [`depth`] mates' tiles in flight at a time.
async fn reduce_tile(
    ops: &mut Ops,
    op: ReduceOp,
    flat: &Tensor,
    mates: &[usize],
    (base, w): (usize, usize),
) -> SimResult<()> {
    let at = [0, base];
    let depth = depth(ops.chip().ub_bytes(), w, flat.dtype().size());
    let own = ops.load_async(flat, &at, &[1, w])?;
    let mut inflight = VecDeque::with_capacity(depth);
    let mut next = mates.iter();
    for &m in next.by_ref().take(depth) {
        inflight.push_back(ops.remote_load_async(flat, m, &at, &[1, w])?);
    }
    let mut acc = ops.wait_load(own).await?;
    while let Some(cur) = inflight.pop_front() {
        let t = ops.wait_load(cur).await?;
        if let Some(&m) = next.next() {
            inflight.push_back(ops.remote_load_async(flat, m, &at, &[1, w])?);
        }
        acc = ops.reduce(op, &acc, &t)?;
    }
    ops.store(&acc, flat, &at)
}

/// Copies each `(mate, base, w)` tile of the mates' final slices into the local buffer, in
/// order, [`depth`] of them in flight; a mate's first tile waits for its "slice final" credit
/// (generation 2).
async fn gather(ops: &mut Ops, server: &Server<'_>, flat: &Tensor, pulls: &[(usize, usize, usize)]) -> SimResult<()> {
    let widest = pulls.iter().map(|p| p.2).max().unwrap_or(1);
    let depth = depth(ops.chip().ub_bytes(), widest, flat.dtype().size());
    let mut inflight = VecDeque::with_capacity(depth);
    let mut ready = None;
    let mut next = 0;
    loop {
        while next < pulls.len() && inflight.len() < depth {
            let (m, base, w) = pulls[next];
            if ready != Some(m) {
                server.wait(ops, m, 2).await?;
                ready = Some(m);
            }
            inflight.push_back((base, ops.remote_load_async(flat, m, &[0, base], &[1, w])?));
            next += 1;
        }
        let Some((base, cur)) = inflight.pop_front() else { break };
        let t = ops.wait_load(cur).await?;
        ops.store(&t, flat, &[0, base])?;
    }
    Ok(())
}

/// The columns (block lanes) of `sig`, once it is known to have the rows `n` ranks in servers
/// of `g` need.
fn signal_columns(ops: &mut Ops, sig: &Tensor, n: usize, g: usize) -> SimResult<usize> {
    let rows = signal_rows(n, g);
    match sig.shape() {
        &[r, cols] if r == rows && cols >= 1 => Ok(cols),
        shape => Err(ops.error(
            WHAT,
            format!(
                "signal `{}` is {shape:?}; hier on {n} ranks in servers of {g} needs [{rows}, blocks] \
                 (servers' ranks + 2 + 3 log2 servers rows)",
                sig.name()
            ),
        )),
    }
}

/// The server-level hierarchy: any reduction and element type on whole servers of the
/// machine's, the table's signal.
pub(crate) const ALGORITHM: Algorithm = Algorithm {
    check: |world, o| {
        o.op_and_dtype(&ReduceOp::ALL, &sim_core::DType::ALL)?;
        if let Err(e) = group(o.n, world.server_ranks()) {
            return crate::validate::fail(o.what, e);
        }
        o.table_signal()
    },
    host: kernel!(block),
    incore: kernel!(block),
    needs_server: true,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_uses_whole_servers_or_one() {
        assert_eq!(group(768, 16), Ok(16));
        assert_eq!(group(8, 16), Ok(8), "a domain inside one server is that server");
        assert_eq!(group(1024, 1), Ok(1));
        let e = group(24, 16).unwrap_err();
        assert!(e.contains("24 ranks are not whole servers of 16"), "{e}");
    }

    #[test]
    fn rows_are_the_server_cells_and_the_servers_rhd_rows() {
        // 768 ranks in servers of 16: 48 servers, log2 floor 5 -> 16 + 2 + 15.
        assert_eq!(signal_rows(768, 16), 33);
        // One server: its cells and RHD's two (unused) fold rows.
        assert_eq!(signal_rows(8, 8), 10);
        // Servers of one rank: RHD's rows plus one.
        assert_eq!(signal_rows(1024, 1), 1 + 32);
    }

    #[test]
    fn server_slices_cover_the_range_once_on_the_grid() {
        for (range, g, align) in [((0, 100), 3, 8), ((40, 72), 4, 8), ((0, 7), 8, 1), ((0, 0), 4, 8)] {
            let cuts: Vec<(usize, usize)> = (0..g).map(|i| sub_slice(range, i, g, align)).collect();
            assert_eq!(cuts[0].0, range.0);
            assert_eq!(cuts[g - 1].1, range.1);
            for w in cuts.windows(2) {
                assert_eq!(w[0].1, w[1].0);
            }
            for &(lo, _) in &cuts[1..] {
                assert!(lo == range.1 || (lo - range.0).is_multiple_of(align), "{range:?} {g} {lo}");
            }
        }
        assert_eq!(sub_slice((0, 100), 1, 3, 8), (40, 72));
    }

    #[test]
    fn mates_start_after_this_rank_and_wrap() {
        assert_eq!(mates(16, 2, 4), vec![19, 16, 17]);
        assert_eq!(mates(0, 0, 1), Vec::<usize>::new());
        // At step k every rank of the server reads a different mate.
        for k in 0..7 {
            let mut read: Vec<usize> = (0..8).map(|l| mates(8, l, 8)[k]).collect();
            read.sort();
            assert_eq!(read, (8..16).collect::<Vec<_>>());
        }
    }
}

#[cfg(test)]
mod depth_tests {
    use super::depth;

    #[test]
    fn loads_in_flight_fill_ub_but_one_tile() {
        // a2a3's 188416-byte UB: third-of-UB f32 tiles keep two in flight, as the AIV mesh.
        assert_eq!(depth(188_416, 15_696, 4), 2);
        // atlas950's 245760 bytes, 1 MiB over 64 ranks per server: 16 KiB slices, 14 at once.
        assert_eq!(depth(245_760, 4096, 4), 14);
        assert_eq!(depth(1000, 4096, 4), 1);
        assert!((depth(245_760, 4096, 4) + 1) * 4096 * 4 <= 245_760);
    }
}
