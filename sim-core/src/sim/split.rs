//! Split runs: one simulation over several partitions of whole islands, each an engine of
//! its own on a host thread, advancing in lockstep windows.
//!
//! Islands (chips joined without a switch) see each other only through events that come at
//! least the lookahead after their cause (the least latency of a link into a switch). So
//! with `t` the earliest thing any partition has to do, every partition may apply its own
//! events before `t + lookahead` without waiting for the others: nothing they do in that
//! window can reach it sooner. At the window's end the partitions swap the events they caused
//! for each other, agree on the next `t`, and go on. Each engine keys its events exactly as
//! one engine would (per-chip tie order and jitter), so the split changes no result.
//!
//! The exchange is a [`Board`] in shared memory; a partition that dies (a panic in the
//! engine) breaks the board's rendezvous, and every other partition ends with an error that
//! names it instead of waiting for it.

use crate::base::error::SimError;
use crate::base::time::{SimDuration, SimTime};
use crate::model::Network;
use crate::sim::engine::{Crossing, Engine};
use parking_lot::{Condvar, Mutex};
use std::sync::Arc;

/// How a run's chips are split.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    /// The partition of each chip.
    pub(crate) owner: Arc<[u32]>,
    /// How many partitions (some may hold no chip: a machine of fewer islands).
    pub(crate) parts: usize,
    /// How far apart partitions may advance ([`SimDuration::ZERO`] never: refused).
    pub(crate) lookahead: SimDuration,
}

/// Splits `chips` chips of `net` into `parts` partitions of whole islands, consecutive
/// islands together, as evenly as the islands allow. Refuses a machine whose islands may
/// reach each other with no delay (a link into a switch of zero latency).
pub(crate) fn plan(net: &dyn Network, chips: usize, parts: usize) -> Result<Plan, SimError> {
    if parts == 0 {
        return Err(SimError::invalid("--partitions must be at least 1"));
    }
    let mut islands: Vec<usize> = (0..chips).map(|c| net.island(c)).collect();
    islands.sort_unstable();
    islands.dedup();
    let index = |chip: usize| islands.binary_search(&net.island(chip)).unwrap_or(0);
    let n = islands.len();
    let part_of = |i: usize| if n >= parts { i * parts / n } else { i };
    let owner: Arc<[u32]> = (0..chips).map(|c| part_of(index(c)) as u32).collect();
    let lookahead = match net.lookahead() {
        _ if n < 2 => SimDuration::from_ps(u64::MAX),
        Some((d, _)) if d > SimDuration::ZERO => d,
        Some((_, link)) => {
            return Err(SimError::invalid(format!(
                "cannot split this run: link `{link}` into a switch has zero latency, so its islands may reach \
                 each other at once; give it a latency or run with --partitions 1"
            )));
        }
        None => {
            return Err(SimError::invalid(
                "cannot split this run: its network model does not say how far apart its islands are (no lookahead); \
                 run with --partitions 1",
            ));
        }
    };
    Ok(Plan { owner, parts, lookahead })
}

/// What one partition tells the others at a window's end.
#[derive(Clone, Debug, Default)]
struct Report {
    /// The earliest time it has anything to do at.
    next: Option<SimTime>,
    /// Its run has failed (with its own error, not another partition's).
    failed: bool,
}

/// The shared board of a split run on threads: mailboxes, reports and a rendezvous.
pub(crate) struct Board {
    mail: Vec<Mutex<Vec<Crossing>>>,
    reports: Mutex<Vec<Report>>,
    meet: Rendezvous,
    lookahead: SimDuration,
}

impl Board {
    /// The board of a run split as `plan` says.
    pub(crate) fn new(plan: &Plan) -> Arc<Board> {
        Arc::new(Board {
            mail: (0..plan.parts).map(|_| Mutex::new(Vec::new())).collect(),
            reports: Mutex::new(vec![Report::default(); plan.parts]),
            meet: Rendezvous::new(plan.parts),
            lookahead: plan.lookahead,
        })
    }

    /// Marks partition `id` dead: every partition waiting for it, or coming to wait, is
    /// told so instead.
    pub(crate) fn dead(&self, id: usize) {
        self.meet.break_off(id);
    }
}

/// Where a driver goes between windows.
pub(crate) trait Windows {
    /// Called when the engine can do nothing more in its window: swaps events with the other
    /// partitions and opens the next window (`true`), or ends the run (`false`).
    fn next(&mut self, eng: &mut Engine) -> bool;
}

/// Partition `id`'s side of a [`Board`].
pub(crate) struct Seat {
    pub(crate) board: Arc<Board>,
    pub(crate) id: usize,
}

impl Seat {
    /// Opens the first window: every partition starts at time 0.
    pub(crate) fn first(&self, eng: &mut Engine) {
        eng.open_window(SimTime::ZERO + self.board.lookahead);
    }

    fn meet(&self, eng: &mut Engine) -> bool {
        match self.board.meet.wait() {
            Ok(()) => true,
            Err(dead) => {
                eng.abort(SimError::PartitionFailed { partition: dead });
                false
            }
        }
    }
}

impl Windows for Seat {
    fn next(&mut self, eng: &mut Engine) -> bool {
        let b = &self.board;
        for (to, batch) in eng.take_outbox().into_iter().enumerate() {
            if !batch.is_empty()
                && let Some(m) = b.mail.get(to)
            {
                m.lock().extend(batch);
            }
        }
        if !self.meet(eng) {
            return false;
        }
        let mut inbox = std::mem::take(&mut *b.mail[self.id].lock());
        inbox.sort_by_key(Crossing::order);
        for c in inbox {
            eng.accept(c);
        }
        let failed = eng.outcome().is_some_and(Result::is_err);
        b.reports.lock()[self.id] = Report { next: eng.next_time(), failed };
        if !self.meet(eng) {
            return false;
        }
        let reports = b.reports.lock().clone();
        if let Some(p) = reports.iter().position(|r| r.failed) {
            if !failed {
                eng.abort(SimError::PartitionFailed { partition: p });
            }
            return false;
        }
        match reports.iter().filter_map(|r| r.next).min() {
            Some(t) => {
                eng.open_window(t + b.lookahead);
                true
            }
            None => {
                eng.end_split();
                false
            }
        }
    }
}

/// A reusable rendezvous of `n` threads that a dying thread can break.
struct Rendezvous {
    n: usize,
    state: Mutex<(usize, u64, Option<usize>)>,
    cv: Condvar,
}

impl Rendezvous {
    fn new(n: usize) -> Rendezvous {
        Rendezvous { n, state: Mutex::new((0, 0, None)), cv: Condvar::new() }
    }

    /// Waits until all `n` have come, or returns the partition that died.
    fn wait(&self) -> Result<(), usize> {
        let mut g = self.state.lock();
        if let Some(d) = g.2 {
            return Err(d);
        }
        g.0 += 1;
        if g.0 == self.n {
            g.0 = 0;
            g.1 += 1;
            self.cv.notify_all();
            return Ok(());
        }
        let round = g.1;
        while g.1 == round && g.2.is_none() {
            self.cv.wait(&mut g);
        }
        match g.2 {
            Some(d) if g.1 == round => Err(d),
            _ => Ok(()),
        }
    }

    fn break_off(&self, id: usize) {
        let mut g = self.state.lock();
        g.2.get_or_insert(id);
        self.cv.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::program::Dispatch;
    use crate::base::dtype::DType;
    use crate::base::tile::Tile;
    use crate::model::{Busy, PacketTiming, PathId, Route};
    use crate::sim::engine::testkit::{TestChip, TestNet};
    use crate::world::World;
    use std::sync::Arc;

    /// [`TestNet`] with chips in islands of `per` and a lookahead of `lookahead_ns`; a packet
    /// sent by chip `dies` panics (a partition that dies).
    #[derive(Clone, Debug)]
    struct SplitNet {
        per: usize,
        lookahead_ns: u64,
        dies: Option<usize>,
    }

    impl Network for SplitNet {
        fn path(&mut self, route: &Route) -> PathId {
            PathId(u32::try_from(route.chip).unwrap_or(0))
        }
        fn packet_bytes(&self) -> u64 {
            TestNet.packet_bytes()
        }
        fn send(&mut self, path: PathId, bytes: u64, at: SimTime, busy: Option<&mut Vec<Busy>>) -> PacketTiming {
            assert!(self.dies != Some(path.0 as usize), "the model failed on chip {}", path.0);
            TestNet.send(path, bytes, at, busy)
        }
        fn resource_name(&self, r: u32) -> String {
            TestNet.resource_name(r)
        }
        fn resource_chip(&self, r: u32) -> usize {
            TestNet.resource_chip(r)
        }
        fn reset(&mut self) {}
        fn island(&self, chip: usize) -> usize {
            chip - chip % self.per
        }
        fn fork(&self) -> Option<Box<dyn Network>> {
            Some(Box::new(self.clone()))
        }
        fn lookahead(&self) -> Option<(SimDuration, String)> {
            Some((SimDuration::from_ns(self.lookahead_ns), "uplink 0".into()))
        }
    }

    fn net(per: usize, lookahead_ns: u64) -> SplitNet {
        SplitNet { per, lookahead_ns, dies: None }
    }

    #[test]
    fn partitions_take_whole_consecutive_islands_as_evenly_as_they_allow() {
        let owner = |chips, per, parts| plan(&net(per, 5), chips, parts).unwrap().owner.to_vec();
        assert_eq!(owner(8, 2, 2), [0, 0, 0, 0, 1, 1, 1, 1]);
        assert_eq!(owner(8, 2, 3), [0, 0, 0, 0, 1, 1, 2, 2], "4 islands over 3");
        // Fewer islands than partitions: the rest stay empty.
        assert_eq!(owner(4, 2, 4), [0, 0, 1, 1]);
        // One island: one partition holds it all, and nothing ever crosses.
        assert_eq!(owner(3, 3, 2), [0, 0, 0]);
        assert_eq!(plan(&net(2, 5), 8, 3).unwrap().lookahead, SimDuration::from_ns(5));
    }

    #[test]
    fn a_split_with_no_lookahead_is_refused_naming_the_link() {
        let e = plan(&net(2, 0), 4, 2).unwrap_err().to_string();
        assert!(e.contains("link `uplink 0` into a switch has zero latency") && e.contains("--partitions 1"), "{e}");
        assert!(plan(&TestNet, 4, 2).is_ok(), "one island needs no lookahead");
        assert!(plan(&net(2, 5), 4, 0).unwrap_err().to_string().contains("at least 1"));
    }

    /// A world of 4 chips in islands of 2 on `n`, split in 2, where each chip stores to
    /// chip `to(rank)`.
    fn storing_world(n: SplitNet, to: fn(usize) -> usize) -> World {
        let mut w = World::new(4, Arc::new(TestChip), Box::new(n)).unwrap();
        w.options_mut().partitions = 2;
        let dom = w.create_domain("d", &[0, 1, 2, 3], Default::default()).unwrap();
        let buf = w.alloc_window(&dom, "buf", DType::F32, &[1, 4]).unwrap();
        let d = Dispatch::kernel("store", 1, move |core| {
            let t = Tile::from_slice(1, 4, &[1.0f32; 4])?;
            core.remote_store(&t, &buf, to(core.rank()), &[0, 0], crate::base::signal::AtomicType::None)
        });
        w.dispatch_all(&dom, d.in_domain(&dom)).unwrap();
        w
    }

    /// This model lands a store on another island with no switch to split its path at: an
    /// event that would cross partitions at once ends the run with an error, not a wrong result.
    #[test]
    fn an_event_that_may_not_cross_ends_the_run_saying_so() {
        let e = storing_world(net(2, 5), |r| (r + 1) % 4).run().unwrap_err().to_string();
        assert!(e.contains("the landing of a write") && e.contains("may cross partitions"), "{e}");
    }

    /// Partition 1's engine panics: every partition ends, and the run's error names it. (Each
    /// chip stores to its island's other chip, which this model may split.)
    #[test]
    fn a_partition_that_dies_ends_the_run_with_an_error_naming_it() {
        assert!(storing_world(net(2, 5), |r| r ^ 1).run().is_ok());
        let e = storing_world(SplitNet { dies: Some(2), ..net(2, 5) }, |r| r ^ 1).run().unwrap_err().to_string();
        assert!(e.contains("partition 1 of the split run died") && e.contains("the model failed on chip 2"), "{e}");
    }
}
