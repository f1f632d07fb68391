//! The tiles of an AIC (cube) core: [`CubeTile`], tagged with the buffer it sits in
//! ([`CubeBuf`]: L1, L0A, L0B or L0C). The operations on them are in `ops/cube.rs`.

use crate::base::dtype::DType;
use crate::base::tile::Tile;
use std::fmt;

/// A buffer of an AIC core.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum CubeBuf {
    /// The L1 (Mat) buffer, filled from GM.
    L1,
    /// L0A: the left operand of a matmul.
    L0A,
    /// L0B: the right operand of a matmul.
    L0B,
    /// L0C: the accumulator (f32, or i32 for i8 inputs).
    L0C,
}

impl fmt::Display for CubeBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CubeBuf::L1 => "L1",
            CubeBuf::L0A => "L0A",
            CubeBuf::L0B => "L0B",
            CubeBuf::L0C => "L0C",
        })
    }
}

/// A tile held in one of an AIC core's buffers.
#[derive(Clone, PartialEq)]
pub struct CubeTile {
    pub(super) tile: Tile,
    pub(super) buf: CubeBuf,
}

impl fmt::Debug for CubeTile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{:?}", self.buf, self.tile)
    }
}

impl CubeTile {
    /// The buffer it sits in.
    pub fn buf(&self) -> CubeBuf {
        self.buf
    }

    /// Its value (for inspection; a cube core has no vector unit to compute on it).
    pub fn tile(&self) -> &Tile {
        &self.tile
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.tile.dtype()
    }

    /// Physical shape `(rows, cols)`.
    pub fn shape(&self) -> (usize, usize) {
        self.tile.shape()
    }

    /// Valid shape `(rows, cols)`.
    pub fn valid_shape(&self) -> (usize, usize) {
        self.tile.valid_shape()
    }
}
