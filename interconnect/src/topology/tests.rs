use super::*;
use crate::config::{HierarchicalConfig, LevelConfig, RingConfig, SwitchConfig, TorusConfig};
use crate::testkit::{self, mesh};
use proptest::prelude::*;

fn fabric(topology: TopologyConfig) -> FabricConfig {
    testkit::fabric(topology, 4096, 1.0, f64::INFINITY)
}

fn ring(ranks: Option<usize>, bidirectional: bool) -> RingConfig {
    RingConfig { ranks, bidirectional, link_gbps: 28.0, link_latency_ns: 500.0 }
}

fn torus(x: usize, y: usize) -> TorusConfig {
    TorusConfig { x, y, link_gbps: 28.0, link_latency_ns: 500.0 }
}

fn switch(ranks: Option<usize>) -> SwitchConfig {
    SwitchConfig { ranks, link_gbps: 50.0, link_latency_ns: 100.0 }
}

fn level(groups: usize) -> LevelConfig {
    LevelConfig { groups, nic_gbps: 25.0, nic_latency_ns: 750.0, efficiency: None, write_efficiency: None }
}

fn hier(node: NodeConfig, groups: &[usize]) -> TopologyConfig {
    TopologyConfig::Hierarchical(HierarchicalConfig { node, levels: groups.iter().map(|&g| level(g)).collect() })
}

fn topo(t: TopologyConfig, ranks: usize) -> Topology {
    Topology::new(&fabric(t), ranks).unwrap()
}

fn names(t: &Topology, a: usize, b: usize) -> Vec<String> {
    t.route(a, b).iter().map(|&i| t.links()[i].name()).collect()
}

fn error(t: TopologyConfig, ranks: usize) -> String {
    Topology::new(&fabric(t), ranks).unwrap_err().to_string()
}

#[test]
fn full_mesh_routes_directly() {
    let t = topo(TopologyConfig::FullMesh(mesh(None)), 8);
    assert_eq!(t.links().len(), 56);
    assert_eq!(names(&t, 2, 5), ["link 2->5"]);
    assert_eq!(names(&t, 5, 2), ["link 5->2"]);
    assert!(t.route(3, 3).is_empty());
    assert!(t.route(0, 8).is_empty());
    assert_eq!(t.diameter(), 1);
    assert_eq!(t.label(), "full_mesh");
}

#[test]
fn bidirectional_ring_takes_the_shorter_way_ties_forward() {
    let t = topo(TopologyConfig::Ring(ring(None, true)), 8);
    assert_eq!(t.links().len(), 16);
    assert_eq!(names(&t, 0, 3), ["link 0->1", "link 1->2", "link 2->3"]);
    assert_eq!(names(&t, 0, 5), ["link 0->7", "link 7->6", "link 6->5"]);
    assert_eq!(names(&t, 6, 1), ["link 6->7", "link 7->0", "link 0->1"]);
    assert_eq!(names(&t, 3, 0), ["link 3->2", "link 2->1", "link 1->0"]);
    // Tie on an even ring: forward.
    assert_eq!(names(&t, 0, 4), ["link 0->1", "link 1->2", "link 2->3", "link 3->4"]);
    assert_eq!(names(&t, 5, 1), ["link 5->6", "link 6->7", "link 7->0", "link 0->1"]);
    assert_eq!(t.diameter(), 4);
    // A 2-ring's two directions coincide.
    assert_eq!(topo(TopologyConfig::Ring(ring(None, true)), 2).links().len(), 2);
    assert_eq!(topo(TopologyConfig::Ring(ring(None, true)), 1).links().len(), 0);
}

#[test]
fn unidirectional_ring_always_goes_forward() {
    let t = topo(TopologyConfig::Ring(ring(Some(5), false)), 5);
    assert_eq!(t.links().len(), 5);
    assert_eq!(names(&t, 3, 2), ["link 3->4", "link 4->0", "link 0->1", "link 1->2"]);
    assert_eq!(names(&t, 1, 2), ["link 1->2"]);
    assert_eq!(t.diameter(), 4);
    assert_eq!(t.label(), "ring (unidirectional)");
}

#[test]
fn torus_routes_x_then_y_the_short_way_with_wraparound() {
    let t = topo(TopologyConfig::Torus2d(torus(4, 4)), 16);
    assert_eq!(t.links().len(), 64);
    // (0,0) -> (3,3): x backward over the wrap, then y backward over the wrap.
    assert_eq!(names(&t, 0, 15), ["link 0->3", "link 3->15"]);
    // (1,0) -> (2,3): x forward one, then y backward over the wrap.
    assert_eq!(names(&t, 1, 14), ["link 1->2", "link 2->14"]);
    // (0,0) -> (2,2): both dimensions tie, both go forward; x first.
    assert_eq!(names(&t, 0, 10), ["link 0->1", "link 1->2", "link 2->6", "link 6->10"]);
    // (3,1) -> (0,1): forward over the wrap.
    assert_eq!(names(&t, 7, 4), ["link 7->4"]);
    // Same column: y only.
    assert_eq!(names(&t, 13, 1), ["link 13->1"]);
    assert_eq!(t.diameter(), 4);
    assert_eq!(t.label(), "torus2d 4x4");
    // A dimension of 2 has one link each way between the pair; of 1, none.
    assert_eq!(topo(TopologyConfig::Torus2d(torus(4, 2)), 8).links().len(), 24);
    assert_eq!(topo(TopologyConfig::Torus2d(torus(3, 1)), 3).links().len(), 6);
}

#[test]
fn switch_routes_up_then_down() {
    let t = topo(TopologyConfig::Switch(switch(None)), 4);
    assert_eq!(t.links().len(), 8);
    assert_eq!(names(&t, 1, 3), ["up 1", "down 3"]);
    assert_eq!(names(&t, 3, 1), ["up 3", "down 1"]);
    assert_eq!(t.diameter(), 2);
}

#[test]
fn hierarchical_uses_the_node_then_the_lowest_shared_level() {
    // 2-chip mesh nodes, 2 nodes per pod (level 1), 2 pods (level 2): 8 chips.
    let t = topo(hier(NodeConfig::FullMesh(mesh(Some(2))), &[2, 2]), 8);
    assert_eq!(t.links().len(), 4 * 2 + 2 * 8 * 2);
    assert_eq!(names(&t, 0, 1), ["link 0->1"]);
    assert_eq!(names(&t, 7, 6), ["link 7->6"]);
    assert_eq!(names(&t, 0, 2), ["nic1-up 0", "nic1-down 2"]);
    assert_eq!(names(&t, 5, 6), ["nic1-up 5", "nic1-down 6"]);
    assert_eq!(names(&t, 1, 6), ["nic2-up 1", "nic2-down 6"]);
    assert_eq!(names(&t, 4, 3), ["nic2-up 4", "nic2-down 3"]);
    assert_eq!(t.diameter(), 2);
    assert_eq!(t.label(), "hierarchical (node = full_mesh of 2 chips; level 1 = 4 chips; level 2 = 8 chips)");
    // A ring node keeps its own routing, shifted to the node's chips.
    let t = topo(hier(NodeConfig::Ring(ring(Some(4), true)), &[2]), 8);
    assert_eq!(names(&t, 4, 7), ["link 4->7"]);
    assert_eq!(names(&t, 4, 6), ["link 4->5", "link 5->6"]);
    assert_eq!(names(&t, 3, 4), ["nic1-up 3", "nic1-down 4"]);
    // A switch node: each node has its own switch.
    let t = topo(hier(NodeConfig::Switch(switch(Some(2))), &[2]), 4);
    assert_eq!(names(&t, 2, 3), ["up 2", "down 3"]);
    assert_eq!(t.links()[t.route(2, 3)[0]].to, Node::Switch { level: 0, group: 1 });
}

#[test]
fn rank_mismatches_name_the_keys() {
    assert_eq!(
        error(TopologyConfig::Torus2d(torus(4, 3)), 16),
        "fabric.topology.x * fabric.topology.y = 4 * 3 = 12: must equal machine.ranks = 16"
    );
    assert_eq!(error(TopologyConfig::Torus2d(torus(0, 3)), 16), "fabric.topology.x = 0: must be at least 1");
    assert_eq!(
        error(hier(NodeConfig::FullMesh(mesh(Some(8))), &[2]), 12),
        "fabric.topology.node.ranks * fabric.topology.levels[].groups = 8 * 2 = 16: must equal machine.ranks = 12"
    );
    assert_eq!(
        error(hier(NodeConfig::FullMesh(mesh(None)), &[2]), 16),
        "fabric.topology.node.ranks = (missing): a hierarchical node must say how many chips it holds"
    );
    assert_eq!(
        error(hier(NodeConfig::Ring(ring(Some(0), true)), &[2]), 0),
        "fabric.topology.node.ranks = 0: must be at least 1"
    );
    assert_eq!(
        error(hier(NodeConfig::FullMesh(mesh(Some(2))), &[2, 0]), 4),
        "fabric.topology.levels[1].groups = 0: must be at least 1"
    );
    let mut bad = hier(NodeConfig::FullMesh(mesh(Some(2))), &[2]);
    if let TopologyConfig::Hierarchical(h) = &mut bad {
        h.levels[0].nic_gbps = -3.0;
    }
    assert!(error(bad, 4).starts_with("fabric.topology.levels[0].nic_gbps = -3: "));
    let mut bad = hier(NodeConfig::Torus2d(torus(2, 2)), &[3]);
    if let TopologyConfig::Hierarchical(h) = &mut bad {
        h.node = NodeConfig::Torus2d(TorusConfig { link_latency_ns: f64::NAN, ..torus(2, 2) });
    }
    assert!(error(bad, 12).starts_with("fabric.topology.node.link_latency_ns = NaN: "));
    assert!(error(TopologyConfig::FullMesh(mesh(None)), 100_000).contains("has more than 16777216 links"));
    // A torus node's size is x * y.
    assert_eq!(topo(hier(NodeConfig::Torus2d(torus(2, 2)), &[3]), 12).ranks(), 12);
}

/// A topology config of a random kind and size, with its rank count.
fn any_topology() -> impl Strategy<Value = (TopologyConfig, usize)> {
    prop_oneof![
        (1usize..20).prop_map(|n| (TopologyConfig::FullMesh(mesh(None)), n)),
        (1usize..24, any::<bool>()).prop_map(|(n, bi)| (TopologyConfig::Ring(ring(None, bi)), n)),
        (1usize..7, 1usize..7).prop_map(|(x, y)| (TopologyConfig::Torus2d(torus(x, y)), x * y)),
        (1usize..12).prop_map(|n| (TopologyConfig::Switch(switch(None)), n)),
        (1usize..5, 1usize..4, 1usize..4)
            .prop_map(|(n, g1, g2)| { (hier(NodeConfig::Ring(ring(Some(n), true)), &[g1, g2]), n * g1 * g2) }),
    ]
}

proptest! {
    #[test]
    fn every_route_reaches_its_destination_within_the_diameter((cfg, n) in any_topology()) {
        let t = topo(cfg, n);
        for a in 0..n {
            for b in 0..n {
                let route = t.route(a, b);
                prop_assert!(route.len() <= t.diameter(), "{a}->{b}: {} hops > diameter {}", route.len(), t.diameter());
                prop_assert_eq!(route.is_empty(), a == b);
                let mut at = Node::Chip(a);
                for &i in &route {
                    prop_assert_eq!(t.links()[i].from, at);
                    at = t.links()[i].to;
                }
                prop_assert_eq!(at, Node::Chip(b));
            }
        }
    }
}
