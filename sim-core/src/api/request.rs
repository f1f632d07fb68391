//! The one interface into the scheduler: requests stamped with an actor's local time, the
//! replies that release blocked actors, and the task facts a block reads. The program API
//! (`api/kernel`) sends them and the engine applies them; a synchronous kernel (coroutine or
//! thread) and a kernel polled as a future by the driver send the same requests (see `api/kernel/uplink.rs`). This module
//! sits below both, so neither reaches into the other.

use crate::base::addr::{Caller, CellRef, Cells, Place};
use crate::base::dtype::DType;
use crate::base::error::{SimError, Site};
use crate::base::payload::Payload;
use crate::base::signal::{NotifyOp, WaitCmp};
use crate::base::tensor::DomainInfo;
use crate::base::time::SimTime;
use std::fmt;
use std::sync::Arc;

/// What a core's memory or signal operation is. Requests and events carry it typed; its
/// [`OpKind::name`] is the operation's name in the program API, which checker findings, traces
/// and deadlock reports print.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub(crate) enum OpKind {
    /// `load` (also the AIC's `load_l1`): a read of local GM or the own window.
    Load,
    /// `remote_load`: a read of a peer's window.
    RemoteLoad,
    /// `store`: a tile written to local GM or the own window.
    Store,
    /// `remote_store`: a tile written to a peer's window.
    RemoteStore,
    /// `store_acc`: the AIC's fixpipe store of an accumulator.
    StoreAcc,
    /// `put`: a chunked copy to a peer, staged through UB.
    Put,
    /// `get`: a chunked copy from a peer, staged through UB.
    Get,
    /// `put_async`: an SDMA transfer to a peer.
    PutAsync,
    /// `get_async`: an SDMA transfer from a peer.
    GetAsync,
    /// `read_scalar`: the scalar unit reads one element.
    ReadScalar,
    /// `write_scalar`: the scalar unit writes one element.
    WriteScalar,
    /// `notify`: a change of a signal cell.
    Notify,
    /// `wait`: blocking until signal cells satisfy a condition.
    Wait,
    /// `test`: one poll of signal cells (TTEST).
    Test,
    /// `defer_wait`: conditions registered for the task.
    DeferWait,
    /// `fence`: blocking until the core's writes have landed.
    Fence,
    /// `test_async`: one poll of an SDMA transfer.
    TestAsync,
    /// `wait_async`: blocking until an SDMA transfer has completed.
    WaitAsync,
}

impl OpKind {
    /// The operation's name as the program API spells it (outputs print exactly this).
    pub(crate) fn name(self) -> &'static str {
        match self {
            OpKind::Load => "load",
            OpKind::RemoteLoad => "remote_load",
            OpKind::Store => "store",
            OpKind::RemoteStore => "remote_store",
            OpKind::StoreAcc => "store_acc",
            OpKind::Put => "put",
            OpKind::Get => "get",
            OpKind::PutAsync => "put_async",
            OpKind::GetAsync => "get_async",
            OpKind::ReadScalar => "read_scalar",
            OpKind::WriteScalar => "write_scalar",
            OpKind::Notify => "notify",
            OpKind::Wait => "wait",
            OpKind::Test => "test",
            OpKind::DeferWait => "defer_wait",
            OpKind::Fence => "fence",
            OpKind::TestAsync => "test_async",
            OpKind::WaitAsync => "wait_async",
        }
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A put or get: chunks staged through UB, each read from `src` and written to `dst`.
#[derive(Clone, Debug)]
pub(crate) struct CopySpec {
    /// Per chunk: (source place, destination place).
    pub(crate) chunks: Vec<(Place, Place)>,
    pub(crate) pipeline: bool,
    /// `Some(dtype)` for an atomic-add destination.
    pub(crate) atomic: Option<DType>,
    pub(crate) op: OpKind,
    pub(crate) caller: Caller,
}

/// An SDMA transfer (`put_async` / `get_async`): descriptors run in order on one channel.
#[derive(Clone, Debug)]
pub(crate) struct SdmaSpec {
    /// The transfer's number on its core (the handle's id).
    pub(crate) id: u64,
    /// The first channel; descriptor `k` runs on `(channel + k % queues) % channels`.
    pub(crate) channel: usize,
    /// How many consecutive channels the descriptors are striped over (at least 1).
    pub(crate) queues: usize,
    /// Per descriptor: (source place, destination place).
    pub(crate) descs: Vec<(Place, Place)>,
    /// A get: each descriptor first sends a request to the source's chip.
    pub(crate) get: bool,
    /// `Some(dtype)`: add into the destination (inline reduce) instead of overwriting.
    pub(crate) atomic: Option<DType>,
    pub(crate) op: OpKind,
    pub(crate) caller: Caller,
}

/// What an actor asks the scheduler to do at its local time.
#[derive(Debug)]
pub(crate) enum Request {
    /// Read a region (local or a peer's) into a tile; its DMA starts no earlier than `start`.
    /// Blocking without a ticket; with one it is posted and its bytes are kept for a later
    /// [`Request::Collect`] (an asynchronous load on the MTE2 pipe).
    Read { src: Place, caller: Caller, start: SimTime, ticket: Option<u64> },
    /// Blocking: the bytes of the posted read `ticket`, once they have arrived.
    Collect { ticket: u64 },
    /// Posted: write bytes (a tile's valid part) to a region, plainly or as an atomic add; its
    /// DMA starts no earlier than `start` (when the MTE3 pipe and the tile are ready).
    Write { dst: Place, data: Payload, atomic: Option<DType>, op: OpKind, caller: Caller, start: SimTime },
    /// Blocking: one element of local GM read by the scalar unit (no DMA).
    ScalarRead { src: Place, caller: Caller },
    /// Posted: one element of local GM written by the scalar unit (no DMA).
    ScalarWrite { dst: Place, data: Vec<u8>, caller: Caller },
    /// Blocking: a chunked put or get.
    Copy(CopySpec),
    /// Posted: change one signal cell.
    Notify { cell: CellRef, value: i32, op: NotifyOp, caller: Caller },
    /// Blocking: until every cell satisfies `cmp expected`.
    Wait { cells: Cells, expected: i32, cmp: WaitCmp, caller: Caller },
    /// Blocking for one poll: whether every cell satisfies `cmp expected` now (TTEST). The
    /// scheduler keeps the cells as the core's polled ones, for [`Request::Retest`].
    Test { cells: Cells, expected: i32, cmp: WaitCmp, caller: Caller },
    /// [`Request::Test`] of the cells the core tested last, again: a polling loop names its
    /// cell once, and each further poll takes the scheduler's short path for tests.
    Retest { expected: i32, cmp: WaitCmp },
    /// Blocking: until every write and notify this core issued before has landed.
    Fence,
    /// Posted: these cells of a self-clearing signal must read zero when the run ends (checked
    /// runs only).
    ExpectClear { cells: Cells },
    /// Blocking (briefly): register deferred conditions `cell as u32 >= expected` for the
    /// actor's task; the kernel ends right after.
    DeferWait { conds: Vec<(CellRef, u32)>, caller: Caller },
    /// Posted, traced runs only: the core did local work (compute, vector math) from `start`
    /// until `end` (`start` is later than the request's time when a pipe was busy).
    Note { name: &'static str, start: SimTime, end: SimTime },
    /// Posted: the actor's block has finished (or failed).
    Finish { result: Result<(), SimError> },
    /// Posted: an SDMA transfer; the channel takes it at the request's `resume` time.
    Sdma(SdmaSpec),
    /// Blocking (briefly): whether SDMA transfer `id` of the actor has completed.
    SdmaTest { id: u64 },
    /// Blocking: until SDMA transfer `id` of the actor has completed.
    SdmaWait { id: u64 },
}

impl Request {
    /// Whether the sender waits for a reply.
    pub(crate) fn is_blocking(&self) -> bool {
        matches!(
            self,
            Request::Read { ticket: None, .. }
                | Request::Collect { .. }
                | Request::ScalarRead { .. }
                | Request::Copy(_)
                | Request::Wait { .. }
                | Request::Test { .. }
                | Request::Retest { .. }
                | Request::DeferWait { .. }
                | Request::Fence
                | Request::SdmaTest { .. }
                | Request::SdmaWait { .. }
        )
    }
}

/// The scheduler's answer to a blocking request.
#[derive(Debug)]
pub(crate) enum Reply {
    /// Bytes read (row-major, the region's runs concatenated).
    Data(Payload),
    /// The operation completed.
    Done,
    /// A yes/no answer: a signal test or an SDMA completion poll.
    Flag(bool),
    /// The operation was refused (boxed: rare, and a reply moves several times).
    Err(Box<SimError>),
}

/// Facts about a task that its blocks can read.
#[derive(Debug)]
pub(crate) struct TaskCtx {
    pub(crate) chip: usize,
    pub(crate) task: Arc<str>,
    pub(crate) blocks: usize,
    /// Lanes (cores) per block.
    pub(crate) lanes: usize,
    pub(crate) world_size: usize,
    pub(crate) domain: Option<Arc<DomainInfo>>,
    /// The run records a timeline: local work is reported with `Request::Note`.
    pub(crate) trace: bool,
    /// The blocks run on AIC (cube) cores.
    pub(crate) cube: bool,
}

impl TaskCtx {
    pub(crate) fn site(&self, block: usize) -> Site {
        Site { chip: self.chip, block, task: self.task.to_string() }
    }
}

impl Request {
    /// The request's name, for errors.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Request::Read { .. } => "read",
            Request::Collect { .. } => "collect",
            Request::Write { op, .. } => op.name(),
            Request::ScalarRead { .. } => "scalar read",
            Request::ScalarWrite { .. } => "scalar write",
            Request::Copy(_) => "put/get",
            Request::Notify { .. } => "notify",
            Request::Wait { .. } => "wait",
            Request::Test { .. } | Request::Retest { .. } => "test",
            Request::Fence => "fence",
            Request::ExpectClear { .. } => "expect_clear",
            Request::DeferWait { .. } => "defer_wait",
            Request::Note { name, .. } => name,
            Request::Finish { .. } => "the block's end",
            Request::Sdma(_) => "SDMA transfer",
            Request::SdmaTest { .. } => "test_async",
            Request::SdmaWait { .. } => "wait_async",
        }
    }

    /// Where the kernel called it, when the request records it.
    pub(crate) fn caller(&self) -> Caller {
        match self {
            Request::Read { caller, .. }
            | Request::Write { caller, .. }
            | Request::ScalarRead { caller, .. }
            | Request::ScalarWrite { caller, .. }
            | Request::Notify { caller, .. }
            | Request::Wait { caller, .. }
            | Request::Test { caller, .. }
            | Request::DeferWait { caller, .. } => *caller,
            Request::Copy(spec) => spec.caller,
            Request::Sdma(spec) => spec.caller,
            _ => None,
        }
    }

    /// Whether applying it changes nothing any core could see later (a poll, a scalar read, a
    /// trace note): what a spinning machine still does (see the engine's livelock rule).
    pub(crate) fn is_quiet(&self) -> bool {
        matches!(
            self,
            Request::Test { .. }
                | Request::Retest { .. }
                | Request::ScalarRead { .. }
                | Request::Note { .. }
                | Request::ExpectClear { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::OpKind;
    use crate::base::deadlock::DATA_WRITES;

    /// Every operation but the waits, tests and fences can write a cell's bytes: the list a
    /// deadlock report read back from another process names them by holds each.
    #[test]
    fn every_writing_operation_is_named_in_the_list_of_data_writes() {
        use OpKind::*;
        let writes = [
            Load,
            RemoteLoad,
            Store,
            RemoteStore,
            StoreAcc,
            Put,
            Get,
            PutAsync,
            GetAsync,
            ReadScalar,
            WriteScalar,
            Notify,
        ];
        assert_eq!(writes.map(OpKind::name), DATA_WRITES);
    }
}
