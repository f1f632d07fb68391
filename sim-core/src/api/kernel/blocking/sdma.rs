//! SDMA transfers on [`Core`]: posting returns at once with a handle; testing and waiting
//! block until the scheduler answers; see `ops/sdma.rs` for what they do and cost.

use super::{Core, wait_ready};
use crate::api::kernel::sdma_handle::{SdmaHandle, SdmaOpts};
use crate::base::error::SimResult;
use crate::base::tensor::Tensor;
use std::panic::Location;

impl Core {
    /// Copies local `src` into `peer`'s window `dst` with an SDMA engine; see
    /// [`Ops::put_async`](crate::Ops::put_async). Posted.
    #[track_caller]
    pub fn put_async(&mut self, dst: &Tensor, peer: usize, src: &Tensor, opts: &SdmaOpts) -> SimResult<SdmaHandle> {
        self.ops.caller = Some(Location::caller());
        self.ops.put_async(dst, peer, src, opts)
    }

    /// Copies `peer`'s window `src` into local `dst` with an SDMA engine; see
    /// [`Ops::get_async`](crate::Ops::get_async). Posted.
    #[track_caller]
    pub fn get_async(&mut self, dst: &Tensor, peer: usize, src: &Tensor, opts: &SdmaOpts) -> SimResult<SdmaHandle> {
        self.ops.caller = Some(Location::caller());
        self.ops.get_async(dst, peer, src, opts)
    }

    /// Whether the transfer has completed (one poll); see [`Ops::test_async`](crate::Ops::test_async).
    pub fn test_async(&mut self, handle: &SdmaHandle) -> SimResult<bool> {
        wait_ready(self.ops.test_async(handle))
    }

    /// Blocks until the transfer has completed; see [`Ops::wait_async`](crate::Ops::wait_async).
    pub fn wait_async(&mut self, handle: SdmaHandle) -> SimResult<()> {
        wait_ready(self.ops.wait_async(handle))
    }

    /// Blocks until the transfer and every earlier one of this block have completed, and
    /// closes them all; see [`Ops::wait_async_through`](crate::Ops::wait_async_through).
    pub fn wait_async_through(&mut self, handle: SdmaHandle) -> SimResult<()> {
        wait_ready(self.ops.wait_async_through(handle))
    }
}
