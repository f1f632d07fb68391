//! The bytes an operation moves: the real bytes, or, in a timing-only run, only how many there
//! are. Sizes (and so every time) come from [`Payload::len`] either way, so a timing-only run
//! gives the times of a payload run without allocating, copying or combining a byte.

/// Bytes in flight between memory, the network and UB tiles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Payload {
    /// The bytes themselves.
    Bytes(Vec<u8>),
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

    /// The bytes, if they are kept.
    pub(crate) fn bytes(&self) -> Option<&[u8]> {
        match self {
            Payload::Bytes(b) => Some(b),
            Payload::Absent(_) => None,
        }
    }

    /// The bytes, zeros standing in for absent ones (for the few small values a kernel reads
    /// back as numbers, such as a scalar).
    pub(crate) fn into_bytes(self) -> Vec<u8> {
        match self {
            Payload::Bytes(b) => b,
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
        let b = Payload::Bytes(vec![1, 2]);
        assert_eq!((b.len(), b.bytes()), (2, Some(&[1u8, 2][..])));
    }
}
