//! The vocabulary every layer speaks: virtual time, element types and their rounding, tiles,
//! tensors and the addresses they resolve to, signal semantics, the bytes an operation moves,
//! and the one error type with its deadlock report. Nothing here knows a scheduler or a
//! program.

pub(crate) mod addr;
pub(crate) mod budget;
pub(crate) mod call_site;
pub(crate) mod convert;
pub(crate) mod deadlock;
pub(crate) mod divider;
pub(crate) mod dtype;
pub(crate) mod elems;
pub(crate) mod error;
pub(crate) mod livelock;
pub(crate) mod memory;
pub(crate) mod payload;
pub(crate) mod round;
pub(crate) mod signal;
pub(crate) mod tensor;
pub(crate) mod tile;
pub(crate) mod time;
