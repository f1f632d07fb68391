//! # interconnect: the machine's data paths
//!
//! Topologies, routing and the packet-level timing of every byte that moves between a core's
//! unified buffer, HBM and other chips. [`FabricConfig`] is the serde form of a preset's
//! `[fabric]` table; [`build_network`] turns it, with the chip-side [`ChipPaths`] (chip-model's
//! description of one chip's engines, from `ChipModel::paths`), into a
//! [`sim_core::model::Network`] ([`NetworkModel`]); [`describe`], [`route`] and [`route_line`] print it
//! for a `topo` command.
//!
//! ## The model
//!
//! A table of resources, each serving one packet at a time at its rate and handing it on after
//! its latency: per chip `hbm {c}` and the ingress `port {c}`, per AIV core `mte2 {c}.{k}` and
//! `mte3 {c}.{k}`, per SDMA channel `sdma {c}.{k}`, per AIC core its GM -> L1 `mte2` and its
//! `fixpipe` (as chip-model's `ChipPaths::engines` lists them), and the topology's directed links (`link {a}->{b}`, `up {c}`/`down {c}`,
//! `nic{k}-up {c}`/`nic{k}-down {c}`). A path lists the resources a [`sim_core::model::PathKind`]
//! crosses; a packet holds them cut-through (see [`sim_core::model::Network`]), so flows sharing a
//! resource interleave packet by packet and incast, shared links and HBM contention emerge. A
//! path through a switch is booked up to the switch when the packet is sent and on from there
//! when it arrives ([`sim_core::model::Onward`]): the switch buffers, the receiver's side is
//! booked in arrival order.
//!
//! ## The `[fabric]` table
//!
//! Rates are raw GB/s (1e9 B/s) per direction, `inf` meaning unlimited; `efficiency` scales
//! every link, NIC and port rate to what payload sustains. Latencies are ns per resource (per
//! link, per NIC): a route's one-way latency is the sum over its links. Every table rejects
//! unknown keys.
//!
//! ```toml
//! [fabric]
//! packet_bytes = 4096      # payload bytes per packet
//! efficiency = 0.7         # (0, 1]
//! port_gbps = 196.0        # each chip's ingress port (all incoming remote traffic)
//! core_write_efficiency = 0.7  # optional, (0, 1], default 1: a core's remote stores get this
//!                          # fraction of what SDMA traffic gets from links and ports
//!
//! [fabric.topology]
//! kind = "full_mesh"       # one full-duplex link per chip pair
//! link_gbps = 28.0
//! link_latency_ns = 500.0
//! ```
//!
//! The other kinds replace `[fabric.topology]`:
//!
//! ```toml
//! [fabric.topology]        # route: the shorter way round, ties forward; forward only
//! kind = "ring"            # when bidirectional = false
//! bidirectional = true
//! link_gbps = 28.0
//! link_latency_ns = 500.0
//!
//! [fabric.topology]        # chip c at column c % x, row c / x; x * y = machine.ranks;
//! kind = "torus2d"         # route: x first, then y, each the shorter way (ties forward)
//! x = 4
//! y = 4
//! link_gbps = 28.0
//! link_latency_ns = 500.0
//!
//! [fabric.topology]        # a star through one non-blocking switch (the Clos abstraction):
//! kind = "switch"          # route = [up src, down dst]; each link pays link_latency_ns
//! link_gbps = 50.0
//! link_latency_ns = 450.0
//!
//! [fabric.topology]        # nodes of a flat kind, joined by levels of switches
//! kind = "hierarchical"
//! [fabric.topology.node]   # level 0: any flat kind plus `ranks` (a torus has x * y)
//! kind = "full_mesh"
//! ranks = 8
//! link_gbps = 28.0
//! link_latency_ns = 500.0
//! [[fabric.topology.levels]]   # level 1: joins `groups` nodes; each chip has its own NIC
//! groups = 2                   # uplink and downlink at this level
//! nic_gbps = 25.0
//! nic_latency_ns = 750.0       # per NIC: a crossing pays it twice
//! efficiency = 0.955           # optional, (0, 1]: this level's own, else fabric.efficiency
//! write_efficiency = 0.6       # optional, (0, 1]: what bytes written across this level (SDMA
//!                              # puts, core stores) get; absent, as reads (`efficiency`)
//! ```
//!
//! In a hierarchical topology, chips of one node talk over the node's topology; otherwise a
//! packet goes up the sender's NIC and down the receiver's NIC at the lowest level whose group
//! holds both. `machine.ranks` must equal `node.ranks * groups * ...`. The flat kinds accept an
//! optional `ranks`, which must then equal `machine.ranks` (and is required inside `node`).

mod config;
mod describe;
mod network;
#[cfg(test)]
mod testkit;
mod topology;

pub use config::{
    FabricConfig, FabricConfigError, FullMeshConfig, HierarchicalConfig, LevelConfig, LinkClass, LinkParams,
    NoSuchLinks, NodeConfig, NotifyOrdering, RingConfig, SwitchConfig, TopologyConfig, TorusConfig,
};
pub use describe::{describe, describe_summary, route, route_line};
pub use network::{ChipPaths, NetworkModel, build_network};
pub use topology::{Link, LinkKind, Node, Topology};
