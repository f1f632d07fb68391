//! State kept per actor, for the actors an engine runs. An engine that runs one partition of
//! a split run holds it only for the span of actors from its first own chip's to its last
//! own chip's (all of them when partitions are consecutive islands of consecutive chips), so
//! a process of a run split over processes never allocates the cores of chips it does not
//! run. Entries are indexed by global actor number, as keys and requests name actors.

use std::ops::{Index, IndexMut, Range};

/// One `T` per actor of a span of actors, indexed by global actor number.
#[derive(Clone, Debug, Default)]
pub(crate) struct PerActor<T> {
    /// The first actor held.
    first: usize,
    items: Vec<T>,
}

impl<T> PerActor<T> {
    /// `make()` for every actor of `span`.
    pub(crate) fn new(span: Range<usize>, make: impl FnMut() -> T) -> PerActor<T> {
        let first = span.start;
        PerActor { first, items: std::iter::repeat_with(make).take(span.len()).collect() }
    }

    /// The actors held.
    pub(crate) fn span(&self) -> Range<usize> {
        self.first..self.first + self.items.len()
    }

    /// `actor`'s entry, if it is held.
    #[inline]
    pub(crate) fn get(&self, actor: usize) -> Option<&T> {
        self.items.get(actor.wrapping_sub(self.first))
    }

    /// Every entry with its actor, in actor order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, &T)> {
        let first = self.first;
        self.items.iter().enumerate().map(move |(i, t)| (first + i, t))
    }

    /// Every entry with its actor, in actor order, to change.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = (usize, &mut T)> {
        let first = self.first;
        self.items.iter_mut().enumerate().map(move |(i, t)| (first + i, t))
    }
}

impl<T: Clone> PerActor<T> {
    /// `value` for every actor of `span`.
    pub(crate) fn filled(span: Range<usize>, value: T) -> PerActor<T> {
        PerActor { first: span.start, items: vec![value; span.len()] }
    }
}

/// `actor`'s entry; an actor outside the span is a bug of the engine (an event applied on
/// another partition's chip), and panics as an index out of bounds does.
impl<T> Index<usize> for PerActor<T> {
    type Output = T;

    #[inline]
    fn index(&self, actor: usize) -> &T {
        &self.items[actor.wrapping_sub(self.first)]
    }
}

impl<T> IndexMut<usize> for PerActor<T> {
    #[inline]
    fn index_mut(&mut self, actor: usize) -> &mut T {
        &mut self.items[actor.wrapping_sub(self.first)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_indexed_by_global_actor_and_only_the_span_is_held() {
        let mut p = PerActor::filled(8..12, 0u32);
        p[9] = 5;
        p[11] += 1;
        assert_eq!(p.span(), 8..12);
        assert_eq!(p.iter().map(|(a, &v)| (a, v)).collect::<Vec<_>>(), [(8, 0), (9, 5), (10, 0), (11, 1)]);
        assert_eq!((p.get(7), p.get(12), p.get(9)), (None, None, Some(&5)));
        let made = PerActor::new(2..4, || vec![1u8]);
        assert_eq!(made.iter().map(|(a, v)| (a, v.len())).collect::<Vec<_>>(), [(2, 1), (3, 1)]);
    }

    #[test]
    #[should_panic(expected = "index out of bounds")]
    fn an_actor_before_the_span_is_not_held() {
        let p = PerActor::filled(8..12, 0u32);
        let _ = p[3];
    }
}
