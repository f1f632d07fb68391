//! put / get: a transfer staged through UB in chunks. Each chunk is loaded (MTE2, from local
//! GM or a peer) and then stored (MTE3, to local GM or a peer). Without `pipeline` a chunk's
//! load waits for the previous store to finish (one staging tile); with `pipeline` two tiles
//! ping-pong, so the load of chunk i+1 overlaps the store of chunk i.

use super::Engine;
use super::event::{Event, Key};
use super::request::{CopySpec, Reply};
use crate::model::{DmaDir, TransferKind};
use crate::time::SimTime;

/// The progress of one put/get.
#[derive(Debug)]
pub(crate) struct CopyJob {
    actor: usize,
    spec: CopySpec,
    /// Chunk being moved.
    i: usize,
    /// When the MTE3 (store) engine is free again.
    mte3_free: SimTime,
    /// The loaded chunk waiting for its store.
    staged: Vec<u8>,
}

impl Engine {
    pub(super) fn start_copy(&mut self, key: Key, actor: usize, spec: CopySpec) {
        if spec.chunks.is_empty() {
            self.reply(actor, key.time, Reply::Done);
            return;
        }
        let job = CopyJob { actor, spec, i: 0, mte3_free: key.time, staged: Vec::new() };
        let id = match self.copies.iter().position(Option::is_none) {
            Some(id) => {
                self.copies[id] = Some(job);
                id
            }
            None => {
                self.copies.push(Some(job));
                self.copies.len() - 1
            }
        };
        self.push_derived(key.time, key, Event::CopyLoad { job: id });
    }

    pub(super) fn copy_load(&mut self, key: Key, id: usize) {
        let Some(job) = self.copies[id].as_ref() else {
            return;
        };
        let actor = job.actor;
        let src = job.spec.chunks[job.i].0.clone();
        let me = self.chip_of(actor);
        self.traffic[me].read(src.chip != me, src.region.bytes());
        if src.chip == me {
            let data = self.mem.read(&src);
            let end = key.time + self.chip.dma(DmaDir::GmToUb, data.len() as u64);
            self.staged(key, id, data, end);
        } else {
            let issue = key.time + self.chip.dma_issue(DmaDir::GmToUb);
            let tt = self.fabric_transfer(me, src.chip, actor, 0, issue, DmaDir::GmToUb, TransferKind::ReadRequest);
            self.push_derived(tt.arrival, key, Event::CopyRemoteRead { job: id });
        }
    }

    pub(super) fn copy_remote_read(&mut self, key: Key, id: usize) {
        let Some(job) = self.copies[id].as_ref() else {
            return;
        };
        let actor = job.actor;
        let src = job.spec.chunks[job.i].0.clone();
        let data = self.mem.read(&src);
        let me = self.chip_of(actor);
        let tt = self.fabric_transfer(src.chip, me, actor, data.len(), key.time, DmaDir::GmToUb, TransferKind::Data);
        self.staged(key, id, data, tt.arrival);
    }

    /// A chunk is in UB at `loaded`: its store starts once MTE3 is free.
    fn staged(&mut self, key: Key, id: usize, data: Vec<u8>, loaded: SimTime) {
        let Some(job) = self.copies[id].as_mut() else {
            return;
        };
        job.staged = data;
        let start = loaded.max(job.mte3_free);
        self.push_derived(start, key, Event::CopyStore { job: id });
    }

    pub(super) fn copy_store(&mut self, key: Key, id: usize) {
        let Some(job) = self.copies[id].as_mut() else {
            return;
        };
        let actor = job.actor;
        let data = std::mem::take(&mut job.staged);
        let dst = job.spec.chunks[job.i].1.clone();
        let (atomic, op, pipeline) = (job.spec.atomic, job.spec.op, job.spec.pipeline);
        let me = self.chip_of(actor);
        self.traffic[me].write(dst.chip != me, data.len());
        let s = key.time;
        let local_end = s + self.chip.dma(DmaDir::UbToGm, data.len() as u64);
        let (end, land) = if dst.chip == me {
            (local_end, local_end)
        } else {
            let issue = s + self.chip.dma_issue(DmaDir::UbToGm);
            let tt = self.fabric_transfer(me, dst.chip, actor, data.len(), issue, DmaDir::UbToGm, TransferKind::Data);
            (local_end.max(tt.injected), tt.arrival)
        };
        self.push_derived(land, key, Event::Land { dst, data, atomic, writer: actor, op });
        let Some(job) = self.copies[id].as_mut() else {
            return;
        };
        job.mte3_free = end;
        job.i += 1;
        if job.i < job.spec.chunks.len() {
            let next = if pipeline { s } else { end };
            self.push_derived(next, key, Event::CopyLoad { job: id });
        } else {
            self.copies[id] = None;
            self.reply(actor, end, Reply::Done);
        }
    }
}
