//! Budget reports: a run that reached its simulated-time or event limit
//! (`RunOptions::max_sim_time`, `RunOptions::max_events`), with what every core was doing.

use crate::base::time::SimTime;
use std::fmt;

/// Which budget a run reached.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Limit {
    /// The simulated-time limit.
    SimTime(SimTime),
    /// The limit on events applied.
    Events(u64),
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Limit::SimTime(t) => write!(
                f,
                "the simulated-time limit of {t} (raise it with RunOptions::max_sim_time, `--max-sim-time-us` on the \
                 command line, `max_sim_time_us=` in Python)"
            ),
            Limit::Events(n) => write!(
                f,
                "the limit of {n} events (raise it with RunOptions::max_events, `--max-events` on the command line, \
                 `max_events=` in Python)"
            ),
        }
    }
}

/// What one core with a block was doing when the run stopped.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CoreActivity {
    /// Chip (world rank).
    pub chip: usize,
    /// Core on the chip.
    pub core: usize,
    /// Block of the kernel it runs.
    pub block: usize,
    /// Task of the kernel it runs.
    pub task: String,
    /// `running (next request at ...)` or `blocked since ...`.
    pub state: String,
    /// The last operation it asked the scheduler for (`test`, `notify`, `wait`, ...).
    pub last_op: String,
    /// Where the kernel called it, when known.
    pub location: Option<String>,
}

/// A run ended by a budget: which one, where it got to, and what each core was doing.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BudgetReport {
    /// The limit reached.
    pub limit: Limit,
    /// Simulated time reached.
    pub time: SimTime,
    /// Events applied.
    pub events: u64,
    /// Every core with a block, by rank then core.
    pub cores: Vec<CoreActivity>,
}

/// Cores listed in a report's text; the rest are counted.
const SHOWN: usize = 16;

impl fmt::Display for BudgetReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "the run reached {} at simulated time {} after {} events; a protocol that never ends (a poll loop that \
             also writes, a retry that never succeeds) or a run much longer than expected. {} core(s) had a block:",
            self.limit,
            self.time,
            self.events,
            self.cores.len()
        )?;
        for c in self.cores.iter().take(SHOWN) {
            write!(
                f,
                "  rank {} core {} block {} task `{}`: {}, last op `{}`",
                c.chip, c.core, c.block, c.task, c.state, c.last_op
            )?;
            match &c.location {
                Some(at) => writeln!(f, " at {at}")?,
                None => writeln!(f)?,
            }
        }
        if self.cores.len() > SHOWN {
            writeln!(f, "  ... and {} more", self.cores.len() - SHOWN)?;
        }
        Ok(())
    }
}
