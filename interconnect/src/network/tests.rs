//! Timing examples computed by hand: links of 10 GB/s (1000 B = 100 ns) unless a test says
//! otherwise, so every expected value is a whole number of nanoseconds.

use super::*;
use crate::config::{
    FullMeshConfig, HierarchicalConfig, LevelConfig, NodeConfig, RingConfig, SwitchConfig, TopologyConfig, TorusConfig,
};
use crate::testkit;
use proptest::prelude::*;

const NS: u64 = 1_000;

fn mesh(gbps: f64, latency_ns: f64) -> TopologyConfig {
    TopologyConfig::FullMesh(FullMeshConfig { ranks: None, link_gbps: gbps, link_latency_ns: latency_ns })
}

fn ring() -> TopologyConfig {
    TopologyConfig::Ring(RingConfig { ranks: None, bidirectional: true, link_gbps: 10.0, link_latency_ns: 500.0 })
}

fn cfg(topology: TopologyConfig, port_gbps: f64) -> FabricConfig {
    testkit::fabric(topology, 1000, 1.0, port_gbps)
}

fn model(topology: TopologyConfig, ranks: usize, chip: ChipPaths) -> NetworkModel {
    NetworkModel::new(&cfg(topology, f64::INFINITY), ranks, &chip).unwrap()
}

fn gbps(g: u64) -> Option<Bandwidth> {
    Bandwidth::from_bytes_per_s(g * 1_000_000_000)
}

fn t(ns: u64) -> SimTime {
    SimTime::from_ps(ns * NS)
}

fn route(kind: PathKind, chip: usize, core: usize, peer: usize) -> Route {
    Route { kind, chip, core, peer }
}

fn write(m: &mut NetworkModel, chip: usize, core: usize, peer: usize) -> PathId {
    m.path(&route(PathKind::RemoteWrite, chip, core, peer))
}

fn names(m: &NetworkModel, p: PathId) -> Vec<String> {
    m.path_resources(p).iter().map(|&r| m.resource_name(r)).collect()
}

/// (begin, cleared, arrival) in ns.
fn ns(p: PacketTiming) -> (u64, u64, u64) {
    (p.begin.as_ps() / NS, p.cleared.as_ps() / NS, p.arrival.as_ps() / NS)
}

#[test]
fn paths_follow_path_kind() {
    let mut m = model(mesh(10.0, 500.0), 2, ChipPaths::unlimited(2));
    let mut path = |kind| {
        let id = m.path(&route(kind, 0, 1, 1));
        names(&m, id)
    };
    assert_eq!(path(PathKind::Load), ["hbm 0", "mte2 0.1"]);
    assert_eq!(path(PathKind::Store), ["mte3 0.1", "hbm 0"]);
    assert_eq!(path(PathKind::RemoteWrite), ["mte3 0.1", "link 0->1", "port 1", "hbm 1"]);
    assert_eq!(path(PathKind::ReadRequest), ["link 0->1"]);
    assert_eq!(path(PathKind::RemoteRead), ["hbm 1", "link 1->0", "port 0", "mte2 0.1"]);
    assert_eq!(path(PathKind::Signal), ["link 0->1", "port 1"]);
    assert_eq!(path(PathKind::OrderedNotify), ["mte3 0.1", "link 0->1", "port 1", "hbm 1"]);
}

#[test]
fn a_cores_remote_store_holds_links_and_port_for_its_wire_bytes_and_nothing_else_does() {
    // Link 10 GB/s at efficiency 1, port 40 GB/s, core writes at 0.5: a 4000-byte store holds
    // the link 800 ns and the port 200 ns instead of 400 and 100 (the unlimited HBM behind the
    // port spans the port's last byte). A notify on the same resources and an SDMA put keep
    // their payload times.
    let mut c = cfg(mesh(10.0, 0.0), 40.0);
    c.efficiency = 1.0;
    c.core_write_efficiency = 0.5;
    let chip = ChipPaths { sdma_channels: 1, ..ChipPaths::unlimited(2) };
    let mut m = NetworkModel::new(&c, 2, &chip).unwrap();
    let busy_ns = |m: &mut NetworkModel, kind, bytes| {
        let id = m.path(&route(kind, 0, 0, 1));
        let mut busy = Vec::new();
        m.send(id, bytes, SimTime::ZERO, Some(&mut busy));
        m.reset();
        let named: Vec<(String, u64)> =
            busy.iter().map(|b| (m.resource_name(b.resource), (b.end - b.start).as_ps() / 1000)).collect();
        named
    };
    let held = busy_ns(&mut m, PathKind::RemoteWrite, 4000);
    let want = [("mte3 0.0", 0), ("link 0->1", 800), ("port 1", 200), ("hbm 1", 200)];
    assert_eq!(held, want.map(|(n, t)| (n.to_string(), t)));
    let notify = busy_ns(&mut m, PathKind::OrderedNotify, 4000);
    assert_eq!(notify[1..3], [("link 0->1".to_string(), 400), ("port 1".to_string(), 100)]);
    let sdma = busy_ns(&mut m, PathKind::SdmaPut, 4000);
    assert!(sdma.contains(&("link 0->1".to_string(), 400)), "{sdma:?}");
}

/// A level with a write efficiency: its NICs sustain 8 GB/s (10 x 0.8) for reads and 4 GB/s
/// (10 x 0.4) for writes, so a 4000-byte put or core store holds the sender's uplink 1000 ns,
/// a get's data 500 ns; the links inside a node are not touched.
#[test]
fn a_level_that_writes_slower_holds_its_nics_longer_for_writes_only() {
    let node = NodeConfig::FullMesh(FullMeshConfig { ranks: Some(2), link_gbps: 10.0, link_latency_ns: 0.0 });
    let level = LevelConfig {
        groups: 2,
        nic_gbps: 10.0,
        nic_latency_ns: 0.0,
        efficiency: Some(0.8),
        write_efficiency: Some(0.4),
    };
    let hier = TopologyConfig::Hierarchical(HierarchicalConfig { node, levels: vec![level] });
    let chip = ChipPaths { sdma_channels: 1, ..ChipPaths::unlimited(1) };
    let mut m = NetworkModel::new(&cfg(hier, f64::INFINITY), 4, &chip).unwrap();
    let mut held = |kind, peer| {
        let id = m.path(&route(kind, 0, 0, peer));
        let mut busy = Vec::new();
        m.send(id, 4000, SimTime::ZERO, Some(&mut busy));
        m.reset();
        let links = busy
            .iter()
            .filter(|b| m.resource_name(b.resource).contains("->") || m.resource_name(b.resource).contains("nic"));
        links.map(|b| (m.resource_name(b.resource), (b.end - b.start).as_ps() / NS)).collect::<Vec<_>>()
    };
    let up = |ns| vec![("nic1-up 0".to_string(), ns)];
    assert_eq!(held(PathKind::SdmaPut, 2), up(1000));
    assert_eq!(held(PathKind::RemoteWrite, 2), up(1000));
    let get = held(PathKind::SdmaGet, 2);
    assert_eq!(get, vec![("nic1-up 2".to_string(), 500)]);
    assert_eq!(held(PathKind::SdmaPut, 1), vec![("link 0->1".to_string(), 400)], "inside the node: as before");
}

#[test]
fn a_core_write_efficiency_outside_0_to_1_is_refused_by_name() {
    for e in [0.0, -0.5, 1.5, f64::NAN] {
        let mut c = cfg(mesh(10.0, 0.0), 40.0);
        c.core_write_efficiency = e;
        let err = NetworkModel::new(&c, 2, &ChipPaths::unlimited(2)).unwrap_err().to_string();
        assert!(err.contains("core_write_efficiency") && err.contains("(0, 1]"), "{err}");
    }
}

#[test]
fn sdma_paths_cross_the_channel_and_both_hbms() {
    let chip = ChipPaths { sdma_channels: 3, ..ChipPaths::unlimited(2) };
    let mut m = model(mesh(10.0, 500.0), 2, chip);
    let mut path = |kind, peer| {
        let id = m.path(&route(kind, 0, 2, peer));
        names(&m, id)
    };
    assert_eq!(path(PathKind::SdmaPut, 1), ["hbm 0", "sdma 0.2", "link 0->1", "port 1", "hbm 1"]);
    assert_eq!(path(PathKind::SdmaRequest, 1), ["link 0->1"]);
    assert_eq!(path(PathKind::SdmaGet, 1), ["hbm 1", "sdma 0.2", "link 1->0", "port 0", "hbm 0"]);
    assert_eq!(path(PathKind::SdmaPut, 0), ["hbm 0", "sdma 0.2", "hbm 0"]);
    assert_eq!(path(PathKind::SdmaGet, 0), ["hbm 0", "sdma 0.2", "hbm 0"]);
    // Chip 1's resources come after chip 0's channels; a channel out of range is left out.
    assert_eq!(path(PathKind::SdmaPut, 1).len(), 5);
    let id = m.path(&route(PathKind::SdmaPut, 1, 3, 0));
    assert_eq!(names(&m, id), ["hbm 1", "link 1->0", "port 0", "hbm 0"]);
}

#[test]
fn cube_cores_have_their_own_engines_after_the_channels() {
    let chip = ChipPaths { sdma_channels: 1, cube_cores: 2, gm_to_l1: gbps(20), ..ChipPaths::unlimited(2) };
    let mut m = model(mesh(10.0, 500.0), 2, chip);
    let mut path = |kind, chip, core| {
        let id = m.path(&route(kind, chip, core, chip));
        names(&m, id)
    };
    // AIC cores 2 and 3 follow AIV cores 0 and 1: GM -> L1 on their MTE2, L0C -> GM on the fixpipe.
    assert_eq!(path(PathKind::Load, 1, 3), ["hbm 1", "mte2 1.3"]);
    assert_eq!(path(PathKind::Store, 0, 2), ["fixpipe 0.2", "hbm 0"]);
    assert_eq!(path(PathKind::Load, 1, 1), ["hbm 1", "mte2 1.1"]);
    assert_eq!(path(PathKind::Load, 0, 4), ["hbm 0"]);
    let id = m.path(&route(PathKind::Load, 1, 3, 1));
    let r = m.path_resources(id)[1];
    assert_eq!(m.resource_timing(r), Some((gbps(20), SimDuration::ZERO)));
    assert_eq!(m.resource_chip(r), 1);
}

#[test]
fn paths_are_cached_and_resources_named_by_chip() {
    let mut m = model(mesh(10.0, 500.0), 3, ChipPaths::unlimited(2));
    let a = write(&mut m, 0, 1, 2);
    let b = write(&mut m, 2, 0, 1);
    assert_ne!(a, b);
    assert_eq!(write(&mut m, 0, 1, 2), a);
    let link = m.path_resources(b)[1];
    assert_eq!((m.resource_name(link), m.resource_chip(link)), ("link 2->1".to_string(), 2));
    let hbm = m.path_resources(b)[3];
    assert_eq!((m.resource_name(hbm), m.resource_chip(hbm)), ("hbm 1".to_string(), 1));
    assert_eq!(m.resource_name(10_000), "resource 10000");
    assert_eq!(m.packet_bytes(), 1000);
}

#[test]
fn bad_routes_and_ids_do_not_panic() {
    let mut m = model(mesh(10.0, 500.0), 2, ChipPaths::unlimited(1));
    let p = m.path(&route(PathKind::RemoteWrite, 0, 7, 9));
    assert!(m.path_resources(p).is_empty());
    assert_eq!(ns(m.send(p, 1000, t(5), None)), (5, 5, 5));
    assert_eq!(ns(m.send(PathId(999), 1000, t(5), None)), (5, 5, 5));
    // A remote kind to itself skips the links.
    let p = m.path(&route(PathKind::RemoteWrite, 1, 0, 1));
    assert_eq!(names(&m, p), ["mte3 1.0", "port 1", "hbm 1"]);
}

#[test]
fn single_link_back_to_back_packets_arrive_latency_plus_n_ser() {
    let mut m = model(mesh(10.0, 500.0), 2, ChipPaths::unlimited(1));
    let p = write(&mut m, 0, 0, 1);
    let mut at = t(0);
    let mut got = Vec::new();
    for _ in 0..5 {
        let r = m.send(p, 1000, at, None);
        got.push(ns(r));
        at = r.cleared;
    }
    assert_eq!(got, [(0, 100, 600), (100, 200, 700), (200, 300, 800), (300, 400, 900), (400, 500, 1000)]);
    // Sent all at once instead, they queue on the link: same arrivals.
    m.reset();
    let arrivals: Vec<u64> = (0..5).map(|_| ns(m.send(p, 1000, t(0), None)).2).collect();
    assert_eq!(arrivals, [600, 700, 800, 900, 1000]);
}

#[test]
fn multi_hop_pipelines_fully() {
    // 0 -> 3 on a bidirectional ring of 8: three links of 500 ns.
    let mut m = model(ring(), 8, ChipPaths::unlimited(1));
    let p = write(&mut m, 0, 0, 3);
    assert_eq!(names(&m, p), ["mte3 0.0", "link 0->1", "link 1->2", "link 2->3", "port 3", "hbm 3"]);
    let mut at = t(0);
    let mut got = Vec::new();
    for _ in 0..4 {
        let r = m.send(p, 1000, at, None);
        got.push(ns(r));
        at = r.cleared;
    }
    // cleared advances by one serialisation (100 ns); arrival = 3 x 500 + k x 100.
    assert_eq!(got, [(0, 100, 1600), (100, 200, 1700), (200, 300, 1800), (300, 400, 1900)]);
}

#[test]
fn fast_dma_then_slow_link_is_link_bound() {
    let chip = ChipPaths { mte3: gbps(100), ..ChipPaths::unlimited(1) };
    let mut m = model(mesh(10.0, 500.0), 2, chip);
    let p = write(&mut m, 0, 0, 1);
    let mut busy = Vec::new();
    let first = m.send(p, 1000, t(0), Some(&mut busy));
    assert_eq!(ns(first), (0, 100, 600));
    let spans: Vec<(u64, u64)> = busy.iter().map(|b| (b.start.as_ps() / NS, b.end.as_ps() / NS)).collect();
    // mte3 10 ns, the link 100 ns, port and hbm while the tail arrives.
    assert_eq!(spans, [(0, 10), (0, 100), (500, 600), (500, 600)]);
    assert!(busy.iter().all(|b| b.bytes == 1000));
    assert_eq!(busy.iter().map(|b| b.resource).collect::<Vec<_>>(), m.path_resources(p));
    assert_eq!(ns(m.send(p, 1000, first.cleared, None)), (100, 200, 700));
}

#[test]
fn slow_dma_holds_a_fast_link_until_its_tail_passes() {
    let chip = ChipPaths { mte3: gbps(10), ..ChipPaths::unlimited(1) };
    let mut m = model(mesh(100.0, 500.0), 2, chip);
    let p = write(&mut m, 0, 0, 1);
    assert_eq!(ns(m.send(p, 1000, t(0), None)), (0, 100, 600));
    assert_eq!(ns(m.send(p, 1000, t(100), None)), (100, 200, 700));
}

#[test]
fn two_flows_alternating_on_one_link_get_half_the_rate_each() {
    let mut m = model(mesh(10.0, 500.0), 2, ChipPaths::unlimited(2));
    let flows = [write(&mut m, 0, 0, 1), write(&mut m, 0, 1, 1)];
    let mut next = [t(0), t(0)];
    let mut arrivals: [Vec<u64>; 2] = Default::default();
    for _ in 0..8 {
        // The earlier flow sends next (ties: flow 0), as the scheduler would.
        let f = usize::from(next[1] < next[0]);
        let r = m.send(flows[f], 1000, next[f], None);
        arrivals[f].push(ns(r).2);
        next[f] = r.cleared;
    }
    assert_eq!(arrivals[0], [600, 800, 1000, 1200]);
    assert_eq!(arrivals[1], [700, 900, 1100, 1300]);
}

#[test]
fn incast_serialises_on_the_switch_downlink_but_not_in_a_mesh() {
    let switch = TopologyConfig::Switch(SwitchConfig { ranks: None, link_gbps: 10.0, link_latency_ns: 100.0 });
    let mut m = model(switch, 4, ChipPaths::unlimited(1));
    let paths: Vec<PathId> = (1..4).map(|src| write(&mut m, src, 0, 0)).collect();
    assert_eq!(names(&m, paths[0]), ["mte3 1.0", "up 1", "down 0", "port 0", "hbm 0"]);
    // Each packet stops at the switch (its first byte there at 100 ns); the downlink is
    // booked when they get there, in the order they came.
    let at_switch: Vec<Onward> = paths.iter().filter_map(|&p| m.send(p, 1000, t(0), None).onward).collect();
    let seen: Vec<_> = at_switch.iter().map(|o| (o.hop, o.chip, o.ready, o.last_in)).collect();
    assert_eq!(seen, [(2, 0, t(100), t(200)); 3]);
    let arrivals: Vec<u64> = paths.iter().zip(at_switch).map(|(&p, o)| ns(m.send_onward(p, 1000, o, None)).2).collect();
    assert_eq!(arrivals, [300, 400, 500]);

    let mut m = model(mesh(10.0, 500.0), 4, ChipPaths::unlimited(1));
    let paths: Vec<PathId> = (1..4).map(|src| write(&mut m, src, 0, 0)).collect();
    let arrivals: Vec<u64> = paths.iter().map(|&p| ns(m.send(p, 1000, t(0), None)).2).collect();
    assert_eq!(arrivals, [600, 600, 600]);

    // ...unless the destination's ingress port is the bottleneck.
    let mut m = NetworkModel::new(&cfg(mesh(10.0, 500.0), 10.0), 4, &ChipPaths::unlimited(1)).unwrap();
    let paths: Vec<PathId> = (1..4).map(|src| write(&mut m, src, 0, 0)).collect();
    let arrivals: Vec<u64> = paths.iter().map(|&p| ns(m.send(p, 1000, t(0), None)).2).collect();
    assert_eq!(arrivals, [600, 700, 800]);
}

/// A path through a switch is booked in two halves: the sender's side (its engine and
/// uplink) when the packet is sent, the receiver's (downlink, port, HBM) when the packet is at
/// the switch. So a busy downlink does not hold the sender back: its `cleared` counts its own
/// side only, and the packet queues at the switch.
#[test]
fn a_sender_books_its_side_of_a_switch_and_the_receiver_books_the_rest() {
    let switch = TopologyConfig::Switch(SwitchConfig { ranks: None, link_gbps: 10.0, link_latency_ns: 100.0 });
    let mut m = model(switch, 3, ChipPaths::unlimited(1));
    let (big, small) = (write(&mut m, 2, 0, 0), write(&mut m, 1, 0, 0));
    // 10 KB from chip 2: up 2 for 1 us, at the switch from 100 ns, down 0 from 100 ns to 1.1 us,
    // at chip 0 by 1.2 us.
    let mut busy = Vec::new();
    let first = m.send(big, 10_000, t(0), Some(&mut busy));
    assert_eq!(busy.iter().map(|b| m.resource_name(b.resource)).collect::<Vec<_>>(), ["mte3 2.0", "up 2"]);
    let o = first.onward.expect("a switch splits the path");
    assert_eq!(
        (first.cleared, first.arrival, o.hop, o.chip, o.ready, o.last_in),
        (t(1000), t(1100), 2, 0, t(100), t(1100))
    );
    busy.clear();
    assert_eq!(ns(m.send_onward(big, 10_000, o, Some(&mut busy))), (100, 1100, 1200));
    let booked: Vec<String> = busy.iter().map(|b| m.resource_name(b.resource)).collect();
    assert_eq!(booked, ["down 0", "port 0", "hbm 0"]);
    // 1 KB from chip 1 at 0: its side is free, so it has cleared at 100 ns, though down 0 is
    // busy until 1.1 us; at the switch it waits for the downlink.
    let second = m.send(small, 1000, t(0), None);
    assert_eq!((second.cleared, second.arrival), (t(100), t(200)));
    let o = second.onward.expect("split");
    assert_eq!(ns(m.send_onward(small, 1000, o, None)).2, 1300);
}

/// A partition's model (`reset_for` its chips) holds its own chips' resources and the links
/// only, and times every packet of its side as the whole model does: three chips write to
/// chip 0 across a switch, each side booked where its chip is held. A resource of a chip it
/// does not hold is made fresh when a path books it anyway, so it still times as a whole copy.
#[test]
fn a_partitions_model_holds_only_its_own_chips_and_times_its_side_as_the_whole_does() {
    let switch = TopologyConfig::Switch(SwitchConfig { ranks: None, link_gbps: 10.0, link_latency_ns: 100.0 });
    let chip = ChipPaths { mte3: gbps(20), hbm: gbps(40), ..ChipPaths::unlimited(2) };
    let new = || NetworkModel::new(&cfg(switch.clone(), 10.0), 4, &chip).unwrap();
    // 4 chips of HBM, port, 2 x mte2, 2 x mte3; 8 links (up and down per chip).
    let mut whole = new();
    assert_eq!(whole.held(), (0..4, 32));
    let (mut low, mut high) = (new(), new());
    low.reset_for(0..2);
    high.reset_for(2..4);
    assert_eq!((low.held(), high.held()), ((0..2, 20), (2..4, 20)));

    let senders = [(2, 0), (3, 1), (1, 0), (2, 1)];
    let mut got = Vec::new();
    let mut want = Vec::new();
    for (i, &(src, core)) in senders.iter().enumerate() {
        let at = t(50 * i as u64);
        let w = write(&mut whole, src, core, 0);
        let first = whole.send(w, 3000, at, None);
        let rest = whole.send_onward(w, 3000, first.onward.expect("split at the switch"), None);
        want.push((ns(first), ns(rest)));
        let side = if src < 2 { &mut low } else { &mut high };
        let p = write(side, src, core, 0);
        let first = side.send(p, 3000, at, None);
        let o = first.onward.expect("split at the switch");
        assert_eq!(o.chip, 0);
        let q = write(&mut low, src, core, 0);
        let rest = low.send_onward(q, 3000, o, None);
        got.push((ns(first), ns(rest)));
    }
    assert_eq!(got, want);
    // Chip 0's downlink takes the 4 writes of 300 ns one after another, from 100 ns (the
    // first at the switch) to 1.3 us; the last byte is at chip 0 one latency later.
    assert_eq!(want.iter().map(|w| w.1.2).collect::<Vec<_>>(), [500, 800, 1100, 1400]);
    // Nothing outside either partition's chips was made.
    assert_eq!((low.held(), high.held()), ((0..2, 20), (2..4, 20)));

    // Chip 3 writes to chip 2 on the low partition's model (which no split run does): its
    // mte3, port and HBM are made fresh, and the packet times as on a fresh whole model.
    let p = write(&mut low, 3, 0, 2);
    let first = low.send(p, 3000, t(0), None);
    let rest = low.send_onward(p, 3000, first.onward.unwrap(), None);
    let mut fresh = new();
    let w = write(&mut fresh, 3, 0, 2);
    let first_fresh = fresh.send(w, 3000, t(0), None);
    let rest_fresh = fresh.send_onward(w, 3000, first_fresh.onward.unwrap(), None);
    assert_eq!((ns(first), ns(rest)), ((0, 300, 400), (100, 400, 500)));
    assert_eq!((ns(first), ns(rest)), (ns(first_fresh), ns(rest_fresh)));
    assert_eq!(low.held(), (0..2, 23));
    // Reset for the whole machine again, it holds every chip.
    low.reset_for(0..4);
    assert_eq!(low.held(), (0..4, 32));
}

#[test]
fn hbm_is_shared_by_a_chips_cores() {
    let chip = ChipPaths { hbm: gbps(10), ..ChipPaths::unlimited(2) };
    let mut m = model(mesh(10.0, 500.0), 1, chip);
    let a = m.path(&route(PathKind::Load, 0, 0, 0));
    let b = m.path(&route(PathKind::Load, 0, 1, 0));
    assert_eq!(ns(m.send(a, 1000, t(0), None)), (0, 100, 100));
    assert_eq!(ns(m.send(b, 1000, t(0), None)), (100, 200, 200));
}

#[test]
fn zero_byte_packets_take_latency_only_and_keep_fifo_order() {
    let mut m = model(ring(), 8, ChipPaths::unlimited(1));
    let req = m.path(&route(PathKind::ReadRequest, 0, 0, 3));
    assert_eq!(ns(m.send(req, 0, t(0), None)), (0, 0, 1500));

    let mut m = model(mesh(10.0, 500.0), 2, ChipPaths::unlimited(1));
    let data = write(&mut m, 0, 0, 1);
    let signal = m.path(&route(PathKind::Signal, 0, 0, 1));
    assert_eq!(ns(m.send(data, 1000, t(0), None)), (0, 100, 600));
    // The notify queues behind the payload on the link and lands with it, not before.
    assert_eq!(ns(m.send(signal, 0, t(0), None)), (100, 100, 600));
}

#[test]
fn unlimited_rates_cost_latency_only() {
    let mut m = model(mesh(f64::INFINITY, 500.0), 2, ChipPaths::unlimited(1));
    let p = write(&mut m, 0, 0, 1);
    assert_eq!(ns(m.send(p, 1 << 20, t(0), None)), (0, 0, 500));
    assert_eq!(ns(m.send(p, 1 << 20, t(0), None)), (0, 0, 500));
}

#[test]
fn efficiency_scales_link_and_port_rates() {
    let mut c = cfg(mesh(10.0, 500.0), 10.0);
    c.efficiency = 0.5;
    let mut m = NetworkModel::new(&c, 2, &ChipPaths::unlimited(1)).unwrap();
    let p = write(&mut m, 0, 0, 1);
    // 5 GB/s effective: 1000 B take 200 ns on the link and on the port.
    assert_eq!(ns(m.send(p, 1000, t(0), None)), (0, 200, 700));
}

#[test]
fn reset_forgets_occupancy() {
    let mut m = model(mesh(10.0, 500.0), 2, ChipPaths::unlimited(1));
    let p = write(&mut m, 0, 0, 1);
    m.send(p, 1000, t(0), None);
    m.reset();
    assert_eq!(ns(m.send(p, 1000, t(0), None)), (0, 100, 600));
}

#[test]
fn build_network_reports_config_errors() {
    let mut c = cfg(mesh(10.0, 500.0), 10.0);
    c.packet_bytes = 0;
    let e = build_network(&c, 2, &ChipPaths::unlimited(1)).unwrap_err();
    assert_eq!(e.key, "packet_bytes");
    let ok = build_network(&cfg(mesh(10.0, 500.0), 10.0), 2, &ChipPaths::unlimited(1)).unwrap();
    assert_eq!(ok.packet_bytes(), 1000);
}

fn any_topology() -> impl Strategy<Value = (TopologyConfig, usize)> {
    let torus = |x, y| TopologyConfig::Torus2d(TorusConfig { x, y, link_gbps: 7.0, link_latency_ns: 300.0 });
    prop_oneof![
        (2usize..10).prop_map(|n| (mesh(7.0, 300.0), n)),
        (2usize..12).prop_map(|n| (ring(), n)),
        (1usize..5, 2usize..5).prop_map(move |(x, y)| (torus(x, y), x * y)),
    ]
}

proptest! {
    /// A bigger packet never starts, arrives or clears sooner, even behind other traffic.
    #[test]
    fn time_is_monotonic_in_packet_size(
        (topology, n) in any_topology(),
        (a, b, c) in (0usize..64, 0usize..64, 0usize..64),
        background in 0u64..5000,
        (small, extra) in (0u64..5000, 0u64..5000),
        hbm in prop::option::of(1u64..50),
    ) {
        let (a, b, c) = (a % n, b % n, c % n);
        let chip = ChipPaths { cores: 2, mte2: gbps(20), mte3: gbps(15), hbm: hbm.and_then(gbps), ..ChipPaths::unlimited(2) };
        let probe = |bytes: u64| {
            let mut m = NetworkModel::new(&cfg(topology.clone(), 30.0), n, &chip).unwrap();
            let other = m.path(&route(PathKind::RemoteWrite, c, 1, b));
            m.send(other, background, t(0), None);
            let p = m.path(&route(PathKind::RemoteRead, a, 0, b));
            m.send(p, bytes, t(10), None)
        };
        let (lo, hi) = (probe(small), probe(small + extra));
        prop_assert!(lo.arrival <= hi.arrival, "{lo:?} vs {hi:?}");
        prop_assert!(lo.cleared <= hi.cleared, "{lo:?} vs {hi:?}");
        prop_assert!(lo.begin <= hi.begin, "{lo:?} vs {hi:?}");
    }
}

/// Names and chips are made on demand from a resource's index: every resource of a model
/// with every kind of engine, and links, reads as it is laid out (chip by chip: HBM, port,
/// engines; then the links), and an index past the last names itself.
#[test]
fn every_resource_is_named_and_placed_by_its_index() {
    let chip = ChipPaths { sdma_channels: 2, cube_cores: 1, ..ChipPaths::unlimited(2) };
    let m = model(mesh(10.0, 500.0), 3, chip);
    let mut want = Vec::new();
    for c in 0..3 {
        want.push((format!("hbm {c}"), c));
        want.push((format!("port {c}"), c));
        want.extend(chip.engines().map(|e| (format!("{} {c}.{}", e.name, e.index), c)));
    }
    want.extend(m.topology().links().iter().map(|l| (l.name(), l.chip())));
    assert_eq!(want.len(), 3 * 10 + 6);
    let got: Vec<(String, usize)> = (0..want.len() as u32).map(|r| (m.resource_name(r), m.resource_chip(r))).collect();
    assert_eq!(got, want);
    let after_port0: Vec<&str> = got[2..11].iter().map(|n| n.0.as_str()).collect();
    let engines0 = ["mte2 0.0", "mte2 0.1", "mte3 0.0", "mte3 0.1", "sdma 0.0", "sdma 0.1", "mte2 0.2", "fixpipe 0.2"];
    assert_eq!((&after_port0[..8], after_port0[8]), (&engines0[..], "hbm 1"));
    assert_eq!((m.resource_name(want.len() as u32), m.resource_chip(want.len() as u32)), ("resource 36".into(), 0));
}

/// Path ids follow first use whether a route is found in the dense table (chip, core and peer
/// in range) or in the hash map (out of range), and a repeated route gets its first id back,
/// in any order. A model with the dense table dropped gives the same ids and the same paths,
/// and so does one whose table is kept in rows per (chip, core, kind), as a large machine's.
#[test]
fn path_ids_follow_first_use_through_the_dense_table_and_the_map() {
    path_ids_follow_first_use(false);
    path_ids_follow_first_use(true);
}

fn path_ids_follow_first_use(in_rows: bool) {
    let chip = ChipPaths { sdma_channels: 3, cube_cores: 1, ..ChipPaths::unlimited(2) };
    let kinds = [
        PathKind::Load,
        PathKind::Store,
        PathKind::RemoteWrite,
        PathKind::ReadRequest,
        PathKind::RemoteRead,
        PathKind::Signal,
        PathKind::SdmaPut,
        PathKind::SdmaRequest,
        PathKind::SdmaGet,
        PathKind::OrderedNotify,
    ];
    let ends =
        [(0, 0, 1), (2, 2, 0), (1, 1, 1), (2, 3, 2), (3, 0, 0), (0, 4, 1), (0, 0, 7), (usize::MAX, 0, usize::MAX)];
    let routes: Vec<Route> = kinds.iter().flat_map(|&k| ends.iter().map(move |&(c, o, p)| route(k, c, o, p))).collect();
    let mut dense = model(mesh(10.0, 0.0), 3, chip);
    let mut sparse = model(mesh(10.0, 0.0), 3, chip);
    assert!(!dense.dense.is_empty(), "a 3-chip machine has a dense table");
    sparse.dense.clear();
    if in_rows {
        dense.rows = vec![0; dense.index.row_blocks().expect("a small machine has few rows")];
        dense.dense.clear();
    }
    let mut first: Vec<Route> = Vec::new();
    for round in 0..3 {
        for i in 0..routes.len() {
            // The first round in order, the later ones shuffled: only repeats.
            let r = routes[if round == 0 { i } else { (i * 7 + round) % routes.len() }];
            let want = first.iter().position(|f| *f == r).unwrap_or_else(|| {
                first.push(r);
                first.len() - 1
            });
            let (a, b) = (dense.path(&r), sparse.path(&r));
            assert_eq!((a, b), (PathId(want as u32), PathId(want as u32)), "{r:?}");
            assert_eq!(dense.path_resources(a), sparse.path_resources(b), "{r:?}");
        }
    }
    assert_eq!(first.len(), routes.len());
    // Out-of-range routes resolve to short or empty paths, through the map.
    let unknown = dense.path(&route(PathKind::Load, 3, 0, 0));
    assert!(dense.path_resources(unknown).is_empty());
}

#[test]
fn a_machine_too_large_for_the_flat_table_keeps_it_in_rows() {
    let index = RouteIndex { ranks: 1024, slots: 50 };
    assert_eq!((index.size(), index.rows()), (None, Some(1024 * 50 * KINDS)));
    assert_eq!(RouteIndex { ranks: 8, slots: 25 }.size(), Some(8 * 25 * KINDS * 8));
    assert_eq!(RouteIndex { ranks: 1 << 20, slots: 50 }.rows(), None);
    let mut m = model(ring(), 700, ChipPaths::unlimited(1));
    assert!(m.dense.is_empty(), "700 x 1 x 10 x 700 entries is past the flat table's limit");
    assert_eq!(m.rows.len(), 700 * KINDS * 700usize.div_ceil(ROW));
    // A route's first lookup makes its row; its id stays put across the row's later growth.
    let a = m.path(&route(PathKind::Store, 5, 0, 9));
    let b = m.path(&route(PathKind::Store, 5, 0, 10));
    let c = m.path(&route(PathKind::Load, 6, 0, 0));
    assert_eq!((m.dense.len(), m.path(&route(PathKind::Store, 5, 0, 9))), (2 * ROW, a));
    // A peer in another block of the row's peers makes a row of its own.
    let d = m.path(&route(PathKind::Store, 5, 0, 9 + ROW));
    assert_eq!((d, m.dense.len()), (PathId(3), 3 * ROW));
    assert_eq!((a, b, c), (PathId(0), PathId(1), PathId(2)));
}

/// Islands are what a switch separates: on a switch every chip is one, in a hierarchy each
/// full-mesh node is one, a mesh is one. News crosses between islands in the route's link
/// latency and is instant within one.
#[test]
fn islands_and_news_follow_the_switches() {
    let switch = TopologyConfig::Switch(SwitchConfig { ranks: None, link_gbps: 10.0, link_latency_ns: 100.0 });
    let mut m = model(switch, 3, ChipPaths::unlimited(1));
    assert_eq!((0..3).map(|c| m.island(c)).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!((m.news_delay(0, 2), m.news_delay(1, 1)), (SimDuration::from_ns(200), SimDuration::ZERO));

    let node = NodeConfig::FullMesh(FullMeshConfig { ranks: Some(2), link_gbps: 10.0, link_latency_ns: 50.0 });
    let level =
        LevelConfig { groups: 3, nic_gbps: 10.0, nic_latency_ns: 700.0, efficiency: None, write_efficiency: None };
    let hier = TopologyConfig::Hierarchical(HierarchicalConfig { node, levels: vec![level] });
    let mut m = model(hier, 6, ChipPaths::unlimited(1));
    assert_eq!((0..6).map(|c| m.island(c)).collect::<Vec<_>>(), [0, 0, 2, 2, 4, 4]);
    assert_eq!(m.news_delay(0, 1), SimDuration::ZERO, "one node: no switch between them");
    assert_eq!(m.news_delay(1, 4), SimDuration::from_ns(1400), "up and down the level-1 NICs");

    let mut m = model(mesh(10.0, 500.0), 4, ChipPaths::unlimited(1));
    assert!((0..4).all(|c| m.island(c) == 0));
    assert_eq!(m.news_delay(0, 3), SimDuration::ZERO);
}
