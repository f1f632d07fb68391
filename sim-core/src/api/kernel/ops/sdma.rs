//! `put_async` / `get_async` / `test_async` / `wait_async`: copies by the chip's SDMA engines
//! (`[chip.sdma]`), GM to GM without UB (pto-isa's TPUT_ASYNC / TGET_ASYNC). Posting costs the
//! core `chip.sdma.issue_ns`; the transfer then runs on one channel (block index modulo the
//! channels, or [`SdmaOpts::channel`]) while the core goes on. Every handle must be waited:
//! a block that ends with a transfer it never waited fails.

use super::Ops;
use crate::api::kernel::copy::{CopyOpts, chunk_places};
use crate::api::kernel::sdma_handle::{SdmaHandle, SdmaOpts};
use crate::api::request::{OpKind, Reply, Request, SdmaSpec};
use crate::base::dtype::DType;
use crate::base::error::SimResult;
use crate::base::signal::AtomicType;
use crate::base::tensor::Tensor;
use std::panic::Location;
use std::sync::Arc;

impl Ops {
    /// Copies local `src` into `peer`'s window `dst` with an SDMA engine (TPUT_ASYNC): no UB,
    /// posted. The core pays `chip.sdma.issue_ns`; the bytes are read when the channel reaches
    /// each descriptor and land when it delivers them. A notify issued before
    /// [`Ops::wait_async`] may overtake them: wait first, then notify.
    #[track_caller]
    pub fn put_async(&mut self, dst: &Tensor, peer: usize, src: &Tensor, opts: &SdmaOpts) -> SimResult<SdmaHandle> {
        let caller = self.caller.take().unwrap_or(Location::caller());
        self.sdma_post(OpKind::PutAsync, (dst, Some(peer)), (src, None), opts, caller)
    }

    /// Copies `peer`'s window `src` into local `dst` with an SDMA engine (TGET_ASYNC): a
    /// request to the peer, then the data back through this chip's channel. Posted.
    #[track_caller]
    pub fn get_async(&mut self, dst: &Tensor, peer: usize, src: &Tensor, opts: &SdmaOpts) -> SimResult<SdmaHandle> {
        let caller = self.caller.take().unwrap_or(Location::caller());
        self.sdma_post(OpKind::GetAsync, (dst, None), (src, Some(peer)), opts, caller)
    }

    /// Whether the transfer has completed (one completion poll, `chip.sdma.poll_ns`). A true
    /// answer orders what follows after the transfer, as `wait_async` does.
    pub async fn test_async(&mut self, handle: &SdmaHandle) -> SimResult<bool> {
        self.live("test_async")?;
        self.sdma_owned("test_async", handle)?;
        match self.call(Request::SdmaTest { id: handle.id }).await? {
            Reply::Flag(done) => Ok(done),
            _ => self.bad("test_async", "the scheduler answered a poll without a flag".into()),
        }
    }

    /// Resolves one completion poll after the transfer has completed (every byte landed).
    pub async fn wait_async(&mut self, handle: SdmaHandle) -> SimResult<()> {
        self.live("wait_async")?;
        self.sdma_owned("wait_async", &handle)?;
        self.sdma.open.remove(&handle.id);
        self.sdma.names.retain(|(id, _)| *id != handle.id);
        self.call(Request::SdmaWait { id: handle.id }).await.map(|_| ())
    }

    /// Waits for `handle` and for every transfer this block posted before it and has not
    /// waited, and closes them all: pto-isa's wait on a session's latest event, whose
    /// completion covers the session's earlier posts. Costs one completion poll per transfer
    /// it closes, in the order they were posted.
    pub async fn wait_async_through(&mut self, handle: SdmaHandle) -> SimResult<()> {
        self.live("wait_async_through")?;
        self.sdma_owned("wait_async_through", &handle)?;
        let ids: Vec<u64> = self.sdma.open.range(..=handle.id).copied().collect();
        for id in ids {
            self.sdma.open.remove(&id);
            self.sdma.names.retain(|(i, _)| *i != id);
            self.call(Request::SdmaWait { id }).await?;
        }
        Ok(())
    }

    /// The channels a transfer is striped over (`SdmaOpts::queues`, default 1), checked
    /// against the chip's `channels`.
    fn queue_count(&mut self, op: &'static str, o: &SdmaOpts, channels: usize) -> SimResult<usize> {
        match o.queues.unwrap_or(1) {
            q if (1..=channels).contains(&q) => Ok(q),
            q => {
                let msg =
                    format!("queues({q}): a transfer is striped over 1..={channels} channels (chip.sdma.channels)");
                self.bad(op, msg)
            }
        }
    }

    /// The most bytes one descriptor holds (`SdmaOpts::block_bytes`, default the chip's
    /// `limit`), checked to hold one `dtype` element and not to pass the limit.
    fn descriptor_bytes(&mut self, op: &'static str, o: &SdmaOpts, limit: u64, dtype: DType) -> SimResult<u64> {
        let es = dtype.size() as u64;
        match o.block_bytes {
            None => Ok(limit),
            Some(b) if (es..=limit).contains(&b) => Ok(b),
            Some(b) => {
                let msg = format!(
                    "block_bytes({b}): a descriptor holds {es}..={limit} bytes (one {dtype} element up to chip.sdma.max_descriptor_bytes)"
                );
                self.bad(op, msg)
            }
        }
    }

    fn sdma_owned(&mut self, op: &'static str, h: &SdmaHandle) -> SimResult<()> {
        if !Arc::ptr_eq(&h.owner, &self.sdma.owner) {
            let msg = format!(
                "{} belongs to another core or block; a transfer is tested and waited by the block that posted it",
                h.name()
            );
            return self.bad(op, msg);
        }
        if !self.sdma.open.contains(&h.id) {
            return self.bad(op, format!("{} was already waited", h.name()));
        }
        Ok(())
    }

    fn sdma_post(
        &mut self,
        kind: OpKind,
        dst: (&Tensor, Option<usize>),
        src: (&Tensor, Option<usize>),
        o: &SdmaOpts,
        caller: &'static Location<'static>,
    ) -> SimResult<SdmaHandle> {
        let op = kind.name();
        self.live(op)?;
        let Some(p) = self.chip.sdma().cloned() else {
            let msg = "this chip has no SDMA engines: add a [chip.sdma] table to the machine config (keys channels, \
                       channel_gbps, issue_ns, descriptor_ns, max_descriptor_bytes, queue_depth, poll_ns, cold_start_ns)";
            return self.bad(op, msg.into());
        };
        let queues = self.queue_count(op, o, p.channels)?;
        let channel = o.channel.unwrap_or((self.block * queues) % p.channels);
        if channel >= p.channels {
            let msg = format!(
                "channel {channel} is out of range: the chip has {} SDMA channels (chip.sdma.channels), valid 0..={}",
                p.channels,
                p.channels - 1
            );
            return self.bad(op, msg);
        }
        if src.1.is_some() && o.atomic != AtomicType::None {
            return self.bad(op, "inline reduce (atomic) is only available on put_async; pass AtomicType::None".into());
        }
        let atomic = self.atomic_dtype(op, o.atomic, dst.0)?;
        let dst_loc = self.locate(op, dst.0, dst.1)?;
        let src_loc = self.locate(op, src.0, src.1)?;
        let es = dst.0.dtype().size() as u64;
        let max = self.descriptor_bytes(op, o, p.max_descriptor_bytes, dst.0.dtype())?;
        // Descriptors of at most `max` bytes: whole rows when a row fits, else parts of one
        // row (at least one element each).
        let shape = o.region.as_ref().map_or_else(|| dst.0.shape().to_vec(), |r| r.2.clone());
        let cols = shape.last().copied().unwrap_or(1) as u64;
        let (cr, cc) =
            if cols * es <= max { ((max / (cols * es).max(1)) as usize, 0) } else { (1, (max / es).max(1) as usize) };
        let mut copy = CopyOpts::new().chunks(cr, cc);
        if let Some((d, s, sh)) = &o.region {
            copy = copy.region(d, s, sh);
        }
        let descs = match chunk_places(op, (dst.0, dst_loc), (src.0, src_loc), &copy, usize::MAX) {
            Ok(c) => c,
            Err(msg) => return self.bad(op, msg),
        };
        let per_channel = descs.len().div_ceil(queues);
        if per_channel > p.queue_depth {
            let msg = format!(
                "the transfer needs {} descriptors of at most {max} bytes ({}) ({per_channel} on each of its {queues} \
                 channel(s)) but a channel holds {} (chip.sdma.queue_depth); split it, stripe it over more queues or \
                 raise chip.sdma.queue_depth",
                descs.len(),
                if o.block_bytes.is_some() { "SdmaOpts::block_bytes" } else { "chip.sdma.max_descriptor_bytes" },
                p.queue_depth
            );
            return self.bad(op, msg);
        }
        let bytes: usize = descs.iter().map(|d| d.0.region.bytes()).sum();
        let id = self.sdma.next;
        self.sdma.next += 1;
        let handle = SdmaHandle { id, owner: self.sdma.owner.clone(), op, channel, queues, bytes, caller };
        self.sdma.open.insert(id);
        self.sdma.names.push((id, handle.name()));
        let spec =
            SdmaSpec { id, channel, queues, descs, get: src.1.is_some(), atomic, op: kind, caller: Some(caller) };
        let at = self.clock;
        self.clock += p.issue;
        self.link.post(at, self.clock, Request::Sdma(spec));
        Ok(handle)
    }

    /// A block ending with transfers it never waited fails, naming them.
    pub(crate) fn sdma_finish(&mut self) -> Option<String> {
        let names: Vec<&str> = self.sdma.names.iter().map(|(_, n)| n.as_str()).collect();
        (!names.is_empty()).then(|| {
            format!(
                "the block ended with SDMA transfers it never waited: {}; call wait_async on each",
                names.join(", ")
            )
        })
    }
}
