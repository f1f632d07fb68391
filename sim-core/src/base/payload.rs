//! The bytes an operation moves: the real bytes, or, in a timing-only run, only how many there
//! are. Sizes (and so every time) come from [`Payload::len`] either way, so a timing-only run
//! gives the times of a payload run without allocating, copying or combining a byte.
//!
//! The bytes are shared, not copied, when a payload is cloned: a store hands the engine its
//! tile's bytes, which the tile and the write in flight then hold together until one of them
//! goes; whoever changes shared bytes first gets a copy of its own ([`Payload::bytes_mut`]).

use std::sync::Arc;

/// Bytes in flight between memory, the network and UB tiles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Payload {
    /// The bytes themselves (shared between clones).
    Bytes(Arc<Vec<u8>>),
    /// A timing-only run's stand-in for this many bytes (they read as zeros).
    Absent(usize),
}

impl Payload {
    /// How many bytes this is.
    pub(crate) fn len(&self) -> usize {
        match self {
            Payload::Bytes(b) => b.len(),
            Payload::Absent(n) => *n,
        }
    }

    /// Payload of the bytes `b`.
    pub(crate) fn of(b: Vec<u8>) -> Payload {
        Payload::Bytes(Arc::new(b))
    }

    /// The bytes, if they are kept.
    pub(crate) fn bytes(&self) -> Option<&[u8]> {
        match self {
            Payload::Bytes(b) => Some(b),
            Payload::Absent(_) => None,
        }
    }

    /// The bytes to change, if they are kept: copied first when another payload shares them.
    pub(crate) fn bytes_mut(&mut self) -> Option<&mut Vec<u8>> {
        match self {
            Payload::Bytes(b) => Some(Arc::make_mut(b)),
            Payload::Absent(_) => None,
        }
    }

    /// The bytes, zeros standing in for absent ones (for the few small values a kernel reads
    /// back as numbers, such as a scalar); copied only when still shared.
    pub(crate) fn into_bytes(self) -> Vec<u8> {
        match self {
            Payload::Bytes(b) => Arc::unwrap_or_clone(b),
            Payload::Absent(n) => vec![0; n],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_bytes_keep_their_count_and_read_as_zeros() {
        let p = Payload::Absent(3);
        assert_eq!((p.len(), p.bytes()), (3, None));
        assert_eq!(p.into_bytes(), vec![0, 0, 0]);
        let b = Payload::of(vec![1, 2]);
        assert_eq!((b.len(), b.bytes()), (2, Some(&[1u8, 2][..])));
    }

    /// A clone shares the bytes; changing either copies them first, so the other keeps its
    /// value; an unshared payload changes and gives up its own buffer.
    #[test]
    fn clones_share_bytes_until_one_changes_them() {
        let mut a = Payload::of(vec![1, 2, 3]);
        let b = a.clone();
        let at = |p: &Payload| p.bytes().unwrap().as_ptr();
        assert_eq!(at(&a), at(&b), "a clone copies nothing");
        a.bytes_mut().unwrap()[0] = 9;
        assert_ne!(at(&a), at(&b), "the changed one has its own copy");
        assert_eq!((a.bytes().unwrap(), b.bytes().unwrap()), (&[9u8, 2, 3][..], &[1u8, 2, 3][..]));
        let (before, mut c) = (at(&b), b);
        c.bytes_mut().unwrap()[1] = 7;
        assert_eq!(at(&c), before, "unshared, it is changed in place");
        let back = c.into_bytes();
        assert_eq!(back.as_ptr(), before, "its own buffer comes back, not a copy");
        assert_eq!(Payload::Absent(2).bytes_mut(), None);
    }
}
