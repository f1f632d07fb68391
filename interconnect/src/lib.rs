//! # interconnect: the chip-to-chip fabric
//!
//! Topologies and the timing of every transfer between chips. [`FabricConfig`] is the serde
//! form of a preset's `[fabric]` table; [`build`] turns it into a [`sim_core::Fabric`].
//!
//! Today's model is a full mesh of full-duplex links with latency and bandwidth per direction;
//! each directed link serves transfers first come, first served, so flows sharing a link
//! serialise and a notify never overtakes the payload sent before it on the same link.

mod config;
mod full_mesh;

pub use config::{FabricConfig, FabricConfigError, FullMeshConfig, build};
pub use full_mesh::FullMesh;
