//! The `[STRACE]` parser and invocation grouping.

use super::*;

const LINE: &str = "[STRACE] v=1 pid=1 tid=1 inv=1 hid=abc depth=0 name=chip.run ts=100 dur=20 rank=0";

fn one(name: &str, attrs: &str) -> TraceSpan {
    TraceSpan {
        pid: 1,
        tid: 1,
        inv: 1,
        hid: "abc".into(),
        depth: 0,
        name: name.into(),
        ts: 100,
        dur: 20,
        attrs: attrs.into(),
    }
}

#[test]
fn plain_record() {
    assert_eq!(parse_strace(LINE), [one(HOST_SPAN, "rank=0")]);
}

#[test]
fn logger_prefix_and_trailing_carriage_return() {
    let text = format!("[mono_ns=1000001][T0x1][TIMING] emit_host_span: {LINE}\r\n{LINE}  \r\n");
    assert_eq!(parse_strace(&text), [one(HOST_SPAN, "rank=0"), one(HOST_SPAN, "rank=0")]);
}

#[test]
fn two_records_on_one_physical_line() {
    let second = LINE.replace("pid=1 tid=1", "pid=2 tid=7").replace("rank=0", "clk=dev");
    let text = format!(
        "[mono_ns=5][T0xa][TIMING] emit_host_span: {LINE}[mono_ns=6][T0xB][TIMING] emit_host_span: {second}\n\
         noise {LINE} x=1{LINE}"
    );
    let spans = parse_strace(&text);
    assert_eq!(spans.len(), 4);
    assert_eq!(spans[0], one(HOST_SPAN, "rank=0"));
    assert_eq!((spans[1].pid, spans[1].tid, spans[1].attrs.as_str()), (2, 7, "clk=dev"));
    assert_eq!(spans[2].attrs, "rank=0 x=1");
    assert_eq!(spans[3], one(HOST_SPAN, "rank=0"));
}

#[test]
fn clock_anchor_bounds_the_attributes_and_is_not_a_span() {
    let anchor = format_clock_anchor(1, 5, 9, 0x2a);
    let text = format!("{LINE} {anchor}\n{anchor}\n");
    assert_eq!(parse_strace(&text), [one(HOST_SPAN, "rank=0")]);
}

#[test]
fn empty_attributes() {
    let text = LINE.replace(" rank=0", " ");
    assert_eq!(parse_strace(&text), [one(HOST_SPAN, "")]);
    let bare = LINE.replace(" rank=0", "");
    assert_eq!(parse_strace(&bare), [one(HOST_SPAN, "")]);
}

#[test]
fn names_are_decoded_and_hids_lowercased() {
    let text = LINE.replace("name=chip.run", "name=a%20b%3D%5Bc%5D%25%C3%A9%zz~").replace("hid=abc", "hid=ABC");
    assert_eq!(parse_strace(&text), [one("a b=[c]%é%zz~", "rank=0")]);
    // Escapes that are not UTF-8 decode to the code point of each byte, as in PyPTO.
    let latin = LINE.replace("name=chip.run", "name=x%E9");
    assert_eq!(parse_strace(&latin)[0].name, "x\u{e9}");
}

#[test]
fn whitespace_between_fields_may_repeat() {
    let text = LINE.replace(' ', " \t ");
    assert_eq!(parse_strace(&text), [one(HOST_SPAN, "rank=0")]);
}

#[test]
fn malformed_records_are_skipped() {
    let bad = [
        LINE.replace("dur=20", "dur="),
        LINE.replace("ts=100", "ts=-100"),
        LINE.replace("hid=abc", "hid=xyz"),
        LINE.replace("depth=0 ", ""),
        LINE.replace("pid=1", "pid=99999999999999999999"),
        LINE.replace("v=1 ", "v=1"),
        LINE.replace("name=chip.run", "name="),
        "[STRACE]".to_string(),
    ];
    let text = format!("{}\n{LINE}\n", bad.join("\n"));
    assert_eq!(parse_strace(&text), [one(HOST_SPAN, "rank=0")]);
    assert_eq!(parse_strace("no records here"), []);
}

#[test]
fn any_version_is_accepted() {
    assert_eq!(parse_strace(&LINE.replace("] v=1", "] v=2")), [one(HOST_SPAN, "rank=0")]);
}

#[test]
fn grouping_drops_families_without_an_invocation() {
    let s = |pid, inv, hid: &str, name: &str| span(pid, inv, hid, 0, name, 0, 1, "");
    let spans = vec![
        s(2, 1, "b", HOST_SPAN),
        s(1, 2, "a", HOST_SPAN),
        s(1, 1, "c", RUNNER),
        s(1, 1, "d", HOST_SPAN),
        s(1, 0, "e", "node.submit"),
        s(1, 0, "e", "network2.dispatch"),
        s(1, 0, "e", "ext.pypto.decode"),
        s(1, 0, "e", "l3.task"),
        s(1, 0, "e", "node"),
        s(1, 5, "f", "l3"),
        s(1, 6, "g", "nodes.x"),
    ];
    let groups = group_invocations(spans);
    let keys: Vec<(u64, i64, &str, usize)> =
        groups.iter().map(|g| (g.pid, g.inv, g.hid.as_str(), g.spans.len())).collect();
    assert_eq!(keys, [(1, 1, "c", 2), (1, 2, "a", 1), (1, 5, "f", 1), (1, 6, "g", 1), (2, 1, "b", 1)]);
    assert_eq!(groups[0].spans[1].name, HOST_SPAN);
    assert!(is_invocation_span("chip.prewarm.build") && !is_invocation_span("network3"));
}

#[test]
fn a_logger_prefix_needs_a_func_and_whitespace_after_its_colon() {
    let attrs = |tail: &str| parse_strace(&format!("{LINE}{tail}")).first().map(|s| s.attrs.clone());
    assert_eq!(attrs("[mono_ns=1][T0x1][TIMING]   : tail"), Some("rank=0".into()));
    assert_eq!(attrs("[mono_ns=1][T0x1][TIMING] : tail"), Some("rank=0[mono_ns=1][T0x1][TIMING] : tail".into()));
    assert_eq!(attrs("[mono_ns=1][T0x1][TIMING] f:tail"), Some("rank=0[mono_ns=1][T0x1][TIMING] f:tail".into()));
    assert_eq!(attrs("[mono_ns=1][T0x1][timing] f: tail"), Some("rank=0[mono_ns=1][T0x1][timing] f: tail".into()));
}
