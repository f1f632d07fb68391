//! The progress bar of a sweep: a series' rows done out of its rows, and how far the running
//! row has simulated (simulated time and engine events, read from the engines' published
//! [`Progress`] counter). It draws on stderr only when stdout and stderr are terminals, so a
//! table piped to a file or a CI log carries no bar; it never changes what the run computes.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use sim_core::{Progress, SimTime};
use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the running row's figures are refreshed.
const REFRESH: Duration = Duration::from_millis(200);

/// A series' bar, and the thread that refreshes its message from the counter.
pub(crate) struct RowsBar {
    bar: ProgressBar,
    counter: Progress,
    stop: Arc<AtomicBool>,
    ticker: Option<JoinHandle<()>>,
}

impl RowsBar {
    /// A bar over `rows` rows of series `label`, shown when stdout and stderr are terminals.
    pub(crate) fn on_terminal(label: &str, rows: usize) -> RowsBar {
        RowsBar::new(label, rows, std::io::stdout().is_terminal() && std::io::stderr().is_terminal())
    }

    /// A bar over `rows` rows of series `label`, drawn on stderr when `shown`, else hidden
    /// (and then no refresh thread runs).
    pub(crate) fn new(label: &str, rows: usize, shown: bool) -> RowsBar {
        let target = if shown { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
        let bar = ProgressBar::with_draw_target(Some(rows as u64), target);
        if let Ok(style) = ProgressStyle::with_template("{prefix} [{bar:24}] {pos}/{len} rows {msg}") {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(label.to_string());
        let counter = Progress::new();
        let stop = Arc::new(AtomicBool::new(false));
        let ticker = shown.then(|| {
            let (bar, counter, stop) = (bar.clone(), counter.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    bar.set_message(running(&counter));
                    // Woken early by `drop`, so a finished series does not wait out a refresh.
                    std::thread::park_timeout(REFRESH);
                }
            })
        });
        RowsBar { bar, counter, stop, ticker }
    }

    /// The counter the series' runs publish to.
    pub(crate) fn counter(&self) -> &Progress {
        &self.counter
    }

    /// Runs `f` with the bar taken off the terminal, so lines printed meanwhile stay whole.
    pub(crate) fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.bar.suspend(f)
    }

    /// One more row is done.
    pub(crate) fn row_done(&self) {
        self.bar.inc(1);
    }
}

impl Drop for RowsBar {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.take() {
            t.thread().unpark();
            let _ = t.join();
        }
        self.bar.finish_and_clear();
    }
}

/// The running rows' figures: the simulated time reached and the events applied so far.
fn running(p: &Progress) -> String {
    format!("| running: {} simulated, {} events", sim_time(p.now()), events(p.events()))
}

/// A simulated time in the largest unit that keeps it at least 1.
fn sim_time(t: SimTime) -> String {
    let ps = t.as_ps() as f64;
    match ps {
        x if x >= 1e12 => format!("{:.3} s", x / 1e12),
        x if x >= 1e9 => format!("{:.3} ms", x / 1e9),
        x => format!("{:.3} us", x / 1e6),
    }
}

/// An event count in thousands or millions.
fn events(n: u64) -> String {
    match n {
        n if n >= 1_000_000 => format!("{:.1} M", n as f64 / 1e6),
        n if n >= 1_000 => format!("{:.1} K", n as f64 / 1e3),
        n => n.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_read_in_the_largest_unit_that_keeps_them_at_least_one() {
        assert_eq!(sim_time(SimTime::from_ps(2_500_000)), "2.500 us");
        assert_eq!(sim_time(SimTime::from_ps(1_250_000_000)), "1.250 ms");
        assert_eq!(sim_time(SimTime::from_ps(3_000_000_000_000)), "3.000 s");
        assert_eq!(events(999), "999");
        assert_eq!(events(12_345), "12.3 K");
        assert_eq!(events(4_560_000), "4.6 M");
    }

    #[test]
    fn a_hidden_bar_counts_rows_and_hands_out_one_counter() {
        let b = RowsBar::new("allreduce mesh", 3, false);
        assert!(b.ticker.is_none());
        assert_eq!(b.suspend(|| 7), 7);
        b.row_done();
        assert_eq!(b.bar.position(), 1);
        assert_eq!(b.counter(), &b.counter.clone());
    }

    #[test]
    fn a_shown_bar_refreshes_from_its_thread_and_stops_it_when_dropped() {
        let b = RowsBar::new("allreduce mesh", 2, true);
        assert!(b.ticker.is_some());
        let stop = b.stop.clone();
        drop(b);
        assert!(stop.load(Ordering::Relaxed));
    }
}
