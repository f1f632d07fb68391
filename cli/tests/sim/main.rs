//! Integration tests of the whole simulator, in one binary (one link on a 2-core machine).

// The modules share helpers with `pub`; this binary exports nothing, so the workspace's
// `unreachable_pub` does not apply to it.
#![allow(unreachable_pub)]

mod aiv_remote_stores;
mod bad_input;
mod capacities;
mod checker;
mod cli;
mod closed_form;
mod coll_common;
mod coll_errors;
mod coll_props;
mod common;
mod conformance;
mod conformance_rest;
mod coroutines;
mod costs;
mod cube;
mod custom_cli;
mod dataflow;
mod deferred;
mod determinism;
mod domains;
mod examples;
mod first_hour;
mod flows;
mod fuzz;
mod gm_cells;
mod golden;
mod guide;
mod hccl_class;
mod hccl_test_logs;
mod hier;
mod hier_copy;
mod limits;
mod livelock;
mod measure_api;
mod memory;
mod observers;
mod outputs;
mod pipes;
mod presets;
mod primitives;
mod programs;
mod readme;
mod references;
mod run_options;
mod sdma;
mod slices;
mod split;
mod staging;
mod sweep_rows;
mod sweep_timing;
mod tile_ops;
mod timing;
mod timing_props;
