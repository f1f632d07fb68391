//! Why a config could not be used, with the nearest preset as a suggestion where a name is close.

use super::presets::PRESETS;
use thiserror::Error;

/// Why a config could not be used; the message names the file and the key.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The TOML does not parse, or a key or value does not fit the schema.
    #[error("config {origin}: {message}")]
    Parse {
        /// The file or preset name.
        origin: String,
        /// What is wrong, with its line and key.
        message: String,
    },
    /// The TOML parses but a model refuses a value (out of range, inconsistent).
    #[error("config {origin}: {message}")]
    Invalid {
        /// The file or preset name.
        origin: String,
        /// What is wrong and what to change.
        message: String,
    },
    /// A `base` that names nothing, is not a string, or closes a cycle of bases.
    #[error("config {origin}: {message}")]
    Base {
        /// The file or preset that names the base.
        origin: String,
        /// What is wrong and what to change.
        message: String,
    },
    #[error("unknown preset `{0}`; {hint}available presets: {1}", hint = did_you_mean_hint(.0, "`"))]
    /// A name that is neither a file nor a preset: the name and the message (with suggestions).
    UnknownPreset(String, String),
    /// `--config NAME` where NAME is neither a file nor a preset.
    #[error("unknown config '{0}': no such file or preset{hint}(presets: {1})", hint = unknown_config_hint(.0))]
    UnknownConfig(String, String),
}

/// `did you mean 'a2a3'? ` when a preset name is close to `name` (quoted with `quote`), else "".
pub(super) fn did_you_mean_hint(name: &str, quote: &str) -> String {
    collectives::did_you_mean(name, PRESETS.iter().map(|p| p.0))
        .map(|p| format!("did you mean {quote}{p}{quote}? "))
        .unwrap_or_default()
}

/// `; did you mean 'a2a3'? ` or a space, between "no such file or preset" and the list.
fn unknown_config_hint(name: &str) -> String {
    match did_you_mean_hint(name, "'") {
        h if h.is_empty() => " ".to_string(),
        h => format!("; {h}"),
    }
}
