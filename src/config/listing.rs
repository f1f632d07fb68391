//! A config listed whole, each value with where it comes from (`ranksim topo --resolved`): the
//! file and line that states it, or `default` where no layer does. The listing is itself a
//! config, with no base: read back, it gives the same machine.

use super::Config;
use super::layers::{Merged, Source};
use std::collections::BTreeMap;
use std::fmt::Write;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// The column a value's source comment starts at.
const COMMENT_COLUMN: usize = 40;

impl Merged {
    /// `cfg` (the config these layers give) as TOML, every value followed by its source.
    pub fn listing(&self, cfg: &Config) -> Result<String, String> {
        let table = toml::Table::try_from(cfg).map_err(|e| format!("cannot list the config: {e}"))?;
        let mut stated = BTreeMap::new();
        offsets(self.table().map_err(|e| e.to_string())?.get_ref(), "", &mut stated);
        let restated: BTreeMap<&str, &Source> = self.restated.iter().map(|r| (r.key.as_str(), &r.base)).collect();
        let chain: Vec<&str> = self.layers.iter().map(|l| l.file.as_str()).collect();
        let mut out = format!(
            "# {} resolved from {}: each value's file and line, or `default` where no file states it\n",
            cfg.machine.name,
            chain.join(", base ")
        );
        let lister = Lister { merged: self, stated, restated };
        lister.table(&mut out, "", &table);
        Ok(out)
    }
}

/// What the listing looks sources up in.
struct Lister<'a> {
    merged: &'a Merged,
    /// The offset of every value a layer states, by dotted key (`levels[0].groups` in arrays).
    stated: BTreeMap<String, usize>,
    /// Keys a layer restates with its base's value, and where the base says it.
    restated: BTreeMap<&'a str, &'a Source>,
}

impl Lister<'_> {
    /// The values of `table` (at dotted `path`), then its tables, each under its header.
    fn table(&self, out: &mut String, path: &str, table: &toml::Table) {
        let key = |k: &str| if path.is_empty() { k.to_string() } else { format!("{path}.{k}") };
        for (k, v) in table.iter().filter(|(_, v)| !v.is_table() && !is_table_array(v)) {
            let line = format!("{k} = {v}");
            let _ = writeln!(out, "{line:<width$} # {}", self.source(&key(k)), width = COMMENT_COLUMN - 1);
        }
        for (k, v) in table {
            match v {
                toml::Value::Table(t) => {
                    if t.values().any(|v| !v.is_table() && !is_table_array(v)) {
                        let _ = writeln!(out, "\n[{}]", key(k));
                    }
                    self.table(out, &key(k), t);
                }
                toml::Value::Array(items) if is_table_array(v) => {
                    for (i, item) in items.iter().enumerate() {
                        let _ = writeln!(out, "\n[[{}]]", key(k));
                        if let Some(t) = item.as_table() {
                            self.table(out, &format!("{}[{i}]", key(k)), t);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// `file:line` of the value at `key`, `default` if no layer states it, and the base's line
    /// if a layer restates its base's value.
    fn source(&self, key: &str) -> String {
        let Some(at) = self.stated.get(key).and_then(|o| self.merged.source(*o)) else {
            return "default".to_string();
        };
        match self.restated.get(key) {
            Some(base) => format!("{}:{}, the same as {}:{}", at.file, at.line, base.file, base.line),
            None => format!("{}:{}", at.file, at.line),
        }
    }
}

fn is_table_array(v: &toml::Value) -> bool {
    v.as_array().is_some_and(|a| !a.is_empty() && a.iter().all(toml::Value::is_table))
}

/// Records the offset of every value of `table` that is not a table, by dotted key.
fn offsets(table: &DeTable<'_>, path: &str, out: &mut BTreeMap<String, usize>) {
    for (k, v) in table {
        let key = if path.is_empty() { k.get_ref().to_string() } else { format!("{path}.{}", k.get_ref()) };
        value_offsets(v, key, out);
    }
}

fn value_offsets(v: &Spanned<DeValue<'_>>, key: String, out: &mut BTreeMap<String, usize>) {
    match v.get_ref() {
        DeValue::Table(t) => offsets(t, &key, out),
        DeValue::Array(a) if !a.is_empty() && a.iter().all(|x| x.get_ref().is_table()) => {
            for (i, x) in a.iter().enumerate() {
                value_offsets(x, format!("{key}[{i}]"), out);
            }
        }
        _ => {
            out.insert(key, v.span().start);
        }
    }
}
