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
