//! Reading `[STRACE]` records back into spans and dispatches, the way PyPTO's pipeline does.
//!
//! The grammar is simpler's record pattern, matched anywhere on a line: `[STRACE]`, then
//! whitespace-separated `v= pid= tid= inv= hid= depth= name= ts= dur=`, then the attributes,
//! which run to the end of the line or to the next logger prefix
//! (`[mono_ns=N][T0x..][LEVEL] func: `) or `[STRACE]`. Records several ranks wrote onto one
//! physical line are separated first, as PyPTO does. Malformed records are skipped silently.

use super::names::NON_INVOCATION_PREFIXES;
use super::pytext::{is_py_space, py_lines, py_strip};
use super::span::{TraceInvocation, TraceSpan};
use std::collections::BTreeMap;

const STRACE_TAG: &str = "[STRACE]";

/// Every well-formed `[STRACE]` record in `text`, in order. The version number is not checked
/// (PyPTO accepts any); numbers that overflow their field make the record malformed. Names
/// are percent-decoded and hids lowercased; attributes keep their encoding, trimmed of
/// surrounding whitespace.
pub fn parse_strace(text: &str) -> Vec<TraceSpan> {
    let normalized = text.replace(STRACE_TAG, "\n[STRACE]");
    let mut spans = Vec::new();
    for line in py_lines(&normalized) {
        let mut from = 0;
        while let Some(found) = line[from..].find(STRACE_TAG) {
            let start = from + found;
            match parse_record(line, start) {
                Some((span, end)) => {
                    spans.push(span);
                    from = end.max(start + 1);
                }
                None => from = start + 1,
            }
        }
    }
    spans
}

/// Whether spans named `name` belong to an invocation: not the legacy `l3.` family, nor a
/// name led by the words `node`, `network1`..`network3` or `ext` (families without an `inv`).
pub fn is_invocation_span(name: &str) -> bool {
    // PyPTO's prefix filter, then simpler's, which also catches a bare leading word.
    let head = name.split('.').next().unwrap_or(name);
    !NON_INVOCATION_PREFIXES.iter().any(|p| name.starts_with(p))
        && !matches!(head, "node" | "network1" | "network2" | "network3" | "ext")
}

/// Groups spans into dispatches keyed by `(pid, inv)`, sorted by that key, after dropping the
/// families that carry no invocation. Spans keep their input order; a group's hid is its first
/// span's.
pub fn group_invocations(spans: Vec<TraceSpan>) -> Vec<TraceInvocation> {
    let mut groups: BTreeMap<(u64, i64), TraceInvocation> = BTreeMap::new();
    for span in spans.into_iter().filter(|s| is_invocation_span(&s.name)) {
        let group = groups.entry((span.pid, span.inv)).or_insert_with(|| TraceInvocation {
            pid: span.pid,
            inv: span.inv,
            hid: span.hid.clone(),
            spans: Vec::new(),
        });
        group.spans.push(span);
    }
    groups.into_values().collect()
}

/// Parses the record starting at byte `start` of `line` (which begins with `[STRACE]`);
/// returns the span and the byte where the record ends.
fn parse_record(line: &str, start: usize) -> Option<(TraceSpan, usize)> {
    let mut c = Cursor { text: line, pos: start + STRACE_TAG.len() };
    c.field("v=", Cursor::digits)?;
    let pid = c.field("pid=", Cursor::digits)?.parse().ok()?;
    let tid = c.field("tid=", Cursor::digits)?.parse().ok()?;
    let inv = c.field("inv=", Cursor::digits)?.parse().ok()?;
    let hid = c.field("hid=", Cursor::hex)?.to_ascii_lowercase();
    let depth = c.field("depth=", Cursor::digits)?.parse().ok()?;
    let name = decode_name(c.field("name=", Cursor::non_space)?);
    let ts = c.field("ts=", Cursor::digits)?.parse().ok()?;
    let dur = c.field("dur=", Cursor::digits)?.parse().ok()?;
    let end = record_end(line, c.pos);
    let attrs = py_strip(&line[c.pos..end]).to_string();
    Some((TraceSpan { pid, tid, inv, hid, depth, name, ts, dur, attrs }, end))
}

/// Where the attributes starting at `from` end: the first position holding another record,
/// a logger prefix, or only a final `\r`; else the end of the line.
fn record_end(line: &str, from: usize) -> usize {
    line[from..]
        .char_indices()
        .map(|(i, _)| from + i)
        .find(|&i| {
            let rest = &line[i..];
            rest.starts_with(STRACE_TAG) || rest == "\r" || is_log_prefix(rest)
        })
        .unwrap_or(line.len())
}

/// Whether `s` starts with a host-logger prefix `[mono_ns=N][T0x<hex>][LEVEL]<ws>func:<ws>`.
fn is_log_prefix(s: &str) -> bool {
    let mut c = Cursor { text: s, pos: 0 };
    let head = (|| {
        c.literal("[mono_ns=")?;
        c.digits()?;
        c.literal("][T0x")?;
        c.hex()?;
        c.literal("][")?;
        c.run(|ch| ch.is_ascii_uppercase())?;
        c.literal("]")
    })();
    head.is_some() && is_func_segment(&s[c.pos..])
}

/// Whether `s` starts with `<ws>+ <func> : <ws>+`, where the func part is at least one
/// character other than `:`, `\r`, `\n` and may itself begin with whitespace.
fn is_func_segment(s: &str) -> bool {
    let Some(colon) = s.find(':') else { return false };
    let (before, after) = (&s[..colon], &s[colon + 1..]);
    let leading = before.chars().take_while(|&ch| is_py_space(ch)).count();
    let func_ok = (1..=leading).any(|n| {
        let func: &str = &before[before.char_indices().nth(n).map_or(before.len(), |(i, _)| i)..];
        !func.is_empty() && !func.contains(['\r', '\n'])
    });
    func_ok && after.starts_with(is_py_space)
}

/// A position in a record being matched.
struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// Consumes `lit` if it comes next.
    fn literal(&mut self, lit: &str) -> Option<()> {
        self.text[self.pos..].starts_with(lit).then(|| self.pos += lit.len())
    }

    /// Consumes a non-empty run of characters satisfying `pred`.
    fn run(&mut self, pred: impl Fn(char) -> bool) -> Option<&'a str> {
        let rest = &self.text[self.pos..];
        let len = rest.find(|ch: char| !pred(ch)).unwrap_or(rest.len());
        (len > 0).then(|| {
            self.pos += len;
            &rest[..len]
        })
    }

    fn digits(&mut self) -> Option<&'a str> {
        self.run(|ch| ch.is_ascii_digit())
    }

    fn hex(&mut self) -> Option<&'a str> {
        self.run(|ch| ch.is_ascii_hexdigit())
    }

    fn non_space(&mut self) -> Option<&'a str> {
        self.run(|ch| !is_py_space(ch))
    }

    /// Consumes whitespace, then `key`, then a value matched by `value`.
    fn field(&mut self, key: &str, value: fn(&mut Self) -> Option<&'a str>) -> Option<&'a str> {
        self.run(is_py_space)?;
        self.literal(key)?;
        value(self)
    }
}

/// Reverses the emitter's `%XX` escapes. Escapes decode to bytes, read as UTF-8 so multi-byte
/// names survive a round trip; if the bytes are not UTF-8, each escape becomes the code point
/// of its byte, as in PyPTO. Anything that is not a valid escape (including a trailing `~`
/// truncation mark) stays as written.
fn decode_name(raw: &str) -> String {
    if !raw.contains('%') {
        return raw.to_string();
    }
    let mut bytes = Vec::with_capacity(raw.len());
    let mut latin = String::with_capacity(raw.len());
    let mut chars = raw.char_indices().peekable();
    while let Some((i, ch)) = chars.next() {
        match escape_at(raw, i) {
            Some(b) => {
                bytes.push(b);
                latin.push(char::from(b));
                chars.next();
                chars.next();
            }
            None => {
                let mut buf = [0; 4];
                bytes.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                latin.push(ch);
            }
        }
    }
    String::from_utf8(bytes).unwrap_or(latin)
}

/// The byte a `%XX` escape at byte `i` of `s` encodes, if one is there.
fn escape_at(s: &str, i: usize) -> Option<u8> {
    let hex = s.get(i..i + 3)?.strip_prefix('%')?;
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}
