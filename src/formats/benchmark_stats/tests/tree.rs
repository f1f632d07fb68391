//! `TraceInvocation` accessors and its span-tree rendering.

use super::*;

/// One dispatch emitted out of order (device spans first, children before parents).
fn sample() -> TraceInvocation {
    let s = |depth, name: &str, ts, dur, attrs: &str| span(1, 1, "abc", depth, name, ts, dur, attrs);
    TraceInvocation {
        pid: 1,
        inv: 1,
        hid: "abc".into(),
        spans: vec![
            s(2, DEVICE_SPAN, 0, 12_345, "clk=dev"),
            s(3, SCHED_SPAN, 300, 11_000, "clk=dev"),
            s(3, ORCH_SPAN, 200, 9_000, "clk=dev"),
            s(2, "chip.run.bind.args", 1_150, 500, "ntensor=3"),
            s(1, "chip.run.bind", 1_100, 1_500, ""),
            s(1, RUNNER, 2_700, 17_000, ""),
            s(1, "chip.run.validate", 19_800, 150, ""),
            s(0, HOST_SPAN, 1_000, 20_000, "run_id=1"),
            // A repeated name: ignored by the tree and the metrics (first one wins).
            s(2, DEVICE_SPAN, 0, 99_999, "clk=dev"),
        ],
    }
}

#[test]
fn metrics_read_the_first_span_of_each_name() {
    let inv = sample();
    assert_eq!(inv.root().map(|s| s.name.as_str()), Some(HOST_SPAN));
    assert_eq!(inv.task(), "abc");
    assert_eq!(inv.device_wall_us(), 12.345);
    assert_eq!(inv.host_wall_us(), 20.0);
    // orch 200..9200, sched 300..11300.
    assert_eq!(inv.effective_us(), 11.1);
    assert_eq!(inv.by_name().len(), 8);
    assert_eq!(inv.by_name()[DEVICE_SPAN].dur, 12_345);
    assert!(inv.spans[0].is_device() && !inv.spans[4].is_device());
    assert_eq!(inv.spans[0].dur_us(), 12.345);
}

#[test]
fn missing_spans_read_as_zero() {
    let inv = host_only(5, 1, "ff", 0, 4_000);
    assert_eq!((inv.device_wall_us(), inv.host_wall_us(), inv.effective_us()), (0.0, 4.0, 0.0));
    assert_eq!(TraceInvocation::default().root(), None);
}

#[test]
fn tree_nests_by_dotted_name_and_orders_siblings_by_ts() {
    let expected = lines(&[
        "chip.run                 20.0us",
        "|- bind                   1.5us",
        "|  `- args                0.5us",
        "|- runner_run            17.0us",
        "|  `- device_wall [dev]  12.3us",
        "|     |- orch [dev]       9.0us",
        "|     `- sched [dev]     11.0us",
        "`- validate               0.1us",
    ]);
    assert_eq!(sample().format_tree(true), expected);
}

#[test]
fn tree_in_nanoseconds() {
    let expected = lines(&[
        "chip.run                 20000ns",
        "|- bind                   1500ns",
        "|  `- args                 500ns",
        "|- runner_run            17000ns",
        "|  `- device_wall [dev]  12345ns",
        "|     |- orch [dev]       9000ns",
        "|     `- sched [dev]     11000ns",
        "`- validate                150ns",
    ]);
    assert_eq!(sample().format_tree(false), expected);
}

#[test]
fn tree_columns_align_and_lines_are_right_trimmed() {
    let s = |depth, name: &str, ts| span(1, 1, "x", depth, name, ts, 0, "");
    let inv = TraceInvocation {
        pid: 1,
        inv: 1,
        hid: "x".into(),
        // `a.b.c` has no `a.b`, so it hangs off `a` with the label `b.c`; `z` is a second root.
        spans: vec![s(0, "z", 5), s(0, "a", 0), s(2, "a.b.c", 1), s(1, "a.d", 2)],
    };
    let columns = |span: &TraceSpan| match span.name.as_str() {
        "a" => vec!["1".to_string(), "".to_string()],
        "a.d" => vec!["22".to_string(), "x".to_string(), "tail".to_string()],
        _ => vec!["333".to_string()],
    };
    // Name column 6 wide ("|- b.c"); value columns 3, 1 and 4 wide; "a" ends in an empty cell.
    let expected = lines(&["a         1", "|- b.c  333", "`- d     22  x  tail", "z       333"]);
    assert_eq!(inv.format_tree_with(columns), expected);
    assert_eq!(TraceInvocation::default().format_tree(true), "");
}
