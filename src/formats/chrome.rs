//! Chrome trace-event JSON of a [`Trace`]: a process per rank, a thread per core (plus one for
//! the rank's dispatches), a complete (`X`) slice per operation, flow arrows for
//! write-to-notify and notify-to-wait, and a counter track per directed link with its
//! throughput while busy. Perfetto and chrome://tracing open it. Times are microseconds with
//! picosecond precision.

use sim_core::SimTime;
use sim_core::trace::{FlowKind, LinkBusy, OpSpan, Trace};
use std::fmt::Write;

/// Thread id of each rank's dispatch lane.
const DISPATCH_TID: usize = 100_000;

fn us(t: SimTime) -> String {
    format!("{}.{:06}", t.as_ps() / 1_000_000, t.as_ps() % 1_000_000)
}

fn dur_us(a: SimTime, b: SimTime) -> String {
    us(SimTime::from_ps(b.as_ps().saturating_sub(a.as_ps())))
}

/// Escapes a string for a JSON string literal.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o
}

/// Renders `trace` as a Chrome trace-event JSON document. `ranks` names the processes.
pub fn to_chrome_json(trace: &Trace, ranks: usize) -> String {
    let mut ev: Vec<String> = Vec::new();
    let mut threads = std::collections::BTreeSet::new();
    for r in 0..ranks {
        ev.push(format!(r#"{{"name":"process_name","ph":"M","pid":{r},"args":{{"name":"rank {r}"}}}}"#));
        ev.push(format!(r#"{{"name":"process_sort_index","ph":"M","pid":{r},"args":{{"sort_index":{r}}}}}"#));
        ev.push(format!(
            r#"{{"name":"thread_name","ph":"M","pid":{r},"tid":{DISPATCH_TID},"args":{{"name":"dispatches"}}}}"#
        ));
    }
    for o in &trace.ops {
        if threads.insert((o.chip, o.core)) {
            ev.push(format!(
                r#"{{"name":"thread_name","ph":"M","pid":{},"tid":{},"args":{{"name":"core {}"}}}}"#,
                o.chip, o.core, o.core
            ));
        }
    }
    for d in &trace.dispatches {
        ev.push(format!(
            r#"{{"name":"{}","cat":"dispatch","ph":"X","pid":{},"tid":{DISPATCH_TID},"ts":{},"dur":{}}}"#,
            esc(&d.name),
            d.chip,
            us(d.start),
            dur_us(d.start, d.end)
        ));
    }
    for o in &trace.ops {
        let peer = o.peer.map_or(String::new(), |p| format!(r#","peer":{p}"#));
        ev.push(format!(
            r#"{{"name":"{}","cat":"op","ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"args":{{"id":{},"bytes":{}{peer}}}}}"#,
            o.name,
            o.chip,
            o.core,
            us(o.start),
            dur_us(o.start, o.end),
            o.id,
            o.bytes
        ));
    }
    for m in &trace.marks {
        ev.push(format!(
            r#"{{"name":"{}","cat":"finding","ph":"i","s":"p","pid":{},"tid":{DISPATCH_TID},"ts":{},"args":{{"detail":"{}"}}}}"#,
            esc(&m.name),
            m.chip,
            us(m.time),
            esc(&m.detail)
        ));
    }
    flows(trace, &mut ev);
    links(trace, &mut ev);
    format!("{{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n{}\n]}}\n", ev.join(",\n"))
}

/// Flow start/finish pairs binding to the slices they connect.
fn flows(trace: &Trace, ev: &mut Vec<String>) {
    let by_id: std::collections::BTreeMap<u64, &OpSpan> = trace.ops.iter().map(|o| (o.id, o)).collect();
    for (i, f) in trace.flows.iter().enumerate() {
        let (Some(a), Some(b)) = (by_id.get(&f.from), by_id.get(&f.to)) else { continue };
        let name = match f.kind {
            FlowKind::WriteThenNotify => "write->notify",
            FlowKind::NotifyToWait => "notify->wait",
        };
        ev.push(format!(
            r#"{{"name":"{name}","cat":"flow","ph":"s","id":{i},"pid":{},"tid":{},"ts":{}}}"#,
            a.chip,
            a.core,
            us(a.start)
        ));
        ev.push(format!(
            r#"{{"name":"{name}","cat":"flow","ph":"f","bp":"e","id":{i},"pid":{},"tid":{},"ts":{}}}"#,
            b.chip,
            b.core,
            us(b.start)
        ));
    }
}

/// One counter track per network resource: its throughput (GB/s) while a packet serialises,
/// 0 in between.
fn links(trace: &Trace, ev: &mut Vec<String>) {
    let mut by_link: std::collections::BTreeMap<(usize, &str), Vec<&LinkBusy>> = std::collections::BTreeMap::new();
    for l in &trace.links {
        by_link.entry((l.chip, l.resource.as_str())).or_default().push(l);
    }
    for ((src, resource), mut busy) in by_link {
        busy.sort_by_key(|l| (l.start, l.end));
        let name = format!("{} GB/s", esc(resource));
        for l in busy {
            let ps = l.end.as_ps().saturating_sub(l.start.as_ps());
            let gbps = if ps == 0 { 0.0 } else { l.bytes as f64 * 1000.0 / ps as f64 };
            ev.push(format!(
                r#"{{"name":"{name}","ph":"C","pid":{src},"ts":{},"args":{{"GB/s":{gbps:.3}}}}}"#,
                us(l.start)
            ));
            ev.push(format!(r#"{{"name":"{name}","ph":"C","pid":{src},"ts":{},"args":{{"GB/s":0}}}}"#, us(l.end)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim_core::trace::{Flow, Mark};

    #[test]
    fn times_are_microseconds_with_picosecond_digits() {
        assert_eq!(us(SimTime::from_ps(1_234_567)), "1.234567");
        assert_eq!(us(SimTime::from_ps(5)), "0.000005");
        assert_eq!(esc("a\"b\\c\n"), "a\\\"b\\\\c\\u000a");
    }

    #[test]
    fn renders_slices_flows_and_counters() {
        let op = |id, core, name, s, e| OpSpan {
            id,
            chip: 0,
            core,
            name,
            start: SimTime::from_ps(s),
            end: SimTime::from_ps(e),
            bytes: 8,
            peer: Some(1),
        };
        let trace = Trace {
            ops: vec![op(1, 0, "notify", 0, 100), op(2, 1, "wait", 50, 900)],
            flows: vec![Flow { from: 1, to: 2, kind: FlowKind::NotifyToWait }],
            links: vec![LinkBusy {
                resource: "link 0->1".into(),
                chip: 0,
                start: SimTime::from_ps(0),
                end: SimTime::from_ps(1000),
                bytes: 8,
            }],
            dispatches: vec![],
            marks: vec![Mark {
                chip: 1,
                time: SimTime::from_ps(500),
                name: "data-race".into(),
                detail: "a \"quoted\" race".into(),
            }],
        };
        let j = to_chrome_json(&trace, 2);
        assert!(
            j.contains(r#"{"name":"data-race","cat":"finding","ph":"i","s":"p","pid":1,"tid":100000,"ts":0.000500,"args":{"detail":"a \"quoted\" race"}}"#),
            "{j}"
        );
        assert!(
            j.contains(r#""name":"notify","cat":"op","ph":"X","pid":0,"tid":0,"ts":0.000000,"dur":0.000100"#),
            "{j}"
        );
        assert!(j.contains(r#""ph":"s","id":0,"pid":0,"tid":0"#));
        assert!(j.contains(r#""ph":"f","bp":"e","id":0,"pid":0,"tid":1"#));
        // 8 bytes in 1000 ps = 8 GB/s.
        assert!(j.contains(r#""name":"link 0->1 GB/s","ph":"C","pid":0,"ts":0.000000,"args":{"GB/s":8.000}"#), "{j}");
        assert!(j.contains(r#""name":"thread_name","ph":"M","pid":0,"tid":1,"args":{"name":"core 1"}"#));
    }
}
