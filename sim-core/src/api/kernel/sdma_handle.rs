//! The handles of SDMA transfers: what a kernel passes to `put_async` / `get_async`
//! ([`SdmaOpts`]), what it gets back and must wait ([`SdmaHandle`]), and a core's open
//! transfers ([`SdmaState`]). The operations themselves are in `ops/sdma.rs`.

use crate::base::signal::AtomicType;
use std::collections::BTreeSet;
use std::panic::Location;
use std::sync::Arc;

/// Options of `put_async` and `get_async`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SdmaOpts {
    pub(super) region: Option<(Vec<usize>, Vec<usize>, Vec<usize>)>,
    pub(super) channel: Option<usize>,
    pub(super) atomic: AtomicType,
    pub(super) block_bytes: Option<u64>,
    pub(super) queues: Option<usize>,
}

impl SdmaOpts {
    /// Copy the whole tensor (shapes must match) on the block's default channel.
    pub fn new() -> SdmaOpts {
        SdmaOpts::default()
    }

    /// Copy the sub-region `shape` from `src_offsets` in the source to `dst_offsets` in the
    /// destination.
    pub fn region(mut self, dst_offsets: &[usize], src_offsets: &[usize], shape: &[usize]) -> SdmaOpts {
        self.region = Some((dst_offsets.to_vec(), src_offsets.to_vec(), shape.to_vec()));
        self
    }

    /// Use SDMA channel `channel` instead of `(block_idx * queues) % channels` (the first of
    /// the transfer's channels, when it has several queues).
    pub fn channel(mut self, channel: usize) -> SdmaOpts {
        self.channel = Some(channel);
        self
    }

    /// Cut the transfer into descriptors of at most `bytes` (pto-isa's per-session
    /// `block_bytes`, one SQE each) instead of `chip.sdma.max_descriptor_bytes`; at least one
    /// element, at most that chip limit.
    pub fn block_bytes(mut self, bytes: u64) -> SdmaOpts {
        self.block_bytes = Some(bytes);
        self
    }

    /// Stripe the descriptors over `queues` channels, descriptor `k` on the `k % queues`-th
    /// (pto-isa's `queue_num`: one post spread over several queues, which run in parallel);
    /// the channels are consecutive from the first, wrapping at `chip.sdma.channels`.
    pub fn queues(mut self, queues: usize) -> SdmaOpts {
        self.queues = Some(queues);
        self
    }

    /// Reduce into the destination while copying (`AtomicType::Add`: SDMA's inline reduce,
    /// for the dtypes the chip's atomic add supports); puts only.
    pub fn atomic(mut self, atomic: AtomicType) -> SdmaOpts {
        self.atomic = atomic;
        self
    }
}

/// A posted SDMA transfer. Not `Clone`: [`Ops::wait_async`](crate::Ops::wait_async) consumes it, so it is waited once.
///
/// ```compile_fail
/// # use sim_core::{Core, SdmaHandle, SimResult};
/// fn twice(core: &mut Core, h: SdmaHandle) -> SimResult<()> {
///     core.wait_async(h)?;
///     core.wait_async(h) // the handle was moved into the first wait
/// }
/// ```
///
/// ```compile_fail
/// # use sim_core::SdmaHandle;
/// fn copy(h: &SdmaHandle) -> SdmaHandle {
///     h.clone() // SdmaHandle is not Clone
/// }
/// ```
#[must_use = "an SDMA transfer must be waited with wait_async"]
#[derive(Debug)]
pub struct SdmaHandle {
    pub(super) id: u64,
    pub(super) owner: Arc<()>,
    pub(super) op: &'static str,
    pub(super) channel: usize,
    pub(super) queues: usize,
    pub(super) bytes: usize,
    pub(super) caller: &'static Location<'static>,
}

impl SdmaHandle {
    /// The channel the transfer runs on (the first, when it is striped over several).
    pub fn channel(&self) -> usize {
        self.channel
    }

    /// How many channels its descriptors are striped over.
    pub fn queues(&self) -> usize {
        self.queues
    }

    /// Bytes the transfer moves.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    pub(super) fn name(&self) -> String {
        let on = match self.queues {
            1 => format!("channel {}", self.channel),
            q => format!("{q} channels from {}", self.channel),
        };
        format!(
            "handle #{} ({} of {} bytes on {on}, issued at {}:{})",
            self.id,
            self.op,
            self.bytes,
            self.caller.file(),
            self.caller.line()
        )
    }
}

/// A core's SDMA transfers not yet waited.
#[derive(Debug, Default)]
pub(crate) struct SdmaState {
    pub(super) owner: Arc<()>,
    pub(super) next: u64,
    pub(super) open: BTreeSet<u64>,
    /// (id, description) of the open handles, for the error when a block ends with them.
    pub(super) names: Vec<(u64, String)>,
}
