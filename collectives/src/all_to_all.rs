//! all_to_all and all_to_all_v: rank `me` pushes row block `dest` of its input into row block
//! `me` of `dest`'s target, itself included (reference §3.10, §3.11, §3.12); and the
//! HCCL-class forms of all_to_all (copy-engine mesh, AIV mesh, grouped full mesh).

use crate::algorithm::{Algorithm, CallArgs, aiv_check, copy_engine_check, kernel};
use crate::lanes::{Lanes, TILE, aiv_barrier, peer_order, ranks, rows_view};
use crate::staging;
use sim_core::{CopyOpts, NotifyOp, Ops, SdmaOpts, SimResult, Tensor};

const WHAT: &str = "all_to_all";

/// The operands of one all_to_all call.
#[derive(Clone, Debug)]
pub(crate) struct Args {
    pub(crate) input: Tensor,
    pub(crate) target: Tensor,
    pub(crate) sig: Tensor,
}

impl Args {
    /// This collective's operands out of a host call's.
    pub(crate) fn of(c: &CallArgs) -> Args {
        Args { input: c.src.clone(), target: c.dst.clone(), sig: c.sig.clone() }
    }
}

/// The operands of one all_to_all_v call.
#[derive(Clone, Debug)]
pub(crate) struct ArgsV {
    pub(crate) input: Tensor,
    pub(crate) target: Tensor,
    pub(crate) send_counts: Tensor,
    pub(crate) recv_counts: Tensor,
    pub(crate) sig: Tensor,
}

impl ArgsV {
    /// This collective's operands out of a host call's.
    pub(crate) fn of(c: &CallArgs) -> ArgsV {
        let (send_counts, recv_counts) = c.counts.clone().expect("the host API hands all_to_all_v its counts");
        ArgsV { input: c.src.clone(), target: c.dst.clone(), send_counts, recv_counts, sig: c.sig.clone() }
    }
}

/// Pushes `[rows, R]` blocks to every destination, then one credit barrier and its epilogue.
async fn exchange(ops: &mut Ops, input: &Tensor, target: &Tensor, sig: &Tensor, cols: Option<usize>) -> SimResult<()> {
    let (me, n) = ranks(ops, target, WHAT)?;
    let tv = rows_view(ops, target, n, WHAT)?;
    let iv = rows_view(ops, input, n, WHAT)?;
    let r = tv.shape()[1];
    for dest in 0..n {
        let opts = CopyOpts::new().region(&[me, 0], &[dest, 0], &[1, r]).chunks(1, cols.unwrap_or(0));
        ops.put(&tv, dest, &iv, &opts).await?;
    }
    let lanes = Lanes::per_rank(sig);
    lanes.barrier(ops, me, n, 1).await?;
    lanes.epilogue(ops, me, n, 1)
}

/// The HOST builtin: 256-element tiles.
pub(crate) async fn host(ops: &mut Ops, a: &Args) -> SimResult<()> {
    let r = a.target.numel() / a.target.shape()[0];
    exchange(ops, &a.input, &a.target, &a.sig, Some(r.min(TILE))).await
}

/// The InCore composite: one put per destination.
pub(crate) async fn incore(ops: &mut Ops, a: &Args) -> SimResult<()> {
    exchange(ops, &a.input, &a.target, &a.sig, None).await
}

/// HCCL-class: the vendor library's copy-engine all_to_all on a full mesh, staged through its
/// communication buffer ([`staging`](crate::staging)): per buffer-full of this rank's send
/// data (all of it up to `HCCL_BUFFSIZE`, HCCL's single-pass `AlltoAllVStagedMesh`), each
/// block copies its columns of every row into the buffer, a credit barrier (HCCL's handshake
/// with every peer) says every buffer is ready, the block puts its part of row `dest` into row
/// `me` of `dest`'s target with an SDMA engine on its own channel (this rank first, then the
/// peers in a block-dependent order so every link carries traffic at once), waits for its
/// transfers, and a second barrier says they have landed before the buffer is reused.
pub(crate) async fn sdma_mesh(ops: &mut Ops, a: &Args) -> SimResult<()> {
    let (me, n) = ranks(ops, &a.target, WHAT)?;
    let b = ops.block_idx();
    let Some((lanes, active)) = Lanes::for_block(&a.sig, b, ops.block_num()) else {
        return Ok(());
    };
    let tv = rows_view(ops, &a.target, n, WHAT)?;
    let iv = rows_view(ops, &a.input, n, WHAT)?;
    let r = tv.shape()[1];
    let col_bytes = n * a.target.dtype().size();
    let mut g = 0;
    for chunk in staging::chunks(r, col_bytes, ops.chip().hccl_buffer_bytes()) {
        let (lo, hi) = staging::share(chunk, b, active);
        staging::copy_now(ops, &iv, me, (0, n), (lo, hi)).await?;
        g += 1;
        lanes.barrier(ops, me, n, g).await?;
        if lo < hi {
            let mut posted = Vec::with_capacity(n);
            for dest in std::iter::once(me).chain(peer_order(me, n, b)) {
                let opts = SdmaOpts::new().region(&[me, lo], &[dest, lo], &[1, hi - lo]);
                posted.push(ops.put_async(&tv, dest, &iv, &opts)?);
            }
            crate::sdma::wait_all(ops, posted).await?;
        }
        g += 1;
        lanes.barrier(ops, me, n, g).await?;
    }
    lanes.epilogue(ops, me, n, g)
}

/// Peers a rank's copy engines write to at once in [`grouped_mesh`]: the vendor library's
/// direct full-mesh all-to-all keeps at most 8 SDMA transfers to distinct peers in flight
/// per round (`ALLTOALLV_DIRECT_FULLMESH_SDMA_CONCURRENT_SIZE = 8` in the open HCCL source,
/// an algorithm constant of the library, not of the machine).
pub(crate) const GROUP_PEERS: usize = 8;

/// The peers of `me` by distance, alternating sides: `me + 1, me - 1, me + 2, me - 2, ...`
/// (mod `n`), each of the other `n - 1` ranks once, so every round of [`grouped_mesh`] writes
/// to its nearest unserved neighbours on both sides and is written to by the same ones.
pub(crate) fn by_distance(me: usize, n: usize) -> Vec<usize> {
    let mut out = Vec::with_capacity(n.saturating_sub(1));
    for d in 1..=n / 2 {
        out.push((me + d) % n);
        let left = (me + n - d) % n;
        if left != (me + d) % n {
            out.push(left);
        }
    }
    out
}

/// HCCL-class: the vendor library's grouped full-mesh all_to_all, as it runs on A3 (direct
/// full mesh over the copy engines, peers taken a group at a time, the peers of a group
/// spread over the copy-engine channels): the rank works through its peers in rounds of
/// [`GROUP_PEERS`], nearest first on both sides ([`by_distance`]); in each round block `b`
/// (its own channel) posts one SDMA put of the whole row block for each peer at position `i`
/// of the round with `i % blocks == b` (row `dest` of the input into row `me` of `dest`'s
/// target) and waits for them before the next round, so a rank has at most [`GROUP_PEERS`]
/// transfers live and the `n^2` flows of a call never all start at once. Block 0 first copies
/// row `me` into its own target. Then the lane's credit barrier (every put into this rank has
/// landed) and its epilogue. Signal `[NR, core_num]`, or `[NR, 1]` on one block; needs
/// `[chip.sdma]`.
pub(crate) async fn grouped_mesh(ops: &mut Ops, a: &Args) -> SimResult<()> {
    let (me, n) = ranks(ops, &a.target, WHAT)?;
    let b = ops.block_idx();
    let Some((lanes, active)) = Lanes::for_block(&a.sig, b, ops.block_num()) else {
        return Ok(());
    };
    let tv = rows_view(ops, &a.target, n, WHAT)?;
    let iv = rows_view(ops, &a.input, n, WHAT)?;
    let r = tv.shape()[1];
    let put = |ops: &mut Ops, dest: usize| {
        let opts = SdmaOpts::new().region(&[me, 0], &[dest, 0], &[1, r]);
        ops.put_async(&tv, dest, &iv, &opts)
    };
    if r > 0 {
        if b == 0 {
            let own = put(ops, me)?;
            ops.wait_async(own).await?;
        }
        for round in by_distance(me, n).chunks(GROUP_PEERS) {
            let mut posted = Vec::with_capacity(round.len().div_ceil(active));
            for &dest in round.iter().skip(b).step_by(active) {
                posted.push(put(ops, dest)?);
            }
            crate::sdma::wait_all(ops, posted).await?;
        }
    }
    lanes.barrier(ops, me, n, 1).await?;
    lanes.epilogue(ops, me, n, 1)
}

/// HCCL-class: the vendor library's AIV all_to_all on a full mesh: after a ready barrier
/// (every input written), each block pulls its tiles (a third of UB each, dealt
/// block-cyclically) of row `me` of every rank's input, this rank first and then the peers in
/// a block-dependent order, into row `src` of its own target, the next pull in flight while
/// the current one is stored; then a done barrier (no input is reused before every pull of
/// it has ended) and its epilogue. Each block first pays the chip's `hccl_aiv_launch`, and
/// each barrier a `dcci` before its flags and one after its waits.
pub(crate) async fn aiv_mesh(ops: &mut Ops, a: &Args) -> SimResult<()> {
    use crate::aiv::{pipelined, tile_elems, tiles};
    let (me, n) = ranks(ops, &a.target, WHAT)?;
    let b = ops.block_idx();
    let Some((lanes, active)) = Lanes::for_block(&a.sig, b, ops.block_num()) else {
        return Ok(());
    };
    ops.hccl_aiv_launch()?;
    ops.overlap_pipes();
    let tv = rows_view(ops, &a.target, n, WHAT)?;
    let iv = rows_view(ops, &a.input, n, WHAT)?;
    let r = tv.shape()[1];
    let tile = tile_elems(ops.chip().ub_bytes(), a.target.dtype().size());
    aiv_barrier(ops, &lanes, me, n, 1).await?;
    let pulls: Vec<(usize, usize, usize)> = std::iter::once(me)
        .chain(peer_order(me, n, b))
        .flat_map(|src| tiles(0, r, b, active, tile).map(move |(base, w)| (src, base, w)))
        .collect();
    let pull = |ops: &mut Ops, &(src, base, w): &(usize, usize, usize)| {
        if src == me {
            ops.load_async(&iv, &[me, base], &[1, w])
        } else {
            ops.remote_load_async(&iv, src, &[me, base], &[1, w])
        }
    };
    let store =
        |ops: &mut Ops, &(src, base, _): &(usize, usize, usize), t: &sim_core::Tile| ops.store(t, &tv, &[src, base]);
    pipelined(ops, &pulls, pull, store).await?;
    aiv_barrier(ops, &lanes, me, n, 2).await?;
    lanes.epilogue(ops, me, n, 2)
}

/// all_to_all_v: `max_recv = target rows / NR`; per destination, `Set` its `recv_counts[me]`
/// to `min(send_counts[dest], max_recv)` (no floor at 0) and push the full `max_recv x R`
/// block (rows beyond the count still cross the wire); then one credit barrier. The HOST
/// builtin pushes 256-element tiles, the InCore composite whole blocks.
async fn exchange_v(ops: &mut Ops, a: &ArgsV, host: bool) -> SimResult<()> {
    let (me, n) = ranks(ops, &a.target, WHAT)?;
    let rows = a.target.shape()[0];
    let max_recv = rows / n;
    let r = a.target.numel() / rows;
    let tv = rows_view(ops, &a.target, rows, WHAT)?;
    let iv = rows_view(ops, &a.input, rows, WHAT)?;
    let cols = if host { r.min(TILE) } else { 0 };
    for dest in 0..n {
        set_count(ops, a, me, n, dest).await?;
        let opts = CopyOpts::new()
            .region(&[me * max_recv, 0], &[dest * max_recv, 0], &[max_recv, r])
            .chunks(if host { 1 } else { 0 }, cols);
        ops.put(&tv, dest, &iv, &opts).await?;
    }
    let lanes = Lanes::per_rank(&a.sig);
    lanes.barrier(ops, me, n, 1).await?;
    lanes.epilogue(ops, me, n, 1)
}

/// Sets `dest`'s `recv_counts[me]` to `min(send_counts[dest], max_recv)` (no floor at 0), as
/// PyPTO's kernel does before it pushes the block.
async fn set_count(ops: &mut Ops, a: &ArgsV, me: usize, n: usize, dest: usize) -> SimResult<()> {
    let max_recv = a.target.shape()[0] / n;
    let counts = a.send_counts.view(a.send_counts.dtype(), &[1, n]).map_err(|e| ops.error(WHAT, e.to_string()))?;
    let recv_counts = a.recv_counts.view(a.recv_counts.dtype(), &[n, 1]).map_err(|e| ops.error(WHAT, e.to_string()))?;
    let c = ops.load(&counts, &[0, dest], &[1, 1]).await?;
    let rows_sent = (c.get_f64(0, 0) as i64).min(max_recv as i64) as i32;
    ops.notify(&recv_counts, dest, &[me, 0], rows_sent, NotifyOp::Set)
}

/// HCCL-class all_to_all_v over the copy engines: block 0 sets every destination's
/// `recv_counts[me]` as the builtin does, and every block puts its columns of the `max_recv x
/// R` block for each destination (this rank first, then the peers in a block-dependent order)
/// with an SDMA engine, waits for its transfers, then runs its lane's credit barrier.
pub(crate) async fn sdma_mesh_v(ops: &mut Ops, a: &ArgsV) -> SimResult<()> {
    let (me, n) = ranks(ops, &a.target, WHAT)?;
    let b = ops.block_idx();
    let Some((lanes, active)) = Lanes::for_block(&a.sig, b, ops.block_num()) else {
        return Ok(());
    };
    let rows = a.target.shape()[0];
    let max_recv = rows / n;
    let r = a.target.numel() / rows;
    let tv = rows_view(ops, &a.target, rows, WHAT)?;
    let iv = rows_view(ops, &a.input, rows, WHAT)?;
    if b == 0 {
        for dest in 0..n {
            set_count(ops, a, me, n, dest).await?;
        }
    }
    let (lo, hi) = (b * r / active, (b + 1) * r / active);
    if lo < hi {
        let mut posted = Vec::with_capacity(n);
        for dest in std::iter::once(me).chain(peer_order(me, n, b)) {
            let opts = SdmaOpts::new().region(&[me * max_recv, lo], &[dest * max_recv, lo], &[max_recv, hi - lo]);
            posted.push(ops.put_async(&tv, dest, &iv, &opts)?);
        }
        crate::sdma::wait_all(ops, posted).await?;
    }
    lanes.barrier(ops, me, n, 1).await?;
    lanes.epilogue(ops, me, n, 1)
}

/// The HOST builtin of all_to_all_v.
pub(crate) async fn host_v(ops: &mut Ops, a: &ArgsV) -> SimResult<()> {
    exchange_v(ops, a, true).await
}

/// The InCore composite of all_to_all_v.
pub(crate) async fn incore_v(ops: &mut Ops, a: &ArgsV) -> SimResult<()> {
    exchange_v(ops, a, false).await
}

/// PyPTO's builtin all_to_all: its HOST kernel, or its InCore lowering.
pub(crate) const MESH: Algorithm = Algorithm::new(|_, o| o.builtin_one_block(), kernel!(host), kernel!(incore));

/// The copy-engine all_to_all, on either path: the chip's SDMA engines, the table's signal.
pub(crate) const SDMA_MESH: Algorithm = Algorithm::both(copy_engine_check, kernel!(sdma_mesh));

/// The AIV all_to_all, on either path: the table's signal.
pub(crate) const AIV_MESH: Algorithm = Algorithm::both(aiv_check, kernel!(aiv_mesh));

/// The grouped full mesh, on either path: the chip's SDMA engines, the table's signal.
pub(crate) const GROUPED_MESH: Algorithm = Algorithm::both(copy_engine_check, kernel!(grouped_mesh));

/// PyPTO's builtin all_to_all_v: its HOST kernel, or its InCore lowering.
pub(crate) const MESH_V: Algorithm =
    Algorithm::new(|_, o| o.builtin_one_block(), kernel!(ArgsV, host_v), kernel!(ArgsV, incore_v));

/// The copy-engine all_to_all_v, on either path: the chip's SDMA engines, the table's signal.
pub(crate) const SDMA_MESH_V: Algorithm = Algorithm::both(copy_engine_check, kernel!(ArgsV, sdma_mesh_v));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_by_distance_alternate_sides_and_cover_everyone_once() {
        assert_eq!(by_distance(0, 6), vec![1, 5, 2, 4, 3]);
        assert_eq!(by_distance(3, 5), vec![4, 2, 0, 1]);
        assert_eq!(by_distance(0, 2), vec![1]);
        assert!(by_distance(0, 1).is_empty());
        for n in 1..40 {
            for me in [0, n / 2, n - 1] {
                let mut p = by_distance(me, n);
                p.sort();
                let want: Vec<usize> = (0..n).filter(|&x| x != me).collect();
                assert_eq!(p, want, "n {n} me {me}");
            }
        }
    }

    #[test]
    fn in_each_round_every_rank_is_written_by_as_many_peers_as_it_writes() {
        // Round k of every rank, together: each rank is a destination exactly |round| times.
        let n = 20;
        let plans: Vec<Vec<usize>> = (0..n).map(|me| by_distance(me, n)).collect();
        for k in 0..plans[0].len().div_ceil(GROUP_PEERS) {
            let mut hits = vec![0; n];
            for p in &plans {
                for &d in p.chunks(GROUP_PEERS).nth(k).unwrap_or(&[]) {
                    hits[d] += 1;
                }
            }
            let size = plans[0].chunks(GROUP_PEERS).nth(k).map_or(0, |c| c.len());
            assert!(hits.iter().all(|&h| h == size), "round {k}: {hits:?}");
        }
    }
}
