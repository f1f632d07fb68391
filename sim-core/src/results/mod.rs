//! What a run leaves behind besides memory: run records and work counts (`stats`) and a traced
//! run's timeline (`trace`). Both are public modules of the crate (`sim_core::stats`,
//! `sim_core::trace`); they know only time.

pub mod stats;
pub mod trace;
