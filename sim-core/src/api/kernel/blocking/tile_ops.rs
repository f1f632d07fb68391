//! The tile operations on [`Core`]: local work on the vector or cube unit, so each is a plain
//! forward to [`Ops`](crate::Ops), written from the one list of them
//! ([`for_each_tile_op!`](crate::for_each_tile_op)); see `ops/math.rs` and `ops/cube.rs` for
//! what they do and cost.

use super::Core;
use crate::api::kernel::cube_tile::CubeTile;
use crate::api::kernel::op_list::{core_forwards, for_each_tile_op};
use crate::base::convert::RoundMode;
use crate::base::dtype::DType;
use crate::base::error::SimResult;
use crate::base::tile::math::{BinaryOp, CmpOp, UnaryOp};
use crate::base::tile::{Axis, ReduceOp, Tile};

impl Core {
    for_each_tile_op!(core_forwards);
}
