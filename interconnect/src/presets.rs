//! Every preset in `configs/` parses with this crate's `[fabric]` schema, builds for its rank
//! count and has the tables every other preset has.

use crate::{ChipPaths, FabricConfig, build_network, describe, route_line};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The parts of a preset this crate reads (other tables are ignored here).
#[derive(Deserialize)]
struct Preset {
    machine: Machine,
    fabric: FabricConfig,
}

#[derive(Deserialize)]
struct Machine {
    name: String,
    ranks: usize,
}

/// Every `configs/*.toml`, by file stem.
fn presets() -> BTreeMap<String, String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../configs");
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            out.insert(stem, std::fs::read_to_string(&path).unwrap());
        }
    }
    out
}

/// Unlimited chip-side paths with the preset's core count (the `[chip]` schema is chip-model's;
/// whole presets are checked by the facade's config tests).
fn chip_paths(table: &toml::Table) -> ChipPaths {
    let chip = table["chip"].as_table().unwrap();
    let cores = usize::try_from(chip["aiv_cores"].as_integer().unwrap()).unwrap();
    ChipPaths::unlimited(cores)
}

/// The shape of a table: its sub-table paths, dotted.
fn shape(table: &toml::Table, prefix: &str) -> Vec<String> {
    let mut keys = Vec::new();
    for (k, v) in table {
        if let Some(t) = v.as_table() {
            keys.push(format!("{prefix}{k}"));
            keys.extend(shape(t, &format!("{prefix}{k}.")));
        }
    }
    keys
}

#[test]
fn every_preset_parses_and_builds() {
    let all = presets();
    let names: Vec<&str> = all.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        ["a2a3", "a3-supernode", "a5", "atlas950-superpod", "cluster1024", "cm384", "ring8", "torus4x4", "two-node"]
    );
    for (stem, text) in &all {
        let p: Preset = toml::from_str(text).unwrap_or_else(|e| panic!("{stem}: {e}"));
        assert_eq!(&p.machine.name, stem);
        let table: toml::Table = toml::from_str(text).unwrap();
        let chip = chip_paths(&table);
        build_network(&p.fabric, p.machine.ranks, &chip).unwrap_or_else(|e| panic!("{stem}: {e}"));
        describe(&p.fabric, p.machine.ranks, &chip).unwrap_or_else(|e| panic!("{stem}: {e}"));
    }
}

#[test]
fn every_preset_has_the_same_tables() {
    let shapes: BTreeMap<String, Vec<String>> =
        presets().into_iter().map(|(stem, text)| (stem, shape(&toml::from_str(&text).unwrap(), ""))).collect();
    for key in
        ["machine", "chip", "chip.dma", "chip.dma.gm_to_ub", "chip.dma.ub_to_gm", "chip.vector", "host", "fabric"]
    {
        for (stem, keys) in &shapes {
            assert!(keys.iter().any(|k| k == key), "{stem} has no [{key}]");
        }
    }
    let tops = |keys: &[String]| keys.iter().filter(|k| !k.contains('.')).cloned().collect::<Vec<_>>();
    for (stem, keys) in &shapes {
        assert_eq!(tops(keys), tops(&shapes["a2a3"]), "{stem}'s top-level tables differ from a2a3's");
    }
}

#[test]
fn verbatim_chip_copies_match_a2a3() {
    let all = presets();
    let chip = |text: &str| {
        let mut t: toml::Table = toml::from_str(text).unwrap();
        let mut c = t.remove("chip").unwrap().as_table().unwrap().clone();
        c.remove("name");
        c
    };
    let a2a3 = chip(&all["a2a3"]);
    let mut copies = 0;
    for (stem, text) in &all {
        if text.contains("[chip]: verbatim copy of configs/a2a3.toml") {
            assert_eq!(chip(text), a2a3, "{stem}: its [chip] copy is stale; copy a2a3.toml's [chip] tables again");
            copies += 1;
        }
    }
    assert_eq!(copies, 6);
}

#[test]
fn preset_routes_have_the_sourced_latencies() {
    let all = presets();
    let line = |stem: &str, a, b| {
        let p: Preset = toml::from_str(&all[stem]).unwrap();
        route_line(&p.fabric, p.machine.ranks, &ChipPaths::unlimited(1), a, b).unwrap()
    };
    assert_eq!(
        line("a2a3", 0, 1),
        "0 -> mte3 0.0 -> link 0->1 -> port 1 -> hbm 1 (latency 110.000 ns, bottleneck 19.600 GB/s at link 0->1)"
    );
    assert_eq!(
        line("a3-supernode", 4, 5),
        "4 -> mte3 4.0 -> link 4->5 -> port 5 -> hbm 5 (latency 200.000 ns, bottleneck 156.800 GB/s at link 4->5)"
    );
    assert_eq!(
        line("a3-supernode", 0, 15),
        "0 -> mte3 0.0 -> nic1-up 0 -> nic1-down 15 -> port 15 -> hbm 15 (latency 500.000 ns, bottleneck 164.640 GB/s at nic1-up 0)"
    );
    // CloudMatrix384: the package's SIO pair, the server's tier of the UB plane, and the second
    // tier of "< 1 us" between servers (its read rate, 0.74 of 196, fit to HIXL).
    assert_eq!(
        line("cm384", 766, 767),
        "766 -> mte3 766.0 -> link 766->767 -> port 767 -> hbm 767 (latency 200.000 ns, bottleneck 156.800 GB/s at link 766->767)"
    );
    assert_eq!(
        line("cm384", 0, 767),
        "0 -> mte3 0.0 -> nic2-up 0 -> nic2-down 767 -> port 767 -> hbm 767 (latency 1000.000 ns, bottleneck 145.040 GB/s at nic2-up 0)"
    );
    assert_eq!(
        line("cm384", 0, 15),
        "0 -> mte3 0.0 -> nic1-up 0 -> nic1-down 15 -> port 15 -> hbm 15 (latency 500.000 ns, bottleneck 164.640 GB/s at nic1-up 0)"
    );
    assert_eq!(
        line("a5", 3, 0),
        "3 -> mte3 3.0 -> link 3->0 -> port 0 -> hbm 0 (latency 750.000 ns, bottleneck 47.600 GB/s at link 3->0)"
    );
    assert_eq!(
        line("ring8", 0, 5),
        "0 -> mte3 0.0 -> link 0->7 -> link 7->6 -> link 6->5 -> port 5 -> hbm 5 (latency 330.000 ns, bottleneck 19.600 GB/s at link 0->7)"
    );
    assert_eq!(
        line("torus4x4", 0, 15),
        "0 -> mte3 0.0 -> link 0->3 -> link 3->15 -> port 15 -> hbm 15 (latency 220.000 ns, bottleneck 19.600 GB/s at link 0->3)"
    );
    assert_eq!(
        line("two-node", 7, 8),
        "7 -> mte3 7.0 -> nic1-up 7 -> nic1-down 8 -> port 8 -> hbm 8 (latency 1500.000 ns, bottleneck 23.875 GB/s at nic1-up 7)"
    );
    assert_eq!(
        line("cluster1024", 7, 1016),
        "7 -> mte3 7.0 -> nic1-up 7 -> nic1-down 1016 -> port 1016 -> hbm 1016 (latency 1500.000 ns, bottleneck 23.875 GB/s at nic1-up 7)"
    );
    assert_eq!(
        line("two-node", 1, 6),
        "1 -> mte3 1.0 -> link 1->6 -> port 6 -> hbm 6 (latency 110.000 ns, bottleneck 19.600 GB/s at link 1->6)"
    );
}
