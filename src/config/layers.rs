//! A config and the bases it names. A config may start with `base = "a2a3"` (a preset) or
//! `base = "mine.toml"` (a file, relative to the file that names it; a preset's base is a
//! preset) and state only what differs. The layers merge base first, table by table: a key a
//! layer states replaces its base's, a key it leaves out keeps its base's. A table whose `kind`
//! or `curve` differs from its base's (a topology, a DMA curve) is taken whole, since its keys
//! are another variant's; an inline table (`exp = { ... }`) and an array (`[[fabric.topology.levels]]`,
//! a `fractal`) are taken whole, as one value.
//!
//! Every value keeps where it was written: each layer's byte offsets are shifted by the length
//! of the layers read before it, so one offset names one layer and a line in it, for errors
//! (an unknown key is reported at its own file and line) and for `ranksim topo --resolved`.

use super::error::{ConfigError, did_you_mean_hint};
use super::presets::{PRESETS, preset_names};
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;
use toml::de::{DeArray, DeTable, DeValue};

/// The most layers a chain may have (a longer one is refused, so no chain of files runs long).
const MAX_LAYERS: usize = 32;

/// The keys whose value names a variant: a table that changes one is taken whole.
const TAGS: [&str; 2] = ["kind", "curve"];

/// One file of a config's chain.
#[derive(Clone, Debug)]
pub struct Layer {
    /// How errors name it: `preset a2a3`, or the file's path.
    pub origin: String,
    /// How sources name it: `configs/a2a3.toml`, or the file's path.
    pub file: String,
    text: String,
    /// Where its text starts in the chain's numbering of bytes.
    offset: usize,
    /// The folder a file base it names is relative to (`None` for a preset or text).
    dir: Option<PathBuf>,
    /// What a cycle is detected by: `preset NAME`, or the file's canonical path.
    identity: String,
}

/// Where one value of a merged config was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    /// The layer's file (`configs/a2a3.toml`, or a path).
    pub file: String,
    /// Its line, from 1.
    pub line: usize,
}

/// A key a layer states with the value its base gives it already (presets stay minimal).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Restated {
    /// The dotted key (`fabric.efficiency`).
    pub key: String,
    /// Where the layer restates it.
    pub at: Source,
    /// Where its base says it.
    pub base: Source,
}

/// A config's layers (the named file first, its base after it, ...), to be merged into one
/// table ([`Merged::table`]).
pub struct Merged {
    /// The chain, the named file first.
    pub layers: Vec<Layer>,
    /// Keys a layer restates with its base's value.
    pub restated: Vec<Restated>,
}

/// What a config is read from: a preset, a file, or text with a name for errors.
pub(crate) enum Origin<'a> {
    /// An embedded preset.
    Preset(&'a str),
    /// A file.
    File(&'a Path),
    /// TOML text; `name` names it in errors, a file base is relative to the working folder.
    Text {
        /// The text.
        text: &'a str,
        /// Its name.
        name: &'a str,
    },
}

impl Merged {
    /// Reads `origin` and every base it names, and merges them.
    pub(crate) fn read(origin: Origin<'_>) -> Result<Merged, ConfigError> {
        let mut layers = vec![layer(origin, 0)?];
        loop {
            let top = layers.last().expect("the chain starts with one layer");
            let (_, base) = parse(top)?;
            let Some(base) = base else { break };
            let next = base_layer(top, &base, top.offset + top.text.len() + 1)?;
            if let Some(i) = layers.iter().position(|l| l.identity == next.identity) {
                let names: Vec<&str> = layers[i..].iter().chain([&next]).map(|l| l.origin.as_str()).collect();
                return Err(base_error(
                    top,
                    &format!(
                        "base = {:?} makes a cycle ({}); a config cannot be its own base: remove `base` from one of them",
                        base.get_ref(),
                        names.join(" -> ")
                    ),
                ));
            }
            if layers.len() == MAX_LAYERS {
                return Err(base_error(top, &format!("a chain of bases is at most {MAX_LAYERS} files long")));
            }
            layers.push(next);
        }
        let mut m = Merged { layers, restated: Vec::new() };
        let mut restated = Vec::new();
        m.merge(&mut restated)?;
        m.restated = restated;
        Ok(m)
    }

    /// The merged table, its spans in the chain's numbering (each value's [`Merged::source`]).
    pub fn table(&self) -> Result<Spanned<DeTable<'_>>, ConfigError> {
        self.merge(&mut Vec::new())
    }

    fn merge(&self, restated: &mut Vec<Restated>) -> Result<Spanned<DeTable<'_>>, ConfigError> {
        let mut tables = Vec::new();
        for l in &self.layers {
            tables.push(parse(l)?.0);
        }
        let mut merged = tables.pop().expect("one table a layer");
        while let Some(child) = tables.pop() {
            merged = merge_table(merged, child, "", &self.layers, restated);
        }
        Ok(merged)
    }

    /// The layer and line of an offset in the chain's numbering.
    pub fn source(&self, offset: usize) -> Option<Source> {
        let (layer, local) = locate(&self.layers, offset)?;
        Some(Source { file: layer.file.clone(), line: line_col(&layer.text, local).0 + 1 })
    }

    /// A deserialization error of the merged table, reported at its layer as `toml` reports
    /// an error in one file (`TOML parse error at line L, column C`, the line, the caret).
    pub(crate) fn error(&self, e: toml::de::Error) -> ConfigError {
        let Some((layer, span)) = e.span().and_then(|s| {
            let (layer, start) = locate(&self.layers, s.start)?;
            Some((layer, start..start + s.len()))
        }) else {
            let origin = self.layers[0].origin.clone();
            return ConfigError::Parse { origin, message: e.to_string() };
        };
        ConfigError::Parse { origin: layer.origin.clone(), message: render(&layer.text, span, e.message()) }
    }
}

/// The first layer, from where a config is read.
fn layer(origin: Origin<'_>, offset: usize) -> Result<Layer, ConfigError> {
    Ok(match origin {
        Origin::Preset(name) => {
            let Some((_, text)) = PRESETS.iter().find(|(n, _)| *n == name) else {
                return Err(ConfigError::UnknownPreset(name.to_string(), preset_names()));
            };
            preset_layer(name, text, offset)
        }
        Origin::File(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|source| ConfigError::Io { path: path.display().to_string(), source })?;
            let shown = path.display().to_string();
            let identity = path.canonicalize().map_or(shown.clone(), |p| p.display().to_string());
            let dir = Some(path.parent().map(Path::to_path_buf).unwrap_or_default());
            Layer { origin: shown.clone(), file: shown, text, offset, dir, identity }
        }
        Origin::Text { text, name } => Layer {
            origin: name.to_string(),
            file: name.to_string(),
            text: text.to_string(),
            offset,
            dir: Some(PathBuf::new()),
            identity: format!("text {name}"),
        },
    })
}

fn preset_layer(name: &str, text: &str, offset: usize) -> Layer {
    Layer {
        origin: format!("preset {name}"),
        file: format!("configs/{name}.toml"),
        text: text.to_string(),
        offset,
        dir: None,
        identity: format!("preset {name}"),
    }
}

/// The layer `base` names, read from `from`'s point of view.
fn base_layer(from: &Layer, base: &Spanned<DeValue<'_>>, offset: usize) -> Result<Layer, ConfigError> {
    let Some(name) = base.get_ref().as_str() else {
        return Err(base_error(from, "base must be a string: a preset's name or a config file's path"));
    };
    if let Some((_, text)) = PRESETS.iter().find(|(n, _)| *n == name) {
        return Ok(preset_layer(name, text, offset));
    }
    let hint = did_you_mean_hint(name, "'");
    let Some(dir) = &from.dir else {
        return Err(base_error(
            from,
            &format!("base = {name:?} is not a preset; {hint}a preset's base is a preset: {}", preset_names()),
        ));
    };
    let path = dir.join(name);
    if !path.is_file() {
        return Err(base_error(
            from,
            &format!(
                "base = {name:?} is neither a preset nor a file ({} not found); {hint}name a preset ({}) or a \
                 config file, relative to the file that names it",
                path.display(),
                preset_names()
            ),
        ));
    }
    layer(Origin::File(&path), offset)
}

fn base_error(at: &Layer, message: &str) -> ConfigError {
    ConfigError::Base { origin: at.origin.clone(), message: message.to_string() }
}

/// A layer's table, its spans shifted into the chain's numbering, and the `base` it names.
#[allow(clippy::type_complexity)]
fn parse(layer: &Layer) -> Result<(Spanned<DeTable<'_>>, Option<Spanned<DeValue<'_>>>), ConfigError> {
    let table = DeTable::parse(&layer.text)
        .map_err(|e| ConfigError::Parse { origin: layer.origin.clone(), message: e.to_string() })?;
    let span = table.span();
    let mut table = shift_table(table.into_inner(), layer.offset);
    let base = table.remove("base");
    Ok((Spanned::new(span.start + layer.offset..span.end + layer.offset, table), base))
}

fn shift_table<'a>(table: DeTable<'a>, by: usize) -> DeTable<'a> {
    let mut out = DeTable::new();
    for (k, v) in table {
        let span = k.span();
        out.insert(Spanned::new(span.start + by..span.end + by, k.into_inner()), shift(v, by));
    }
    out
}

fn shift<'a>(v: Spanned<DeValue<'a>>, by: usize) -> Spanned<DeValue<'a>> {
    let span = v.span();
    let value = match v.into_inner() {
        DeValue::Table(t) => DeValue::Table(shift_table(t, by)),
        DeValue::Array(a) => {
            let mut out = DeArray::new();
            for x in a.iter() {
                out.push(shift(x.clone(), by));
            }
            DeValue::Array(out)
        }
        other => other,
    };
    Spanned::new(span.start + by..span.end + by, value)
}

/// `child` over `base`, key by key (see the module docs).
fn merge_table<'a>(
    base: Spanned<DeTable<'a>>,
    child: Spanned<DeTable<'a>>,
    path: &str,
    layers: &[Layer],
    restated: &mut Vec<Restated>,
) -> Spanned<DeTable<'a>> {
    let span = child.span();
    let mut out = base.into_inner();
    for (k, v) in child.into_inner() {
        let key = if path.is_empty() { k.get_ref().to_string() } else { format!("{path}.{}", k.get_ref()) };
        let Some(b) = out.remove(&k) else {
            out.insert(k, v);
            continue;
        };
        let merged = match (b.get_ref(), v.get_ref()) {
            (DeValue::Table(bt), DeValue::Table(ct)) if !tag_differs(bt, ct) && !inline(layers, v.span().start) => {
                let (bs, cs) = (b.span(), v.span());
                let (DeValue::Table(bt), DeValue::Table(ct)) = (b.into_inner(), v.into_inner()) else {
                    unreachable!("matched as tables above")
                };
                let t = merge_table(Spanned::new(bs, bt), Spanned::new(cs.clone(), ct), &key, layers, restated);
                Spanned::new(cs, DeValue::Table(t.into_inner()))
            }
            _ => {
                if same(&b, &v)
                    && let (Some(at), Some(base)) = (source(layers, v.span().start), source(layers, b.span().start))
                {
                    restated.push(Restated { key, at, base });
                }
                v
            }
        };
        out.insert(k, merged);
    }
    Spanned::new(span, out)
}

/// Whether the value at `offset` is an inline table (`{ ... }`), which is taken whole as a value.
fn inline(layers: &[Layer], offset: usize) -> bool {
    locate(layers, offset).is_some_and(|(l, at)| l.text[at..].starts_with('{'))
}

/// Whether the two tables name different variants (`kind`, `curve`).
fn tag_differs(base: &DeTable<'_>, child: &DeTable<'_>) -> bool {
    TAGS.iter().any(|tag| match (base.get(*tag), child.get(*tag)) {
        (Some(b), Some(c)) => !same(b, c),
        _ => false,
    })
}

/// Whether two values are equal as TOML values (`1.0` and `1.00` are).
fn same(a: &Spanned<DeValue<'_>>, b: &Spanned<DeValue<'_>>) -> bool {
    let value = |v: &Spanned<DeValue<'_>>| {
        <toml::Value as serde::Deserialize>::deserialize(toml::de::ValueDeserializer::from(v.clone())).ok()
    };
    matches!((value(a), value(b)), (Some(x), Some(y)) if x == y)
}

fn source(layers: &[Layer], offset: usize) -> Option<Source> {
    let (layer, local) = locate(layers, offset)?;
    Some(Source { file: layer.file.clone(), line: line_col(&layer.text, local).0 + 1 })
}

/// The layer an offset of the chain's numbering falls in, and the offset within it.
fn locate(layers: &[Layer], offset: usize) -> Option<(&Layer, usize)> {
    layers.iter().find(|l| (l.offset..=l.offset + l.text.len()).contains(&offset)).map(|l| (l, offset - l.offset))
}

/// Line and column (from 0, the column in characters) of byte `index` of `text`.
fn line_col(text: &str, index: usize) -> (usize, usize) {
    let index = index.min(text.len());
    let line_start = text[..index].rfind('\n').map_or(0, |i| i + 1);
    let line = text[..line_start].matches('\n').count();
    (line, text[line_start..index].chars().count())
}

/// `message` at `span` of `text`, drawn as `toml` draws an error of one file.
fn render(text: &str, span: Range<usize>, message: &str) -> String {
    let (line, column) = line_col(text, span.start);
    let number = line + 1;
    let content = text.split('\n').nth(line).unwrap_or_default();
    let gutter = " ".repeat(number.to_string().len() + 1);
    let width = span.len().min(content.len().saturating_sub(column)).max(1);
    format!(
        "TOML parse error at line {number}, column {}\n{gutter}|\n{number} | {content}\n{gutter}|{}{}\n{message}\n",
        column + 1,
        " ".repeat(column + 1),
        "^".repeat(width)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    /// A one-file config's error reads as `toml`'s own: same line, column, caret and text.
    #[test]
    fn an_error_reads_as_toml_draws_it() {
        #[derive(serde::Deserialize, Debug)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct T {
            a: u32,
            b: Option<Inner>,
        }
        #[derive(serde::Deserialize, Debug)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Inner {
            x: f64,
        }
        for text in ["a = 1\n[b]\nx = 2.0\nbogus = 3\n", "a = \"one\"\n", "a = 1\n[b]\n  y = 1\n", "[b]\nx = 1.0\n"] {
            let want = toml::from_str::<T>(text).unwrap_err().to_string();
            let m = Merged::read(Origin::Text { text, name: "t" }).unwrap();
            let e = T::deserialize(toml::de::Deserializer::from(m.table().unwrap())).unwrap_err();
            let ConfigError::Parse { message, .. } = m.error(e) else { panic!("not a parse error") };
            assert_eq!(message, want, "{text}");
        }
    }
}
