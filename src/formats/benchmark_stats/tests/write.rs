//! The `[STRACE]` writer: exact record text, encoding and truncation.

use super::super::write::encode_field;
use super::*;

#[test]
fn record_without_and_with_logger_prefix() {
    let s = span(41_237, 3, "9F2C4E1A7B3D5C08", 2, DEVICE_SPAN, 0, 912_345, "clk=dev");
    assert_eq!(
        format_span_line(&s, None),
        "[STRACE] v=1 pid=41237 tid=41238 inv=3 hid=9f2c4e1a7b3d5c08 depth=2 name=chip.run.runner_run.device_wall \
         ts=0 dur=912345 clk=dev"
    );
    assert_eq!(
        format_span_line(&s, Some((812_345_679_901_234, 0x7f3a_2c1f_f640))),
        "[mono_ns=812345679901234][T0x7f3a2c1ff640][TIMING] emit_host_span: [STRACE] v=1 pid=41237 tid=41238 inv=3 \
         hid=9f2c4e1a7b3d5c08 depth=2 name=chip.run.runner_run.device_wall ts=0 dur=912345 clk=dev"
    );
}

#[test]
fn empty_attributes_keep_the_trailing_space() {
    let s = span(1, 1, "abc", 1, RUNNER, 100, 20, "");
    assert_eq!(
        format_span_line(&s, None),
        "[STRACE] v=1 pid=1 tid=2 inv=1 hid=abc depth=1 name=chip.run.runner_run ts=100 dur=20 "
    );
}

#[test]
fn clock_anchor_line() {
    assert_eq!(
        format_clock_anchor(41_237, 1_000_001, 1_700_000_000_123_456_789, 0x1),
        "[mono_ns=1000001][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=41237 mono_ns=1000001 \
         wall_ns=1700000000123456789"
    );
    assert_eq!(hid_hex(0x00ab_cdef), "abcdef");
    assert_eq!(hid_hex(0), "0");
}

#[test]
fn names_escape_grammar_and_non_printable_bytes() {
    assert_eq!(encode_field("a b=c%d[e]f\tg\u{7f}é", NAME_CAPACITY, false), "a%20b%3Dc%25d%5Be%5Df%09g%7F%C3%A9");
    // Attributes keep the `k=v` separators but still escape brackets and percent.
    assert_eq!(encode_field("k=v x=[1%]\n", ATTRS_CAPACITY, true), "k=v x=%5B1%25%5D%0A");
    let s = span(1, 1, "a", 0, "chip run", 0, 1, "note=a b");
    assert!(format_span_line(&s, None).ends_with(" name=chip%20run ts=0 dur=1 note=a b"));
}

#[test]
fn long_names_are_cut_to_64_bytes_with_a_tilde() {
    let plain = "n".repeat(70);
    assert_eq!(encode_field(&plain, NAME_CAPACITY, false), format!("{}~", "n".repeat(63)));
    // Exactly 64 bytes fit without a mark.
    assert_eq!(encode_field(&"n".repeat(64), NAME_CAPACITY, false), "n".repeat(64));
    // 62 bytes, then an escape that would need 3: the mark follows at byte 63.
    let escaped = format!("{} tail", "n".repeat(62));
    assert_eq!(encode_field(&escaped, NAME_CAPACITY, false), format!("{}~", "n".repeat(62)));
    // 61 bytes + `%20` fills 64 exactly, so the whole escape gives way to the mark.
    let full = format!("{} tail", "n".repeat(61));
    assert_eq!(encode_field(&full, NAME_CAPACITY, false), format!("{}~", "n".repeat(61)));
    assert_eq!(encode_field("abc", 0, false), "");
}
