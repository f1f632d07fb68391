use super::*;
use crate::config::{FullMeshConfig, HierarchicalConfig, LevelConfig, NodeConfig, TopologyConfig};
use crate::testkit::{fabric, mesh};

fn a2a3_like(topology: TopologyConfig) -> FabricConfig {
    fabric(topology, 4096, 0.7, 196.0)
}

fn two_node() -> FabricConfig {
    let level =
        LevelConfig { groups: 2, nic_gbps: 25.0, nic_latency_ns: 750.0, efficiency: None, write_efficiency: None };
    let node = NodeConfig::FullMesh(mesh(Some(2)));
    a2a3_like(TopologyConfig::Hierarchical(HierarchicalConfig { node, levels: vec![level] }))
}

fn chip() -> ChipPaths {
    ChipPaths {
        cores: 48,
        mte2: Bandwidth::from_gbps_f64(265.38),
        mte3: Bandwidth::from_gbps_f64(30.27),
        hbm: None,
        ..ChipPaths::unlimited(48)
    }
}

#[test]
fn describes_a_four_chip_full_mesh_exactly() {
    let text = describe(&a2a3_like(TopologyConfig::FullMesh(mesh(None))), 4, &chip()).unwrap();
    let expected = "\
topology: full_mesh, 4 chips, diameter 1
packet: 4096 B; efficiency 0.7 (links, NICs, ports)
links: 12 directed (raw rate, effective rate, latency)
  link 0->1  28.000 GB/s  19.600 GB/s  500.000 ns
  link 0->2  28.000 GB/s  19.600 GB/s  500.000 ns
  link 0->3  28.000 GB/s  19.600 GB/s  500.000 ns
  link 1->0  28.000 GB/s  19.600 GB/s  500.000 ns
  link 1->2  28.000 GB/s  19.600 GB/s  500.000 ns
  link 1->3  28.000 GB/s  19.600 GB/s  500.000 ns
  link 2->0  28.000 GB/s  19.600 GB/s  500.000 ns
  link 2->1  28.000 GB/s  19.600 GB/s  500.000 ns
  link 2->3  28.000 GB/s  19.600 GB/s  500.000 ns
  link 3->0  28.000 GB/s  19.600 GB/s  500.000 ns
  link 3->1  28.000 GB/s  19.600 GB/s  500.000 ns
  link 3->2  28.000 GB/s  19.600 GB/s  500.000 ns
ports: 4 ingress (raw rate, effective rate)
  port 0  196.000 GB/s  137.200 GB/s
  port 1  196.000 GB/s  137.200 GB/s
  port 2  196.000 GB/s  137.200 GB/s
  port 3  196.000 GB/s  137.200 GB/s
chip paths: 48 cores per chip; mte2 265.380 GB/s, mte3 30.270 GB/s per core; hbm unlimited per chip
";
    assert_eq!(text, expected);
}

#[test]
fn describes_hierarchical_links_with_aligned_columns() {
    let text = describe(&two_node(), 4, &ChipPaths::unlimited(1)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "topology: hierarchical (node = full_mesh of 2 chips; level 1 = 4 chips), 4 chips, diameter 2"
    );
    assert_eq!(lines[2], "links: 12 directed (raw rate, effective rate, latency)");
    assert_eq!(lines[3], "  link 0->1    28.000 GB/s  19.600 GB/s  500.000 ns");
    assert_eq!(lines[7], "  nic1-up 0    25.000 GB/s  17.500 GB/s  750.000 ns");
    assert_eq!(lines[8], "  nic1-down 0  25.000 GB/s  17.500 GB/s  750.000 ns");
    let islands = lines.iter().find(|l| l.starts_with("islands:")).expect("an islands line");
    assert!(islands.starts_with("islands: 2 (chips joined without a switch);"), "{islands}");
    assert!(islands.ends_with("lookahead 750.000 ns (the least latency into a switch, nic1-up 0)"), "{islands}");
}

#[test]
fn routes_name_the_remote_write_path() {
    let cfg = a2a3_like(TopologyConfig::FullMesh(mesh(None)));
    assert_eq!(route(&cfg, 4, 0, 1).unwrap(), ["mte3 0.0", "link 0->1", "port 1", "hbm 1"]);
    assert_eq!(
        route_line(&cfg, 4, &chip(), 0, 1).unwrap(),
        "0 -> mte3 0.0 -> link 0->1 -> port 1 -> hbm 1 (latency 500.000 ns, bottleneck 19.600 GB/s at link 0->1)"
    );
    assert_eq!(
        route_line(&two_node(), 4, &chip(), 1, 2).unwrap(),
        "1 -> mte3 1.0 -> nic1-up 1 -> nic1-down 2 -> port 2 -> hbm 2 (latency 1500.000 ns, bottleneck 17.500 GB/s at nic1-up 1)"
    );
    let unlimited = FabricConfig {
        port_gbps: f64::INFINITY,
        ..a2a3_like(TopologyConfig::FullMesh(FullMeshConfig { link_gbps: f64::INFINITY, ..mesh(None) }))
    };
    assert_eq!(
        route_line(&unlimited, 2, &ChipPaths::unlimited(1), 1, 0).unwrap(),
        "1 -> mte3 1.0 -> link 1->0 -> port 0 -> hbm 0 (latency 500.000 ns, bottleneck unlimited)"
    );
    assert_eq!(
        route(&cfg, 4, 0, 4).unwrap_err().to_string(),
        "fabric.route = 0 -> 4: chip 4 is not one of the 4 chips (0..4)"
    );
}
