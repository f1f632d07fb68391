//! The presets compiled into the binary, and the one a config without a name gets.

/// The presets compiled into the binary, by name.
pub const PRESETS: &[(&str, &str)] = &[
    ("a2a3", include_str!("../../configs/a2a3.toml")),
    ("a3-supernode", include_str!("../../configs/a3-supernode.toml")),
    ("a5", include_str!("../../configs/a5.toml")),
    ("atlas950-superpod", include_str!("../../configs/atlas950-superpod.toml")),
    ("cluster1024", include_str!("../../configs/cluster1024.toml")),
    ("cm384", include_str!("../../configs/cm384.toml")),
    ("ring8", include_str!("../../configs/ring8.toml")),
    ("torus4x4", include_str!("../../configs/torus4x4.toml")),
    ("two-node", include_str!("../../configs/two-node.toml")),
];

/// The preset used when no config is given.
pub const DEFAULT_PRESET: &str = "a2a3";

/// The preset names, comma-separated.
pub(super) fn preset_names() -> String {
    PRESETS.iter().map(|p| p.0).collect::<Vec<_>>().join(", ")
}
