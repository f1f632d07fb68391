//! put / get: a transfer staged through UB in chunks. Each chunk is loaded (MTE2, from local
//! GM or a peer) and then stored (MTE3, to local GM or a peer). Without `pipeline` one staging
//! tile is used: a chunk's load starts when the previous chunk's store has cleared. With
//! `pipeline` two tiles ping-pong: the load of chunk i+1 starts as the store of chunk i does.
//! Stores start when their chunk is loaded and the previous store has cleared (MTE3 is one
//! engine); the put or get returns when the last store has cleared.

use super::Engine;
use super::event::{Event, Key};
use super::observe::OpAt;
use super::state::copy_job::CopyJob;
use crate::api::request::{CopySpec, OpKind, Reply};
use crate::base::addr::{Place, narrow};
use crate::base::call_site::CallSite;
use crate::base::payload::Payload;
use crate::model::{DmaDir, PathKind, Route};

impl Engine {
    pub(super) fn start_copy(&mut self, key: Key, actor: usize, spec: CopySpec) {
        if spec.chunks.is_empty() {
            self.reply(actor, key.time, Reply::Done);
            return;
        }
        let job = CopyJob { actor, spec, next_load: 0, stored: 0, staged: None, storing: false };
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
        self.copy_load(key, id);
    }

    /// Starts loading the next chunk into UB.
    pub(super) fn copy_load(&mut self, key: Key, id: usize) {
        let Some(job) = self.copies[id].as_mut() else { return };
        let chunk = job.next_load;
        job.next_load += 1;
        let actor = job.actor;
        let src = job.spec.chunks[chunk].0.clone();
        let (op, caller) = (job.spec.op, job.spec.caller);
        let (me, core) = (self.chip_of(actor), self.core_of(actor));
        self.obs.chunk_read(actor, src.chip(), src.region.bytes());
        let at = key.time + self.chip.dma_issue(DmaDir::GmToUb);
        if src.chip() == me {
            self.obs.read(actor, &src, OpAt::new(op, key.time, caller));
            let data = self.mem.read(&src);
            let route = Route { kind: PathKind::Load, chip: me, core, peer: me };
            let end = Event::CopyLoaded { job: id, chunk, data };
            self.start_flow(key, route, src.region.bytes() as u64, at, None, end);
        } else {
            let route = Route { kind: PathKind::ReadRequest, chip: me, core, peer: src.chip() };
            let read = Event::CopyRemoteRead { job: id, chunk, actor, src, op, caller: caller.map(CallSite::from) };
            self.start_flow(key, route, 0, at, None, read);
        }
    }

    /// The read request of a get's chunk reached the owner: read there, send the data back.
    pub(super) fn copy_remote_read(
        &mut self,
        key: Key,
        (id, chunk): (usize, usize),
        actor: usize,
        src: Place,
        op: OpKind,
        caller: Option<CallSite>,
    ) {
        self.obs.read(actor, &src, OpAt { op, time: key.time, caller });
        let data = self.mem.read(&src);
        let route = self.route_from(actor, PathKind::RemoteRead, src.chip());
        let end = Event::CopyLoaded { job: id, chunk, data };
        let at = key.time + self.net.read_turnaround();
        self.start_flow(key, route, src.region.bytes() as u64, at, None, end);
    }

    /// A chunk is in UB: store it once MTE3 is free.
    pub(super) fn copy_loaded(&mut self, key: Key, id: usize, chunk: usize, data: Payload) {
        let Some(job) = self.copies[id].as_mut() else { return };
        job.staged = Some((chunk, data));
        self.copy_try_store(key, id);
    }

    /// Starts the staged chunk's store if MTE3 is free; with `pipeline`, the next load too.
    fn copy_try_store(&mut self, key: Key, id: usize) {
        let Some(job) = self.copies[id].as_mut() else { return };
        if job.storing {
            return;
        }
        let Some((chunk, data)) = job.staged.take() else { return };
        job.storing = true;
        let (actor, pipeline, more) = (job.actor, job.spec.pipeline, job.next_load < job.spec.chunks.len());
        let (atomic, op, caller) = (job.spec.atomic, job.spec.op, job.spec.caller);
        let dst = job.spec.chunks[chunk].1.clone();
        let (me, core) = (self.chip_of(actor), self.core_of(actor));
        self.obs.chunk_stored(actor, dst.chip(), data.len());
        let kind = if dst.chip() == me { PathKind::Store } else { PathKind::RemoteWrite };
        let route = Route { kind, chip: me, core, peer: dst.chip() };
        let bytes = data.len() as u64;
        let at = key.time + self.chip.dma_issue(DmaDir::UbToGm);
        let ids = self.issue_write(actor, &dst, atomic.is_some(), OpAt::new(op, key.time, caller));
        let land = Event::Land { dst, data, atomic, writer: narrow(actor), op, ids };
        self.start_flow(key, route, bytes, at, Some(Event::CopyStored { job: id }), land);
        if pipeline && more {
            self.copy_load(key, id);
        }
    }

    /// A store has cleared: MTE3 is free; finish, or go on with the next chunk.
    pub(super) fn copy_stored(&mut self, key: Key, id: usize) {
        let Some(job) = self.copies[id].as_mut() else { return };
        job.storing = false;
        job.stored += 1;
        let (actor, pipeline) = (job.actor, job.spec.pipeline);
        if job.stored == job.spec.chunks.len() {
            self.copies[id] = None;
            self.reply(actor, key.time, Reply::Done);
            return;
        }
        let more = job.next_load < job.spec.chunks.len();
        if !pipeline && more {
            self.copy_load(key, id);
        }
        self.copy_try_store(key, id);
    }
}
