//! The presets in `configs/` as the library resolves them: every preset's fully resolved
//! config held byte for byte to `tests/golden/presets-resolved.txt` (its `Debug` form, which
//! prints every float exactly), so rewriting a preset's TOML (inheriting from a base, moving a
//! comment) cannot move a value unnoticed. An intended change of a value is re-blessed with
//! `RANKSIM_BLESS=1 cargo test --test presets` and reviewed with `git diff tests/golden`.

use ranksim::Config;
use ranksim::config::PRESETS;
use std::path::Path;

/// Every preset's resolved config, one `== name` section each, in `PRESETS` order.
fn resolved() -> String {
    let mut out = String::new();
    for (name, _) in PRESETS {
        let cfg = Config::preset(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        out.push_str(&format!("== {name}\n{cfg:#?}\n"));
    }
    out
}

#[test]
fn every_preset_resolves_to_its_golden_values() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/presets-resolved.txt");
    let now = resolved();
    if std::env::var("RANKSIM_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &now).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        now == want,
        "a preset resolves to other values than tests/golden/presets-resolved.txt holds; first difference at line {}",
        now.lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .map_or(now.lines().count().min(want.lines().count()), |i| i + 1)
    );
}

/// A preset's `[fabric]` with unlimited chip-side paths of `cores` cores.
fn fabric(name: &str) -> (Config, interconnect::ChipPaths) {
    let cfg = Config::preset(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    let paths = interconnect::ChipPaths::unlimited(cfg.chip.aiv_cores);
    (cfg, paths)
}

#[test]
fn every_preset_is_named_as_its_file_and_builds_its_fabric() {
    for (name, _) in PRESETS {
        let (cfg, chip) = fabric(name);
        assert_eq!(&cfg.machine.name, name);
        interconnect::build_network(&cfg.fabric, cfg.machine.ranks, &chip).unwrap_or_else(|e| panic!("{name}: {e}"));
        interconnect::describe(&cfg.fabric, cfg.machine.ranks, &chip).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// Presets stay minimal: no key is stated with the value its base already gives it (the
/// listing of `ranksim topo --resolved` marks such a key `the same as`), and every preset but
/// a2a3 names a base.
#[test]
fn no_preset_restates_its_base() {
    for (name, _) in PRESETS {
        let layers = Config::layers(Some(Path::new(name))).unwrap();
        let restated: Vec<String> =
            layers.restated.iter().map(|r| format!("{} at {}:{}", r.key, r.at.file, r.at.line)).collect();
        assert!(restated.is_empty(), "{name} restates its base's values: {restated:?}");
        assert_eq!(layers.layers.len() > 1, *name != "a2a3", "{name}: {:?}", layers.layers.len());
    }
}

#[test]
fn preset_routes_have_the_sourced_latencies() {
    let line = |name: &str, a, b| {
        let (cfg, _) = fabric(name);
        interconnect::route_line(&cfg.fabric, cfg.machine.ranks, &interconnect::ChipPaths::unlimited(1), a, b).unwrap()
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

/// A scratch folder of its own for one test.
fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("ranksim-presets-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A user's file names a preset (or a file) as its base and states only what differs; its
/// values override, the rest is the base's.
#[test]
fn a_users_config_inherits_from_a_preset_or_a_file() {
    let d = scratch("inherit");
    let mine = d.join("mine.toml");
    std::fs::write(&mine, "base = \"a2a3\"\n[machine]\nname = \"mine\"\nranks = 4\n[chip]\nwait_poll_ns = 70.0\n")
        .unwrap();
    let cfg = Config::load(&mine).unwrap();
    let mut want = Config::preset("a2a3").unwrap();
    want.machine.name = "mine".into();
    want.machine.ranks = 4;
    want.chip.wait_poll_ns = 70.0;
    assert_eq!(cfg, want);
    // A file base, relative to the file that names it, and a chain of two.
    std::fs::create_dir_all(d.join("sub")).unwrap();
    let child = d.join("sub/child.toml");
    std::fs::write(&child, "base = \"../mine.toml\"\n[fabric.topology]\nlink_gbps = 14.0\n").unwrap();
    let cfg = Config::load(&child).unwrap();
    let interconnect::TopologyConfig::FullMesh(mesh) = &cfg.fabric.topology else { panic!("not a full mesh") };
    assert_eq!((mesh.link_gbps, mesh.link_latency_ns, cfg.machine.ranks), (14.0, 110.0, 4));
    // Another topology kind replaces the base's [fabric.topology] whole.
    std::fs::write(
        &child,
        "base = \"../mine.toml\"\n[fabric.topology]\nkind = \"switch\"\nlink_gbps = 9.0\nlink_latency_ns = 5.0\n",
    )
    .unwrap();
    let cfg = Config::load(&child).unwrap();
    assert!(matches!(cfg.fabric.topology, interconnect::TopologyConfig::Switch(_)), "{:?}", cfg.fabric.topology);
    // A key stated with the value its base gives already is flagged, with both places.
    std::fs::write(&child, "base = \"../mine.toml\"\n\n[chip]\nwait_poll_ns = 70.0\nnotify_issue_ns = 99.0\n").unwrap();
    let layers = Config::layers(Some(&child)).unwrap();
    let r: Vec<String> = layers
        .restated
        .iter()
        .map(|r| format!("{} {}:{} {}:{}", r.key, r.at.file, r.at.line, r.base.file, r.base.line))
        .collect();
    assert_eq!(r, [format!("chip.wait_poll_ns {}:4 {}:6", child.display(), d.join("sub/../mine.toml").display())]);
    std::fs::remove_dir_all(&d).ok();
}

/// An unknown base, a cycle and an unknown key each say what to change, at the file that has it.
#[test]
fn a_bad_base_or_key_names_what_to_change() {
    let d = scratch("bad");
    let a = d.join("a.toml");
    let b = d.join("b.toml");
    let err = |p: &Path| Config::load(p).map(|_| ()).unwrap_err().to_string();
    std::fs::write(&a, "base = \"a2a4\"\n").unwrap();
    let e = err(&a);
    assert!(e.contains("base = \"a2a4\" is neither a preset nor a file") && e.contains("did you mean 'a2a3'?"), "{e}");
    std::fs::write(&a, "base = \"b.toml\"\n").unwrap();
    std::fs::write(&b, "base = \"a.toml\"\n").unwrap();
    let e = err(&a);
    assert!(e.contains("makes a cycle") && e.contains("remove `base` from one of them"), "{e}");
    std::fs::write(&a, "base = 3\n").unwrap();
    assert!(err(&a).contains("base must be a string"), "{}", err(&a));
    // An unknown key in the base file is reported at its own file and line, as today.
    std::fs::write(&a, "base = \"b.toml\"\n[machine]\nname = \"a\"\n").unwrap();
    std::fs::write(&b, "base = \"a2a3\"\n\n[chip]\nwait_pol_ns = 1.0\n").unwrap();
    let e = err(&a);
    assert!(
        e.starts_with(&format!("config {}: TOML parse error at line 4, column 1", b.display()))
            && e.contains("unknown field `wait_pol_ns`"),
        "{e}"
    );
    std::fs::remove_dir_all(&d).ok();
}

/// `topo --resolved`'s listing is a config itself: read back, it is the same machine, and it
/// names each value's file and line or `default`.
#[test]
fn the_resolved_listing_reads_back_as_the_same_config() {
    for (name, _) in PRESETS {
        let layers = Config::layers(Some(Path::new(name))).unwrap();
        let cfg = Config::from_merged(&layers).unwrap();
        let listing = layers.listing(&cfg).unwrap();
        assert_eq!(Config::from_toml(&listing, "listing").unwrap(), cfg, "{name}");
    }
    let layers = Config::layers(Some(Path::new("ring8"))).unwrap();
    let listing = layers.listing(&Config::from_merged(&layers).unwrap()).unwrap();
    let line = |key: &str| listing.lines().find(|l| l.starts_with(key)).unwrap_or_default().to_string();
    // The line of the file that states `key`, counted from 1.
    let at = |preset: &str, key: &str| {
        let text = PRESETS.iter().find(|p| p.0 == preset).unwrap().1;
        format!("# configs/{preset}.toml:{}", text.lines().position(|l| l.starts_with(key)).unwrap() + 1)
    };
    assert!(line("name = \"ring8\"").ends_with(&at("ring8", "name = \"ring8\"")), "{listing}");
    assert!(line("wait_poll_ns = 100.0").ends_with(&at("a2a3", "wait_poll_ns =")), "{listing}");
    assert!(line("read_turnaround_ns = 0.0").ends_with("# default"), "{listing}");
}
