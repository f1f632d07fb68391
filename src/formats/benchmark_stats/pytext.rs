//! Python's text primitives that the renderings and the parser depend on: which characters are
//! whitespace, where lines break, widths in code points, and `repr` of a string.

/// Python's `str.isspace`: Unicode whitespace plus the separators `\x1c`..`\x1f`.
pub(crate) fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.strip()`.
pub(crate) fn py_strip(s: &str) -> &str {
    s.trim_matches(is_py_space)
}

/// Python's `str.rstrip()`.
pub(crate) fn py_rstrip(s: &str) -> &str {
    s.trim_end_matches(is_py_space)
}

/// Whether `c` ends a line for Python's `str.splitlines()`.
fn is_py_line_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{b}' | '\u{c}' | '\u{1c}' | '\u{1d}' | '\u{1e}' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// The lines of `s` as Python's `str.splitlines()` cuts them (empty lines included; they never
/// hold a record, so the `\r\n` pair yielding one extra empty line is harmless).
pub(crate) fn py_lines(s: &str) -> impl Iterator<Item = &str> {
    s.split(is_py_line_break)
}

/// Width of `s` as Python counts it (code points), for `ljust` / `rjust`.
pub(crate) fn width(s: &str) -> usize {
    s.chars().count()
}

/// Python's `s.ljust(w)` appended to `out`.
pub(crate) fn push_ljust(out: &mut String, s: &str, w: usize) {
    out.push_str(s);
    out.extend(std::iter::repeat_n(' ', w.saturating_sub(width(s))));
}

/// Python's `s.rjust(w)` appended to `out`.
pub(crate) fn push_rjust(out: &mut String, s: &str, w: usize) {
    out.extend(std::iter::repeat_n(' ', w.saturating_sub(width(s))));
    out.push_str(s);
}

/// Python's `repr()` of a string: single quotes unless the text holds `'` and no `"`;
/// backslash, the quote, `\t` `\n` `\r` and other control characters escaped.
pub(crate) fn py_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || (0x7f..0xa0).contains(&(c as u32)) => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}
