//! A run's timeline, recorded when [`RunOptions::trace`](crate::RunOptions) is on: one span per
//! operation of every core, the notify-to-wait and write-to-notify causality between them,
//! the busy intervals of every fabric link, and each dispatch. The engine records it; the
//! `ranksim` facade renders it (Chrome trace-event JSON for Perfetto).

use crate::base::time::SimTime;

/// One operation of one core.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpSpan {
    /// Unique within the run; flows refer to it.
    pub id: u64,
    /// World rank of the chip.
    pub chip: usize,
    /// AIV core index on the chip.
    pub core: usize,
    /// `load`, `store`, `remote_load`, `notify`, `wait`, `put`, `compute`, `vector`, ...
    pub name: &'static str,
    /// When the operation was issued.
    pub start: SimTime,
    /// When it completed.
    pub end: SimTime,
    /// Payload bytes moved (0 for signals and compute).
    pub bytes: u64,
    /// The chip on the other side, for remote operations.
    pub peer: Option<usize>,
}

/// Why two operations are linked.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FlowKind {
    /// A remote write (store or put) followed by the writer's notify.
    WriteThenNotify,
    /// A notify whose landing released a wait.
    NotifyToWait,
}

/// A causal arrow from one operation to another.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Flow {
    /// The [`OpSpan::id`] the arrow starts at.
    pub from: u64,
    /// The [`OpSpan::id`] the arrow ends at.
    pub to: u64,
    /// Why the two are linked.
    pub kind: FlowKind,
}

/// A network resource (link, port, HBM, DMA engine) busy serialising one packet.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LinkBusy {
    /// The resource's name (`link 0->1`, `hbm 3`, ...).
    pub resource: String,
    /// The rank whose timeline shows it.
    pub chip: usize,
    /// When the resource started on the packet.
    pub start: SimTime,
    /// When it finished.
    pub end: SimTime,
    /// Bytes of the packet.
    pub bytes: u64,
}

/// A dispatch on a chip, for the timeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DispatchSpan {
    /// World rank of the chip.
    pub chip: usize,
    /// Name of the dispatch.
    pub name: String,
    /// When it was launched.
    pub start: SimTime,
    /// When its last task completed.
    pub end: SimTime,
}

/// A point event on a rank's timeline: a checker finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    /// World rank of the chip.
    pub chip: usize,
    /// When the finding was detected.
    pub time: SimTime,
    /// Short name (the finding kind).
    pub name: String,
    /// The full text.
    pub detail: String,
}

/// Everything recorded about one run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    /// Every operation of every core.
    pub ops: Vec<OpSpan>,
    /// Causal arrows between operations.
    pub flows: Vec<Flow>,
    /// Busy intervals of network resources.
    pub links: Vec<LinkBusy>,
    /// Dispatches per chip.
    pub dispatches: Vec<DispatchSpan>,
    /// Checker findings, when the run was checked.
    pub marks: Vec<Mark>,
}
