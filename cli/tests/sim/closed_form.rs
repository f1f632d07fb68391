//! The packet model against closed-form costs, exact to the picosecond, on machines where only
//! the links cost time (see [`links_only`]): latency ALPHA per link and BETA per byte.
//!
//! Packet rounding: links run at 10 GB/s, so every byte takes exactly 100 ps and a packet of
//! any size serialises in an integer number of ps; packets cut through (a packet enters the
//! next link one latency after it entered this one), so a flow of n bytes over h links lands
//! at h*ALPHA + n*BETA whatever the packet size. The receiver wakes when the 4-byte notify sent
//! after the payload lands: that adds NOTIFY = 4*BETA to every arrival below.

use crate::flows::{Flow, land_times, links_only};
use parking_lot::Mutex;
use ranksim::Config;
use ranksim::prelude::*;
use std::sync::Arc;

/// Link latency (1 us) in ps.
const ALPHA: u64 = 1_000_000;
/// Link byte time at 10 GB/s in ps.
const BETA: u64 = 100;
/// The notify packet behind a payload on the same path.
const NOTIFY: u64 = 4 * BETA;

fn topology(kind: &str, extra: &str) -> String {
    format!("kind = \"{kind}\"\n{extra}link_gbps = 10.0\nlink_latency_ns = 1000.0\n")
}

fn mesh(ranks: usize) -> String {
    links_only(ranks, 4096, &topology("full_mesh", ""))
}

fn switch(ranks: usize, latency_ns: f64) -> String {
    let t = format!("kind = \"switch\"\nlink_gbps = 10.0\nlink_latency_ns = {latency_ns}\n");
    links_only(ranks, 4096, &t)
}

#[test]
fn a_put_of_n_bytes_takes_alpha_plus_n_beta_for_any_packet_size() {
    for packet in [256, 4096, 65536] {
        for n in [4usize, 4096, 4100, 100_000, 1 << 20] {
            let toml = links_only(2, packet, &topology("full_mesh", ""));
            let t = land_times(&toml, &[Flow::new(0, 1, n)]);
            assert_eq!(t, vec![ALPHA + n as u64 * BETA + NOTIFY], "n={n} packet={packet}");
        }
    }
}

#[test]
fn multi_hop_routes_pay_latency_per_link_and_bytes_once() {
    let n = 65_536u64;
    let ring = links_only(8, 4096, &topology("ring", "bidirectional = false\n"));
    assert_eq!(land_times(&ring, &[Flow::new(0, 3, n as usize)]), vec![3 * ALPHA + n * BETA + NOTIFY]);
    // The bidirectional ring goes the short way round: 0 -> 7 is one hop back.
    let ring = links_only(8, 4096, &topology("ring", "bidirectional = true\n"));
    assert_eq!(land_times(&ring, &[Flow::new(0, 7, n as usize)]), vec![ALPHA + n * BETA + NOTIFY]);
    // Dimension order on a 4x4 torus: 0 -> 5 is one hop in x, one in y.
    let torus = links_only(16, 4096, &topology("torus2d", "x = 4\ny = 4\n"));
    assert_eq!(land_times(&torus, &[Flow::new(0, 5, n as usize)]), vec![2 * ALPHA + n * BETA + NOTIFY]);
    // Through a switch: up and down, latency twice.
    assert_eq!(land_times(&switch(2, 1000.0), &[Flow::new(0, 1, n as usize)]), vec![2 * ALPHA + n * BETA + NOTIFY]);
}

/// p-1 ranks each put n bytes into rank 0 at once.
fn incast(p: usize, n: usize) -> Vec<Flow> {
    (1..p).map(|s| Flow::new(s, 0, n)).collect()
}

#[test]
fn incast_serialises_on_a_switch_port_and_not_on_a_full_mesh() {
    let (p, n) = (8, 65_536);
    let one = n as u64 * BETA + NOTIFY;
    // Full mesh: every sender has its own link; all land as if alone.
    assert_eq!(land_times(&mesh(p), &incast(p, n)), vec![ALPHA + one; p - 1]);
    // Switch: all p-1 payloads and notifies cross rank 0's one downlink back to back.
    let t = land_times(&switch(p, 1000.0), &incast(p, n));
    assert_eq!(t.iter().max(), Some(&(2 * ALPHA + (p as u64 - 1) * one)));
    // Without latency the incast takes exactly p-1 times as long as one flow alone.
    let alone = land_times(&switch(p, 0.0), &[Flow::new(1, 0, n)])[0];
    let t = land_times(&switch(p, 0.0), &incast(p, n));
    assert_eq!(alone, one);
    assert_eq!(t.iter().max(), Some(&((p as u64 - 1) * alone)));
    // The flows share the port packet by packet: none is served first and done early.
    assert!(t.iter().all(|&x| x > (p as u64 - 2) * alone), "{t:?}");
}

#[test]
fn two_flows_on_one_link_each_get_half_its_bandwidth() {
    let n = 65_536u64;
    let alone = land_times(&mesh(2), &[Flow::new(0, 1, n as usize)]);
    assert_eq!(alone, vec![ALPHA + n * BETA + NOTIFY]);
    // Two cores of rank 0 put n bytes each over the one 0 -> 1 link: their packets alternate,
    // so both payloads finish at 2n bytes' time; the two notifies follow in issue order.
    let both = land_times(&mesh(2), &[Flow::new(0, 1, n as usize), Flow::new(0, 1, n as usize)]);
    assert_eq!(both, vec![ALPHA + 2 * n * BETA + NOTIFY, ALPHA + 2 * n * BETA + 2 * NOTIFY]);
    // Different links (0 -> 1 and 2 -> 1 on a mesh) do not share.
    let apart = land_times(&mesh(3), &[Flow::new(0, 1, n as usize), Flow::new(2, 1, n as usize)]);
    assert_eq!(apart, vec![ALPHA + n * BETA + NOTIFY; 2]);
}

/// Rank r waits for rank r-1's notify, then puts `bytes` to rank r+1 and notifies it; the last
/// rank records when it woke.
fn dependent_ring(toml: &str, bytes: usize) -> u64 {
    let mut w = Config::from_toml(toml, "ring").unwrap().world().unwrap();
    let p = w.size();
    let dom = w.world_domain("comm_d0").unwrap();
    let data = w.alloc_window(&dom, "data", DType::F32, &[1, bytes / 4]).unwrap();
    let sig = w.alloc_window(&dom, "signal", DType::I32, &[1, 1]).unwrap();
    let woke = Arc::new(Mutex::new(0));
    let l = woke.clone();
    let kernel = Dispatch::kernel("ring", 1, move |core| {
        let me = core.rank();
        if me > 0 {
            core.wait(&sig, &[0, 0], 1, WaitCmp::Ge)?;
        }
        if me + 1 == p {
            *l.lock() = core.now().as_ps();
            return Ok(());
        }
        core.put(&data, me + 1, &data, &CopyOpts::new())?;
        core.notify(&sig, me + 1, &[0, 0], 1, NotifyOp::AtomicAdd)
    });
    w.dispatch_all(&dom, kernel).unwrap();
    w.run().unwrap();
    *woke.lock()
}

#[test]
fn a_ring_of_dependent_neighbour_transfers_takes_p_minus_1_steps() {
    let (p, n) = (8u64, 8 * 65_536u64);
    let ring = links_only(p as usize, 4096, &topology("ring", "bidirectional = false\n"));
    let step = ALPHA + (n / p) * BETA + NOTIFY;
    assert_eq!(dependent_ring(&ring, (n / p) as usize), (p - 1) * step);
    // The same on a full mesh: each step uses one link.
    assert_eq!(dependent_ring(&mesh(p as usize), (n / p) as usize), (p - 1) * step);
}

/// A remote read of `n` bytes on the links-only mesh with `[fabric]` port latency `port_ns`
/// and read turnaround `turn_ns`: the time the reader resumes, in ps.
fn remote_read(n: usize, port_ns: u64, turn_ns: u64, via_get: bool) -> u64 {
    let toml = mesh(2).replace(
        "port_gbps = inf",
        &format!("port_gbps = inf\nport_latency_ns = {port_ns}.0\nread_turnaround_ns = {turn_ns}.0"),
    );
    let mut w = Config::from_toml(&toml, "lat").unwrap().world().unwrap();
    let dom = w.world_domain("comm_d0").unwrap();
    let data = w.alloc_window(&dom, "data", DType::F32, &[2, n / 4]).unwrap();
    let log = Arc::new(Mutex::new(0u64));
    let l = log.clone();
    let k = Dispatch::kernel("read", 1, move |core| {
        if via_get {
            core.get(&data, 1, &data, &CopyOpts::new().region(&[0, 0], &[1, 0], &[1, n / 4]))?;
        } else {
            core.remote_load(&data, 1, &[1, 0], &[1, n / 4])?;
        }
        *l.lock() = core.now().as_ps();
        Ok(())
    });
    w.dispatch(0, k.in_domain(&dom)).unwrap();
    w.run().unwrap();
    *log.lock()
}

#[test]
fn a_remote_read_pays_both_legs_the_owners_turnaround_and_the_readers_port() {
    const NS: u64 = 1_000;
    let n = 65_536;
    for via_get in [false, true] {
        // The request crosses one link (ALPHA, no payload); the data comes back over one link
        // (ALPHA + n * BETA) and through the reader's ingress port. The request itself also
        // enters the owner through its port.
        let base = remote_read(n, 0, 0, via_get);
        assert_eq!(base, 2 * ALPHA + n as u64 * BETA, "via_get {via_get}");
        assert_eq!(remote_read(n, 0, 300, via_get), base + 300 * NS, "turnaround, via_get {via_get}");
        assert_eq!(remote_read(n, 200, 0, via_get), base + 200 * NS, "port, via_get {via_get}");
        assert_eq!(remote_read(n, 200, 300, via_get), base + 500 * NS, "both, via_get {via_get}");
    }
}
