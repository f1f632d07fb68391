//! HCCL-class hierarchical allgather, reduce_scatter and all_to_all for machines of several
//! servers (`Mode::Hier`): a full mesh inside each server, and between servers the algorithm
//! the vendor library's selector picks there. The ranks of a domain form servers of `g`
//! consecutive ranks (the machine's [`World::server_ranks`](sim_core::World::server_ranks),
//! capped at the domain); rank `me` is local index `l = me % g` of server `s = me / g`, and
//! `S = n / g` servers take part. Every byte moves as a copy-engine put, as HCCL moves both
//! levels in its host-expanded mode on a 910B cluster (SDMA inside a server, RDMA between).
//!
//! Between servers, CANN's 2024 open-source HCCL (`CollAlgOperator::GetDefaultAlgoLevel1V2`
//! and `SelectAlgoTypeFor{AllGather,ReduceScatter}` in `coll_alg_operator.cc`,
//! docs/references/hardware.md §4.4) costs ring (`S - 1` steps), NHR and halving-doubling
//! (`log2 S` steps) with the same bandwidth term and a fixed cost per step, preferring ring on
//! a tie: so halving-doubling for a power-of-two number of servers from 4 on, ring for 2 and 3
//! servers (2: one exchange either way), and NHR (`ceil(log2 S)` steps) for 5, 6, 7, 9, ...
//! servers, which is not modelled here: a ring stands in for it, with the same bytes per rank
//! but `S - 1` steps instead of `ceil(log2 S)`. All_to_all between servers is its pairwise
//! algorithm ("intra mesh, inter pairwise", `AlltoAllOperator::AlltoAllV` in
//! `alltoall_operator.cc`).
//!
//! - **allgather**: this rank's part into its own target row; then between servers among the
//!   `S` ranks of local index `l` (recursive doubling: step `k` swaps the `2^k` rows gathered so
//!   far with server `s ^ 2^k`; ring: `S - 1` steps, each forwarding the row received last to
//!   server `s + 1`); then one put per mate of the `S` rows of local index `l`, a strided
//!   region `[S, R]` of the target.
//! - **reduce_scatter** (in place, sum, inline-reduce puts): first inside the server, each
//!   rank adds the rows of local index `l'` of every server into mate `l'` (one strided put per
//!   mate), so rank `(s, l)` holds the server's partial sums of rows `(*, l)`; then between
//!   servers among local index `l` (recursive halving: step `k` adds the half of the current
//!   server range it hands over into server `s ^ 2^k`; ring: `S - 1` steps, each adding the
//!   row it completed last into server `s + 1`), leaving row `me` reduced over all ranks.
//! - **all_to_all**: server by server (step `k`: to server `s + k`, from server `s - k`, the
//!   own server at `k = 0`), this rank puts the `g` rows of its input bound for that server
//!   straight into row `me` of each of its ranks' targets, and waits for the step's `g` rows
//!   before the next. HCCL relays a step through the peer server's rank of the same local index
//!   and its communication buffer (fewer, larger RDMA writes); the bytes each NIC carries per
//!   step are the same.
//!
//! Signals: `[NR, core_num]`; cell `(j, b)` counts rank `j`'s notifies to block `b` of this
//! rank. Before its first put to a rank a block waits for that rank's "ready" (so a call never
//! writes into a buffer a peer still uses for the previous call); after the puts of a step
//! have landed (their handles waited) it notifies each destination. The epilogue takes every
//! credit back out. With several blocks, block `b` moves its own column slice of every row.

use crate::algorithm::{Algorithm, CallArgs, Operands, kernel};
use crate::lanes::{ranks, rows_view};
use sim_core::{AtomicType, NotifyOp, Ops, SdmaHandle, SdmaOpts, SimResult, Tensor, WaitCmp};
use std::collections::BTreeMap;

/// The operands of one hierarchical call: `src` (allgather's stage, reduce_scatter's data,
/// all_to_all's input) and `dst` (the target; reduce_scatter's data again), the signal, and
/// the machine's ranks per server.
#[derive(Clone, Debug)]
pub(crate) struct Args {
    pub(crate) src: Tensor,
    pub(crate) dst: Tensor,
    pub(crate) sig: Tensor,
    pub(crate) server: usize,
}

impl Args {
    /// This collective's operands out of a host call's.
    pub(crate) fn of(c: &CallArgs) -> Args {
        Args { src: c.src.clone(), dst: c.dst.clone(), sig: c.sig.clone(), server: c.server }
    }
}

/// Where this rank sits: `n` ranks in `servers` servers of `g`, this rank `(s, l)`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Geo {
    pub(crate) g: usize,
    pub(crate) servers: usize,
    pub(crate) s: usize,
    pub(crate) l: usize,
}

impl Geo {
    /// Rank `me` of `n` in servers of (at most) `server` ranks; `n` must be whole servers.
    pub(crate) fn new(me: usize, n: usize, server: usize) -> Result<Geo, String> {
        let g = crate::allreduce::hier::group(n, server)?;
        Ok(Geo { g, servers: n / g, s: me / g, l: me % g })
    }

    /// The domain rank of local index `l` of server `s`.
    pub(crate) fn rank(&self, s: usize, l: usize) -> usize {
        s * self.g + l
    }

    /// The other ranks of this server.
    fn mates(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.g).filter(move |&l| l != self.l).map(move |l| self.rank(self.s, l))
    }
}

/// One step between servers: the partner server this rank puts to, the partner it hears from,
/// and the servers whose rows `[lo, hi)` (of local index `l`) it puts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Step {
    pub(crate) to: usize,
    pub(crate) from: usize,
    pub(crate) rows: (usize, usize),
}

/// The allgather's steps between `servers` servers for server `s`: recursive doubling for a
/// power of two of at least 4, else a ring.
pub(crate) fn gather_steps(s: usize, servers: usize) -> Vec<Step> {
    if servers >= 4 && servers.is_power_of_two() {
        (0..servers.ilog2())
            .map(|k| {
                let (dist, base) = (1 << k, (s >> k) << k);
                Step { to: s ^ dist, from: s ^ dist, rows: (base, base + dist) }
            })
            .collect()
    } else {
        let (right, left) = ((s + 1) % servers, (s + servers - 1) % servers);
        (0..servers.saturating_sub(1))
            .map(|t| {
                let c = (s + servers - t) % servers;
                Step { to: right, from: left, rows: (c, c + 1) }
            })
            .collect()
    }
}

/// The reduce_scatter's steps between `servers` servers for server `s`: recursive halving for a
/// power of two of at least 4 (each step hands over the half of the current range the partner
/// keeps), else a ring (step `t` adds row `s - t - 1` into the right neighbour).
pub(crate) fn scatter_steps(s: usize, servers: usize) -> Vec<Step> {
    if servers >= 4 && servers.is_power_of_two() {
        let mut cur = (0, servers);
        (0..servers.ilog2())
            .rev()
            .map(|k| {
                let dist = 1 << k;
                let (low, high) = ((cur.0, cur.0 + dist), (cur.0 + dist, cur.1));
                let (keep, give) = if s & dist == 0 { (low, high) } else { (high, low) };
                cur = keep;
                Step { to: s ^ dist, from: s ^ dist, rows: give }
            })
            .collect()
    } else {
        let (right, left) = ((s + 1) % servers, (s + servers - 1) % servers);
        (0..servers.saturating_sub(1))
            .map(|t| {
                let c = (s + 2 * servers - t - 1) % servers;
                Step { to: right, from: left, rows: (c, c + 1) }
            })
            .collect()
    }
}

/// One block's signal cells: notifies sent, and the count expected from each sender so far.
struct Cells<'a> {
    sig: &'a Tensor,
    col: usize,
    me: usize,
    heard: BTreeMap<usize, i32>,
}

impl Cells<'_> {
    fn notify(&self, ops: &mut Ops, peer: usize) -> SimResult<()> {
        ops.notify(self.sig, peer, &[self.me, self.col], 1, NotifyOp::AtomicAdd)
    }

    /// Waits for the next notify of `from`.
    async fn hear(&mut self, ops: &mut Ops, from: usize) -> SimResult<()> {
        let k = self.heard.entry(from).or_insert(0);
        *k += 1;
        let want = *k;
        ops.wait(self.sig, &[from, self.col], want, WaitCmp::Ge).await
    }

    /// Tells every rank of `peers` this block is ready for its writes, and waits until each is
    /// ready for this block's.
    async fn ready(&mut self, ops: &mut Ops, peers: &[usize]) -> SimResult<()> {
        for &p in peers {
            self.notify(ops, p)?;
        }
        for &p in peers {
            self.hear(ops, p).await?;
        }
        Ok(())
    }

    /// Takes back every credit this block heard and declares the cells self-clearing.
    fn epilogue(&self, ops: &mut Ops) -> SimResult<()> {
        for (&from, &k) in &self.heard {
            let at = [from, self.col];
            ops.notify(self.sig, self.me, &at, -k, NotifyOp::AtomicAdd)?;
            ops.expect_clear(self.sig, &at, &[1, 1])?;
        }
        Ok(())
    }
}

/// What one block of a call works on: its geometry, its column slice `[lo, hi)` of every row,
/// and its cells.
struct Block<'a> {
    geo: Geo,
    lo: usize,
    w: usize,
    row: usize,
    cells: Cells<'a>,
    /// This block, the blocks taking part, and the chip's SDMA channels.
    b: usize,
    active: usize,
    channels: usize,
}

impl Block<'_> {
    /// The channel of this block's `i`-th destination of a step: one channel per destination
    /// and block, so the puts to a step's peers run side by side instead of one after another
    /// on one channel.
    fn channel(&self, i: usize) -> usize {
        (self.b + i * self.active) % self.channels.max(1)
    }
}

/// The block's setup, or `None` when it has nothing to move (more blocks than columns).
fn block<'a>(ops: &mut Ops, a: &'a Args, what: &'static str) -> SimResult<Option<Block<'a>>> {
    let (me, n) = ranks(ops, &a.dst, what)?;
    let geo = Geo::new(me, n, a.server).map_err(|e| ops.error(what, e))?;
    let row = a.dst.numel() / n.max(1);
    let cols = match a.sig.shape() {
        &[r, c] if r == n && c >= 1 => c,
        shape => {
            let msg = format!("signal `{}` is {shape:?}; hier on {n} ranks needs [{n}, blocks]", a.sig.name());
            return Err(ops.error(what, msg));
        }
    };
    let (b, active) = (ops.block_idx(), ops.block_num().min(cols));
    let (lo, hi) = (b * row / active.max(1), (b + 1) * row / active.max(1));
    if n <= 1 || b >= active || lo == hi {
        return Ok(None);
    }
    let cells = Cells { sig: &a.sig, col: b, me, heard: BTreeMap::new() };
    let channels = ops.chip().sdma().map_or(1, |s| s.channels);
    Ok(Some(Block { geo, lo, w: hi - lo, row, cells, b, active, channels }))
}

/// `t` (`[NR, R]`) viewed as `[S, g R]`: row `(s, l)` is columns `l R ..` of row `s`, so the
/// rows of one local index over every server are one strided `[S, R]` region.
fn by_server(ops: &mut Ops, t: &Tensor, geo: &Geo, row: usize, what: &'static str) -> SimResult<Tensor> {
    t.view(t.dtype(), &[geo.servers, geo.g * row]).map_err(|e| ops.error(what, e.to_string()))
}

/// Posts a put of region `[rows, w]` at `at` of `t` into the same place of `peer`'s, on SDMA
/// channel `channel`, adding into it with `add`.
fn put(
    ops: &mut Ops,
    t: &Tensor,
    (peer, channel): (usize, usize),
    at: [usize; 2],
    shape: [usize; 2],
    add: bool,
) -> SimResult<SdmaHandle> {
    let opts = SdmaOpts::new().region(&at, &at, &shape).channel(channel);
    let opts = if add { opts.atomic(AtomicType::Add) } else { opts };
    ops.put_async(t, peer, t, &opts)
}

/// Waits for `posted`, then notifies each of `to`.
async fn land(ops: &mut Ops, cells: &Cells<'_>, posted: Vec<SdmaHandle>, to: &[usize]) -> SimResult<()> {
    crate::sdma::wait_all(ops, posted).await?;
    to.iter().try_for_each(|&p| cells.notify(ops, p))
}

/// The peers a block of allgather or reduce_scatter exchanges with: its mates and its partners
/// between servers (each once).
fn peers(geo: &Geo, steps: &[Step]) -> Vec<usize> {
    let mut out: Vec<usize> = geo.mates().collect();
    for st in steps {
        for s in [st.to, st.from] {
            let r = geo.rank(s, geo.l);
            if !out.contains(&r) {
                out.push(r);
            }
        }
    }
    out
}

/// The hierarchical allgather (see the module docs).
pub(crate) async fn allgather(ops: &mut Ops, a: &Args) -> SimResult<()> {
    const WHAT: &str = "allgather hier";
    let Some(mut bk) = block(ops, a, WHAT)? else { return Ok(()) };
    let (geo, lo, w, row) = (bk.geo, bk.lo, bk.w, bk.row);
    let target = rows_view(ops, &a.dst, geo.g * geo.servers, WHAT)?;
    let tv = by_server(ops, &a.dst, &geo, row, WHAT)?;
    let stage = a.src.view(a.src.dtype(), &[1, row]).map_err(|e| ops.error(WHAT, e.to_string()))?;
    let me = geo.rank(geo.s, geo.l);
    let steps = gather_steps(geo.s, geo.servers);
    bk.cells.ready(ops, &peers(&geo, &steps)).await?;
    let opts = SdmaOpts::new().region(&[me, lo], &[0, lo], &[1, w]).channel(bk.channel(0));
    let own = ops.put_async(&target, me, &stage, &opts)?;
    ops.wait_async(own).await?;
    let col = geo.l * row + lo;
    for st in &steps {
        let (to, from) = (geo.rank(st.to, geo.l), geo.rank(st.from, geo.l));
        let h = put(ops, &tv, (to, bk.channel(0)), [st.rows.0, col], [st.rows.1 - st.rows.0, w], false)?;
        land(ops, &bk.cells, vec![h], &[to]).await?;
        bk.cells.hear(ops, from).await?;
    }
    let mates: Vec<usize> = geo.mates().collect();
    let posted = (mates.iter().enumerate())
        .map(|(i, &m)| put(ops, &tv, (m, bk.channel(i)), [0, col], [geo.servers, w], false))
        .collect::<SimResult<_>>()?;
    land(ops, &bk.cells, posted, &mates).await?;
    for &m in &mates {
        bk.cells.hear(ops, m).await?;
    }
    bk.cells.epilogue(ops)
}

/// The hierarchical reduce_scatter, sum by inline-reduce puts (see the module docs).
pub(crate) async fn reduce_scatter(ops: &mut Ops, a: &Args) -> SimResult<()> {
    const WHAT: &str = "reduce_scatter hier";
    let Some(mut bk) = block(ops, a, WHAT)? else { return Ok(()) };
    let (geo, lo, w, row) = (bk.geo, bk.lo, bk.w, bk.row);
    let dv = by_server(ops, &a.dst, &geo, row, WHAT)?;
    let steps = scatter_steps(geo.s, geo.servers);
    bk.cells.ready(ops, &peers(&geo, &steps)).await?;
    let mates: Vec<(usize, usize)> = (0..geo.g).filter(|&l| l != geo.l).map(|l| (l, geo.rank(geo.s, l))).collect();
    let posted = (mates.iter().enumerate())
        .map(|(i, &(l, m))| put(ops, &dv, (m, bk.channel(i)), [0, l * row + lo], [geo.servers, w], true))
        .collect::<SimResult<_>>()?;
    let to: Vec<usize> = mates.iter().map(|m| m.1).collect();
    land(ops, &bk.cells, posted, &to).await?;
    for &m in &to {
        bk.cells.hear(ops, m).await?;
    }
    let col = geo.l * row + lo;
    for st in &steps {
        let (to, from) = (geo.rank(st.to, geo.l), geo.rank(st.from, geo.l));
        let h = put(ops, &dv, (to, bk.channel(0)), [st.rows.0, col], [st.rows.1 - st.rows.0, w], true)?;
        land(ops, &bk.cells, vec![h], &[to]).await?;
        bk.cells.hear(ops, from).await?;
    }
    bk.cells.epilogue(ops)
}

/// The hierarchical all_to_all: pairwise between servers, a mesh inside each step's server
/// (see the module docs).
pub(crate) async fn all_to_all(ops: &mut Ops, a: &Args) -> SimResult<()> {
    const WHAT: &str = "all_to_all hier";
    let Some(mut bk) = block(ops, a, WHAT)? else { return Ok(()) };
    let (geo, lo, w) = (bk.geo, bk.lo, bk.w);
    let n = geo.g * geo.servers;
    let target = rows_view(ops, &a.dst, n, WHAT)?;
    let input = rows_view(ops, &a.src, n, WHAT)?;
    let me = geo.rank(geo.s, geo.l);
    for k in 0..geo.servers {
        let (to_s, from_s) = ((geo.s + k) % geo.servers, (geo.s + geo.servers - k) % geo.servers);
        let dests: Vec<usize> = (0..geo.g).map(|l| geo.rank(to_s, l)).filter(|&d| d != me).collect();
        let sources: Vec<usize> = (0..geo.g).map(|l| geo.rank(from_s, l)).filter(|&d| d != me).collect();
        for &p in &sources {
            bk.cells.notify(ops, p)?;
        }
        for &p in &dests {
            bk.cells.hear(ops, p).await?;
        }
        let mut posted = Vec::with_capacity(geo.g);
        for l in 0..geo.g {
            let d = geo.rank(to_s, l);
            let opts = SdmaOpts::new().region(&[me, lo], &[d, lo], &[1, w]).channel(bk.channel(l));
            posted.push(ops.put_async(&target, d, &input, &opts)?);
        }
        land(ops, &bk.cells, posted, &dests).await?;
        for &p in &sources {
            bk.cells.hear(ops, p).await?;
        }
    }
    bk.cells.epilogue(ops)
}

/// The two levels' checks: the ranks are whole servers of the machine's, it has copy engines,
/// the table's signal.
fn check(world: &mut sim_core::World, o: &Operands<'_>) -> SimResult<()> {
    if let Err(e) = crate::allreduce::hier::group(o.n, world.server_ranks()) {
        return crate::validate::fail(o.what, e);
    }
    o.copy_engines(world)?;
    o.table_signal()
}

/// The two-level allgather, on either path.
pub(crate) const ALLGATHER: Algorithm =
    Algorithm { check, host: kernel!(allgather), incore: kernel!(allgather), needs_server: true };

/// The two-level reduce-scatter, on either path.
pub(crate) const REDUCE_SCATTER: Algorithm =
    Algorithm { check, host: kernel!(reduce_scatter), incore: kernel!(reduce_scatter), needs_server: true };

/// The two-level all_to_all, on either path.
pub(crate) const ALL_TO_ALL: Algorithm =
    Algorithm { check, host: kernel!(all_to_all), incore: kernel!(all_to_all), needs_server: true };

#[cfg(test)]
mod tests {
    use super::*;

    /// After the doubling every server holds every row: the rows a server has at each step are
    /// its own plus everything its partners sent, and a partner sends only rows it has.
    #[test]
    fn gather_steps_deliver_every_row_once() {
        for servers in [2, 3, 4, 5, 8, 16] {
            let mut has: Vec<Vec<bool>> = (0..servers).map(|s| (0..servers).map(|c| c == s).collect()).collect();
            let plans: Vec<Vec<Step>> = (0..servers).map(|s| gather_steps(s, servers)).collect();
            for t in 0..plans[0].len() {
                let mut next = has.clone();
                for (s, plan) in plans.iter().enumerate() {
                    let st = plan[t];
                    for c in st.rows.0..st.rows.1 {
                        assert!(has[s][c], "{servers} servers: server {s} sends row {c} it lacks at step {t}");
                        assert!(!next[st.to][c], "row {c} arrives twice at {}", st.to);
                        next[st.to][c] = true;
                    }
                    assert_eq!(plans[st.to][t].from, s, "the receiver hears from the sender");
                }
                has = next;
            }
            assert!(has.iter().all(|r| r.iter().all(|&x| x)), "{servers}");
            let expect = if servers >= 4 && servers.is_power_of_two() { servers.ilog2() as usize } else { servers - 1 };
            assert_eq!(plans[0].len(), expect);
        }
    }

    /// After the halving (or ring) each server's own row holds every server's partial exactly
    /// once, and a server never hands over a row it keeps.
    #[test]
    fn scatter_steps_reduce_each_row_into_its_owner() {
        for servers in [2, 3, 4, 6, 8, 16] {
            // sums[s][c]: the set of servers whose partial of row c is in server s's copy.
            let mut sums: Vec<Vec<Vec<usize>>> =
                (0..servers).map(|s| (0..servers).map(|_| vec![s]).collect()).collect();
            let plans: Vec<Vec<Step>> = (0..servers).map(|s| scatter_steps(s, servers)).collect();
            for t in 0..plans[0].len() {
                let snapshot = sums.clone();
                for (s, plan) in plans.iter().enumerate() {
                    let st = plan[t];
                    assert_eq!(plans[st.to][t].from, s);
                    for c in st.rows.0..st.rows.1 {
                        let add = snapshot[s][c].clone();
                        sums[st.to][c].extend(add);
                    }
                }
            }
            for (s, rows) in sums.iter().enumerate() {
                let mut got = rows[s].clone();
                got.sort_unstable();
                assert_eq!(got, (0..servers).collect::<Vec<_>>(), "{servers} servers, server {s}");
            }
        }
    }

    #[test]
    fn geometry_names_servers_and_local_indices() {
        let g = Geo::new(13, 32, 8).unwrap();
        assert_eq!((g.g, g.servers, g.s, g.l), (8, 4, 1, 5));
        assert_eq!(g.rank(3, 5), 29);
        assert_eq!(g.mates().count(), 7);
        assert!(Geo::new(0, 12, 8).unwrap_err().contains("not whole servers of 8"));
    }
}
