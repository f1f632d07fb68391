//! Spans → `[STRACE]` text → parse → group → stats gives back what the spans give directly.

use super::*;
use proptest::prelude::*;

/// Writes the spans as a shared capture would hold them: every record with a logger prefix,
/// pairs of records sharing one physical line, clock anchors and unrelated noise in between.
fn capture(invocations: &[TraceInvocation]) -> String {
    let mut text = format_clock_anchor(10, 1, 1_700_000_000_000_000_000, 0xbeef) + "\nunrelated log line\n";
    let spans = invocations.iter().flat_map(|inv| &inv.spans);
    for (n, s) in spans.enumerate() {
        let n = n as u64;
        text += &format_span_line(s, Some((1_000 + n, 0x7f00 + s.pid)));
        text += if n.is_multiple_of(2) { "" } else { "\n" };
    }
    let scheduler = span(10, 0, "0", 0, "node.submit", 5, 6, "task=3");
    text + &format_span_line(&scheduler, None) + "\r\n"
}

fn sorted(mut invocations: Vec<TraceInvocation>) -> Vec<TraceInvocation> {
    invocations.sort_by_key(|i| (i.pid, i.inv));
    invocations
}

#[test]
fn l3_capture_round_trips() {
    for (original, rounds, warmup) in [(l3_two_ranks(), 2, 1), (l3_two_slots(), 2, 0), (l3_two_slots(), 1, 1)] {
        let parsed = group_invocations(parse_strace(&capture(&original)));
        assert_eq!(parsed, sorted(original.clone()));
        let direct = BenchmarkStats::from_l3(original, rounds, warmup);
        let via_text = BenchmarkStats::from_l3(parsed, rounds, warmup);
        assert_eq!(via_text, direct);
        assert_eq!(via_text.to_string(), direct.to_string());
    }
}

#[test]
fn l2_capture_round_trips() {
    let original: Vec<TraceInvocation> =
        (1..=6).map(|i| dispatch(3, i, if i == 4 { "def" } else { "abc" }, 1_000 * i, 900, 500 + i)).collect();
    let parsed = group_invocations(parse_strace(&capture(&original)));
    let via_text = BenchmarkStats::from_l2(parsed, 3, 2);
    assert_eq!(via_text, BenchmarkStats::from_l2(original, 3, 2));
    assert_eq!(via_text.device_wall_us, [0.503, 0.505, 0.506]);
}

/// Spans whose every field survives the wire: names of up to 5 arbitrary characters (at most
/// 60 encoded bytes), attributes of printable ASCII other than `%[]` without outer spaces.
fn wire_span() -> impl Strategy<Value = TraceSpan> {
    let name = prop::collection::vec(any::<char>(), 1..=5).prop_map(String::from_iter);
    let attrs = "[ -$&-Z^-~]{0,40}".prop_map(|a: String| a.trim().to_string());
    (any::<u64>(), any::<u64>(), 0..=i64::MAX, "[0-9a-f]{1,16}", any::<u32>(), name, 0..=i64::MAX, 0..=i64::MAX, attrs)
        .prop_map(|(pid, tid, inv, hid, depth, name, ts, dur, attrs)| TraceSpan {
            pid,
            tid,
            inv,
            hid,
            depth,
            name,
            ts,
            dur,
            attrs,
        })
}

proptest! {
    #[test]
    fn records_round_trip(spans in prop::collection::vec(wire_span(), 1..6), thread in any::<u64>()) {
        // All records of a batch on one physical line, alternating with and without prefix.
        let text: String = spans
            .iter()
            .enumerate()
            .map(|(i, s)| format_span_line(s, (i % 2 == 0).then_some((i as u64, thread))))
            .collect();
        prop_assert_eq!(parse_strace(&text), spans);
    }
}
