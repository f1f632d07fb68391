//! # chip-model: one simulated chip
//!
//! The configurable timing of a chip: how many AIV cores it has, its clock, unified-buffer
//! capacity, each core's DMA (MTE) engines, the vector unit, the costs of signalling and
//! launching work, and two optional parts: the SDMA copy engines (`[chip.sdma]`: channels,
//! rates, descriptor and queue limits) and the AIC cube cores (`[chip.cube]`: L1 / L0
//! buffers, the MAC block per dtype, the L1 -> L0 and fixpipe paths). [`ChipConfig`] is the serde form read from a preset's `[chip]` table;
//! [`ChipModel`] is the validated, integer-time model that implements
//! [`sim_core::model::ChipTiming`].

mod config;
pub mod limits;
mod model;
mod paths;

pub use config::{
    ChipConfig, CubeConfig, DmaConfig, DmaPathConfig, ElemsPerCycle, FractalConfig, SdmaConfig, VectorConfig,
};
pub use model::{ChipConfigError, ChipModel};
pub use paths::{ChipPaths, Engine, EngineKind};
