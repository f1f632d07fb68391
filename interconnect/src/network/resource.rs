//! One resource of the machine (a DMA engine, an HBM, a port, a link) and its booking
//! calendar. A resource serves one packet at a time at its rate. Bookings are kept as a sorted
//! list of busy intervals, so a packet may use an idle gap before a booking made earlier for a
//! later time: a packet held up elsewhere on its path does not block the resources it has not
//! reached yet.

use sim_core::{Bandwidth, SimDuration, SimTime};

/// Picoseconds per second, as `Bandwidth::time_for` scales bytes (a unit test pins the two
/// together).
const PS_PER_S: u64 = 1_000_000_000_000;

/// A resource's booking state: only what `book` touches per packet, in one 64-byte line
/// (names and chips live in the network's cold tables).
#[derive(Clone, Debug)]
pub(super) struct Resource {
    /// The rate in bytes per second, 0 for unlimited (a `Bandwidth` is never 0).
    bps: u64,
    pub(super) latency: SimDuration,
    /// The last `(bytes, ps)` serialisation worked out: packets mostly have one size.
    last_ser: (u64, u64),
    /// Disjoint busy intervals `[start, end)` in ps, in order, from index `head` on (the
    /// ones before it have ended); touching ones are merged. A plain vector, searched and
    /// shifted as one slice, and cut at its head now and then.
    booked: Vec<(u64, u64)>,
    head: usize,
}

/// Where a packet sits on one resource: `start` is when its first byte leaves, `end` its last.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct Slot {
    pub(super) start: SimTime,
    pub(super) end: SimTime,
}

impl Resource {
    pub(super) fn new(rate: Option<Bandwidth>, latency: SimDuration) -> Resource {
        let bps = rate.map_or(0, Bandwidth::bytes_per_s);
        Resource { bps, latency, last_ser: (0, 0), booked: Vec::new(), head: 0 }
    }

    /// Reads the state `book` starts from (the oldest live booking's end), so a packet's
    /// walk can load every hop's lines before it books any (see `NetworkModel::send`).
    #[inline]
    pub(super) fn warm(&self) -> u64 {
        self.booked.get(self.head).map_or(self.bps, |b| b.1)
    }

    /// The effective rate (`None` = unlimited).
    pub(super) fn rate(&self) -> Option<Bandwidth> {
        Bandwidth::from_bytes_per_s(self.bps)
    }

    /// Time to serialise `bytes` here in ps (zero when unlimited): exactly
    /// `Bandwidth::time_for`, rounded up, but with a 64-bit division whenever
    /// `bytes * PS_PER_S` fits in 64 bits (any packet below 18 MB) instead of a 128-bit one.
    pub(super) fn ser_ps(&self, bytes: u64) -> u64 {
        if self.bps == 0 {
            return 0;
        }
        match bytes.checked_mul(PS_PER_S) {
            Some(scaled) => scaled.div_ceil(self.bps),
            None => self.rate().map_or(0, |r| r.time_for(bytes).as_ps()),
        }
    }

    /// Books the earliest slot for a packet of `bytes` whose first byte is here at `ready` and
    /// whose last byte is here at `last_in` (the upstream end plus latency). The resource
    /// sends the packet in one burst of `ser(bytes)` that starts no earlier than `ready` and
    /// ends no earlier than `last_in`: a resource faster than its upstream is busy only for its
    /// own serialisation time. A packet of no bytes (a request) books nothing but waits for
    /// the resource to be idle; an unlimited resource neither books nor waits. `now` is the
    /// current event time (bookings that ended by then are forgotten).
    #[inline]
    pub(super) fn book(&mut self, bytes: u64, ready: SimTime, last_in: SimTime, now: SimTime) -> Slot {
        if self.bps == 0 {
            return Slot { start: ready, end: ready.max(last_in) };
        }
        self.forget_ended(now.as_ps());
        let ser = if self.last_ser.0 == bytes {
            self.last_ser.1
        } else {
            let ps = self.ser_ps(bytes);
            self.last_ser = (bytes, ps);
            ps
        };
        if ser == 0 {
            let t = self.idle_from(ready.max(last_in).as_ps());
            return Slot { start: SimTime::from_ps(t), end: SimTime::from_ps(t) };
        }
        // Saturating: a sum past the u64 clock ends at `SimTime::NEVER`, which the engine
        // refuses to schedule (an overflow error), never a wrap.
        let mut end = ready.as_ps().saturating_add(ser).max(last_in.as_ps());
        // The common case: the packet starts after every booking ends (the search below would
        // find nothing in its way either). Appended in place, merged with a touching last
        // booking that has not ended (what `insert` at the end does, without the call).
        let start = end - ser;
        let len = self.booked.len();
        match self.booked.last_mut() {
            Some(last) if last.1 <= start => {
                if last.1 == start && len > self.head {
                    last.1 = end;
                } else {
                    self.booked.push((start, end));
                }
                return Slot { start: SimTime::from_ps(start), end: SimTime::from_ps(end) };
            }
            None => {
                self.booked.push((start, end));
                return Slot { start: SimTime::from_ps(start), end: SimTime::from_ps(end) };
            }
            Some(_) => {}
        }
        self.book_behind(ser, &mut end);
        Slot { start: SimTime::from_ps(end - ser), end: SimTime::from_ps(end) }
    }

    /// The slow case of `book`: a booking ends after the earliest start `end - ser`, so the
    /// packet takes the first gap that holds it; `end` moves to where it ends.
    #[inline(never)]
    fn book_behind(&mut self, ser: u64, end: &mut u64) {
        // Bookings that end before the earliest start cannot hold the packet up; their ends
        // increase along the list, so they are a prefix found by bisection (a port many
        // senders share keeps a long calendar).
        let first = self.head + self.booked[self.head..].partition_point(|&(_, b)| b <= *end - ser);
        let mut at = self.booked.len();
        for (i, &(a, b)) in self.booked.iter().enumerate().skip(first) {
            if b <= *end - ser {
                continue;
            }
            if a >= *end {
                at = i;
                break;
            }
            *end = (*end).max(b.saturating_add(ser));
        }
        self.insert(at, (*end - ser, *end));
    }

    /// The first instant from `t` on when no booking is in progress.
    fn idle_from(&self, t: u64) -> u64 {
        self.booked[self.head..].iter().find(|&&(a, b)| a <= t && t < b).map_or(t, |&(_, b)| b)
    }

    /// Moves the head past the bookings that ended by `now`, and drops them once they are
    /// half the vector.
    #[inline]
    fn forget_ended(&mut self, now: u64) {
        // Mostly none or one booking has ended since the last packet: the first is stepped
        // over by arithmetic, not a branch, whose outcome would be a coin toss.
        let mut head = self.head;
        if let Some(&(_, e)) = self.booked.get(head) {
            head += usize::from(e <= now);
        }
        while self.booked.get(head).is_some_and(|&(_, e)| e <= now) {
            head += 1;
        }
        self.head = head;
        if head >= 32 && 2 * head >= self.booked.len() {
            self.booked.drain(..head);
            self.head = 0;
        }
    }

    /// Inserts a busy interval before index `at` (at or after the head), merging it with
    /// touching neighbours that have not ended.
    fn insert(&mut self, at: usize, (s, e): (u64, u64)) {
        let joins_prev = at > self.head && self.booked[at - 1].1 == s;
        let joins_next = self.booked.get(at).is_some_and(|&(a, _)| a == e);
        match (joins_prev, joins_next) {
            (true, true) => {
                self.booked[at - 1].1 = self.booked[at].1;
                self.booked.remove(at);
            }
            (true, false) => self.booked[at - 1].1 = e,
            (false, true) => self.booked[at].0 = s,
            (false, false) => self.booked.insert(at, (s, e)),
        }
    }

    /// Forgets every booking.
    pub(super) fn reset(&mut self) {
        self.booked.clear();
        self.head = 0;
    }

    #[cfg(test)]
    pub(super) fn bookings(&self) -> Vec<(u64, u64)> {
        self.booked[self.head..].to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1 byte per ns.
    fn res() -> Resource {
        Resource::new(Bandwidth::from_bytes_per_s(1_000_000_000), SimDuration::ZERO)
    }

    fn t(ns: u64) -> SimTime {
        SimTime::from_ps(ns * 1000)
    }

    fn slot(r: &mut Resource, bytes: u64, ready: u64, last_in: u64) -> (u64, u64) {
        let s = r.book(bytes, t(ready), t(last_in), SimTime::ZERO);
        (s.start.as_ps() / 1000, s.end.as_ps() / 1000)
    }

    #[test]
    fn back_to_back_packets_queue_and_merge() {
        let mut r = res();
        assert_eq!(slot(&mut r, 10, 0, 0), (0, 10));
        assert_eq!(slot(&mut r, 10, 0, 0), (10, 20));
        assert_eq!(r.bookings(), vec![(0, 20_000)]);
    }

    #[test]
    fn ended_bookings_are_forgotten_and_gaps_still_fill_after_the_calendar_is_cut() {
        let mut r = res();
        // 100 packets 20 ns apart, each booked when the previous one has ended: the head
        // passes 32 and the ended prefix is dropped along the way.
        for i in 0..100u64 {
            let s = r.book(10, t(20 * i), t(0), t(20 * i));
            assert_eq!((s.start, s.end), (t(20 * i), t(20 * i + 10)));
        }
        assert_eq!(r.bookings(), vec![(1_980_000, 1_990_000)]);
        assert!(r.booked.len() < 100, "the ended bookings were never dropped");
        // A booking far ahead, then a packet that fits in the gap before it.
        assert_eq!(r.book(10, t(3000), t(0), t(1985)).start, t(3000));
        assert_eq!(r.book(10, t(2000), t(0), t(1985)).start, t(2000));
        // One that does not fit before the 3000 ns booking goes after it.
        assert_eq!(r.book(995, t(2010), t(0), t(1985)).start, t(3010));
        assert_eq!(r.bookings(), vec![(1_980_000, 1_990_000), (2_000_000, 2_010_000), (3_000_000, 4_005_000)]);
    }

    #[test]
    fn a_packet_fills_an_idle_gap_before_a_later_booking() {
        let mut r = res();
        assert_eq!(slot(&mut r, 10, 100, 0), (100, 110));
        // Fits before it.
        assert_eq!(slot(&mut r, 50, 0, 0), (0, 50));
        // Does not fit in the 50..100 gap: goes after.
        assert_eq!(slot(&mut r, 60, 40, 0), (110, 170));
        // Fits exactly.
        assert_eq!(slot(&mut r, 50, 50, 0), (50, 100));
        assert_eq!(r.bookings(), vec![(0, 170_000)]);
    }

    #[test]
    fn a_fast_resource_is_busy_only_for_its_own_serialisation() {
        let mut r = res();
        // First byte at 0, last byte at 100 (slow upstream): 10 bytes go out 90..100.
        assert_eq!(slot(&mut r, 10, 0, 100), (90, 100));
        // A second slow stream interleaves in the gap.
        assert_eq!(slot(&mut r, 10, 0, 50), (40, 50));
    }

    #[test]
    fn an_empty_packet_waits_for_the_resource_to_be_idle() {
        let mut r = res();
        slot(&mut r, 10, 0, 0);
        assert_eq!(slot(&mut r, 0, 5, 0), (10, 10));
        assert_eq!(slot(&mut r, 0, 12, 0), (12, 12));
        assert_eq!(r.bookings(), vec![(0, 10_000)]);
    }

    #[test]
    fn unlimited_resources_book_nothing() {
        let mut r = Resource::new(None, SimDuration::ZERO);
        assert_eq!(slot(&mut r, 10, 5, 20), (5, 20));
        assert!(r.bookings().is_empty());
    }

    #[test]
    fn past_bookings_are_forgotten() {
        let mut r = res();
        slot(&mut r, 10, 0, 0);
        r.book(10, t(30), t(0), t(15));
        assert_eq!(r.bookings(), vec![(30_000, 40_000)]);
    }

    #[test]
    fn serialisation_is_exactly_bandwidth_time_for() {
        let rates = [1, 3, 7, 999_999_937, 1_000_000_000, 28_000_000_000, 56_123_456_789, u64::MAX];
        let sizes = [0, 1, 2, 27, 28, 4096, 65_536, 1 << 20, 18_446_744, 18_446_745, 1 << 40, u64::MAX];
        for bps in rates {
            let rate = Bandwidth::from_bytes_per_s(bps).unwrap();
            let r = Resource::new(Some(rate), SimDuration::ZERO);
            assert_eq!(r.rate(), Some(rate));
            for bytes in sizes {
                assert_eq!(r.ser_ps(bytes), rate.time_for(bytes).as_ps(), "{bytes} B at {bps} B/s");
            }
        }
        assert_eq!(Resource::new(None, SimDuration::ZERO).ser_ps(1 << 30), 0);
    }
}
