//! Shadow memory for race detection: for every byte range of every memory, the last write and
//! the reads since it, each stamped with its strand's epoch. An access conflicts with an
//! earlier one when their ranges overlap, one of them writes (two atomic adds commute), and
//! the earlier one's epoch is not covered by the later one's vector clock.

use super::vclock::{Epoch, VClock};
use crate::base::addr::MemKey;
use crate::base::call_site::CallSite;
use crate::base::time::SimTime;
use std::collections::BTreeMap;
use std::sync::Arc;

/// How an access touches memory.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Read,
    Write,
    /// An atomic add (`AtomicType::Add` store or put): commutes with other atomic adds.
    Atomic,
}

/// Who did an access, for reports.
#[derive(Clone, Debug)]
pub(crate) struct Who {
    pub(crate) rank: usize,
    pub(crate) block: usize,
    pub(crate) task: Arc<str>,
    pub(crate) dispatch: Arc<str>,
    /// Which dispatch of its chip this is (0, 1, ...), to tell repeated dispatches apart.
    pub(crate) instance: usize,
}

/// A buffer as an access addressed it: its name, byte offset in its memory, element size.
#[derive(Clone, Debug)]
pub(crate) struct View {
    pub(crate) buffer: Arc<str>,
    pub(crate) base: usize,
    pub(crate) esize: usize,
}

/// One recorded access.
#[derive(Debug)]
pub(crate) struct Access {
    pub(crate) epoch: Epoch,
    /// Its strand's clock when issued: what happened before it. (A write lands after its
    /// issue, so a later-issued access can be recorded first and be ordered after it.)
    pub(crate) vc: Arc<VClock>,
    pub(crate) kind: Kind,
    pub(crate) who: Who,
    pub(crate) op: &'static str,
    pub(crate) view: View,
    pub(crate) time: SimTime,
    pub(crate) location: Option<CallSite>,
}

/// An earlier access that conflicts with a new one over bytes `[lo, hi)`.
#[derive(Debug)]
pub(crate) struct Conflict {
    pub(crate) prev: Arc<Access>,
    pub(crate) lo: usize,
    pub(crate) hi: usize,
}

#[derive(Clone, Debug)]
struct Seg {
    end: usize,
    write: Option<Arc<Access>>,
    reads: Vec<Arc<Access>>,
}

/// The shadow of every memory touched in a run.
#[derive(Debug, Default)]
pub(crate) struct Shadow {
    mems: BTreeMap<MemKey, BTreeMap<usize, Seg>>,
}

fn conflicts(new: &Access, old: &Access, vc: &VClock) -> bool {
    let writes = new.kind != Kind::Read || old.kind != Kind::Read;
    let commute = new.kind == Kind::Atomic && old.kind == Kind::Atomic;
    writes && !commute && !vc.covers(old.epoch) && !old.vc.covers(new.epoch)
}

/// Adds `c` to `out`, merging with an earlier conflict against the same access.
fn note(out: &mut Vec<Conflict>, prev: &Arc<Access>, lo: usize, hi: usize) {
    match out.iter_mut().find(|c| Arc::ptr_eq(&c.prev, prev)) {
        Some(c) => (c.lo, c.hi) = (c.lo.min(lo), c.hi.max(hi)),
        None => out.push(Conflict { prev: prev.clone(), lo, hi }),
    }
}

impl Shadow {
    /// Records `acc` (with vector clock `vc`) over bytes `[lo, hi)` of `mem`; returns the
    /// earlier accesses it conflicts with.
    pub(crate) fn access(
        &mut self,
        mem: MemKey,
        lo: usize,
        hi: usize,
        acc: &Arc<Access>,
        vc: &VClock,
    ) -> Vec<Conflict> {
        let map = self.mems.entry(mem).or_default();
        split(map, lo);
        split(map, hi);
        fill_gaps(map, lo, hi);
        let mut out = Vec::new();
        for (&s, seg) in map.range_mut(lo..hi) {
            if let Some(w) = &seg.write
                && conflicts(acc, w, vc)
            {
                note(&mut out, w, s, seg.end);
            }
            if acc.kind != Kind::Read {
                for r in seg.reads.iter().filter(|r| conflicts(acc, r, vc)) {
                    note(&mut out, r, s, seg.end);
                }
            }
        }
        match acc.kind {
            Kind::Read => {
                for seg in map.range_mut(lo..hi).map(|(_, s)| s) {
                    // A read that happened before this one adds nothing a later write could
                    // not learn from this one.
                    seg.reads.retain(|r| !vc.covers(r.epoch));
                    seg.reads.push(acc.clone());
                }
            }
            Kind::Write | Kind::Atomic => {
                let keys: Vec<usize> = map.range(lo..hi).map(|(&k, _)| k).collect();
                for k in keys {
                    map.remove(&k);
                }
                map.insert(lo, Seg { end: hi, write: Some(acc.clone()), reads: Vec::new() });
            }
        }
        out
    }
}

/// Splits the segment that straddles `at`, so a segment starts there.
fn split(map: &mut BTreeMap<usize, Seg>, at: usize) {
    let Some((&s, seg)) = map.range_mut(..at).next_back() else { return };
    if seg.end <= at {
        return;
    }
    let tail = Seg { end: seg.end, write: seg.write.clone(), reads: seg.reads.clone() };
    seg.end = at;
    debug_assert!(s < at);
    map.insert(at, tail);
}

/// Inserts empty segments over the parts of `[lo, hi)` no segment covers.
fn fill_gaps(map: &mut BTreeMap<usize, Seg>, lo: usize, hi: usize) {
    let mut gaps = Vec::new();
    let mut cursor = lo;
    for (&s, seg) in map.range(lo..hi) {
        if s > cursor {
            gaps.push((cursor, s));
        }
        cursor = seg.end;
    }
    if cursor < hi {
        gaps.push((cursor, hi));
    }
    for (a, b) in gaps {
        map.insert(a, Seg { end: b, write: None, reads: Vec::new() });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acc(strand: u32, clock: u32, kind: Kind) -> Arc<Access> {
        Arc::new(Access {
            epoch: Epoch { strand, clock },
            vc: Arc::new(VClock::default()),
            kind,
            who: Who { rank: 0, block: 0, task: "t".into(), dispatch: "d".into(), instance: 0 },
            op: "op",
            view: View { buffer: "b".into(), base: 0, esize: 4 },
            time: SimTime::ZERO,
            location: None,
        })
    }

    fn vc(entries: &[(u32, u32)]) -> VClock {
        let mut v = VClock::default();
        for &(s, c) in entries {
            v.set(s, c);
        }
        v
    }

    const MEM: MemKey = MemKey::Win { domain: 0, member: 0, chip: 0 };

    #[test]
    fn unordered_write_then_read_conflicts_over_the_overlap() {
        let mut sh = Shadow::default();
        assert!(sh.access(MEM, 0, 100, &acc(1, 1, Kind::Write), &vc(&[(1, 1)])).is_empty());
        let c = sh.access(MEM, 50, 150, &acc(2, 1, Kind::Read), &vc(&[(2, 1)]));
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].lo, c[0].hi), (50, 100));
        // Ordered after the write: no conflict.
        assert!(sh.access(MEM, 0, 100, &acc(3, 1, Kind::Read), &vc(&[(1, 1), (3, 1)])).is_empty());
    }

    #[test]
    fn a_write_conflicts_with_unordered_reads_and_atomics_commute() {
        let mut sh = Shadow::default();
        sh.access(MEM, 0, 8, &acc(1, 1, Kind::Read), &vc(&[(1, 1)]));
        sh.access(MEM, 0, 8, &acc(2, 1, Kind::Read), &vc(&[(2, 1)]));
        // Ordered after reader 1 only.
        let c = sh.access(MEM, 0, 8, &acc(3, 1, Kind::Write), &vc(&[(1, 1), (3, 1)]));
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].prev.epoch.strand, 2);
        let mut sh = Shadow::default();
        sh.access(MEM, 0, 8, &acc(1, 1, Kind::Atomic), &vc(&[(1, 1)]));
        assert!(sh.access(MEM, 0, 8, &acc(2, 1, Kind::Atomic), &vc(&[(2, 1)])).is_empty());
        assert_eq!(sh.access(MEM, 0, 8, &acc(3, 1, Kind::Read), &vc(&[(3, 1)])).len(), 1);
    }

    #[test]
    fn writes_coalesce_segments() {
        let mut sh = Shadow::default();
        for i in 0..10 {
            sh.access(MEM, i * 4, i * 4 + 4, &acc(1, 1, Kind::Read), &vc(&[(1, 1)]));
        }
        sh.access(MEM, 0, 40, &acc(1, 2, Kind::Write), &vc(&[(1, 2)]));
        assert_eq!(sh.mems[&MEM].len(), 1);
    }
}
