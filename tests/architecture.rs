//! ARCHITECTURE.md's folder map against the tree: every folder that holds code (Rust or
//! Python sources, tests and build output aside) has exactly one line in the map, with a
//! role, and every line names a folder that exists. A folder added, moved or removed fails
//! this test until the map follows.

use std::collections::BTreeSet;
use std::path::Path;

/// The top-level folders whose code the map covers.
const ROOTS: [&str; 9] =
    ["benches", "chip-model", "cli", "collectives", "examples", "interconnect", "python", "sim-core", "src"];

/// Folders that hold no code of the tree's own: tests and their data, build output, caches.
fn skipped(name: &str) -> bool {
    name.starts_with('.')
        || name.ends_with(".egg-info")
        || matches!(name, "tests" | "target" | "golden" | "proptest-regressions" | "__pycache__" | "build" | "dist")
}

/// Whether `dir` holds a source file itself.
fn holds_code(dir: &Path) -> bool {
    std::fs::read_dir(dir).into_iter().flatten().flatten().any(|e| {
        let p = e.path();
        p.is_file() && matches!(p.extension().and_then(|x| x.to_str()), Some("rs" | "py"))
    })
}

/// Every folder under `dir` (itself included) that holds code, as `path/` from the root.
fn code_folders(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
    if holds_code(dir)
        && let Ok(rel) = dir.strip_prefix(root)
    {
        out.insert(format!("{}/", rel.to_string_lossy().replace('\\', "/")));
    }
    let mut subs: Vec<_> = std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.path()).collect();
    subs.sort();
    for sub in subs {
        let name = sub.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        if sub.is_dir() && !skipped(&name) {
            code_folders(root, &sub, out);
        }
    }
}

/// The map's lines: `- `path/` — role`, between its two markers.
fn map_lines(text: &str) -> Vec<(String, String)> {
    let start = text.find("<!-- folder map").expect("ARCHITECTURE.md has a folder map");
    let end = text[start..].find("<!-- end of folder map -->").expect("the folder map ends") + start;
    text[start..end]
        .lines()
        .filter(|l| l.starts_with("- `"))
        .map(|l| {
            let rest = &l[3..];
            let close = rest.find('`').expect("a folder's path in backquotes");
            let role = rest[close + 1..].trim_start_matches([' ', '—', '-']).trim();
            (rest[..close].to_string(), role.to_string())
        })
        .collect()
}

#[test]
fn the_folder_map_names_every_code_folder_once_with_its_role() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let lines = map_lines(&text);
    let mut listed = BTreeSet::new();
    for (path, role) in &lines {
        assert!(listed.insert(path.clone()), "`{path}` is listed twice in ARCHITECTURE.md's folder map");
        assert!(!role.is_empty(), "`{path}` has no role in ARCHITECTURE.md's folder map");
    }
    let mut tree = BTreeSet::new();
    for r in ROOTS {
        code_folders(root, &root.join(r), &mut tree);
    }
    let missing: Vec<_> = tree.difference(&listed).collect();
    let stale: Vec<_> = listed.difference(&tree).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "ARCHITECTURE.md's folder map is out of date: add {missing:?}, remove or move {stale:?}"
    );
}

/// The map reads the markers and lines it is given, and only those.
#[test]
fn map_lines_are_read_between_the_markers() {
    let text = "- `outside/` — no\n<!-- folder map: x -->\n- `a/` — one\n- `b/c/` — two words\n<!-- end of folder map -->\n- `after/` — no";
    let got = map_lines(text);
    assert_eq!(got, [("a/".into(), "one".into()), ("b/c/".into(), "two words".into())]);
}
