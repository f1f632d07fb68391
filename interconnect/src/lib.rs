//! # interconnect: the chip-to-chip fabric (stopgap while topologies are built)

mod config;
mod stopgap;

pub use config::{FabricConfig, FabricConfigError, FullMeshConfig, build_network};
pub use stopgap::{ChipPaths, MeshNet};
