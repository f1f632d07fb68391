//! Integration tests of the whole simulator, in one binary (one link on a 2-core machine).

mod bad_input;
mod checker;
mod cli;
mod closed_form;
mod coll_common;
mod coll_errors;
mod coll_props;
mod common;
mod conformance;
mod cube;
mod deferred;
mod determinism;
mod domains;
mod flows;
mod hccl_class;
mod outputs;
mod pipes;
mod presets;
mod primitives;
mod programs;
mod run_options;
mod sdma;
mod slices;
mod tile_ops;
mod timing;
mod timing_props;
