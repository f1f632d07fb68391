//! A port of the communication kernel of pto-isa's a2a3 GEMM + AllReduce example
//! (`kernels/manual/a2a3/gemm_ar/comm_kernel.cpp`, `GemmCommAllKernel`), written from its
//! README and source in ranksim's kernel API: the workload that calibrates how fast AIV cores'
//! remote stores cross the fabric (`ranksim validate`'s `ptoisa-gemm-ar-comm` table, timing
//! only) and, with payload, the benchmark of real-data element math (`benches/payload.rs`).
//!
//! Each rank holds an `M x N` f16 GEMM result cut into `128 x 256` tiles; tile `t` belongs to
//! rank `t % nranks`. 24 AIV blocks per rank run one mixed loop:
//!
//! - **reduce-scatter**: block `b` takes the tiles its compute block enqueued (a contiguous
//!   share, the first `T % 24` blocks one more), splits each into two `64 x 256` subtiles,
//!   loads each into UB (ping / pong) and stores it with `AtomicAdd` into the owner's window
//!   while the next loads; after each store it drains the pipes, fences and notifies the
//!   owner's subtile-ready counter and the AG-summary counter of the block that will forward it;
//! - **all-gather**: block `b` owns the owner-local subtiles `23 - b, 47 - b, ..`; whenever
//!   one's ready counter reaches `nranks` it sends it to every other rank (load, store, wait
//!   for the store, per peer, the first peer rotated by the subtile id); with nothing to do it
//!   waits on its summary counter.
//!
//! As in the source, a loop pass that did reduce-scatter work does not try the all-gather.
//! The measurement is the *sequential* one (the GEMM has finished, so every ready queue is
//! full): a dequeue is modelled as its two scalar GM reads (the count and the slot), never a
//! wait. The source's unused legacy signal slots are left out.

use sim_core::{
    AtomicType, Core, DType, Dispatch, DomainOptions, NotifyOp, Pipe, SimResult, Tensor, WaitCmp, World, f16,
};

/// Rows and columns of a GEMM tile (`G_BASE_M`, `G_BASE_N`).
const TILE: (usize, usize) = (128, 256);
/// Rows of the output come in whole tiles of this many.
pub const TILE_ROWS: usize = TILE.0;
/// Rows of a communication subtile (`G_COMM_SUB_M`); two per tile.
const SUB_M: usize = 64;
const SUBS_PER_TILE: usize = TILE.0 / SUB_M;
/// Communication blocks per rank (`COMM_BLOCK_NUM`), also the compute blocks feeding them.
pub const BLOCKS: usize = 24;
/// Columns of the padded output (`N` = 1408 padded to 1536): the tables give the size in bytes
/// and the rows follow from it.
pub const COLS: usize = 1536;
/// Stride of the AG-summary counters (`G_SIGNAL_AG_SUMMARY_STRIDE`).
const SUMMARY_STRIDE: usize = 16;

/// The problem: the padded output's rows, and the ranks it is reduced over.
#[derive(Copy, Clone, Debug)]
struct Shape {
    rows: usize,
    ranks: usize,
}

impl Shape {
    fn tiles(&self) -> usize {
        (self.rows / TILE.0) * (COLS / TILE.1)
    }

    /// Tiles rank `r` owns (`AgGetMyTileCount`).
    fn owned(&self, r: usize) -> usize {
        let t = self.tiles();
        t / self.ranks + usize::from(r < t % self.ranks)
    }

    /// The first element `(row, col)` of subtile `stripe` of tile `t`.
    fn at(&self, t: usize, stripe: usize) -> [usize; 2] {
        let per_row = COLS / TILE.1;
        [(t / per_row) * TILE.0 + stripe * SUB_M, (t % per_row) * TILE.1]
    }

    /// The tiles compute block `b` produced, in order (`GEMM_AR_BLOCK_START_TILE` / `_COUNT`).
    fn block_tiles(&self, b: usize) -> std::ops::Range<usize> {
        let (t, base, extra) = (self.tiles(), self.tiles() / BLOCKS, self.tiles() % BLOCKS);
        let start = if b < extra { b * (base + 1) } else { extra * (base + 1) + (b - extra) * base };
        start.min(t)..(start + base + usize::from(b < extra)).min(t)
    }

    /// The owner's local id of subtile `stripe` of tile `t`.
    fn local_id(&self, t: usize, stripe: usize) -> usize {
        (t / self.ranks) * SUBS_PER_TILE + stripe
    }

    /// The AG block that forwards owner-local subtile `id` (the reversed stripe).
    fn ag_block(id: usize) -> usize {
        BLOCKS - 1 - id % BLOCKS
    }
}

/// The buffers every block uses.
#[derive(Clone)]
struct Buffers {
    gemm: Tensor,
    reduced: Tensor,
    signal: Tensor,
    queue: Tensor,
}

impl Buffers {
    /// The subtile-ready counter of owner-local subtile `id`.
    fn ready(&self, id: usize) -> [usize; 2] {
        [0, id]
    }

    /// The AG-summary counter of block `b`, after the ready counters of `tiles` tiles.
    fn summary(tiles: usize, b: usize) -> [usize; 2] {
        [0, tiles * SUBS_PER_TILE + b * SUMMARY_STRIDE]
    }
}

/// The reduce-scatter side of one block: its tiles, and the store waiting in the ping-pong.
struct Rs {
    tiles: std::ops::Range<usize>,
    /// The loaded subtile not yet stored: its tile, stripe and the load.
    pending: Option<(usize, usize, sim_core::TileLoad)>,
}

/// The all-gather side of one block: its owner-local subtiles, which are sent, and how many
/// summary wake-ups it has consumed.
struct Ag {
    ids: Vec<usize>,
    done: Vec<bool>,
    completed: usize,
    cursor: usize,
    acks: i32,
}

/// Element `i` (row-major) of rank `rank`'s GEMM output as [`queue`] stages it: small
/// integers, so the reduced sum is exact in f16 whatever order the adds land in.
pub fn input(rank: usize, i: usize) -> f16 {
    f16::from_f32(((rank * 3 + i) % 11) as f32 - 5.0)
}

/// Queues the kernel on the first `ranks` ranks of `w` for an output of `rows` x [`COLS`] f16
/// (`rows` a positive multiple of [`TILE_ROWS`]), staging each rank's GEMM output from
/// [`input`] when the world keeps payload. Returns the reduced window, which holds every
/// rank's sum on every rank after the run.
pub fn queue(w: &mut World, ranks: usize, rows: usize) -> SimResult<Tensor> {
    if rows == 0 || !rows.is_multiple_of(TILE_ROWS) || ranks < 2 || ranks > w.size() {
        return Err(sim_core::SimError::invalid(format!(
            "gemm_ar: {rows} rows on {ranks} ranks; needs a positive multiple of {TILE_ROWS} rows and 2..={} ranks",
            w.size()
        )));
    }
    let shape = Shape { rows, ranks };
    let members: Vec<usize> = (0..shape.ranks).collect();
    let dom = w.create_domain("gemm_ar", &members, DomainOptions::default())?;
    let slots = shape.tiles() * SUBS_PER_TILE + BLOCKS * SUMMARY_STRIDE;
    let bufs = Buffers {
        gemm: w.alloc_tensor("gemm_output", DType::F16, &[shape.rows, COLS])?,
        reduced: w.alloc_window(&dom, "reduced_output", DType::F16, &[shape.rows, COLS])?,
        signal: w.alloc_window(&dom, "signal_matrix", DType::I32, &[1, slots])?,
        queue: w.alloc_tensor("ready_queue", DType::I32, &[BLOCKS, 1 + shape.tiles()])?,
    };
    if w.has_payload() {
        for r in 0..ranks {
            let data: Vec<f16> = (0..rows * COLS).map(|i| input(r, i)).collect();
            w.write(&bufs.gemm, r, &data)?;
        }
    }
    let reduced = bufs.reduced.clone();
    let k = Dispatch::kernel("gemm_comm_all", BLOCKS, move |core| block(core, shape, &bufs));
    w.dispatch_all(&dom, k.in_domain(&dom))?;
    Ok(reduced)
}

/// One communication block: the mixed RS / AG loop (`GemmCommAllImpl`).
fn block(core: &mut Core, shape: Shape, bufs: &Buffers) -> SimResult<()> {
    core.overlap_pipes();
    let (me, b) = (core.rank(), core.block_idx());
    let mut rs = Rs { tiles: shape.block_tiles(b), pending: None };
    let ids: Vec<usize> = (BLOCKS - 1 - b..shape.owned(me) * SUBS_PER_TILE).step_by(BLOCKS).collect();
    let mut ag = Ag { done: vec![false; ids.len()], ids, completed: 0, cursor: 0, acks: 0 };
    loop {
        let rs_done = rs.tiles.is_empty() && rs.pending.is_none();
        let ag_done = ag.completed == ag.ids.len();
        if rs_done && ag_done {
            break;
        }
        let did = !rs_done && rs_step(core, shape, bufs, &mut rs)?;
        let did = did || (!ag_done && ag_drain(core, shape, bufs, &mut ag)?);
        if !did && rs_done {
            let at = Buffers::summary(shape.tiles(), b);
            core.wait(&bufs.signal, &at, ag.acks + 1, WaitCmp::Ge)?;
        }
    }
    core.pipe_barrier(Pipe::All)
}

/// Dequeues the block's next tile and pushes its subtiles through the ping-pong; after the last
/// tile, flushes the pipeline. Returns whether it did any work.
fn rs_step(core: &mut Core, shape: Shape, bufs: &Buffers, rs: &mut Rs) -> SimResult<bool> {
    let Some(t) = rs.tiles.next() else {
        flush(core, shape, bufs, rs)?;
        return Ok(true);
    };
    // The dequeue: the queue's count, then its slot (both full in the sequential run).
    let q = core.block_idx();
    core.read_scalar(&bufs.queue, &[q, 0])?;
    core.read_scalar(&bufs.queue, &[q, 1 + t])?;
    for stripe in 0..SUBS_PER_TILE {
        let load = core.load_async(&bufs.gemm, &shape.at(t, stripe), &[SUB_M, TILE.1])?;
        if let Some(prev) = rs.pending.replace((t, stripe, load)) {
            store_and_publish(core, shape, bufs, prev)?;
        }
    }
    if rs.tiles.is_empty() {
        flush(core, shape, bufs, rs)?;
    }
    Ok(true)
}

/// Stores the subtile still in the ping-pong (`RsFlushPipeline`).
fn flush(core: &mut Core, shape: Shape, bufs: &Buffers, rs: &mut Rs) -> SimResult<()> {
    match rs.pending.take() {
        Some(prev) => store_and_publish(core, shape, bufs, prev),
        None => Ok(()),
    }
}

/// `TSTORE<AtomicAdd>` of a loaded subtile into its owner's window, then the publish: drain
/// the pipes, fence (`dsb(DDR)`), and add 1 to the owner's ready and summary counters.
fn store_and_publish(
    core: &mut Core,
    shape: Shape,
    bufs: &Buffers,
    (t, stripe, load): (usize, usize, sim_core::TileLoad),
) -> SimResult<()> {
    let owner = t % shape.ranks;
    let tile = core.wait_load(load)?;
    core.remote_store(&tile, &bufs.reduced, owner, &shape.at(t, stripe), AtomicType::Add)?;
    core.pipe_barrier(Pipe::All)?;
    core.fence()?;
    let id = shape.local_id(t, stripe);
    core.notify(&bufs.signal, owner, &bufs.ready(id), 1, NotifyOp::AtomicAdd)?;
    let summary = Buffers::summary(shape.tiles(), Shape::ag_block(id));
    core.notify(&bufs.signal, owner, &summary, 1, NotifyOp::AtomicAdd)
}

/// One drain pass over the block's unsent subtiles (`AgDrainReadyAssignedSubtiles`): every one
/// whose ready counter has reached `nranks` goes to all other ranks, after one acquire fence.
fn ag_drain(core: &mut Core, shape: Shape, bufs: &Buffers, ag: &mut Ag) -> SimResult<bool> {
    let (n, mut last, mut acquired) = (ag.ids.len(), None, false);
    for i in 0..n {
        let idx = (ag.cursor + i) % n;
        if ag.done[idx] || !core.test_signal(&bufs.signal, &bufs.ready(ag.ids[idx]), shape.ranks as i32, WaitCmp::Ge)? {
            continue;
        }
        if !acquired {
            core.pipe_barrier(Pipe::All)?;
            core.fence()?;
            acquired = true;
        }
        send_to_all(core, shape, bufs, ag.ids[idx])?;
        ag.done[idx] = true;
        ag.completed += 1;
        ag.acks += 1;
        last = Some(idx);
    }
    if let Some(l) = last {
        ag.cursor = (l + 1) % n;
    }
    Ok(last.is_some())
}

/// Sends owner-local subtile `id` to every other rank (`AgTransferSubtileToAll`): load, store,
/// wait for the store, per peer, starting at peer offset `1 + id % (nranks - 1)`.
fn send_to_all(core: &mut Core, shape: Shape, bufs: &Buffers, id: usize) -> SimResult<()> {
    let (me, n) = (core.rank(), shape.ranks);
    let t = me + (id / SUBS_PER_TILE) * n;
    let at = shape.at(t, id % SUBS_PER_TILE);
    for k in 0..n - 1 {
        let peer = (me + 1 + (id + k) % (n - 1)) % n;
        let tile = core.load(&bufs.reduced, &at, &[SUB_M, TILE.1])?;
        core.remote_store(&tile, &bufs.reduced, peer, &at, AtomicType::None)?;
        // The next load into the same UB buffer waits for this store to have read it out.
        core.set_flag(Pipe::Mte3, Pipe::Mte2, 2)?;
        core.wait_flag(Pipe::Mte3, Pipe::Mte2, 2)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The README's problem: 5416 x 1408 padded to 5504 x 1536, 8 ranks.
    const README: Shape = Shape { rows: 5504, ranks: 8 };

    #[test]
    fn the_readme_problem_has_258_tiles_split_as_the_source_splits_them() {
        assert_eq!(README.tiles(), 258);
        // 258 = 8 x 32 + 2: ranks 0 and 1 own 33 tiles.
        assert_eq!((0..8).map(|r| README.owned(r)).collect::<Vec<_>>(), [33, 33, 32, 32, 32, 32, 32, 32]);
        // 258 = 24 x 10 + 18: the first 18 compute blocks enqueue 11 tiles.
        assert_eq!(README.block_tiles(0), 0..11);
        assert_eq!(README.block_tiles(17), 187..198);
        assert_eq!(README.block_tiles(18), 198..208);
        assert_eq!(README.block_tiles(23), 248..258);
        let covered: usize = (0..BLOCKS).map(|b| README.block_tiles(b).len()).sum();
        assert_eq!(covered, 258);
    }

    #[test]
    fn subtiles_map_to_owner_local_ids_and_back() {
        // Tile 13 (row 2, col 1 of the 6-wide grid) belongs to rank 5, its 2nd local tile.
        assert_eq!(README.at(13, 1), [2 * 128 + 64, 256]);
        assert_eq!(13 % 8, 5);
        assert_eq!(README.local_id(13, 1), 3);
        // The AG side decodes id 3 on rank 5 back to tile 5 + 1 x 8 = 13, stripe 1.
        assert_eq!(5 + (3 / SUBS_PER_TILE) * 8, 13);
        assert_eq!(Shape::ag_block(3), 20);
        assert_eq!(Shape::ag_block(24), 23);
    }

    /// With payload, every rank ends with every rank's sum (exact in f16 with these inputs).
    #[test]
    fn every_rank_holds_the_sum_of_every_ranks_output() {
        let mut w = crate::Config::default_preset().world().unwrap();
        let (ranks, rows) = (4, 2 * TILE_ROWS);
        let reduced = queue(&mut w, ranks, rows).unwrap();
        w.run().unwrap();
        let want: Vec<f16> =
            (0..rows * COLS).map(|i| f16::from_f32((0..ranks).map(|r| input(r, i).to_f32()).sum())).collect();
        for r in 0..ranks {
            assert!(w.read::<f16>(&reduced, r).unwrap() == want, "rank {r}");
        }
        assert!(queue(&mut w, ranks, 100).unwrap_err().to_string().contains("multiple of 128"));
    }
}
