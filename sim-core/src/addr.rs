//! Addresses of simulated memory, shared by every layer that names bytes or signal cells: the
//! program API resolves tensors into them, the engine orders accesses by them, memory stores
//! under them and the checker keeps its shadow state by them. They depend on nothing above
//! [`crate::tensor`].

use crate::tensor::Region;
use std::panic::Location;
use std::sync::Arc;

/// Where in the kernel's source an operation was called, when known.
pub(crate) type Caller = Option<&'static Location<'static>>;

/// Identifies one byte array of simulated memory.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum MemKey {
    /// GM buffer `buf` on chip `chip`.
    Gm { buf: usize, chip: usize },
    /// The window of comm domain `domain` held by its member `member` (dense rank).
    Win { domain: usize, member: usize },
}

/// A resolved region of one memory, and the chip that owns it.
#[derive(Clone, Debug)]
pub(crate) struct Place {
    pub(crate) mem: MemKey,
    pub(crate) chip: usize,
    pub(crate) region: Region,
    pub(crate) buffer: Arc<str>,
    /// Byte offset of the buffer in its memory, and its element size (for reports).
    pub(crate) base: usize,
    pub(crate) esize: usize,
}

/// One INT32 signal cell, with what a report needs to name it.
#[derive(Clone, Debug)]
pub(crate) struct CellRef {
    pub(crate) mem: MemKey,
    pub(crate) chip: usize,
    pub(crate) offset: usize,
    pub(crate) buffer: Arc<str>,
    pub(crate) coords: Vec<usize>,
}
