//! The `[fabric]` table of a machine config (serde schema) and the checks that turn its floats
//! into integer rates and latencies.
//!
//! Units: rates in GB/s (1 GB = 1e9 B), raw, per direction; the TOML float `inf` means
//! unlimited. Latencies in ns, per resource (one link, one NIC). `efficiency` scales every link,
//! NIC and port rate to the rate payload sustains. See the crate docs for an example per kind.

use serde::{Deserialize, Serialize};
use sim_core::{Bandwidth, SimDuration};
use thiserror::Error;

/// The longest latency a config may give one resource: 1 s (guards the u64-picosecond clock).
const MAX_LATENCY_NS: f64 = 1e9;

/// The `[fabric]` table: packetisation, efficiency, ingress ports and the topology.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FabricConfig {
    /// Payload bytes per packet; transfers are split into packets of at most this size.
    pub packet_bytes: u64,
    /// Fraction of every raw link, NIC and port rate that payload sustains, in (0, 1].
    pub efficiency: f64,
    /// Raw rate of each chip's ingress port, which all incoming remote traffic crosses.
    pub port_gbps: f64,
    /// Latency of each chip's ingress port, ns: the receiving end's cost for every packet that
    /// enters the chip from the fabric, on top of the links' (absent: 0).
    #[serde(default)]
    pub port_latency_ns: f64,
    /// Time the owner of a remote read takes from the request's arrival to sending its first
    /// byte back, ns: the response leg's start-up at the far end (absent: 0).
    #[serde(default)]
    pub read_turnaround_ns: f64,
    /// Fraction of what SDMA traffic gets from a link or port that a core's remote stores
    /// (MTE3 writes into a peer's memory) sustain, in (0, 1] (absent: 1, no difference): each
    /// such packet holds the fabric `1 / core_write_efficiency` times as long.
    #[serde(default = "one")]
    pub core_write_efficiency: f64,
    /// When a notify may land relative to the payload its core wrote before it.
    #[serde(default)]
    pub ordering: NotifyOrdering,
    /// How the chips are joined.
    pub topology: TopologyConfig,
}

/// `[fabric] ordering`: whether a notify can overtake the writes its core issued before it.
#[derive(Copy, Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NotifyOrdering {
    /// A notify lands only after every earlier write of its core has landed, as the fences
    /// PyPTO's `InsertCommFence` pass puts in compiled kernels guarantee (the default).
    #[default]
    Release,
    /// A notify travels on its own path (links and port only) and lands when it arrives, so it
    /// can overtake payload still queued; kernels must `fence` before notifying.
    Relaxed,
}

/// `[fabric.topology]`: `kind` selects the topology. Read through `RawTopology` (all keys
/// optional) so that a value of the wrong type is reported at its own key, not at the table.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(try_from = "RawTopology", into = "RawTopology")]
pub enum TopologyConfig {
    /// Every chip pair has its own full-duplex link.
    FullMesh(FullMeshConfig),
    /// Chips on a ring; each link joins neighbours.
    Ring(RingConfig),
    /// A 2-D torus with wraparound links.
    Torus2d(TorusConfig),
    /// A star through one non-blocking switch (the Clos abstraction).
    Switch(SwitchConfig),
    /// Nodes of a flat topology joined by levels of switches through per-chip NICs.
    Hierarchical(HierarchicalConfig),
}

/// `[fabric.topology.node]` of a hierarchical topology: one of the flat kinds.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(try_from = "RawTopology", into = "RawTopology")]
pub enum NodeConfig {
    /// Every chip pair has its own link (`[fabric.topology]` of `kind = "full_mesh"`).
    FullMesh(FullMeshConfig),
    /// Chips in a ring, one or both ways.
    Ring(RingConfig),
    /// A 2-D torus, routed dimension by dimension.
    Torus2d(TorusConfig),
    /// A star of up / down links through one switch.
    Switch(SwitchConfig),
}

/// `kind = "full_mesh"`: one full-duplex link per chip pair (two directed links).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FullMeshConfig {
    /// Chips joined: required in a hierarchical node; optional at the top, where it must equal
    /// `machine.ranks`.
    pub ranks: Option<usize>,
    /// Raw rate of each directed link, GB/s (`inf` = unlimited).
    pub link_gbps: f64,
    /// One-way latency of each link, ns.
    pub link_latency_ns: f64,
}

/// `kind = "ring"`: chip i links to i+1 (and to i-1 when bidirectional).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RingConfig {
    /// As [`FullMeshConfig::ranks`].
    pub ranks: Option<usize>,
    /// Links in both directions (route = the shorter way, ties forward) or only forward.
    pub bidirectional: bool,
    /// Raw rate of each directed link, GB/s (`inf` = unlimited).
    pub link_gbps: f64,
    /// One-way latency of each link, ns.
    pub link_latency_ns: f64,
}

/// `kind = "torus2d"`: chip `c` sits at column `c % x`, row `c / x`, and links to its ±x and
/// ±y neighbours with wraparound. Its size is `x * y`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TorusConfig {
    /// Columns.
    pub x: usize,
    /// Rows.
    pub y: usize,
    /// Raw rate of each directed link, GB/s (`inf` = unlimited).
    pub link_gbps: f64,
    /// One-way latency of each link, ns.
    pub link_latency_ns: f64,
}

/// `kind = "switch"`: each chip has an uplink into and a downlink out of one non-blocking
/// switch; a route is `[up src, down dst]`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    /// As [`FullMeshConfig::ranks`].
    pub ranks: Option<usize>,
    /// Raw rate of each uplink and each downlink, GB/s (`inf` = unlimited).
    pub link_gbps: f64,
    /// Latency of each uplink and each downlink, ns (a chip-to-chip crossing pays it twice).
    pub link_latency_ns: f64,
}

/// `kind = "hierarchical"`: level 0 is `node`, a flat topology; each further level joins
/// `groups` groups of the level below through per-chip NICs into non-blocking switches.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HierarchicalConfig {
    /// The topology inside one node (its `ranks` is required, except for a torus).
    pub node: NodeConfig,
    /// Levels 1, 2, ... from the innermost out (`[[fabric.topology.levels]]`).
    pub levels: Vec<LevelConfig>,
}

/// One `[[fabric.topology.levels]]` entry.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LevelConfig {
    /// How many groups of the level below one group of this level joins.
    pub groups: usize,
    /// Raw rate of each chip's NIC uplink and downlink at this level, GB/s (`inf` = unlimited).
    pub nic_gbps: f64,
    /// Latency of each NIC uplink and downlink, ns (a crossing of this level pays it twice).
    pub nic_latency_ns: f64,
    /// Fraction of `nic_gbps` that payload sustains on this level's NICs, in (0, 1] (absent:
    /// `fabric.efficiency`): a scale-out NIC (RoCE) and the scale-up links inside a server
    /// lose different shares of their raw rate to headers and protocol.
    #[serde(default)]
    pub efficiency: Option<f64>,
    /// Fraction of `nic_gbps` that bytes *written* across this level (SDMA puts, a core's
    /// remote stores) sustain, in (0, 1] (absent: this level's efficiency, no difference):
    /// such a packet holds the level's NICs `efficiency / write_efficiency` times as long as
    /// a read's. A3's UB plane between servers moves writes slower than reads on every path
    /// HIXL measures there.
    #[serde(default)]
    pub write_efficiency: Option<f64>,
}

impl LevelConfig {
    /// How much longer a written packet holds this level's NICs than a read one: its
    /// efficiency over its `write_efficiency` (1 without one), checked. `key` names the
    /// level's table in an error; `fabric` is the fabric's efficiency.
    pub(crate) fn write_scale(&self, key: &str, fabric: f64) -> Result<f64, FabricConfigError> {
        let eff = self.checked_efficiency(&format!("{key}.efficiency"), fabric)?;
        match self.write_efficiency {
            None => Ok(1.0),
            Some(w) if w > 0.0 && w <= 1.0 => Ok(eff / w),
            Some(w) => Err(err(
                &format!("{key}.write_efficiency"),
                w,
                "must be in (0, 1]: the fraction of nic_gbps written bytes sustain",
            )),
        }
    }

    /// This level's efficiency: its own, checked to lie in (0, 1], else `fabric` (the
    /// fabric's). `key` names the level's table in an error.
    pub(crate) fn checked_efficiency(&self, key: &str, fabric: f64) -> Result<f64, FabricConfigError> {
        match self.efficiency {
            None => Ok(fabric),
            Some(e) if e > 0.0 && e <= 1.0 => Ok(e),
            Some(e) => Err(err(key, e, "must be in (0, 1]: the fraction of nic_gbps payload sustains")),
        }
    }
}

/// Every key any topology kind takes, each optional: serde reads each value at its own key
/// (a type error names the line of the key), then `kind` decides which keys must and may be
/// there.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawTopology {
    kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    ranks: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bidirectional: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    x: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    y: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    link_gbps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    link_latency_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    node: Option<Box<RawTopology>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    levels: Option<Vec<LevelConfig>>,
}

/// A topology written back in the keys it is read from (for printing a resolved config).
impl From<NodeConfig> for RawTopology {
    fn from(n: NodeConfig) -> RawTopology {
        let link = |kind: &str, ranks, gbps, latency| RawTopology {
            kind: kind.to_string(),
            ranks,
            link_gbps: Some(gbps),
            link_latency_ns: Some(latency),
            ..RawTopology::default()
        };
        match n {
            NodeConfig::FullMesh(c) => link("full_mesh", c.ranks, c.link_gbps, c.link_latency_ns),
            NodeConfig::Ring(c) => RawTopology {
                bidirectional: Some(c.bidirectional),
                ..link("ring", c.ranks, c.link_gbps, c.link_latency_ns)
            },
            NodeConfig::Torus2d(c) => {
                RawTopology { x: Some(c.x), y: Some(c.y), ..link("torus2d", None, c.link_gbps, c.link_latency_ns) }
            }
            NodeConfig::Switch(c) => link("switch", c.ranks, c.link_gbps, c.link_latency_ns),
        }
    }
}

impl From<TopologyConfig> for RawTopology {
    fn from(t: TopologyConfig) -> RawTopology {
        match t {
            TopologyConfig::FullMesh(c) => NodeConfig::FullMesh(c).into(),
            TopologyConfig::Ring(c) => NodeConfig::Ring(c).into(),
            TopologyConfig::Torus2d(c) => NodeConfig::Torus2d(c).into(),
            TopologyConfig::Switch(c) => NodeConfig::Switch(c).into(),
            TopologyConfig::Hierarchical(h) => RawTopology {
                kind: "hierarchical".to_string(),
                node: Some(Box::new(h.node.into())),
                levels: Some(h.levels),
                ..RawTopology::default()
            },
        }
    }
}

/// The keys of `[fabric.topology]` other than `kind`, in declaration order.
const TOPOLOGY_KEYS: [&str; 8] = ["ranks", "bidirectional", "x", "y", "link_gbps", "link_latency_ns", "node", "levels"];

impl RawTopology {
    /// Which optional keys are present, in [`TOPOLOGY_KEYS`] order.
    fn present(&self) -> [bool; 8] {
        [
            self.ranks.is_some(),
            self.bidirectional.is_some(),
            self.x.is_some(),
            self.y.is_some(),
            self.link_gbps.is_some(),
            self.link_latency_ns.is_some(),
            self.node.is_some(),
            self.levels.is_some(),
        ]
    }

    /// Refuses a key `kind` does not take (`allowed`), naming it.
    fn only(&self, allowed: &[&str]) -> Result<(), String> {
        for (key, there) in TOPOLOGY_KEYS.iter().zip(self.present()) {
            if there && !allowed.contains(key) {
                return Err(format!(
                    "`{key}` is not a key of kind = \"{}\" (its keys: kind, {})",
                    self.kind,
                    allowed.join(", ")
                ));
            }
        }
        Ok(())
    }

    fn need<T: Clone>(&self, key: &str, v: &Option<T>) -> Result<T, String> {
        v.clone().ok_or_else(|| format!("kind = \"{}\" needs `{key}`", self.kind))
    }

    /// A flat kind (every kind but `hierarchical`), or `None` for `hierarchical`.
    fn flat(&self) -> Result<Option<NodeConfig>, String> {
        let link = |t: &RawTopology| -> Result<(f64, f64), String> {
            Ok((t.need("link_gbps", &t.link_gbps)?, t.need("link_latency_ns", &t.link_latency_ns)?))
        };
        Ok(Some(match self.kind.as_str() {
            "full_mesh" => {
                self.only(&["ranks", "link_gbps", "link_latency_ns"])?;
                let (link_gbps, link_latency_ns) = link(self)?;
                NodeConfig::FullMesh(FullMeshConfig { ranks: self.ranks, link_gbps, link_latency_ns })
            }
            "ring" => {
                self.only(&["ranks", "bidirectional", "link_gbps", "link_latency_ns"])?;
                let (link_gbps, link_latency_ns) = link(self)?;
                let bidirectional = self.need("bidirectional", &self.bidirectional)?;
                NodeConfig::Ring(RingConfig { ranks: self.ranks, bidirectional, link_gbps, link_latency_ns })
            }
            "torus2d" => {
                self.only(&["x", "y", "link_gbps", "link_latency_ns"])?;
                let (link_gbps, link_latency_ns) = link(self)?;
                let (x, y) = (self.need("x", &self.x)?, self.need("y", &self.y)?);
                NodeConfig::Torus2d(TorusConfig { x, y, link_gbps, link_latency_ns })
            }
            "switch" => {
                self.only(&["ranks", "link_gbps", "link_latency_ns"])?;
                let (link_gbps, link_latency_ns) = link(self)?;
                NodeConfig::Switch(SwitchConfig { ranks: self.ranks, link_gbps, link_latency_ns })
            }
            "hierarchical" => return Ok(None),
            other => {
                return Err(format!(
                    "kind = \"{other}\" is not a topology; use full_mesh, ring, torus2d, switch or hierarchical"
                ));
            }
        }))
    }
}

impl TryFrom<RawTopology> for NodeConfig {
    type Error = String;
    fn try_from(raw: RawTopology) -> Result<NodeConfig, String> {
        raw.flat()?.ok_or_else(|| {
            "kind = \"hierarchical\" cannot be a node; a node is full_mesh, ring, torus2d or switch".to_string()
        })
    }
}

impl TryFrom<RawTopology> for TopologyConfig {
    type Error = String;
    fn try_from(raw: RawTopology) -> Result<TopologyConfig, String> {
        Ok(match raw.flat()? {
            Some(NodeConfig::FullMesh(c)) => TopologyConfig::FullMesh(c),
            Some(NodeConfig::Ring(c)) => TopologyConfig::Ring(c),
            Some(NodeConfig::Torus2d(c)) => TopologyConfig::Torus2d(c),
            Some(NodeConfig::Switch(c)) => TopologyConfig::Switch(c),
            None => {
                raw.only(&["node", "levels"])?;
                let node = raw.need("node", &raw.node)?;
                let levels = raw.need("levels", &raw.levels)?;
                TopologyConfig::Hierarchical(HierarchicalConfig { node: NodeConfig::try_from(*node)?, levels })
            }
        })
    }
}

/// A `[fabric]` value that cannot describe a fabric; `key` is dotted below `fabric`.
#[derive(Debug, Error, Clone, PartialEq)]
#[error("fabric.{key} = {value}: {why}")]
pub struct FabricConfigError {
    /// The key, with its table path.
    pub key: String,
    /// The value given.
    pub value: String,
    /// Why it is refused and what to give instead.
    pub why: String,
}

/// Builds a [`FabricConfigError`].
pub(crate) fn err(key: &str, value: impl ToString, why: impl ToString) -> FabricConfigError {
    FabricConfigError { key: key.to_string(), value: value.to_string(), why: why.to_string() }
}

/// A resource's validated timing: raw and effective rate (`None` = unlimited) and latency.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LinkParams {
    /// The configured rate, for display.
    pub raw: Option<Bandwidth>,
    /// The rate payload sustains (`raw * efficiency`), used for timing.
    pub rate: Option<Bandwidth>,
    /// One-way latency.
    pub latency: SimDuration,
}

impl LinkParams {
    /// Checks `gbps` (under `rate_key`) and `latency_ns` (under `latency_key`).
    pub(crate) fn new(
        rate_key: &str,
        gbps: f64,
        latency_key: &str,
        latency_ns: f64,
        efficiency: f64,
    ) -> Result<LinkParams, FabricConfigError> {
        let (raw, rate) = rates(rate_key, gbps, efficiency)?;
        Ok(LinkParams { raw, rate, latency: latency(latency_key, latency_ns)? })
    }
}

/// Raw and effective rate of a configured GB/s figure; `inf` gives unlimited (`None`).
fn rates(key: &str, gbps: f64, efficiency: f64) -> Result<(Option<Bandwidth>, Option<Bandwidth>), FabricConfigError> {
    if gbps == f64::INFINITY {
        return Ok((None, None));
    }
    if !(gbps.is_finite() && gbps > 0.0) {
        return Err(err(key, gbps, "must be a positive rate in GB/s, or inf for unlimited"));
    }
    let slow = || err(key, gbps, "is below 1 byte per second once scaled by fabric.efficiency");
    let raw = Bandwidth::from_gbps_f64(gbps).ok_or_else(slow)?;
    let rate = Bandwidth::from_gbps_f64(gbps * efficiency).ok_or_else(slow)?;
    Ok((Some(raw), Some(rate)))
}

/// A configured ns figure as an integer duration.
fn latency(key: &str, ns: f64) -> Result<SimDuration, FabricConfigError> {
    if !(ns.is_finite() && (0.0..=MAX_LATENCY_NS).contains(&ns)) {
        return Err(err(key, ns, "must be a number of ns from 0 to 1e9 (1 s)"));
    }
    Ok(SimDuration::from_ns_f64(ns))
}

/// The default of a fraction that changes nothing.
fn one() -> f64 {
    1.0
}

impl FabricConfig {
    /// `core_write_efficiency`, checked to lie in (0, 1].
    pub(crate) fn checked_core_write_efficiency(&self) -> Result<f64, FabricConfigError> {
        let e = self.core_write_efficiency;
        if !(e > 0.0 && e <= 1.0) {
            let why = "must be in (0, 1]: the fraction of a link's payload rate a core's remote stores sustain";
            return Err(err("core_write_efficiency", e, why));
        }
        Ok(e)
    }

    /// `efficiency`, checked to lie in (0, 1].
    pub(crate) fn checked_efficiency(&self) -> Result<f64, FabricConfigError> {
        let e = self.efficiency;
        if !(e > 0.0 && e <= 1.0) {
            return Err(err("efficiency", e, "must be in (0, 1]: the fraction of raw rate payload sustains"));
        }
        Ok(e)
    }

    /// `packet_bytes`, checked to be at least 1.
    pub(crate) fn checked_packet_bytes(&self) -> Result<u64, FabricConfigError> {
        match self.packet_bytes {
            0 => Err(err("packet_bytes", 0, "must be at least 1 byte")),
            n => Ok(n),
        }
    }

    /// The ingress port of every chip: `port_gbps` at the fabric's efficiency, with
    /// `port_latency_ns` of its own.
    pub(crate) fn port(&self) -> Result<LinkParams, FabricConfigError> {
        let (raw, rate) = rates("port_gbps", self.port_gbps, self.checked_efficiency()?)?;
        Ok(LinkParams { raw, rate, latency: latency("port_latency_ns", self.port_latency_ns)? })
    }

    /// The remote-read turnaround, checked.
    pub(crate) fn read_turnaround(&self) -> Result<SimDuration, FabricConfigError> {
        latency("read_turnaround_ns", self.read_turnaround_ns)
    }
}

impl TopologyConfig {
    /// The `kind` as written in TOML.
    pub fn kind(&self) -> &'static str {
        match self {
            TopologyConfig::FullMesh(_) => "full_mesh",
            TopologyConfig::Ring(_) => "ring",
            TopologyConfig::Torus2d(_) => "torus2d",
            TopologyConfig::Switch(_) => "switch",
            TopologyConfig::Hierarchical(_) => "hierarchical",
        }
    }
}

/// A class of links of a topology, the unit calibration fits one latency and rate to.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LinkClass {
    /// The links of a flat topology, or of a hierarchical topology's nodes.
    Node,
    /// The NICs of level k (1-based) of a hierarchical topology.
    Level(usize),
}

/// Why a topology has no links of a [`LinkClass`] (always a `Level`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum NoSuchLinks {
    /// A flat topology (of this `kind`) has no levels, so no `level`.
    NoLevels {
        /// The topology's kind.
        kind: &'static str,
        /// The level asked for.
        level: usize,
    },
    /// A hierarchical topology has levels `1..=levels` only, not `level`.
    NoSuchLevel {
        /// The level asked for.
        level: usize,
        /// How many levels there are.
        levels: usize,
    },
}

impl NodeConfig {
    /// The node's `link_gbps` and `link_latency_ns`, to read or set.
    pub fn link_mut(&mut self) -> (&mut f64, &mut f64) {
        match self {
            NodeConfig::FullMesh(m) => (&mut m.link_gbps, &mut m.link_latency_ns),
            NodeConfig::Ring(m) => (&mut m.link_gbps, &mut m.link_latency_ns),
            NodeConfig::Torus2d(m) => (&mut m.link_gbps, &mut m.link_latency_ns),
            NodeConfig::Switch(m) => (&mut m.link_gbps, &mut m.link_latency_ns),
        }
    }

    /// Chips in the node as configured: `ranks` when given, `x * y` for a torus.
    pub fn ranks(&self) -> Option<usize> {
        match self {
            NodeConfig::FullMesh(m) => m.ranks,
            NodeConfig::Ring(m) => m.ranks,
            NodeConfig::Switch(m) => m.ranks,
            NodeConfig::Torus2d(m) => Some(m.x * m.y),
        }
    }
}

impl HierarchicalConfig {
    /// The rank whose route from rank 0 first crosses level `k`'s NICs (1-based): the first
    /// rank of the next level-(k-1) group. `ranks` (the machine's) stands in for a node size
    /// the config leaves out. Not checked against `ranks`.
    pub fn first_across(&self, k: usize, ranks: usize) -> usize {
        let below: usize = self.levels.iter().take(k.saturating_sub(1)).map(|l| l.groups).product();
        self.node.ranks().unwrap_or(ranks).saturating_mul(below)
    }
}

impl TopologyConfig {
    /// The raw rate (GB/s) and latency (ns) fields of the links of `class`, to read or set.
    pub fn link_mut(&mut self, class: LinkClass) -> Result<(&mut f64, &mut f64), NoSuchLinks> {
        match (self, class) {
            (TopologyConfig::FullMesh(m), LinkClass::Node) => Ok((&mut m.link_gbps, &mut m.link_latency_ns)),
            (TopologyConfig::Ring(m), LinkClass::Node) => Ok((&mut m.link_gbps, &mut m.link_latency_ns)),
            (TopologyConfig::Torus2d(m), LinkClass::Node) => Ok((&mut m.link_gbps, &mut m.link_latency_ns)),
            (TopologyConfig::Switch(m), LinkClass::Node) => Ok((&mut m.link_gbps, &mut m.link_latency_ns)),
            (TopologyConfig::Hierarchical(h), LinkClass::Node) => Ok(h.node.link_mut()),
            (TopologyConfig::Hierarchical(h), LinkClass::Level(k)) => {
                let levels = h.levels.len();
                let l = h.levels.get_mut(k.wrapping_sub(1)).ok_or(NoSuchLinks::NoSuchLevel { level: k, levels })?;
                Ok((&mut l.nic_gbps, &mut l.nic_latency_ns))
            }
            (t, LinkClass::Level(level)) => Err(NoSuchLinks::NoLevels { kind: t.kind(), level }),
        }
    }

    /// The efficiency that scales the links of `class`: a level's own `efficiency` when it
    /// gives one, else `fabric` (the fabric's).
    pub fn efficiency_of(&self, class: LinkClass, fabric: f64) -> f64 {
        match (self, class) {
            (TopologyConfig::Hierarchical(h), LinkClass::Level(k)) => {
                h.levels.get(k.wrapping_sub(1)).and_then(|l| l.efficiency).unwrap_or(fabric)
            }
            _ => fabric,
        }
    }

    /// A rank whose route from rank 0 crosses links of `class` on a machine of `ranks` chips
    /// (1 for a node's links; see [`HierarchicalConfig::first_across`]). Not checked against
    /// `ranks`; a level that does not exist gives the rank past its last level.
    pub fn crossing_peer(&self, class: LinkClass, ranks: usize) -> Result<usize, NoSuchLinks> {
        match (self, class) {
            (_, LinkClass::Node) => Ok(1),
            (TopologyConfig::Hierarchical(h), LinkClass::Level(k)) => Ok(h.first_across(k, ranks)),
            (t, LinkClass::Level(level)) => Err(NoSuchLinks::NoLevels { kind: t.kind(), level }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<FabricConfig, String> {
        #[derive(Deserialize)]
        struct File {
            fabric: FabricConfig,
        }
        toml::from_str::<File>(text).map(|f| f.fabric).map_err(|e| e.to_string())
    }

    const MESH: &str = r#"
[fabric]
packet_bytes = 4096
efficiency = 0.7
port_gbps = inf
[fabric.topology]
kind = "full_mesh"
link_gbps = 28.0
link_latency_ns = 500.0
"#;

    #[test]
    fn parses_inf_as_unlimited() {
        let cfg = parse(MESH).unwrap();
        assert_eq!(cfg.port_gbps, f64::INFINITY);
        assert_eq!(cfg.port().unwrap(), LinkParams { raw: None, rate: None, latency: SimDuration::ZERO });
        let TopologyConfig::FullMesh(m) = &cfg.topology else { panic!("not a mesh") };
        let p = LinkParams::new("l", m.link_gbps, "t", m.link_latency_ns, 0.7).unwrap();
        assert_eq!(p.raw.map(|b| b.bytes_per_s()), Some(28_000_000_000));
        assert_eq!(p.rate.map(|b| b.bytes_per_s()), Some(19_600_000_000));
        assert_eq!(p.latency.as_ps(), 500_000);
    }

    #[test]
    fn unknown_keys_and_kinds_are_named() {
        let e = parse(&MESH.replace("link_gbps", "link_gbs")).unwrap_err();
        assert!(e.contains("unknown field `link_gbs`"), "{e}");
        let e = parse(&MESH.replace("\"full_mesh\"", "\"mesh\"")).unwrap_err();
        assert!(e.contains("kind = \"mesh\" is not a topology; use full_mesh, ring"), "{e}");
        let e = parse(&MESH.replace("efficiency = 0.7\n", "efficiency = 0.7\nbogus = 1\n")).unwrap_err();
        assert!(e.contains("unknown field `bogus`"), "{e}");
        let e = parse(&MESH.replace("packet_bytes = 4096\n", "")).unwrap_err();
        assert!(e.contains("missing field `packet_bytes`"), "{e}");
    }

    /// A value of the wrong type inside `[fabric.topology]` is reported at its key's line, not
    /// at the table header (issue 13); a key another kind takes is named.
    #[test]
    fn type_errors_in_the_topology_name_the_key() {
        let e = parse(&MESH.replace("link_gbps = 28.0", "link_gbps = \"fast\"")).unwrap_err();
        assert!(e.contains("link_gbps = \"fast\"") && e.contains("invalid type: string"), "{e}");
        let e = parse(&MESH.replace("link_latency_ns = 500.0", "link_latency_ns = [1]")).unwrap_err();
        assert!(e.contains("link_latency_ns = [1]"), "{e}");
        let e = parse(&MESH.replace("link_gbps = 28.0", "link_gbps = 28.0\nx = 2")).unwrap_err();
        assert!(e.contains("`x` is not a key of kind = \"full_mesh\""), "{e}");
        let e = parse(&MESH.replace("link_gbps = 28.0\n", "")).unwrap_err();
        assert!(e.contains("kind = \"full_mesh\" needs `link_gbps`"), "{e}");
    }

    const TWO_LEVEL: &str = r#"
[fabric]
packet_bytes = 4096
efficiency = 0.7
port_gbps = inf
[fabric.topology]
kind = "hierarchical"
[fabric.topology.node]
kind = "torus2d"
x = 2
y = 2
link_gbps = 28.0
link_latency_ns = 500.0
[[fabric.topology.levels]]
groups = 3
nic_gbps = 25.0
nic_latency_ns = 750.0
[[fabric.topology.levels]]
groups = 2
nic_gbps = 12.0
nic_latency_ns = 900.0
"#;

    #[test]
    fn link_classes_find_their_fields() {
        let mut flat = parse(MESH).unwrap().topology;
        assert_eq!(flat.link_mut(LinkClass::Node).map(|(g, l)| (*g, *l)), Ok((28.0, 500.0)));
        assert_eq!(
            flat.link_mut(LinkClass::Level(1)).unwrap_err(),
            NoSuchLinks::NoLevels { kind: "full_mesh", level: 1 }
        );
        let mut h = parse(TWO_LEVEL).unwrap().topology;
        assert_eq!(h.link_mut(LinkClass::Node).map(|(g, l)| (*g, *l)), Ok((28.0, 500.0)));
        assert_eq!(h.link_mut(LinkClass::Level(2)).map(|(g, l)| (*g, *l)), Ok((12.0, 900.0)));
        assert_eq!(h.link_mut(LinkClass::Level(0)).unwrap_err(), NoSuchLinks::NoSuchLevel { level: 0, levels: 2 });
        assert_eq!(h.link_mut(LinkClass::Level(3)).unwrap_err(), NoSuchLinks::NoSuchLevel { level: 3, levels: 2 });
        let (g, l) = h.link_mut(LinkClass::Level(1)).unwrap();
        (*g, *l) = (30.0, 10.0);
        let TopologyConfig::Hierarchical(hc) = &h else { panic!("not hierarchical") };
        assert_eq!((hc.levels[0].nic_gbps, hc.levels[0].nic_latency_ns), (30.0, 10.0));
    }

    /// A level's own efficiency scales its NICs alone; out of range, it is named.
    #[test]
    fn a_level_may_have_its_own_efficiency() {
        let text = TWO_LEVEL.replace("nic_latency_ns = 750.0\n", "nic_latency_ns = 750.0\nefficiency = 0.95\n");
        let h = parse(&text).unwrap().topology;
        assert_eq!(h.efficiency_of(LinkClass::Level(1), 0.7), 0.95);
        assert_eq!(h.efficiency_of(LinkClass::Level(2), 0.7), 0.7);
        assert_eq!(h.efficiency_of(LinkClass::Node, 0.7), 0.7);
        let TopologyConfig::Hierarchical(hc) = &h else { panic!("not hierarchical") };
        assert_eq!(hc.levels[0].checked_efficiency("k", 0.7), Ok(0.95));
        let mut bad = hc.levels[0].clone();
        bad.efficiency = Some(1.5);
        let e = bad.checked_efficiency("topology.levels[0].efficiency", 0.7).unwrap_err().to_string();
        assert!(e.starts_with("fabric.topology.levels[0].efficiency = 1.5: must be in (0, 1]"), "{e}");
    }

    /// A level's write efficiency makes a written packet hold its NICs efficiency /
    /// write_efficiency times as long; absent, writes and reads are alike.
    #[test]
    fn a_level_may_slow_its_writes() {
        let text = TWO_LEVEL
            .replace("nic_latency_ns = 900.0\n", "nic_latency_ns = 900.0\nefficiency = 0.8\nwrite_efficiency = 0.6\n");
        let TopologyConfig::Hierarchical(h) = parse(&text).unwrap().topology else { panic!("not hierarchical") };
        assert_eq!(h.levels[0].write_scale("k", 0.7), Ok(1.0));
        assert!((h.levels[1].write_scale("k", 0.7).unwrap() - 0.8 / 0.6).abs() < 1e-12);
        let mut bad = h.levels[1].clone();
        bad.write_efficiency = Some(0.0);
        let e = bad.write_scale("topology.levels[1]", 0.7).unwrap_err().to_string();
        assert!(e.starts_with("fabric.topology.levels[1].write_efficiency = 0: must be in (0, 1]"), "{e}");
    }

    #[test]
    fn crossing_peers_sit_across_their_level() {
        let flat = parse(MESH).unwrap().topology;
        assert_eq!(flat.crossing_peer(LinkClass::Node, 8), Ok(1));
        assert_eq!(
            flat.crossing_peer(LinkClass::Level(1), 8),
            Err(NoSuchLinks::NoLevels { kind: "full_mesh", level: 1 })
        );
        let h = parse(TWO_LEVEL).unwrap().topology;
        // Nodes of 2 x 2 chips; level 1 joins 3 nodes, level 2 two such groups.
        assert_eq!(h.crossing_peer(LinkClass::Node, 24), Ok(1));
        assert_eq!(h.crossing_peer(LinkClass::Level(1), 24), Ok(4));
        assert_eq!(h.crossing_peer(LinkClass::Level(2), 24), Ok(12));
        assert_eq!(h.crossing_peer(LinkClass::Level(3), 24), Ok(24));
        let mut mesh_node =
            parse(&TWO_LEVEL.replace("kind = \"torus2d\"\nx = 2\ny = 2", "kind = \"full_mesh\"\nranks = 4"))
                .unwrap()
                .topology;
        assert_eq!(mesh_node.crossing_peer(LinkClass::Level(2), 24), Ok(12));
        if let TopologyConfig::Hierarchical(hc) = &mut mesh_node
            && let NodeConfig::FullMesh(m) = &mut hc.node
        {
            m.ranks = None;
        }
        // A node size left out stands for the machine's ranks.
        assert_eq!(mesh_node.crossing_peer(LinkClass::Level(1), 24), Ok(24));
    }

    #[test]
    fn bad_values_name_their_key() {
        let cfg = |f: &dyn Fn(&mut FabricConfig)| {
            let mut c = parse(MESH).unwrap();
            f(&mut c);
            c.validate(4).unwrap_err().to_string()
        };
        assert_eq!(
            cfg(&|c| c.efficiency = 1.5),
            "fabric.efficiency = 1.5: must be in (0, 1]: the fraction of raw rate payload sustains"
        );
        assert_eq!(cfg(&|c| c.packet_bytes = 0), "fabric.packet_bytes = 0: must be at least 1 byte");
        assert_eq!(
            cfg(&|c| c.port_gbps = -1.0),
            "fabric.port_gbps = -1: must be a positive rate in GB/s, or inf for unlimited"
        );
        assert!(cfg(&|c| c.port_gbps = f64::NAN).starts_with("fabric.port_gbps = NaN"));
        assert!(cfg(&|c| c.port_gbps = 1e-12).contains("below 1 byte per second"));
        let set = |f: fn(&mut FullMeshConfig)| {
            move |c: &mut FabricConfig| {
                if let TopologyConfig::FullMesh(m) = &mut c.topology {
                    f(m)
                }
            }
        };
        assert!(cfg(&set(|m| m.link_gbps = 0.0)).starts_with("fabric.topology.link_gbps = 0: "));
        assert!(cfg(&set(|m| m.link_latency_ns = -1.0)).starts_with("fabric.topology.link_latency_ns = -1: "));
        assert!(cfg(&set(|m| m.link_latency_ns = 1e300)).starts_with("fabric.topology.link_latency_ns = "));
        assert_eq!(
            cfg(&set(|m| m.ranks = Some(3))),
            "fabric.topology.ranks = 3: must equal machine.ranks = 4 (or be left out)"
        );
    }
}
