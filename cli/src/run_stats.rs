//! `--stats`: what the engine did over the runs of a command (events applied, packets moved)
//! and the host time it took, so a user sees where a long sweep spends its time and how fast
//! the simulator goes on their machine. Host time is the one figure that is not deterministic.

use sim_core::RunReport;
use std::time::Duration;

/// Engine work summed over runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    /// Runs counted.
    pub runs: u64,
    /// Engine events applied.
    pub events: u64,
    /// Packets sent.
    pub packets: u64,
}

impl Tally {
    /// Counts one run.
    pub(crate) fn add(&mut self, r: &RunReport) {
        self.runs += 1;
        self.events += r.stats.events;
        self.packets += r.stats.packets;
    }

    /// `# stats: 3 run(s), 1200000 engine events, 400000 packets in 1.50 host s (0.80 M events/s)`.
    pub(crate) fn line(&self, host: Duration) -> String {
        let secs = host.as_secs_f64();
        let rate = if secs > 0.0 { self.events as f64 / secs / 1e6 } else { 0.0 };
        format!(
            "# stats: {} run(s), {} engine events, {} packets in {secs:.2} host s ({rate:.2} M events/s; host time is not deterministic)",
            self.runs, self.events, self.packets
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_gives_counts_and_the_rate() {
        let t = Tally { runs: 2, events: 3_000_000, packets: 10 };
        let l = t.line(Duration::from_millis(1500));
        assert!(
            l.starts_with("# stats: 2 run(s), 3000000 engine events, 10 packets in 1.50 host s (2.00 M events/s"),
            "{l}"
        );
        assert!(Tally::default().line(Duration::ZERO).contains("0.00 M events/s"));
    }
}
