//! Fibers a host switches itself: a way for the host to run synchronous kernels' blocks on the
//! scheduler's own thread when sim-core's coroutines cannot carry them. A Python kernel is the
//! case: CPython's thread state does not survive a switch of stacks it does not know about,
//! but Python's greenlets switch it along. With [`RunOptions::fibers`](crate::RunOptions)
//! set, each block is a [`Fiber`] the driver resumes exactly where it would resume a
//! coroutine, so a blocking operation costs two fiber switches, no OS thread and no lock, and
//! the engine sees the same requests at the same simulated times.

use std::fmt;
use std::sync::Arc;

/// What a fiber runs: a block's kernel, given the way back to the scheduler.
pub type FiberBody = Box<dyn FnOnce(&dyn Suspend)>;

/// The host's fibers: makes one per block of a synchronous kernel, on the scheduler's thread.
pub trait FiberHost: Send + Sync {
    /// A fiber that starts running `body` at its first [`Fiber::resume`].
    fn spawn(&self, body: FiberBody) -> Box<dyn Fiber>;
}

/// One block's fiber.
pub trait Fiber {
    /// Runs the fiber until its body calls [`Suspend::suspend`] (false) or returns (true).
    /// The driver never resumes a fiber that has returned.
    fn resume(&mut self) -> bool;
}

/// A running fiber's way back to the scheduler.
pub trait Suspend {
    /// Switches back to the [`Fiber::resume`] that runs this fiber, until it is resumed again.
    fn suspend(&self);
}

/// The fibers runs use ([`RunOptions::fibers`](crate::RunOptions)): a host's [`FiberHost`],
/// shared. Options holding the same host compare equal.
#[derive(Clone)]
pub struct Fibers(pub Arc<dyn FiberHost>);

impl fmt::Debug for Fibers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Fibers(..)")
    }
}

impl PartialEq for Fibers {
    fn eq(&self, o: &Fibers) -> bool {
        Arc::ptr_eq(&self.0, &o.0)
    }
}

impl Eq for Fibers {}
