//! What the protocol checker reports: findings, each naming the operations involved.

use super::shadow::Access;
use crate::base::time::SimTime;
use std::fmt;

/// The kinds of protocol bug the checker finds (reference §6).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FindingKind {
    /// Two accesses to the same bytes, at least one a write, not ordered by any notify->wait,
    /// task dependency or dispatch boundary (§6 #6, #7).
    DataRace,
    /// A read ordered after a write that had not landed yet: a notify overtook its payload
    /// (§2.10). A `fence` before the notify fixes it.
    StaleRead,
    /// Two `Set` notifies to one cell, not ordered with each other (§6 #2).
    ConcurrentSet,
    /// `Set` and `AtomicAdd` (or a plain store) on one cell, not ordered (§6 #2).
    SetMixedWithAdd,
    /// The cell jumped over the value an `Eq` wait expected (§6 #3).
    EqSkipped,
    /// A notify that cannot change its cell, or cannot satisfy its waiter (§6 #4).
    UselessNotify,
    /// A signal cell declared self-clearing was not zero when the run ended (§6 #16).
    CreditsLeft,
    /// A wait satisfied by credits an earlier wait had already consumed: the signal was
    /// reused without a reset (§6 #5, #18).
    StaleCredit,
    /// One notify call site fired from both lanes of one block (§6 #15).
    DuplicateNotify,
    /// The run could make no more progress (§6 #1, #19).
    Deadlock,
    /// Every running core polled cells that nothing in flight could change: the run could
    /// only spin.
    Livelock,
}

impl FindingKind {
    /// Every kind, in report order.
    pub const ALL: [FindingKind; 11] = [
        FindingKind::DataRace,
        FindingKind::StaleRead,
        FindingKind::ConcurrentSet,
        FindingKind::SetMixedWithAdd,
        FindingKind::EqSkipped,
        FindingKind::UselessNotify,
        FindingKind::CreditsLeft,
        FindingKind::StaleCredit,
        FindingKind::DuplicateNotify,
        FindingKind::Deadlock,
        FindingKind::Livelock,
    ];

    /// The kind's name in reports and JSON (`data-race`, `stale-read`, ...).
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::DataRace => "data-race",
            FindingKind::StaleRead => "stale-read",
            FindingKind::ConcurrentSet => "concurrent-set",
            FindingKind::SetMixedWithAdd => "set-mixed-with-add",
            FindingKind::EqSkipped => "eq-skipped",
            FindingKind::UselessNotify => "useless-notify",
            FindingKind::CreditsLeft => "credits-left",
            FindingKind::StaleCredit => "stale-credit",
            FindingKind::DuplicateNotify => "duplicate-notify",
            FindingKind::Deadlock => "deadlock",
            FindingKind::Livelock => "livelock",
        }
    }
}

impl fmt::Display for FindingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One operation a finding involves (where and when it ran; not [`crate::Site`], which names
/// only a block for error messages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FindingSite {
    /// World rank of the chip that issued it.
    pub rank: usize,
    /// Block index of the kernel within its task.
    pub block: usize,
    /// Name of the task.
    pub task: String,
    /// Name of the dispatch.
    pub dispatch: String,
    /// `load`, `remote_store`, `put`, `notify Set`, `wait`, ...
    pub op: String,
    /// Buffer, and where in it: `data[0..256]` (flat elements) or `signal[2, 0]` (a cell).
    pub target: String,
    /// When it was issued.
    pub time: SimTime,
    /// The source location of the call, when known (`src/kernel.rs:12:9`).
    pub location: Option<String>,
}

impl fmt::Display for FindingSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} on `{}` by rank {} block {} (task `{}`, dispatch `{}`) at {}",
            self.op, self.target, self.rank, self.block, self.task, self.dispatch, self.time
        )?;
        if let Some(l) = &self.location {
            write!(f, " [{l}]")?;
        }
        Ok(())
    }
}

/// One protocol bug.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// What kind of protocol bug it is.
    pub kind: FindingKind,
    /// When it was detected.
    pub time: SimTime,
    /// The rank whose memory or signal it concerns.
    pub rank: usize,
    /// What is wrong and what to change.
    pub message: String,
    /// The operations involved, earliest first.
    pub sites: Vec<FindingSite>,
    /// How many times the same bug (same kind, buffer and operations) was seen in the run.
    pub count: usize,
    /// The jitter seed of the run that found it (`None`: the unperturbed run).
    pub seed: Option<u64>,
}

impl Finding {
    /// Identity for de-duplication across occurrences and seeds: kind, rank and message
    /// (messages name buffers and operations but not times).
    pub fn key(&self) -> (FindingKind, usize, &str) {
        (self.kind, self.rank, &self.message)
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] rank {} at {}: {}", self.kind, self.rank, self.time, self.message)?;
        if self.count > 1 {
            write!(f, " ({} times)", self.count)?;
        }
        match self.seed {
            Some(s) => write!(f, " (seed {s})")?,
            None => write!(f, " (unperturbed run)")?,
        }
        for s in &self.sites {
            write!(f, "\n    {s}")?;
        }
        Ok(())
    }
}

/// A finding site from an access over bytes `[lo, hi)` of its buffer.
pub(super) fn site(a: &Access, lo: usize, hi: usize) -> FindingSite {
    let es = a.view.esize.max(1);
    let (first, last) = (lo.saturating_sub(a.view.base) / es, (hi.saturating_sub(a.view.base)).div_ceil(es));
    site_on(a, format!("{}[{first}..{last}]", a.view.buffer))
}

/// A finding site from an access to `target` (a buffer range or a signal cell).
pub(super) fn site_on(a: &Access, target: String) -> FindingSite {
    FindingSite {
        rank: a.who.rank,
        block: a.who.block,
        task: a.who.task.to_string(),
        dispatch: a.who.dispatch.to_string(),
        op: a.op.to_string(),
        target,
        time: a.time,
        location: a.location.map(|l| l.to_string()),
    }
}
