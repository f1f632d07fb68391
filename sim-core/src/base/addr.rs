//! Addresses of simulated memory, shared by every layer that names bytes or signal cells: the
//! program API resolves tensors into them, the engine orders accesses by them, memory stores
//! under them and the checker keeps its shadow state by them. They depend on nothing above
//! [`crate::base::tensor`].

use crate::base::tensor::{Region, Tensor};
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::panic::Location;
use std::sync::Arc;

/// Where in the kernel's source an operation was called, when known.
pub(crate) type Caller = Option<&'static Location<'static>>;

/// Identifies one byte array of simulated memory, and the chip that holds it. Fields are
/// 32-bit (a world has far fewer ranks, buffers and domains), so the addresses every request
/// and event carries stay small to move.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub(crate) enum MemKey {
    /// GM buffer `buf` on chip `chip`.
    Gm { buf: u32, chip: u32 },
    /// The window of comm domain `domain` held by its member `member` (dense rank), which is
    /// chip `chip` (a function of the other two: it never tells two windows apart).
    Win { domain: u32, member: u32, chip: u32 },
}

impl MemKey {
    /// GM buffer `buf` on chip `chip`.
    pub(crate) fn gm(buf: usize, chip: usize) -> MemKey {
        MemKey::Gm { buf: narrow(buf), chip: narrow(chip) }
    }

    /// The window of domain `domain` held by member `member`, on chip `chip`.
    pub(crate) fn win(domain: usize, member: usize, chip: usize) -> MemKey {
        MemKey::Win { domain: narrow(domain), member: narrow(member), chip: narrow(chip) }
    }

    /// The chip that holds this memory.
    pub(crate) fn chip(&self) -> usize {
        match *self {
            MemKey::Gm { chip, .. } | MemKey::Win { chip, .. } => chip as usize,
        }
    }
}

/// A count or index as a 32-bit field, for what stays far below 2^32: ranks (at most 2^23,
/// `World::new`), cores, blocks, buffers and domains (one host call each), distinct task
/// names. Kept small, addresses and history entries move cheaply.
pub(crate) fn narrow(i: usize) -> u32 {
    debug_assert!(u32::try_from(i).is_ok(), "index {i} above 32 bits");
    u32::try_from(i).unwrap_or(u32::MAX)
}

/// A resolved region of one memory. The tensor it was resolved from names it in reports.
#[derive(Clone, Debug)]
pub(crate) struct Place {
    pub(crate) mem: MemKey,
    pub(crate) region: Region,
    pub(crate) tensor: Tensor,
}

impl Place {
    /// The chip that owns the memory.
    pub(crate) fn chip(&self) -> usize {
        self.mem.chip()
    }

    /// The buffer's name (for reports).
    pub(crate) fn buffer(&self) -> &Arc<str> {
        &self.tensor.0.name
    }

    /// Byte offset of the buffer in its memory (for reports).
    pub(crate) fn base(&self) -> usize {
        self.tensor.0.base
    }

    /// The buffer's element size (for reports).
    pub(crate) fn esize(&self) -> usize {
        self.tensor.dtype().size()
    }
}

/// One INT32 signal cell, with what a report needs to name it.
#[derive(Clone, Debug)]
pub(crate) struct CellRef {
    pub(crate) mem: MemKey,
    pub(crate) offset: usize,
    pub(crate) buffer: Arc<str>,
    pub(crate) coords: Coords,
}

impl CellRef {
    /// The chip that holds the cell.
    pub(crate) fn chip(&self) -> usize {
        self.mem.chip()
    }
}

/// The coordinates of a signal cell in its tensor, for reports. Signals are 1-D or 2-D in
/// practice, so up to two coordinates are kept inline and only more go to the heap: naming a
/// cell costs no allocation. Reads as a slice; equal when the coordinates are.
#[derive(Clone)]
pub(crate) enum Coords {
    /// One coordinate (a 1-D signal).
    One([usize; 1]),
    /// Two coordinates (a 2-D signal).
    Two([usize; 2]),
    /// Any other number (none, or three and more); a boxed slice, so `Coords` is as small as
    /// the `Vec` it replaces.
    Many(Box<[usize]>),
}

impl Coords {
    /// A copy of `c`, inline when it has one or two coordinates.
    pub(crate) fn new(c: &[usize]) -> Coords {
        match *c {
            [a] => Coords::One([a]),
            [a, b] => Coords::Two([a, b]),
            _ => Coords::Many(c.into()),
        }
    }
}

impl Default for Coords {
    /// No coordinates (a cell named by its byte offset alone).
    fn default() -> Coords {
        Coords::Many(Box::default())
    }
}

impl Deref for Coords {
    type Target = [usize];

    fn deref(&self) -> &[usize] {
        match self {
            Coords::One(c) => c,
            Coords::Two(c) => c,
            Coords::Many(c) => c,
        }
    }
}

impl DerefMut for Coords {
    fn deref_mut(&mut self) -> &mut [usize] {
        match self {
            Coords::One(c) => c,
            Coords::Two(c) => c,
            Coords::Many(c) => c,
        }
    }
}

impl PartialEq for Coords {
    fn eq(&self, other: &Coords) -> bool {
        **self == **other
    }
}

impl Eq for Coords {}

impl fmt::Debug for Coords {
    /// As the list of coordinates (the form a `Vec` printed).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// The cells one wait, test or `expect_clear` names, in row-major order. Most name a single
/// cell, which is kept inline; only two and more go to the heap, so a wait on one cell costs
/// no allocation. Reads as a slice of cells.
#[derive(Clone)]
pub(crate) enum Cells {
    /// Exactly one cell, inline.
    One(CellRef),
    /// Any other number (none, or two and more).
    Many(Vec<CellRef>),
}

impl Cells {
    /// Appends `c` after the cells already listed (moving to the heap at the second).
    pub(crate) fn push(&mut self, c: CellRef) {
        *self = match std::mem::take(self) {
            Cells::Many(v) if v.is_empty() => Cells::One(c),
            Cells::One(first) => Cells::Many(vec![first, c]),
            Cells::Many(mut v) => {
                v.push(c);
                Cells::Many(v)
            }
        };
    }
}

impl Default for Cells {
    /// No cells.
    fn default() -> Cells {
        Cells::Many(Vec::new())
    }
}

impl From<CellRef> for Cells {
    /// The one cell `c`.
    fn from(c: CellRef) -> Cells {
        Cells::One(c)
    }
}

impl Deref for Cells {
    type Target = [CellRef];

    fn deref(&self) -> &[CellRef] {
        match self {
            Cells::One(c) => std::slice::from_ref(c),
            Cells::Many(v) => v,
        }
    }
}

impl<'a> IntoIterator for &'a Cells {
    type Item = &'a CellRef;
    type IntoIter = std::slice::Iter<'a, CellRef>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl fmt::Debug for Cells {
    /// As the list of cells (the form a `Vec` printed).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(offset: usize, coords: &[usize]) -> CellRef {
        let mem = MemKey::win(0, 0, 0);
        CellRef { mem, offset, buffer: Arc::from("sig"), coords: Coords::new(coords) }
    }

    /// One and two coordinates are inline, others boxed; all read back as the slice given.
    #[test]
    fn coords_keep_up_to_two_inline_and_read_as_a_slice() {
        assert!(matches!(Coords::new(&[3]), Coords::One(_)));
        assert!(matches!(Coords::new(&[3, 1]), Coords::Two(_)));
        assert!(matches!(Coords::new(&[3, 1, 4]), Coords::Many(_)));
        for c in [&[][..], &[3], &[3, 1], &[3, 1, 4, 1]] {
            assert_eq!(&*Coords::new(c), c);
            assert_eq!(format!("{:?}", Coords::new(c)), format!("{c:?}"));
        }
        assert!(Coords::default().is_empty());
        assert_eq!(Coords::new(&[2, 7]), Coords::Many(vec![2, 7].into_boxed_slice()));
        assert_ne!(Coords::new(&[2, 7]), Coords::new(&[7, 2]));
        let mut c = Coords::new(&[2, 7]);
        c[1] += 1;
        assert_eq!(*c, [2, 8]);
    }

    /// The first cell is inline; pushing more keeps every cell in the order pushed.
    #[test]
    fn cells_keep_one_inline_and_the_order_pushed() {
        let mut cells = Cells::default();
        assert!(cells.is_empty());
        cells.push(cell(4, &[1]));
        assert!(matches!(cells, Cells::One(_)));
        cells.push(cell(8, &[2]));
        cells.push(cell(0, &[0]));
        assert!(matches!(cells, Cells::Many(_)));
        let offsets: Vec<usize> = (&cells).into_iter().map(|c| c.offset).collect();
        assert_eq!(offsets, [4, 8, 0]);
        assert_eq!(cells.iter().map(|c| c.coords[0]).collect::<Vec<_>>(), [1, 2, 0]);
        assert_eq!(Cells::from(cell(12, &[3, 0])).len(), 1);
    }
}
