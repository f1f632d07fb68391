//! The simulation: simulated memory, the scheduler that applies requests in one total order
//! (`engine`), the facts it reports as it goes (`observe`, public as `sim_core::observe`) to
//! the protocol checker (`check`, public as `sim_core::check`) and every other observer, the
//! driver that runs kernels as coroutines, threads or futures against it, and the options a
//! run is executed with.

pub mod check;
pub(crate) mod driver;
pub(crate) mod engine;
pub(crate) mod fibers;
pub(crate) mod memory;
pub mod observe;
pub(crate) mod options;
pub(crate) mod split;
