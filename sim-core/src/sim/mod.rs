//! The simulation: simulated memory, the scheduler that applies requests in one total order
//! (`engine`), the protocol checker it feeds (`check`, public as `sim_core::check`), the
//! driver that runs kernels as coroutines, threads or futures against it, and the options a
//! run is executed with.

pub mod check;
pub(crate) mod driver;
pub(crate) mod engine;
pub(crate) mod memory;
pub(crate) mod options;
