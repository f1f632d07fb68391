//! The per-rank traffic counters of every run ([`Traffic`]), as an [`Observe`]r.

use crate::base::signal::Cond;
use crate::base::time::SimTime;
use crate::results::stats::Traffic;
use crate::sim::observe::{CoreId, Observe, OpId, SdmaId, SignalCells};

/// What each rank moved so far.
pub(crate) struct Counters(Vec<Traffic>);

impl Counters {
    /// Counters of `ranks` ranks, all zero.
    pub(crate) fn new(ranks: usize) -> Counters {
        Counters(vec![Traffic::default(); ranks])
    }

    /// The counts, by rank.
    pub(crate) fn get(&self) -> &[Traffic] {
        &self.0
    }
}

impl Observe for Counters {
    fn load_issued(&mut self, core: CoreId, from: usize, bytes: u64) {
        let me = core.rank();
        self.0[me].read(from != me, bytes);
    }

    fn store_posted(&mut self, core: CoreId, _op: OpId, to: usize, bytes: u64) {
        let me = core.rank();
        self.0[me].write(to != me, bytes);
    }

    fn chunk_read(&mut self, core: CoreId, from: usize, bytes: u64) {
        let me = core.rank();
        self.0[me].read(from != me, bytes);
    }

    fn chunk_stored(&mut self, core: CoreId, to: usize, bytes: u64) {
        let me = core.rank();
        self.0[me].write(to != me, bytes);
    }

    fn notify_posted(&mut self, core: CoreId, _op: OpId, to: usize) {
        let t = &mut self.0[core.rank()];
        if to != core.rank() {
            t.remote_notifies += 1;
        } else {
            t.local_notifies += 1;
        }
    }

    fn wait_started(&mut self, core: CoreId, _op: OpId, _cells: SignalCells<'_>, _cond: Cond, _at: SimTime) {
        self.0[core.rank()].waits += 1;
    }

    fn test_polled(&mut self, core: CoreId, _op: OpId, _: (SignalCells<'_>, Cond), _holds: bool, _at: SimTime) {
        self.0[core.rank()].waits += 1;
    }

    fn sdma_posted(&mut self, core: CoreId, _ids: (SdmaId, OpId), get: bool, peer: Option<usize>, bytes: u64) {
        let me = core.rank();
        let remote = peer.is_some_and(|p| p != me);
        if get {
            self.0[me].read(remote, bytes);
        } else {
            self.0[me].write(remote, bytes);
        }
    }
}
