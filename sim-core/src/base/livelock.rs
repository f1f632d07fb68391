//! Livelock reports: every core still running was polling (`test_signal`, `read_scalar`)
//! cells that nothing in flight could change any more, so the run could only spin.

use crate::base::deadlock::{BlockedWait, CellWrite, CellWriteOp, StuckTask};
use crate::base::signal::{Cond, NotifyOp};
use crate::base::time::SimTime;
use std::fmt;

/// One cell a spinning core polls, with what it last saw there.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SpinningPoll {
    /// Chip (world rank) of the poller.
    pub chip: usize,
    /// Dense rank in the polled buffer's comm domain (the chip for a GM tensor).
    pub domain_rank: usize,
    /// Block of the polling kernel.
    pub block: usize,
    /// Task of the polling kernel.
    pub task: String,
    /// Dispatch of the polling kernel.
    pub dispatch: String,
    /// The polling operation: `test_signal` or `read_scalar`.
    pub op: String,
    /// The polled buffer's name.
    pub buffer: String,
    /// The cell's coordinates in `buffer`.
    pub coords: Vec<usize>,
    /// Byte offset of the cell in its memory.
    pub offset: usize,
    /// The cell's value when the run stopped (a `read_scalar` of a float buffer reads it as
    /// its element type).
    pub current: f64,
    /// What a `test_signal` asks of the cell (`None`: a `read_scalar`, whose exit condition
    /// is the kernel's own).
    pub cond: Option<Cond>,
    /// Polls the core made since anything in the machine last changed.
    pub polls: u64,
    /// When the core first polled since that change.
    pub since: SimTime,
    /// Most recent writes to the cell, oldest first.
    pub last_writers: Vec<CellWrite>,
    /// Where the kernel polls (`src/kernel.rs:12:9`, or a Python kernel's line), when known.
    pub location: Option<String>,
}

/// Everything the machine was doing when it could only spin: the spinning polls, and the
/// blocked waits, deferred conditions and stuck tasks beside them.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LivelockReport {
    /// Simulated time of the last event applied.
    pub time: SimTime,
    /// Since when nothing but polls happened (the earliest first poll of a spinning core
    /// since the last change).
    pub since: SimTime,
    /// The polls each spinning core made at least, with nothing changing, before the run was
    /// ended (`RunOptions::livelock_polls`).
    pub threshold: u64,
    /// The spinning cores' cells, by rank then block.
    pub polls: Vec<SpinningPoll>,
    /// Blocking waits of cores that do not poll.
    pub waits: Vec<BlockedWait>,
    /// Deferred (`defer_wait`) conditions still false.
    pub deferred: Vec<BlockedWait>,
    /// Tasks that could not be placed or wait on tasks that never complete.
    pub stuck: Vec<StuckTask>,
}

impl fmt::Display for LivelockReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cores: std::collections::BTreeSet<(usize, usize, &str)> =
            self.polls.iter().map(|p| (p.chip, p.block, p.task.as_str())).collect();
        writeln!(
            f,
            "livelock at {}: every running core is polling and nothing in flight can change what it polls; \
             nothing but polls since {} ({} spinning core(s), each at least {} polls; {} blocked wait(s), {} deferred \
             condition(s), {} stuck task(s))",
            self.time,
            self.since,
            cores.len(),
            self.threshold,
            self.waits.len(),
            self.deferred.len(),
            self.stuck.len()
        )?;
        for p in &self.polls {
            write_poll(f, p)?;
        }
        if !(self.waits.is_empty() && self.deferred.is_empty() && self.stuck.is_empty()) {
            writeln!(f, "  beside them:")?;
            let blocked = crate::base::deadlock::DeadlockReport {
                time: self.time,
                waits: self.waits.clone(),
                deferred: self.deferred.clone(),
                stuck: self.stuck.clone(),
            };
            // The deadlock report's lines, without its header.
            for line in blocked.to_string().lines().skip(1) {
                writeln!(f, "{line}")?;
            }
        }
        writeln!(
            f,
            "  (a poll loop that gives up after more than {} polls is not a livelock: raise RunOptions::livelock_polls)",
            self.threshold
        )
    }
}

fn write_poll(f: &mut fmt::Formatter<'_>, p: &SpinningPoll) -> fmt::Result {
    let needs = match p.cond {
        Some(c) => format!(", needs {} {}", c.symbol(), c.expected()),
        None => String::new(),
    };
    writeln!(
        f,
        "  rank {} (domain rank {}) block {} task `{}` dispatch `{}`: {} since {} on {}{:?} (byte {}), {} polls: \
         value {}{needs}",
        p.chip,
        p.domain_rank,
        p.block,
        p.task,
        p.dispatch,
        p.op,
        p.since,
        p.buffer,
        p.coords,
        p.offset,
        p.polls,
        p.current
    )?;
    if let Some(at) = &p.location {
        writeln!(f, "      called at {at}")?;
    }
    if p.last_writers.is_empty() {
        writeln!(f, "      last writers: none (nobody ever wrote this cell)")?;
    } else {
        writeln!(f, "      last writers:")?;
        for c in &p.last_writers {
            writeln!(
                f,
                "        rank {} block {} task `{}`: {} {} at {}",
                c.chip, c.block, c.task, c.op, c.value, c.time
            )?;
        }
    }
    writeln!(f, "      hint: {}", p.hint())
}

impl SpinningPoll {
    /// The likely cause, from the cell's history and the poll's condition (no times in it, so
    /// jittered runs give the same hint).
    pub fn hint(&self) -> String {
        let Some(cond) = self.cond else {
            return if self.last_writers.is_empty() {
                "nobody ever wrote this element: is the loop reading the cell the producer writes (buffer, offsets, \
                 rank)?"
                    .to_string()
            } else {
                "the element stopped changing and the loop never exits: a producer that stopped early, or a value \
                 reset before this core saw it"
                    .to_string()
            };
        };
        let (cmp, expected) = (cond.symbol(), cond.expected());
        let current = self.current as i64;
        if self.last_writers.is_empty() {
            return format!(
                "nobody ever wrote this cell: a poll on the wrong cell, or a producer that notifies another one \
                 (check the buffer, the offsets and the rank it notifies) before it can reach {cmp} {expected}"
            );
        }
        // A write after which the condition held, undone by a later write: reset too early.
        let values = running_values(&self.last_writers);
        if let Some(i) = values.iter().position(|&v| cond.holds(v as i32))
            && let Some(j) = values[i + 1..].iter().position(|&v| !cond.holds(v as i32))
        {
            let undo = &self.last_writers[i + 1 + j];
            return format!(
                "the cell held {} (which satisfies {cmp} {expected}), but rank {} task `{}` wrote it back ({} {}) \
                 before this core saw it: reset the cell only after every poller has seen it",
                values[i], undo.chip, undo.task, undo.op, undo.value
            );
        }
        let last = &self.last_writers[self.last_writers.len() - 1];
        if last.op == CellWriteOp::Notify(NotifyOp::Set) && cond.is_at_least() && last.value < expected {
            return format!(
                "the last write was Set({}), which can never satisfy {cmp} {expected}; notify a value >= {expected} \
                 or use AtomicAdd",
                last.value
            );
        }
        if matches!(cond, Cond::Signed(crate::base::signal::WaitCmp::Eq, _)) && current > expected {
            return format!(
                "the cell went past the expected value ({current} > {expected}); an Eq poll misses overshoot — use Ge"
            );
        }
        format!(
            "the cell holds {current} and nothing in flight will add the rest: a notify or credit that is never \
             sent (or returned) to it, or a poll for more than the producers give ({cmp} {expected})"
        )
    }
}

/// The value each write left in the cell, as far as the history tells (an AtomicAdd whose
/// previous value was not kept adds to 0 then).
fn running_values(writes: &[CellWrite]) -> Vec<i64> {
    let mut v = 0i64;
    writes
        .iter()
        .map(|w| {
            v = w_value(w, v);
            v
        })
        .collect()
}

/// The value `w` left in a cell holding `before`.
fn w_value(w: &CellWrite, before: i64) -> i64 {
    match w.op {
        CellWriteOp::Notify(NotifyOp::AtomicAdd) => i64::from((before as i32).wrapping_add(w.value as i32)),
        CellWriteOp::Notify(NotifyOp::Set) | CellWriteOp::Data(_) => w.value,
    }
}
