//! The `Collective` trait, what the measuring machinery asks of any collective (user or
//! built-in), and `Wrong`, a comparison of its results with their golden.

use crate::formats::Mismatch;
use collectives::Traffic;
use sim_core::{DType, Domain, SimResult, World};

/// A collective as the measuring machinery sees it. `setup` allocates its window buffers on
/// the domain of the ranks taking part, `stage` writes every rank's input, `call` queues one
/// call on every rank (a dispatch per rank, as PyPTO's host API does), and `wrong` compares
/// every rank's result with the golden after one call ([`Wrong::compare`] per element: the
/// count, and the first wrong elements for the report). The size conventions follow
/// nccl-tests: `count` elements per rank for a requested size, `bytes` for the table's size
/// column, and `busbw = algbw * bus_factor`.
pub trait Collective {
    /// What `setup` allocates and the other methods use.
    type Buffers;
    /// The name in tables, legends and JSON.
    fn name(&self) -> String;
    /// The element type (the table's `type` column).
    fn dtype(&self) -> DType;
    /// The bus-bandwidth factor for `ranks` ranks (allreduce `2(n-1)/n`, allgather `(n-1)/n`).
    fn bus_factor(&self, ranks: usize) -> f64;
    /// Elements per rank for a requested size of `size_bytes` (default: size / element size).
    fn count(&self, size_bytes: u64, _ranks: usize) -> usize {
        usize::try_from(size_bytes / self.dtype().size() as u64).unwrap_or(usize::MAX)
    }
    /// The size column in bytes for `count` elements per rank (default: count x element size).
    fn bytes(&self, count: usize, _ranks: usize) -> u64 {
        (count as u64).saturating_mul(self.dtype().size() as u64)
    }
    /// The `redop` column (default `none`).
    fn redop(&self) -> String {
        "none".to_string()
    }
    /// The `root` column (default -1: no root).
    fn root(&self) -> i64 {
        -1
    }
    /// Whether a call with no element still runs (a barrier); default: such sizes are skipped.
    fn runs_without_data(&self) -> bool {
        false
    }
    /// What one call of `count` elements per rank does on each of `ranks` ranks, on a
    /// machine of `server_ranks` ranks per server: the counts its runs' memory estimate grows
    /// with ([`super::memory`]). Default: a full mesh on one block (every rank signals and
    /// moves data with every peer, all at once); say less if yours does less, or a large
    /// machine refuses runs it could hold.
    fn traffic(&self, count: usize, ranks: usize, server_ranks: usize) -> Traffic {
        let _ = (count, server_ranks);
        Traffic::mesh(ranks, 1, 0)
    }
    /// Payload bytes its buffers hold at `count` elements per rank on `ranks` ranks, over
    /// every rank; `None` (the default): the estimate sets it up on a timing-only world to
    /// find out.
    fn payload_bytes(&self, count: usize, ranks: usize) -> Option<u64> {
        let _ = (count, ranks);
        None
    }
    /// Allocates the buffers of `count` elements per rank on `dom`.
    fn setup(&self, w: &mut World, dom: &Domain, count: usize) -> SimResult<Self::Buffers>;
    /// Writes every rank's input (only on runs that keep payload bytes).
    fn stage(&self, w: &mut World, b: &Self::Buffers, count: usize) -> SimResult<()>;
    /// Queues one call on every rank.
    fn call(&self, w: &mut World, b: &Self::Buffers) -> SimResult<()>;
    /// The elements, over every rank, that differ from the golden after one call: build it
    /// with [`Wrong::compare`] (or return `Ok(n.into())` with a bare count).
    fn wrong(&self, w: &World, b: &Self::Buffers, count: usize) -> SimResult<Wrong>;
}

/// A comparison of a collective's results with their golden: how many elements differ and the
/// first few of them (rank, index, got, expected), which the table prints under a wrong row
/// and the JSON keeps as `first_wrong`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Wrong {
    count: u64,
    pub(super) first: Vec<Mismatch>,
}

impl Wrong {
    /// No element compared yet.
    pub fn new() -> Wrong {
        Wrong::default()
    }

    /// Compares element `index` of rank `rank`'s result, `got`, with its golden `expected`
    /// (as numbers: `-0.0 == 0.0`, a NaN is never equal); counts and keeps it when they
    /// differ. Returns whether they were equal.
    pub fn compare(&mut self, rank: usize, index: usize, got: f64, expected: f64) -> bool {
        let equal = got == expected;
        if !equal {
            self.record(rank, index as u64, got, expected);
        }
        equal
    }

    /// Counts one wrong element, keeping it if it is among the first [`Mismatch::KEPT`].
    pub fn record(&mut self, rank: usize, index: u64, got: f64, expected: f64) {
        self.count += 1;
        if self.first.len() < Mismatch::KEPT {
            self.first.push(Mismatch { rank, index, got, expected });
        }
    }

    /// Counts `n` wrong elements with no detail (elements missing from a short buffer).
    pub fn add_count(&mut self, n: u64) {
        self.count = self.count.saturating_add(n);
    }

    /// How many elements differ.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The first wrong elements, in the order they were found.
    pub fn first(&self) -> &[Mismatch] {
        &self.first
    }
}

impl From<u64> for Wrong {
    /// A bare count, with no element named.
    fn from(count: u64) -> Wrong {
        Wrong { count, first: Vec::new() }
    }
}

/// Elements per rank of `c` at `size_bytes` on `ranks` ranks; `None` when that is none and `c`
/// needs some.
pub(super) fn elements<C: Collective>(c: &C, ranks: usize, size_bytes: u64) -> Option<usize> {
    let count = c.count(size_bytes, ranks);
    (count > 0 || c.runs_without_data()).then_some(count)
}
