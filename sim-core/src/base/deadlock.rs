//! Deadlock reports: what every blocked core and pending task was waiting for when the run
//! could make no more progress.

use crate::base::signal::{Cond, NotifyOp};
use crate::base::time::SimTime;
use std::fmt;

/// What wrote a signal cell: a notify, or a data write (`store`, `put`, ...) whose bytes cover
/// the cell, named as the program API spells it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum CellWriteOp {
    /// A notify.
    Notify(NotifyOp),
    /// A data write.
    Data(&'static str),
}

/// The names a [`CellWriteOp::Data`] may carry: the program API's data writes (`OpKind::name`
/// of each; a test in `api/request.rs` holds the two lists together).
pub(crate) const DATA_WRITES: [&str; 12] = [
    "load",
    "remote_load",
    "store",
    "remote_store",
    "store_acc",
    "put",
    "get",
    "put_async",
    "get_async",
    "read_scalar",
    "write_scalar",
    "notify",
];

/// A report read back from another process of a split run names its data writes by the
/// static names above.
impl<'de> serde::Deserialize<'de> for CellWriteOp {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        enum Named {
            Notify(NotifyOp),
            Data(String),
        }
        Ok(match Named::deserialize(d)? {
            Named::Notify(op) => CellWriteOp::Notify(op),
            Named::Data(name) => match DATA_WRITES.iter().find(|&&n| n == name) {
                Some(n) => CellWriteOp::Data(n),
                None => return Err(serde::de::Error::custom(format!("`{name}` is not a data write"))),
            },
        })
    }
}

impl fmt::Display for CellWriteOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CellWriteOp::Notify(NotifyOp::AtomicAdd) => f.write_str("notify AtomicAdd"),
            CellWriteOp::Notify(NotifyOp::Set) => f.write_str("notify Set"),
            CellWriteOp::Data(name) => f.write_str(name),
        }
    }
}

/// One write to a signal cell, kept for reports.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CellWrite {
    /// Chip (world rank) of the writer.
    pub chip: usize,
    /// Block of the writing kernel.
    pub block: usize,
    /// Task of the writing kernel.
    pub task: String,
    /// What wrote it.
    pub op: CellWriteOp,
    /// The value notified (for notifies) or the value left in the cell (for stores).
    pub value: i64,
    /// When the write landed.
    pub time: SimTime,
}

/// A wait (blocking or deferred) that never became true.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BlockedWait {
    /// Chip (world rank) of the waiter.
    pub chip: usize,
    /// Dense rank in the signal's comm domain.
    pub domain_rank: usize,
    /// Block of the waiting kernel.
    pub block: usize,
    /// Task of the waiting kernel.
    pub task: String,
    /// Dispatch of the waiting kernel.
    pub dispatch: String,
    /// When the wait started.
    pub since: SimTime,
    /// Signal buffer name and the cell's coordinates in it.
    pub buffer: String,
    /// The cell's coordinates in `buffer`.
    pub coords: Vec<usize>,
    /// Byte offset of the cell inside the window.
    pub offset: usize,
    /// The cell's value when the run stopped.
    pub current: i64,
    /// What the wait needs.
    pub cond: Cond,
    /// Most recent writes to the cell, oldest first.
    pub last_writers: Vec<CellWrite>,
    /// Where the kernel called the wait (`src/kernel.rs:12:9`), when known: a thread kernel's
    /// `Core::wait` / `wait_all` / `defer_wait` record their caller.
    pub location: Option<String>,
}

/// A task that could not start or finish.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StuckTask {
    /// Chip (world rank) the task was dispatched to.
    pub chip: usize,
    /// Dispatch holding the task.
    pub dispatch: String,
    /// Name of the task.
    pub task: String,
    /// Blocks the task launches.
    pub blocks: usize,
    /// Why it is stuck (waiting on a dependency, on free cores, ...).
    pub reason: String,
}

/// Everything blocked at the moment the run stopped making progress.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DeadlockReport {
    /// Simulated time of the last event processed.
    pub time: SimTime,
    /// Blocking waits, by rank then block.
    pub waits: Vec<BlockedWait>,
    /// Deferred (`defer_wait`) conditions still false.
    pub deferred: Vec<BlockedWait>,
    /// Tasks that could not be placed or are waiting on tasks that never complete.
    pub stuck: Vec<StuckTask>,
}

impl fmt::Display for DeadlockReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "deadlock at {}: every live core is blocked and no event is pending ({} blocked wait(s), {} deferred condition(s), {} stuck task(s))",
            self.time,
            self.waits.len(),
            self.deferred.len(),
            self.stuck.len()
        )?;
        for w in &self.waits {
            write_wait(f, "waits", w)?;
        }
        for w in &self.deferred {
            write_wait(f, "defer_wait", w)?;
        }
        for s in &self.stuck {
            writeln!(
                f,
                "  rank {} dispatch `{}`: task `{}` ({} block(s)) {}",
                s.chip, s.dispatch, s.task, s.blocks, s.reason
            )?;
        }
        Ok(())
    }
}

fn write_wait(f: &mut fmt::Formatter<'_>, what: &str, w: &BlockedWait) -> fmt::Result {
    writeln!(
        f,
        "  rank {} (domain rank {}) block {} task `{}` dispatch `{}`: {what} since {} on {}{:?} (window byte {}): value {}, needs {} {}",
        w.chip,
        w.domain_rank,
        w.block,
        w.task,
        w.dispatch,
        w.since,
        w.buffer,
        w.coords,
        w.offset,
        w.current,
        w.cond.symbol(),
        w.cond.expected()
    )?;
    if let Some(at) = &w.location {
        writeln!(f, "      called at {at}")?;
    }
    if w.last_writers.is_empty() {
        writeln!(f, "      last writers: none (nobody ever wrote this cell)")?;
    } else {
        writeln!(f, "      last writers:")?;
        for c in &w.last_writers {
            writeln!(
                f,
                "        rank {} block {} task `{}`: {} {} at {}",
                c.chip, c.block, c.task, c.op, c.value, c.time
            )?;
        }
    }
    if let Some(hint) = hint(w) {
        writeln!(f, "      hint: {hint}")?;
    }
    Ok(())
}

impl BlockedWait {
    /// The cell's last write when it was a `Set` of a value an "at least" wait can never
    /// accept (PyPTO's `tag=0` with `Ge(1)`): the one rule behind the report's hint and the
    /// checker's useless-notify finding.
    pub fn useless_set(&self) -> Option<&CellWrite> {
        let last = self.last_writers.last()?;
        let set = last.op == CellWriteOp::Notify(NotifyOp::Set);
        (set && self.cond.is_at_least() && last.value < self.cond.expected()).then_some(last)
    }
}

/// A likely cause, when the history makes one obvious.
fn hint(w: &BlockedWait) -> Option<String> {
    let (cmp, expected) = (w.cond.symbol(), w.cond.expected());
    if let Some(last) = w.useless_set() {
        return Some(format!(
            "the last write was Set({}), which can never satisfy {cmp} {expected}; notify a value >= {expected} or use AtomicAdd",
            last.value
        ));
    }
    if matches!(w.cond, Cond::Signed(crate::base::signal::WaitCmp::Eq, _)) && w.current > expected {
        return Some(format!(
            "the cell went past the expected value ({} > {expected}); an Eq wait misses overshoot — use Ge",
            w.current
        ));
    }
    None
}
