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
pub(crate) use crate::sim::engine::own_chips;
use crate::sim::engine::{Crossing, Engine};
use parking_lot::{Condvar, Mutex};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

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
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
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
        let inbox = std::mem::take(&mut *b.mail[self.id].lock());
        accept_in_order(eng, inbox);
        b.reports.lock()[self.id] = report(eng);
        if !self.meet(eng) {
            return false;
        }
        let reports = b.reports.lock().clone();
        decide(eng, &reports, b.lookahead)
    }
}

/// This partition's report at a window's end.
fn report(eng: &mut Engine) -> Report {
    Report { next: eng.next_time(), failed: eng.outcome().is_some_and(Result::is_err) }
}

/// What every partition decides from all the reports, the same everywhere: end the run (a
/// partition failed, or nothing is left to do anywhere) or open the next window.
fn decide(eng: &mut Engine, reports: &[Report], lookahead: SimDuration) -> bool {
    if let Some(p) = reports.iter().position(|r| r.failed) {
        if !eng.outcome().is_some_and(Result::is_err) {
            eng.abort(SimError::PartitionFailed { partition: p });
        }
        return false;
    }
    match reports.iter().filter_map(|r| r.next).min() {
        Some(t) => {
            eng.open_window(t + lookahead);
            true
        }
        None => {
            eng.end_split();
            false
        }
    }
}

/// The processes a run is split over, one partition each: what sim-core needs of a transport
/// between processes (MPI's, which the `ranksim` library plugs in behind its `mpi` feature).
/// Both calls are collective: every process makes them, in the same order.
pub trait ProcessGroup {
    /// This process's number, `0..size`: the partition it runs.
    fn rank(&self) -> usize;
    /// How many processes (partitions).
    fn size(&self) -> usize;
    /// Sends `out[p]` to process `p` for every `p` and returns what each sent to this one,
    /// by sender.
    fn all_to_all(&mut self, out: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>, String>;
    /// Sends `mine` to every process and returns every process's, by rank.
    fn all_gather(&mut self, mine: Vec<u8>) -> Result<Vec<Vec<u8>>, String>;
}

thread_local! {
    /// The group this thread's split runs go over (see [`join_processes`]).
    static GROUP: std::cell::RefCell<Option<Box<dyn ProcessGroup>>> = const { std::cell::RefCell::new(None) };
}

/// Makes `group` the processes that the runs this thread makes with `RunOptions::processes`
/// are split over: each process runs its own partition and they meet through it. (MPI's calls
/// come from the thread that joined; a sweep over processes runs its sizes on that thread.)
pub fn join_processes(group: Box<dyn ProcessGroup>) {
    GROUP.with(|g| *g.borrow_mut() = Some(group));
}

/// Runs `f` on this thread's group, if it joined one (and is not in a run over it already).
pub(crate) fn with_group<R>(f: impl FnOnce(&mut (dyn ProcessGroup + 'static)) -> R) -> Option<R> {
    GROUP.with(|g| g.try_borrow_mut().ok()?.as_mut().map(|b| f(b.as_mut())))
}

/// Processes played by threads of this process: a [`ProcessGroup`] of `n` members, one for
/// each thread, that meet in shared memory. Runs over it test the path between processes
/// (every crossing and result as bytes) without MPI.
pub struct LocalGroup {
    rank: usize,
    shared: Arc<LocalShared>,
}

struct LocalShared {
    /// `boxes[to][from]`: what `from` sent `to` in the current call.
    boxes: Mutex<Vec<Vec<Vec<u8>>>>,
    meet: Rendezvous,
}

impl LocalGroup {
    /// The `n` members of a new group, member `i` first at `i`.
    pub fn new(n: usize) -> Vec<LocalGroup> {
        let shared =
            Arc::new(LocalShared { boxes: Mutex::new(vec![vec![Vec::new(); n]; n]), meet: Rendezvous::new(n) });
        (0..n).map(|rank| LocalGroup { rank, shared: shared.clone() }).collect()
    }

    fn meet(&self) -> Result<(), String> {
        self.shared.meet.wait().map_err(|p| format!("member {p} of the group left"))
    }
}

impl Drop for LocalGroup {
    /// A member that goes away (its thread ended or panicked) releases the others.
    fn drop(&mut self) {
        self.shared.meet.break_off(self.rank);
    }
}

impl ProcessGroup for LocalGroup {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.shared.meet.n
    }

    fn all_to_all(&mut self, out: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>, String> {
        {
            let mut boxes = self.shared.boxes.lock();
            for (to, bytes) in out.into_iter().enumerate() {
                if let Some(b) = boxes.get_mut(to) {
                    b[self.rank] = bytes;
                }
            }
        }
        self.meet()?;
        let mine = std::mem::take(&mut self.shared.boxes.lock()[self.rank]);
        self.shared.boxes.lock()[self.rank] = vec![Vec::new(); mine.len()];
        self.meet()?;
        Ok(mine)
    }

    fn all_gather(&mut self, mine: Vec<u8>) -> Result<Vec<Vec<u8>>, String> {
        let n = self.size();
        self.all_to_all(vec![mine; n])
    }
}

/// This process's side of a split run over a [`ProcessGroup`]: crossings travel as bytes.
pub(crate) struct GroupSeat<'a> {
    pub(crate) group: &'a mut (dyn ProcessGroup + 'static),
    pub(crate) lookahead: SimDuration,
}

impl GroupSeat<'_> {
    /// The transport failed: the run ends here with an error naming it (the other processes
    /// see their own error, or MPI ends them).
    fn lost(&self, eng: &mut Engine, what: String) -> bool {
        eng.abort(SimError::invalid(format!(
            "partition {}: the exchange between processes failed: {what}",
            self.group.rank()
        )));
        false
    }
}

impl Windows for GroupSeat<'_> {
    fn next(&mut self, eng: &mut Engine) -> bool {
        let mut out = vec![Vec::new(); self.group.size()];
        for (to, batch) in eng.take_outbox().into_iter().enumerate() {
            for c in batch {
                match c.to_bytes() {
                    Ok(b) if to < out.len() => push_framed(&mut out[to], &b),
                    Ok(_) => {}
                    Err(e) => eng.abort(SimError::invalid(e)),
                }
            }
        }
        let inbox = match self.group.all_to_all(out) {
            Ok(i) => i,
            Err(e) => return self.lost(eng, e),
        };
        let mut crossings = Vec::new();
        // Each sender's bytes are freed once read: a window's crossings are held once, not
        // also as bytes.
        for buf in inbox {
            for frame in frames(&buf) {
                match frame.and_then(Crossing::from_bytes) {
                    Ok(c) => crossings.push(c),
                    Err(e) => return self.lost(eng, e),
                }
            }
        }
        accept_in_order(eng, crossings);
        let mine = bincode::serialize(&report(eng)).unwrap_or_default();
        let all = match self.group.all_gather(mine) {
            Ok(a) => a,
            Err(e) => return self.lost(eng, e),
        };
        let reports: Result<Vec<Report>, _> = all.iter().map(|b| bincode::deserialize(b)).collect();
        match reports {
            Ok(r) => decide(eng, &r, self.lookahead),
            Err(e) => self.lost(eng, format!("a partition's report did not decode: {e}")),
        }
    }
}

/// Hands a window's `crossings` to `eng` in their keys' order, equal keys in the order they
/// came. Only the keys with their places are sorted: a stable sort of the crossings
/// themselves would take scratch space for half of them, at the moment a window's are held.
fn accept_in_order(eng: &mut Engine, crossings: Vec<Crossing>) {
    let mut order: Vec<((u128, u64), usize)> = crossings.iter().map(Crossing::order).zip(0..).collect();
    order.sort_unstable();
    let mut held: Vec<Option<Crossing>> = crossings.into_iter().map(Some).collect();
    for (_, i) in order {
        if let Some(c) = held.get_mut(i).and_then(Option::take) {
            eng.accept(c);
        }
    }
}

/// This process's side of the window the others are in when its partition died: nothing to
/// send, and a report that it failed, so every process ends (what each call answers no
/// longer matters here).
pub(crate) fn dead_window(group: &mut dyn ProcessGroup) {
    let n = group.size();
    let _ = group.all_to_all(vec![Vec::new(); n]);
    let failed = bincode::serialize(&Report { next: None, failed: true }).unwrap_or_default();
    let _ = group.all_gather(failed);
}

/// Appends `bytes` to `buf` with its length in front.
pub(crate) fn push_framed(buf: &mut Vec<u8>, bytes: &[u8]) {
    buf.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    buf.extend_from_slice(bytes);
}

/// The frames [`push_framed`] put in `buf`, in order.
pub(crate) fn frames(mut buf: &[u8]) -> impl Iterator<Item = Result<&[u8], String>> {
    std::iter::from_fn(move || {
        if buf.is_empty() {
            return None;
        }
        let Some((len, rest)) = buf.split_first_chunk::<8>() else {
            buf = &[];
            return Some(Err("a truncated frame".to_string()));
        };
        let n = usize::try_from(u64::from_le_bytes(*len)).unwrap_or(usize::MAX);
        if n > rest.len() {
            buf = &[];
            return Some(Err("a truncated frame".to_string()));
        }
        let (frame, rest) = rest.split_at(n);
        buf = rest;
        Some(Ok(frame))
    })
}

/// Busy-wait iterations at a rendezvous before a thread sleeps, when every member can have a
/// host core: a window's meeting then costs about a microsecond instead of a futex sleep and
/// wake-up (tens of microseconds), and a split run meets at every window.
const SPINS: u32 = 20_000;

/// A reusable rendezvous of `n` threads that a dying thread can break.
struct Rendezvous {
    n: usize,
    /// Arrivals in this round, the round, and the member that died.
    state: Mutex<(usize, u64, Option<usize>)>,
    cv: Condvar,
    /// The round, read without the lock while spinning (bumped when it ends or breaks).
    round: AtomicU64,
    /// Members spin before they sleep (no more members than host cores).
    spin: bool,
}

impl Rendezvous {
    fn new(n: usize) -> Rendezvous {
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        let (state, cv, round) = (Mutex::new((0, 0, None)), Condvar::new(), AtomicU64::new(0));
        Rendezvous { n, state, cv, round, spin: n <= cores }
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
            self.round.store(g.1, Ordering::Release);
            self.cv.notify_all();
            return Ok(());
        }
        let round = g.1;
        if self.spin {
            drop(g);
            for _ in 0..SPINS {
                if self.round.load(Ordering::Acquire) != round {
                    break;
                }
                std::hint::spin_loop();
            }
            g = self.state.lock();
        }
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
        // Spinning members look at the round: move it so they take the lock and see why.
        self.round.fetch_add(1 << 62, Ordering::Release);
        self.cv.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::engine::testkit::{SplitNet, TestNet};

    #[test]
    fn a_partition_holds_the_chips_from_its_first_to_its_last() {
        let owner = [0, 0, 1, 1, 1, 2];
        assert_eq!(own_chips(&owner, 0), 0..2);
        assert_eq!(own_chips(&owner, 1), 2..5);
        assert_eq!(own_chips(&owner, 2), 5..6);
        assert_eq!(own_chips(&owner, 3), 0..0);
        // Chips not consecutive: the range covers the ones between.
        assert_eq!(own_chips(&[1, 0, 1], 1), 0..3);
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
}
