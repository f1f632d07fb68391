//! Sparse vector clocks over strands (one strand per block execution), for happens-before.

/// One access's place in its strand: the strand's own clock when it was issued.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Epoch {
    pub(crate) strand: u32,
    pub(crate) clock: u32,
}

/// A vector clock: for each strand it has heard of, the latest clock value it has seen, as a
/// list sorted by strand (strands a clock never heard of read as 0).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct VClock(Vec<(u32, u32)>);

impl VClock {
    /// The clock value for `strand`.
    pub(crate) fn get(&self, strand: u32) -> u32 {
        match self.0.binary_search_by_key(&strand, |e| e.0) {
            Ok(i) => self.0[i].1,
            Err(_) => 0,
        }
    }

    /// Sets the value for `strand`.
    pub(crate) fn set(&mut self, strand: u32, clock: u32) {
        match self.0.binary_search_by_key(&strand, |e| e.0) {
            Ok(i) => self.0[i].1 = clock,
            Err(i) => self.0.insert(i, (strand, clock)),
        }
    }

    /// Takes, per strand, the larger of the two values.
    pub(crate) fn join(&mut self, other: &VClock) {
        if other.0.is_empty() {
            return;
        }
        let mut out = Vec::with_capacity(self.0.len().max(other.0.len()));
        let (mut a, mut b) = (self.0.iter().peekable(), other.0.iter().peekable());
        loop {
            match (a.peek(), b.peek()) {
                (Some(&&x), Some(&&y)) if x.0 == y.0 => {
                    out.push((x.0, x.1.max(y.1)));
                    a.next();
                    b.next();
                }
                (Some(&&x), Some(&&y)) if x.0 < y.0 => {
                    out.push(x);
                    a.next();
                }
                (Some(_), Some(&&y)) => {
                    out.push(y);
                    b.next();
                }
                (Some(&&x), None) => {
                    out.push(x);
                    a.next();
                }
                (None, Some(&&y)) => {
                    out.push(y);
                    b.next();
                }
                (None, None) => break,
            }
        }
        self.0 = out;
    }

    /// Whether the access at `e` happened before anything this clock stamps.
    pub(crate) fn covers(&self, e: Epoch) -> bool {
        self.get(e.strand) >= e.clock
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vc(entries: &[(u32, u32)]) -> VClock {
        let mut v = VClock::default();
        for &(s, c) in entries {
            v.set(s, c);
        }
        v
    }

    #[test]
    fn join_takes_the_larger_value_per_strand() {
        let mut a = vc(&[(1, 3), (4, 1)]);
        a.join(&vc(&[(0, 2), (1, 1), (4, 5), (9, 1)]));
        assert_eq!(a, vc(&[(0, 2), (1, 3), (4, 5), (9, 1)]));
    }

    #[test]
    fn covers_compares_the_strands_clock() {
        let a = vc(&[(2, 4)]);
        assert!(a.covers(Epoch { strand: 2, clock: 4 }));
        assert!(!a.covers(Epoch { strand: 2, clock: 5 }));
        assert!(!a.covers(Epoch { strand: 3, clock: 1 }));
    }
}
