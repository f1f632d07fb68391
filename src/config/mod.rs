//! Machine configs: the TOML schema (`[machine]`, `[chip]`, `[fabric]`), the embedded presets,
//! bases (a config names one and states what differs, see [`Merged`]), and the construction of
//! a [`World`] from a config.

mod error;
mod layers;
mod listing;
mod presets;

pub use error::ConfigError;
use layers::Origin;
pub use layers::{Layer, Merged, Restated, Source};
use presets::preset_names;
pub use presets::{DEFAULT_PRESET, PRESETS};

use chip_model::{ChipConfig, ChipModel};
use interconnect::ChipPaths;
use interconnect::FabricConfig;
use serde::{Deserialize, Serialize};
use sim_core::{World, model::Network};
use std::path::Path;
use std::sync::Arc;

/// The most ranks a machine may have: an Atlas 950 SuperPoD's 8192. The fabric bounds its links
/// on its own (16 M: a full mesh stops at 4096 chips), so larger machines are joined
/// hierarchically or through switches.
pub const MAX_RANKS: usize = 8192;

/// The largest `[host]` cost in us (1 s), the same per-operation bound as `[chip]`'s
/// (`chip_model::limits`), so a `[STRACE]` host timeline never overflows.
pub const MAX_HOST_US: f64 = 1e6;

/// A whole machine as written in a config file.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// `[machine]`: name and rank count.
    pub machine: MachineConfig,
    /// `[chip]`: one chip's costs and sizes.
    pub chip: ChipConfig,
    /// `[host]`: the host-side costs of a dispatch.
    pub host: HostConfig,
    /// `[fabric]`: links, topology, packets.
    pub fabric: FabricConfig,
}

/// The `[host]` table: host-side costs of a dispatch, which widen its `chip.run` host span
/// around the device wall (device timing is unaffected).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// Host time before the device starts (argument staging, enqueue), in us.
    pub bind_us: f64,
    /// Host time after the device ends (completion drain, cleanup), in us.
    pub finalize_us: f64,
    /// Host launch of one host-launched HCCL-class op (`HcclSend`, a collective expanded on
    /// the host / AICPU), in us: back-to-back ops start no closer than this (absent: 0).
    #[serde(default)]
    pub hccl_launch_us: f64,
    /// An HCCL-class op's setup (op expansion, task dispatch) before its device work starts,
    /// in us, in series with it (absent: 0).
    #[serde(default)]
    pub hccl_setup_us: f64,
    /// What HIXL's client-server transfer path (CANN's point-to-point transfer library) costs
    /// per block of a batch before the block is posted, in us; it overlaps the wire time of
    /// the blocks before it (absent: 0).
    #[serde(default)]
    pub hixl_block_us: f64,
    /// The same per-block cost for a transfer through an HCCL communication domain, in us
    /// (absent: 0).
    #[serde(default)]
    pub hccl_block_us: f64,
}

/// The `[machine]` table.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MachineConfig {
    /// Name shown in outputs.
    pub name: String,
    /// Number of chips (world ranks).
    pub ranks: usize,
    /// Ranks per server, for the server-level hierarchical collectives (HCCL's level 0): world
    /// ranks `s * k .. (s + 1) * k` are server `s`. Optional: absent, a hierarchical fabric's
    /// node is the server and a flat fabric is one server; give it where the fabric model
    /// abstracts the server tier away (a Clos or switch plane over many servers). See
    /// [`Config::server_ranks`].
    #[serde(default)]
    pub server_ranks: Option<usize>,
}

impl Config {
    /// Parses TOML text; `origin` names it in errors (a path or `preset a2a3`). A `base` it
    /// names is a preset or a file relative to the working folder.
    pub fn from_toml(text: &str, origin: &str) -> Result<Config, ConfigError> {
        Config::from_merged(&Merged::read(Origin::Text { text, name: origin })?)
    }

    /// Reads and parses a config file (and the bases it names).
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        Config::from_merged(&Merged::read(Origin::File(path))?)
    }

    /// One of the embedded presets.
    pub fn preset(name: &str) -> Result<Config, ConfigError> {
        Config::from_merged(&Merged::read(Origin::Preset(name))?)
    }

    /// The default preset (`a2a3`).
    pub fn default_preset() -> Config {
        match Config::preset(DEFAULT_PRESET) {
            Ok(c) => c,
            Err(e) => unreachable!("the embedded default preset is checked by tests: {e}"),
        }
    }

    /// A config file if a path is given (or the name of an embedded preset), else the default
    /// preset. A bare name that is neither (no directory, no extension) is an unknown config,
    /// with the nearest preset as a suggestion.
    pub fn load_or_default(path: Option<&Path>) -> Result<Config, ConfigError> {
        Config::from_merged(&Config::layers(path)?)
    }

    /// The layers [`Config::load_or_default`] reads for `path`, merged, with where each value
    /// was written (see [`Merged`]).
    pub fn layers(path: Option<&Path>) -> Result<Merged, ConfigError> {
        Merged::read(match path {
            Some(p) if !p.exists() && PRESETS.iter().any(|(n, _)| p.as_os_str() == *n) => {
                Origin::Preset(p.to_str().unwrap_or(DEFAULT_PRESET))
            }
            Some(p) if !p.exists() && p.extension().is_none() && p.components().count() == 1 => {
                return Err(ConfigError::UnknownConfig(p.display().to_string(), preset_names()));
            }
            Some(p) => Origin::File(p),
            None => Origin::Preset(DEFAULT_PRESET),
        })
    }

    /// The config merged layers describe, checked.
    pub fn from_merged(m: &Merged) -> Result<Config, ConfigError> {
        let cfg = Config::deserialize(toml::de::Deserializer::from(m.table()?)).map_err(|e| m.error(e))?;
        cfg.validate(&m.layers[0].origin)?;
        Ok(cfg)
    }

    fn validate(&self, origin: &str) -> Result<(), ConfigError> {
        let invalid = |message: String| ConfigError::Invalid { origin: origin.to_string(), message };
        let ranks = self.machine.ranks;
        if ranks == 0 || ranks > MAX_RANKS {
            return Err(invalid(format!("machine.ranks = {ranks}: a machine has 1..={MAX_RANKS} ranks (chips)")));
        }
        ChipModel::from_config(&self.chip).map_err(|e| invalid(e.to_string()))?;
        let host = [
            ("host.bind_us", self.host.bind_us),
            ("host.finalize_us", self.host.finalize_us),
            ("host.hccl_launch_us", self.host.hccl_launch_us),
            ("host.hccl_setup_us", self.host.hccl_setup_us),
            ("host.hixl_block_us", self.host.hixl_block_us),
            ("host.hccl_block_us", self.host.hccl_block_us),
        ];
        for (key, v) in host {
            if !(v.is_finite() && (0.0..=MAX_HOST_US).contains(&v)) {
                return Err(invalid(format!("{key} = {v}: must be a number of microseconds from 0 to 1e6 (1 s)")));
            }
        }
        self.network().map_err(invalid)?;
        let k = self.server_ranks();
        if k == 0 || !ranks.is_multiple_of(k) {
            return Err(invalid(format!(
                "machine.server_ranks = {k}: a server's ranks must divide machine.ranks = {ranks} (whole servers)"
            )));
        }
        Ok(())
    }

    /// Ranks per server (HCCL's level 0, the group a hierarchical collective reduces within
    /// first): `[machine] server_ranks` when given, else the node of a hierarchical fabric,
    /// else every rank (a flat fabric is one server); never more than the machine's ranks.
    pub fn server_ranks(&self) -> usize {
        let ranks = self.machine.ranks;
        let node = match &self.fabric.topology {
            interconnect::TopologyConfig::Hierarchical(h) => h.node.ranks().unwrap_or(ranks),
            _ => ranks,
        };
        self.machine.server_ranks.unwrap_or(node).min(ranks)
    }

    /// A fresh world of this machine.
    pub fn world(&self) -> Result<World, ConfigError> {
        let origin = format!("machine {}", self.machine.name);
        let invalid = |message: String| ConfigError::Invalid { origin: origin.clone(), message };
        let chip = ChipModel::from_config(&self.chip).map_err(|e| invalid(e.to_string()))?;
        let net = self.network().map_err(invalid)?;
        let mut w = World::new(self.machine.ranks, Arc::new(chip), net).map_err(|e| invalid(e.to_string()))?;
        w.set_server_ranks(self.server_ranks()).map_err(|e| invalid(e.to_string()))?;
        Ok(w)
    }

    /// The chip-side data paths (DMA engines, HBM) the network needs, as the chip model gives them.
    pub fn chip_paths(&self) -> Result<ChipPaths, String> {
        let chip = ChipModel::from_config(&self.chip).map_err(|e| e.to_string())?;
        Ok(chip.paths())
    }

    /// The machine's network model.
    pub fn network(&self) -> Result<Box<dyn Network>, String> {
        interconnect::build_network(&self.fabric, self.machine.ranks, &self.chip_paths()?).map_err(|e| e.to_string())
    }

    /// The same machine with a different number of ranks (for `--ranks`).
    pub fn with_ranks(mut self, ranks: usize) -> Result<Config, ConfigError> {
        self.machine.ranks = ranks;
        self.validate(&format!("machine {} with {ranks} ranks", self.machine.name))?;
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(name: &str) -> String {
        match Config::load_or_default(Some(Path::new(name))) {
            Ok(_) => panic!("{name} loaded"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn an_unknown_config_name_suggests_the_nearest_preset() {
        let presets = "a2a3, a3-supernode, a5, atlas950-superpod, cluster1024, cm384, ring8, torus4x4, two-node";
        assert_eq!(
            err("a2a4"),
            format!("unknown config 'a2a4': no such file or preset; did you mean 'a2a3'? (presets: {presets})")
        );
        assert_eq!(
            err("twonode"),
            format!("unknown config 'twonode': no such file or preset; did you mean 'two-node'? (presets: {presets})")
        );
        assert_eq!(err("nope"), format!("unknown config 'nope': no such file or preset (presets: {presets})"));
        // A path is a file that is missing, not a preset.
        assert!(
            err("no/such/a2a4.toml").starts_with("cannot read config no/such/a2a4.toml"),
            "{}",
            err("no/such/a2a4.toml")
        );
        assert!(Config::load_or_default(Some(Path::new("a2a3"))).is_ok());
    }

    #[test]
    fn an_unknown_preset_suggests_the_nearest() {
        let e = Config::preset("ring9").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.starts_with("unknown preset `ring9`; did you mean `ring8`? available presets: a2a3"), "{e}");
        let e = Config::preset("nope").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.starts_with("unknown preset `nope`; available presets: a2a3"), "{e}");
    }
}
