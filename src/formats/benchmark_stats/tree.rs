//! Rendering one dispatch's span tree as aligned text, exactly as PyPTO's
//! `TraceInvocation.format_tree` does.
//!
//! Nesting comes from the dotted names (a span's parent is the existing span whose name is its
//! longest dotted prefix), not from timestamps, so device-clock spans nest under their host
//! parent. Siblings are ordered by start time; the name column is left-aligned and every value
//! column right-aligned.

use super::pytext::{push_ljust, push_rjust, py_rstrip, width};
use super::span::{TraceInvocation, TraceSpan};
use std::collections::HashMap;

impl TraceInvocation {
    /// The span tree with one duration column: `{dur/1000:.1f}us` when `us`, else `{dur}ns`.
    pub fn format_tree(&self, us: bool) -> String {
        self.format_tree_with(|span| vec![duration_cell(span.dur, us)])
    }

    /// The span tree with the value columns `columns` returns for each span.
    pub fn format_tree_with(&self, columns: impl Fn(&TraceSpan) -> Vec<String>) -> String {
        let rows: Vec<(String, Vec<String>)> =
            tree_rows(&self.spans).into_iter().map(|(label, span)| (label, columns(span))).collect();
        align(&rows)
    }
}

/// The default value cell of a span.
fn duration_cell(dur: i64, us: bool) -> String {
    if us { format!("{:.1}us", dur as f64 / 1000.0) } else { format!("{dur}ns") }
}

/// The distinct-name spans of a tree, each with its parent and children (sorted by `ts`).
struct Nodes<'a> {
    spans: Vec<&'a TraceSpan>,
    parent: Vec<Option<usize>>,
    children: Vec<Vec<usize>>,
    roots: Vec<usize>,
}

impl<'a> Nodes<'a> {
    fn new(all: &'a [TraceSpan]) -> Self {
        let mut spans: Vec<&TraceSpan> = Vec::new();
        let mut index: HashMap<&str, usize> = HashMap::new();
        for s in all {
            index.entry(s.name.as_str()).or_insert_with(|| {
                spans.push(s);
                spans.len() - 1
            });
        }
        let parent: Vec<Option<usize>> = spans.iter().map(|s| longest_prefix(&s.name, &index)).collect();
        let mut children = vec![Vec::new(); spans.len()];
        let mut roots = Vec::new();
        for (i, p) in parent.iter().enumerate() {
            match p {
                Some(p) => children[*p].push(i),
                None => roots.push(i),
            }
        }
        for list in children.iter_mut().chain(std::iter::once(&mut roots)) {
            list.sort_by_key(|&i| spans[i].ts);
        }
        Nodes { spans, parent, children, roots }
    }

    /// The label text of node `i`: its name after the parent's, tagged ` [dev]` on device spans.
    fn leaf(&self, i: usize) -> String {
        let name = &self.spans[i].name;
        let cut = self.parent[i].map_or(0, |p| self.spans[p].name.len() + 1);
        let tag = if self.spans[i].is_device() { " [dev]" } else { "" };
        format!("{}{tag}", &name[cut..])
    }
}

/// The existing span whose name is the longest proper dotted prefix of `name`.
fn longest_prefix(name: &str, index: &HashMap<&str, usize>) -> Option<usize> {
    name.rmatch_indices('.').find_map(|(dot, _)| index.get(&name[..dot]).copied())
}

/// Depth-first rows `(connectors + label, span)` in display order.
fn tree_rows(spans: &[TraceSpan]) -> Vec<(String, &TraceSpan)> {
    let nodes = Nodes::new(spans);
    let mut rows = Vec::with_capacity(nodes.spans.len());
    // (node, prefix of its own line, prefix its children's lines continue from)
    let mut stack: Vec<(usize, String, String)> =
        nodes.roots.iter().rev().map(|&r| (r, String::new(), String::new())).collect();
    while let Some((i, prefix, child_prefix)) = stack.pop() {
        rows.push((format!("{prefix}{}", nodes.leaf(i)), nodes.spans[i]));
        let kids = &nodes.children[i];
        for (k, &kid) in kids.iter().enumerate().rev() {
            let last = k + 1 == kids.len();
            let (branch, cont) = if last { ("`- ", "   ") } else { ("|- ", "|  ") };
            stack.push((kid, format!("{child_prefix}{branch}"), format!("{child_prefix}{cont}")));
        }
    }
    rows
}

/// Left-aligns the labels, right-aligns each value column, joins columns with two spaces.
fn align(rows: &[(String, Vec<String>)]) -> String {
    let name_w = rows.iter().map(|(label, _)| width(label)).max().unwrap_or(0);
    let ncols = rows.iter().map(|(_, cols)| cols.len()).max().unwrap_or(0);
    let mut col_w = vec![0; ncols];
    for (_, cols) in rows {
        for (w, c) in col_w.iter_mut().zip(cols) {
            *w = (*w).max(width(c));
        }
    }
    let lines: Vec<String> = rows
        .iter()
        .map(|(label, cols)| {
            let mut line = String::new();
            push_ljust(&mut line, label, name_w);
            for (c, &w) in cols.iter().zip(&col_w) {
                line.push_str("  ");
                push_rjust(&mut line, c, w);
            }
            py_rstrip(&line).to_string()
        })
        .collect();
    lines.join("\n")
}
