//! Writing `[STRACE]` v=1 records and the `[CLOCK_ANCHOR]` line in the exact shape simpler's
//! host logger emits, so PyPTO's parser reads ranksim's output as a real runtime's.

use super::span::TraceSpan;

/// Byte budget of an encoded span name, including a trailing `~` truncation mark.
pub const NAME_CAPACITY: usize = 64;
/// Byte budget of the encoded attributes, including a trailing `~` truncation mark.
pub const ATTRS_CAPACITY: usize = 192;

/// One `[STRACE]` record (without a trailing newline):
/// `[STRACE] v=1 pid=P tid=T inv=I hid=H depth=D name=N ts=S dur=U ATTRS`, preceded by the
/// logger prefix `[mono_ns=M][T0x<thread hex>][TIMING] emit_host_span: ` when `prefix` is
/// `Some((mono_ns, thread))`. The name and attributes are percent-encoded and capped like the
/// emitter's; one space always follows `dur`, even before empty attributes.
/// Fields are written as given: a negative `inv`/`ts`/`dur` (a mean's `inv = -1`) yields a record
/// no parser accepts, and `hid` should already be canonical hex (see [`hid_hex`]).
pub fn format_span_line(span: &TraceSpan, prefix: Option<(u64, u64)>) -> String {
    let head = prefix.map_or(String::new(), |(mono_ns, thread)| log_prefix(mono_ns, thread, "emit_host_span"));
    format!(
        "{head}[STRACE] v=1 pid={} tid={} inv={} hid={} depth={} name={} ts={} dur={} {}",
        span.pid,
        span.tid,
        span.inv,
        span.hid.to_ascii_lowercase(),
        span.depth,
        encode_field(&span.name, NAME_CAPACITY, false),
        span.ts,
        span.dur,
        encode_field(&span.attrs, ATTRS_CAPACITY, true)
    )
}

/// The once-per-process clock anchor relating the monotonic clock of the span timestamps to
/// wall time: `[mono_ns=M][T0x<thread hex>][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=P
/// mono_ns=M wall_ns=W`.
pub fn format_clock_anchor(pid: u64, mono_ns: u64, wall_ns: u64, thread: u64) -> String {
    format!(
        "{}[CLOCK_ANCHOR] v=1 pid={pid} mono_ns={mono_ns} wall_ns={wall_ns}",
        log_prefix(mono_ns, thread, "clock_anchor")
    )
}

/// A callable hash as the emitter prints it: lowercase hex, no `0x`, no zero padding.
pub fn hid_hex(hash: u64) -> String {
    format!("{hash:x}")
}

/// The host logger's line prefix at the `TIMING` level.
fn log_prefix(mono_ns: u64, thread: u64, func: &str) -> String {
    format!("[mono_ns={mono_ns}][T0x{thread:x}][TIMING] {func}: ")
}

/// Percent-encodes `value` byte by byte as the emitter does: non-printable bytes, `%`, `[`, `]`
/// become `%XX` (uppercase hex), and so do space and `=` except in attributes, where they are
/// the `k=v` grammar. Encoding stops before the unit that would pass `capacity`; a truncated
/// field ends in `~`, dropping the last whole unit if needed so the result fits.
pub(crate) fn encode_field(value: &str, capacity: usize, attributes: bool) -> String {
    let mut out = String::with_capacity(value.len().min(capacity));
    let mut last_unit = 0;
    for b in value.bytes() {
        let safe = is_safe_byte(b, attributes);
        let unit = if safe { 1 } else { 3 };
        if out.len() + unit > capacity {
            if capacity > 0 {
                if out.len() == capacity {
                    out.truncate(out.len() - last_unit);
                }
                out.push('~');
            }
            return out;
        }
        if safe {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
        last_unit = unit;
    }
    out
}

/// Whether byte `b` may appear literally in an encoded field.
fn is_safe_byte(b: u8, attributes: bool) -> bool {
    let printable = (0x20..=0x7e).contains(&b);
    let grammar = matches!(b, b' ' | b'=');
    printable && !matches!(b, b'%' | b'[' | b']') && (attributes || !grammar)
}
