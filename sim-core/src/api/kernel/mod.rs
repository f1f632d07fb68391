//! The program API: what a kernel running on one AIV core can do. Names follow PyPTO's
//! `pld.*` / `pl.*` operations so a kernel ports line by line.
//!
//! [`Core`] is the handle a kernel closure gets; its operations block the kernel (suspend its
//! coroutine, or its thread) until the scheduler has applied them. [`Ops`] is the same API
//! with blocking operations as futures, for code (like the collectives) that must also run
//! inside the scheduler as a future; `core.ops()` gives a synchronous kernel an `Ops` whose
//! futures are ready at once.

mod blocking;
mod copy;
mod cube_tile;
mod op_list;
mod ops;
mod pipes;
mod polled;
mod scalar;
mod sdma_handle;
mod uplink;

pub use blocking::Core;
pub use copy::CopyOpts;
pub use cube_tile::{CubeBuf, CubeTile};
pub use ops::{DeferCond, Ops};
pub use pipes::{Pipe, TileLoad};
pub use sdma_handle::{SdmaHandle, SdmaOpts};
pub use uplink::block_on;
pub(crate) use uplink::{Answer, Mailbox, Transport, Uplink};
