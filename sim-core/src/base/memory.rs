//! Memory estimates: what a run will hold, part by part ([`MemoryEstimate`]), and the report of
//! a run refused because its estimate exceeds the memory it may use ([`MemoryReport`]).

use std::fmt;

/// One part of a [`MemoryEstimate`]: what it is and how many bytes it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryItem {
    /// What holds the bytes (`payload`, `routes`, `signal cells`, ...).
    pub what: String,
    /// Bytes.
    pub bytes: u64,
}

/// What a run (or several at once) will hold in memory, part by part: an estimate made
/// before the run from counts of what it is made of, within a factor of two of the measured
/// peak on the presets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryEstimate {
    /// The parts, in the order they were added (parts of the same name are summed).
    pub items: Vec<MemoryItem>,
}

impl MemoryEstimate {
    /// No part yet.
    pub fn new() -> MemoryEstimate {
        MemoryEstimate::default()
    }

    /// Adds `bytes` to the part `what` (made if new; parts of 0 bytes are left out).
    pub fn add(&mut self, what: &str, bytes: u64) {
        if bytes == 0 {
            return;
        }
        match self.items.iter_mut().find(|i| i.what == what) {
            Some(i) => i.bytes = i.bytes.saturating_add(bytes),
            None => self.items.push(MemoryItem { what: what.to_string(), bytes }),
        }
    }

    /// Adds every part of `other`.
    pub fn merge(&mut self, other: &MemoryEstimate) {
        for i in &other.items {
            self.add(&i.what, i.bytes);
        }
    }

    /// This estimate `n` times over (`n` runs at once, each holding as much).
    pub fn times(&self, n: u64) -> MemoryEstimate {
        let items = self.items.iter().map(|i| MemoryItem { what: i.what.clone(), bytes: i.bytes.saturating_mul(n) });
        MemoryEstimate { items: items.collect() }
    }

    /// The bytes of the part `what` (0 when there is none).
    pub fn bytes_of(&self, what: &str) -> u64 {
        self.items.iter().find(|i| i.what == what).map_or(0, |i| i.bytes)
    }

    /// Every part's bytes summed.
    pub fn total(&self) -> u64 {
        self.items.iter().fold(0u64, |s, i| s.saturating_add(i.bytes))
    }

    /// The part with the most bytes (the first of equals), if any.
    pub fn largest(&self) -> Option<&MemoryItem> {
        self.items.iter().fold(None, |best: Option<&MemoryItem>, i| match best {
            Some(b) if b.bytes >= i.bytes => Some(b),
            _ => Some(i),
        })
    }

    /// The parts, largest first: `payload 1.0 GiB, routes 200.0 MiB, ...` (the first `n`).
    pub fn largest_parts(&self, n: usize) -> String {
        let mut items: Vec<&MemoryItem> = self.items.iter().collect();
        items.sort_by_key(|i| std::cmp::Reverse(i.bytes));
        items.iter().take(n).map(|i| format!("{} {}", i.what, human_bytes(i.bytes))).collect::<Vec<_>>().join(", ")
    }
}

impl fmt::Display for MemoryEstimate {
    /// `about 1.2 GiB (payload 1.0 GiB, routes 200.0 MiB, ...)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "about {} ({})", human_bytes(self.total()), self.largest_parts(4))
    }
}

/// `1.5 GiB`, `512.0 MiB`, `64.0 KiB`, `100 B`: bytes as people read them.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [(&str, u32); 3] = [("GiB", 30), ("MiB", 20), ("KiB", 10)];
    for (unit, shift) in UNITS {
        if bytes >= 1 << shift {
            return format!("{:.1} {unit}", bytes as f64 / (1u64 << shift) as f64);
        }
    }
    format!("{bytes} B")
}

/// A run refused before it started: its estimate exceeds the memory it may use
/// ([`RunOptions::max_memory`](crate::RunOptions::max_memory)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryReport {
    /// What was refused (`the run`, `allreduce aiv-mesh at 16M on 1024 ranks`, ...).
    pub what: String,
    /// What it would hold.
    pub estimate: MemoryEstimate,
    /// The memory it may use, in bytes.
    pub limit: u64,
    /// Where the limit comes from (`RunOptions::max_memory`, `--max-memory`, what the host has
    /// available).
    pub limit_source: String,
    /// What to change so that it fits.
    pub advice: String,
}

impl fmt::Display for MemoryReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let largest = self
            .estimate
            .largest()
            .map_or(String::new(), |i| format!("; the largest part is {} ({})", i.what, human_bytes(i.bytes)));
        write!(
            f,
            "{} would hold {}, more than the {} it may use ({}){largest}. Not run. {}",
            self.what,
            self.estimate,
            human_bytes(self.limit),
            self.limit_source,
            self.advice
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_sum_and_the_largest_is_named() {
        let mut e = MemoryEstimate::new();
        e.add("payload", 3 << 30);
        e.add("routes", 100 << 20);
        e.add("payload", 1 << 30);
        e.add("nothing", 0);
        assert_eq!(e.items.len(), 2);
        assert_eq!(e.bytes_of("payload"), 4 << 30);
        assert_eq!(e.total(), (4 << 30) + (100 << 20));
        assert_eq!(e.largest().map(|i| i.what.as_str()), Some("payload"));
        assert_eq!(e.to_string(), "about 4.1 GiB (payload 4.0 GiB, routes 100.0 MiB)");
        assert_eq!(e.times(2).bytes_of("routes"), 200 << 20);
        let mut m = MemoryEstimate::new();
        m.merge(&e);
        m.merge(&e);
        assert_eq!(m.total(), 2 * e.total());
    }

    #[test]
    fn bytes_read_as_people_read_them() {
        assert_eq!(human_bytes(100), "100 B");
        assert_eq!(human_bytes(64 << 10), "64.0 KiB");
        assert_eq!(human_bytes(3 << 19), "1.5 MiB");
        assert_eq!(human_bytes(u64::MAX), "17179869184.0 GiB");
    }

    #[test]
    fn a_report_names_the_estimate_the_limit_and_the_largest_part() {
        let mut e = MemoryEstimate::new();
        e.add("payload", 2 << 30);
        e.add("machine", 1 << 20);
        let r = MemoryReport {
            what: "the run".into(),
            estimate: e,
            limit: 1 << 30,
            limit_source: "RunOptions::max_memory".into(),
            advice: "Keep no payload (timing-only).".into(),
        };
        assert_eq!(
            r.to_string(),
            "the run would hold about 2.0 GiB (payload 2.0 GiB, machine 1.0 MiB), more than the 1.0 GiB it may use \
             (RunOptions::max_memory); the largest part is payload (2.0 GiB). Not run. Keep no payload (timing-only)."
        );
    }
}
