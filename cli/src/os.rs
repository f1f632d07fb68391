//! What the operating system offers the simulator: how many sweep sizes to run at once. The
//! only module of the CLI that asks the system (the memory the host has is the `ranksim`
//! library's `measure::memory::available`).

use std::num::NonZeroUsize;

/// Host threads for independent runs (a sweep's sizes): the host's parallelism.
pub(crate) fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get)
}
