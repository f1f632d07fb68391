//! What the engine holds about each of its parts, one part per file, below the engine: the
//! files beside `mod.rs` (`sched.rs`, `copy.rs`, `flow.rs`, `loads.rs`, `sdma.rs`,
//! `visibility.rs`) apply events to them through `Engine`, which owns them all.

pub(super) mod channels;
pub(super) mod copy_job;
pub(super) mod flows;
pub(super) mod in_flight;
pub(super) mod limits;
pub(super) mod part;
pub(super) mod pending_loads;
pub(crate) mod per_actor;
pub(super) mod polled;
pub(super) mod spin;
pub(super) mod tasks;
