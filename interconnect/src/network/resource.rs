//! One resource of the machine (a DMA engine, an HBM, a port, a link) and its booking
//! calendar. A resource serves one packet at a time at its rate. Bookings are kept as a sorted
//! list of busy intervals, so a packet may use an idle gap before a booking made earlier for a
//! later time: a packet held up elsewhere on its path does not block the resources it has not
//! reached yet.

use sim_core::{Bandwidth, SimDuration, SimTime};

/// A resource and when it is booked.
#[derive(Clone, Debug)]
pub(super) struct Resource {
    pub(super) name: String,
    pub(super) chip: usize,
    pub(super) rate: Option<Bandwidth>,
    pub(super) latency: SimDuration,
    /// Disjoint busy intervals `[start, end)` in ps, in order, from index `head` on (the
    /// ones before it have ended); touching ones are merged. A plain vector, searched and
    /// shifted as one slice, and cut at its head now and then.
    booked: Vec<(u64, u64)>,
    head: usize,
    /// The last `(bytes, ps)` serialisation worked out: packets mostly have one size, and the
    /// exact time is a 128-bit division.
    last_ser: (u64, u64),
}

/// Where a packet sits on one resource: `start` is when its first byte leaves, `end` its last.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct Slot {
    pub(super) start: SimTime,
    pub(super) end: SimTime,
}

impl Resource {
    pub(super) fn new(name: String, chip: usize, rate: Option<Bandwidth>, latency: SimDuration) -> Resource {
        Resource { name, chip, rate, latency, booked: Vec::new(), head: 0, last_ser: (0, 0) }
    }

    /// Time to serialise `bytes` here (zero when unlimited).
    pub(super) fn ser(&self, bytes: u64) -> SimDuration {
        self.rate.map_or(SimDuration::ZERO, |r| r.time_for(bytes))
    }

    /// Books the earliest slot for a packet of `bytes` whose first byte is here at `ready` and
    /// whose last byte is here at `last_in` (the upstream end plus latency). The resource
    /// sends the packet in one burst of `ser(bytes)` that starts no earlier than `ready` and
    /// ends no earlier than `last_in`: a resource faster than its upstream is busy only for its
    /// own serialisation time. A packet of no bytes (a request) books nothing but waits for
    /// the resource to be idle; an unlimited resource neither books nor waits. `now` is the
    /// current event time (bookings that ended by then are forgotten).
    pub(super) fn book(&mut self, bytes: u64, ready: SimTime, last_in: SimTime, now: SimTime) -> Slot {
        if self.rate.is_none() {
            return Slot { start: ready, end: ready.max(last_in) };
        }
        self.forget_ended(now.as_ps());
        let ser = match self.last_ser {
            (b, ps) if b == bytes => ps,
            _ => {
                let ps = self.ser(bytes).as_ps();
                self.last_ser = (bytes, ps);
                ps
            }
        };
        if ser == 0 {
            let t = self.idle_from(ready.max(last_in).as_ps());
            return Slot { start: SimTime::from_ps(t), end: SimTime::from_ps(t) };
        }
        // Saturating: a sum past the u64 clock ends at `SimTime::NEVER`, which the engine
        // refuses to schedule (an overflow error), never a wrap.
        let mut end = ready.as_ps().saturating_add(ser).max(last_in.as_ps());
        // The common case: the packet starts after every booking ends (the search below would
        // find nothing in its way either).
        if self.booked.last().is_none_or(|&(_, b)| b <= end - ser) {
            self.insert(self.booked.len(), (end - ser, end));
            return Slot { start: SimTime::from_ps(end - ser), end: SimTime::from_ps(end) };
        }
        // Bookings that end before the earliest start cannot hold the packet up; their ends
        // increase along the list, so they are a prefix found by bisection (a port many
        // senders share keeps a long calendar).
        let first = self.head + self.booked[self.head..].partition_point(|&(_, b)| b <= end - ser);
        let mut at = self.booked.len();
        for (i, &(a, b)) in self.booked.iter().enumerate().skip(first) {
            if b <= end - ser {
                continue;
            }
            if a >= end {
                at = i;
                break;
            }
            end = end.max(b.saturating_add(ser));
        }
        self.insert(at, (end - ser, end));
        Slot { start: SimTime::from_ps(end - ser), end: SimTime::from_ps(end) }
    }

    /// The first instant from `t` on when no booking is in progress.
    fn idle_from(&self, t: u64) -> u64 {
        self.booked[self.head..].iter().find(|&&(a, b)| a <= t && t < b).map_or(t, |&(_, b)| b)
    }

    /// Moves the head past the bookings that ended by `now`, and drops them once they are
    /// half the vector.
    fn forget_ended(&mut self, now: u64) {
        while self.booked.get(self.head).is_some_and(|&(_, e)| e <= now) {
            self.head += 1;
        }
        if self.head >= 32 && 2 * self.head >= self.booked.len() {
            self.booked.drain(..self.head);
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
        Resource::new("r".into(), 0, Bandwidth::from_bytes_per_s(1_000_000_000), SimDuration::ZERO)
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
        let mut r = Resource::new("r".into(), 0, None, SimDuration::ZERO);
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
}
