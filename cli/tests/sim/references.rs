//! Every citation resolves inside the repository: no tracked file points at the research notes
//! that lived beside the repository (the parent directory's `shared/` tree, absent from a clone),
//! every path under `docs/references` names a file that exists, and every section (`§1.1`,
//! `§4.1-4.3`) or table (`table T3`) cited after such a markdown file's path is a heading there.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The old citation prefix, spelled in two halves so this file does not cite it.
const OUTSIDE: &str = concat!("..", "/shared/");
const REFS: &str = "docs/references/";

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The tracked files (`git ls-files`), or without git every file outside `.git` and `target`.
fn tracked_files() -> Vec<PathBuf> {
    let git = std::process::Command::new("git").arg("ls-files").arg("-z").current_dir(root()).output();
    if let Ok(out) = git
        && out.status.success()
        && !out.stdout.is_empty()
    {
        return String::from_utf8_lossy(&out.stdout).split('\0').filter(|s| !s.is_empty()).map(PathBuf::from).collect();
    }
    let mut files = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(root().join(&dir)).into_iter().flatten().flatten() {
            let rel = dir.join(e.file_name());
            if e.path().is_dir() {
                if !matches!(e.file_name().to_str(), Some(".git" | "target")) {
                    stack.push(rel);
                }
            } else {
                files.push(rel);
            }
        }
    }
    files
}

/// The tags of a markdown file's headings: `### §1.1 Cores` gives `1.1`, `### T3. One core`
/// gives `T3`.
fn heading_tags(md: &str) -> BTreeSet<String> {
    md.lines()
        .filter(|l| l.starts_with('#'))
        .filter_map(|l| l.trim_start_matches('#').split_whitespace().next())
        .map(|t| t.trim_start_matches('§').trim_end_matches(['.', ':']).to_string())
        .collect()
}

/// A section number such as `4.1` as (major, minor).
fn number(s: &str) -> Option<(u32, Option<u32>)> {
    match s.split_once('.') {
        Some((a, b)) => Some((a.parse().ok()?, Some(b.parse().ok()?))),
        None => Some((s.parse().ok()?, None)),
    }
}

/// The sections and tables a citation's tail names: `§1.1-1.3 and §9` gives 1.1, 1.2, 1.3, 9;
/// `table T3` gives T3. The tail ends at the first `;`, `)` or ` (`, where the citation ends.
fn cited_tags(tail: &str) -> Vec<String> {
    let end = [tail.find(';'), tail.find(')'), tail.find(" (")].into_iter().flatten().min().unwrap_or(tail.len());
    let tail = &tail[..end];
    let mut tags = Vec::new();
    for (i, _) in tail.match_indices('§') {
        let rest = &tail[i + '§'.len_utf8()..];
        let word: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.' || *c == '-').collect();
        let word = word.trim_end_matches(['.', '-']);
        let (lo, hi) = word.split_once('-').unwrap_or((word, word));
        match (number(lo), number(hi)) {
            (Some((a, Some(x))), Some((b, Some(y)))) if a == b && x <= y => {
                tags.extend((x..=y).map(|m| format!("{a}.{m}")));
            }
            _ => tags.extend([lo.to_string(), hi.to_string()]),
        }
    }
    for w in tail.split(|c: char| !c.is_ascii_alphanumeric()) {
        if w.len() > 1 && w.starts_with('T') && w[1..].chars().all(|c| c.is_ascii_digit()) {
            tags.push(w.to_string());
        }
    }
    tags.sort();
    tags.dedup();
    tags
}

/// What is wrong with one file's citations, as `path:line: problem` lines.
fn problems(
    path: &str,
    text: &str,
    exists: &dyn Fn(&str) -> bool,
    headings: &dyn Fn(&str) -> BTreeSet<String>,
) -> Vec<String> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let at = format!("{path}:{}", n + 1);
        if line.contains(OUTSIDE) {
            found.push(format!("{at}: cites {OUTSIDE}, which a clone does not have; cite {REFS}... instead"));
        }
        for (i, _) in line.match_indices(REFS) {
            let cited: String = line[i..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-'))
                .collect();
            let cited = cited.trim_end_matches('.');
            if !exists(cited) {
                found.push(format!("{at}: cites {cited}, which does not exist"));
                continue;
            }
            if !cited.ends_with(".md") {
                continue;
            }
            let have = headings(cited);
            for tag in cited_tags(&line[i + cited.len()..]) {
                if !have.contains(&tag) {
                    let shown = if tag.starts_with('T') { format!("table {tag}") } else { format!("§{tag}") };
                    found.push(format!("{at}: cites {cited} {shown}, which has no such heading"));
                }
            }
        }
    }
    found
}

#[test]
fn every_citation_points_at_a_shipped_reference_and_heading() {
    let exists = |p: &str| root().join(p).exists();
    let headings = |p: &str| heading_tags(&std::fs::read_to_string(root().join(p)).unwrap_or_default());
    let files = tracked_files();
    assert!(files.iter().any(|f| f.starts_with("configs")), "no configs among {} files", files.len());
    let mut found = Vec::new();
    let mut citations = 0;
    for f in &files {
        let Ok(text) = std::fs::read_to_string(root().join(f)) else { continue };
        citations += text.matches(REFS).count();
        found.extend(problems(&f.to_string_lossy(), &text, &exists, &headings));
    }
    assert!(found.is_empty(), "broken citations:\n{}", found.join("\n"));
    assert!(citations >= 50, "only {citations} citations of {REFS} found");
}

#[test]
fn the_presets_and_tables_cite_the_hardware_reference() {
    let files = tracked_files();
    for f in files.iter().filter(|f| f.starts_with("configs")) {
        let text = std::fs::read_to_string(root().join(f)).unwrap();
        assert!(text.contains("docs/references/hardware.md"), "{} cites no hardware reference", f.display());
    }
}

#[test]
fn the_checker_finds_each_kind_of_broken_citation() {
    // `@/` stands for the references directory, so this file's own text cites nothing.
    let md = "# x\n## §0 Sources\n### §1.1 A\n### §1.2 B\n### T3. Table\n";
    let hw = format!("{REFS}hardware.md");
    let exists = |p: &str| p == hw;
    let headings = |_: &str| heading_tags(md);
    let check = |line: &str| problems("f", &line.replace("@/", REFS), &exists, &headings);
    let says = |s: &str| s.replace("@/", REFS);
    assert_eq!(heading_tags(md).into_iter().collect::<Vec<_>>(), ["0", "1.1", "1.2", "T3", "x"]);
    // Good citations.
    assert!(check("# (@/hardware.md §1.1-1.2). More").is_empty());
    assert!(check("x = 1 # @/hardware.md table T3; tick length §9 (elsewhere)").is_empty());
    assert!(check("Tags follow @/hardware.md §0:").is_empty());
    // Broken ones.
    let outside = format!("# see {OUTSIDE}reference/hw-params.md");
    assert_eq!(check(&outside), [format!("f:1: cites {OUTSIDE}, which a clone does not have; cite {REFS}... instead")]);
    assert_eq!(check("# @/hw.md §1"), [says("f:1: cites @/hw.md, which does not exist")]);
    assert_eq!(check("# @/hardware.md §1.1-1.3"), [says("f:1: cites @/hardware.md §1.3, which has no such heading")]);
    assert_eq!(
        check("# @/hardware.md table T1, §2.4 and §1.2"),
        [
            says("f:1: cites @/hardware.md §2.4, which has no such heading"),
            says("f:1: cites @/hardware.md table T1, which has no such heading"),
        ]
    );
}
