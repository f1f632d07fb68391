//! Crossings as bytes, for partitions in other processes (a run split over MPI).
//!
//! A [`Crossing`] holds what the receiving partition's engine reads and nothing else: the
//! event's key, the event, the events its flow ends with, and its path as a route (each
//! process numbers its own paths). What only observers read is not carried, since a split run
//! has none (no checker, no trace): a place's tensor travels as its name, dtype and shape (a
//! dense stand-in), a kernel's call site and the observers' ids are dropped. Every process
//! runs the same program, so the rest (memory keys, regions, cores) means the same everywhere.

use super::event::{Away, Event, Key, SdmaEvent, SignalLand, WriteIds};
use super::partition::{Crossing, WriterJob};
use super::state::channels::Desc;
use crate::api::request::{OpKind, Reply};
use crate::base::addr::{CellRef, Coords, MemKey, Place};
use crate::base::dtype::DType;
use crate::base::payload::Payload;
use crate::base::signal::NotifyOp;
use crate::base::tensor::{Region, Runs, Space, Tensor, TensorMeta};
use crate::base::time::SimTime;
use crate::model::{Onward, PathId, Route};
use crate::sim::observe::SdmaId;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// A crossing as it travels.
#[derive(Serialize, Deserialize)]
struct WireCrossing {
    key: (SimTime, u64, u64),
    ev: WireEvent,
    end: Option<WireEvent>,
    cleared: Option<WireEvent>,
    route: Option<Route>,
    /// The writer's (actor, block, task), see `WriterJob`.
    job: Option<(usize, usize, String)>,
}

/// The events that may cross, or end or clear a flow that crosses.
#[derive(Serialize, Deserialize)]
enum WireEvent {
    Onward { bytes: u64, from: Onward },
    Acked { writer: usize, seq: u64 },
    Release { writer: usize, seq: u64, chip: usize },
    SdmaDone { actor: usize, id: u64, ch: usize },
    SdmaCleared { ch: usize },
    SdmaRemoteRead { desc: WireDesc },
    SdmaLand { desc: WireDesc, data: WirePayload },
    Land { dst: WirePlace, data: WirePayload, atomic: Option<DType>, writer: u32, op: OpKind, ids: WireIds },
    Signal { cell: WireCell, value: i32, op: NotifyOp, writer: usize, ids: WireIds },
    RemoteRead { actor: usize, src: WirePlace, ticket: Option<u64>, issued: SimTime },
    Loaded { actor: usize, ticket: u64, data: WirePayload, issued: SimTime, peer: Option<usize> },
    ReplyData { actor: usize, data: WirePayload },
    CopyRemoteRead { job: usize, chunk: usize, actor: usize, src: WirePlace, op: OpKind },
    CopyLoaded { job: usize, chunk: usize, data: WirePayload },
    CopyStored { job: usize },
}

#[derive(Serialize, Deserialize)]
enum WirePayload {
    Bytes(Vec<u8>),
    Absent(usize),
}

#[derive(Serialize, Deserialize)]
struct WirePlace {
    mem: MemKey,
    runs: Vec<(usize, usize)>,
    rows: usize,
    cols: usize,
    tensor: (String, DType, Vec<usize>),
}

#[derive(Serialize, Deserialize)]
struct WireCell {
    mem: MemKey,
    offset: usize,
    buffer: String,
    coords: Vec<usize>,
}

#[derive(Serialize, Deserialize)]
struct WireIds {
    seq: u64,
    away: Option<(u32, bool)>,
}

#[derive(Serialize, Deserialize)]
struct WireDesc {
    actor: usize,
    id: u64,
    ch: usize,
    src: WirePlace,
    dst: WirePlace,
    get: bool,
    atomic: Option<DType>,
    ready: SimTime,
    op: OpKind,
    clock: u64,
}

impl Crossing {
    /// The crossing as bytes, or why it cannot travel (an event no crossing carries).
    pub(crate) fn to_bytes(&self) -> Result<Vec<u8>, String> {
        let w = WireCrossing {
            key: (self.key.time, self.key.order(), self.key.sub),
            ev: wire(&self.ev)?,
            end: self.end.as_ref().map(wire).transpose()?,
            cleared: self.cleared.as_ref().map(wire).transpose()?,
            route: self.route,
            job: self.job.as_ref().map(|j| (j.writer, j.block, j.task.to_string())),
        };
        bincode::serialize(&w).map_err(|e| e.to_string())
    }

    /// The crossing [`Crossing::to_bytes`] gave.
    pub(crate) fn from_bytes(b: &[u8]) -> Result<Crossing, String> {
        let w: WireCrossing = bincode::deserialize(b).map_err(|e| format!("a crossing event did not decode: {e}"))?;
        let (time, order, sub) = w.key;
        Ok(Crossing {
            key: Key::from_parts(time, order, sub),
            ev: unwire(w.ev)?,
            end: w.end.map(unwire).transpose()?,
            cleared: w.cleared.map(unwire).transpose()?,
            route: w.route,
            job: w.job.map(|(writer, block, task)| WriterJob { writer, block, task: Arc::from(task) }),
        })
    }
}

/// `ev` as it travels.
fn wire(ev: &Event) -> Result<WireEvent, String> {
    Ok(match ev {
        Event::Onward { bytes, from, .. } => WireEvent::Onward { bytes: *bytes, from: *from },
        &Event::Acked { writer, seq } => WireEvent::Acked { writer, seq },
        &Event::Release { writer, seq, chip } => WireEvent::Release { writer, seq, chip },
        Event::Sdma(SdmaEvent::Done { actor, id, ch }) => WireEvent::SdmaDone { actor: *actor, id: *id, ch: *ch },
        Event::Sdma(SdmaEvent::Cleared { ch }) => WireEvent::SdmaCleared { ch: *ch },
        Event::Sdma(SdmaEvent::RemoteRead { desc }) => WireEvent::SdmaRemoteRead { desc: wire_desc(desc) },
        Event::Sdma(SdmaEvent::Land { desc, data, .. }) => {
            WireEvent::SdmaLand { desc: wire_desc(desc), data: wire_payload(data) }
        }
        Event::Land { dst, data, atomic, writer, op, ids } => WireEvent::Land {
            dst: wire_place(dst),
            data: wire_payload(data),
            atomic: *atomic,
            writer: *writer,
            op: *op,
            ids: wire_ids(ids),
        },
        Event::Signal(s) => WireEvent::Signal {
            cell: WireCell {
                mem: s.cell.mem,
                offset: s.cell.offset,
                buffer: s.cell.buffer.to_string(),
                coords: s.cell.coords.to_vec(),
            },
            value: s.value,
            op: s.op,
            writer: s.writer,
            ids: wire_ids(&s.ids),
        },
        Event::RemoteRead { actor, src, ticket, issued, .. } => {
            WireEvent::RemoteRead { actor: *actor, src: wire_place(src), ticket: *ticket, issued: *issued }
        }
        Event::Loaded { actor, ticket, data, issued, peer } => {
            WireEvent::Loaded { actor: *actor, ticket: *ticket, data: wire_payload(data), issued: *issued, peer: *peer }
        }
        Event::Reply { actor, reply: Reply::Data(data) } => {
            WireEvent::ReplyData { actor: *actor, data: wire_payload(data) }
        }
        Event::CopyRemoteRead { job, chunk, actor, src, op, .. } => {
            WireEvent::CopyRemoteRead { job: *job, chunk: *chunk, actor: *actor, src: wire_place(src), op: *op }
        }
        Event::CopyLoaded { job, chunk, data } => {
            WireEvent::CopyLoaded { job: *job, chunk: *chunk, data: wire_payload(data) }
        }
        &Event::CopyStored { job } => WireEvent::CopyStored { job },
        other => return Err(format!("{} cannot travel to another process", super::event_name(other))),
    })
}

/// The event `w` stands for; an [`Event::Onward`]'s path and slots are set on arrival.
fn unwire(w: WireEvent) -> Result<Event, String> {
    Ok(match w {
        WireEvent::Onward { bytes, from } => Event::Onward { path: PathId(0), bytes, from, end: None, cleared: None },
        WireEvent::Acked { writer, seq } => Event::Acked { writer, seq },
        WireEvent::Release { writer, seq, chip } => Event::Release { writer, seq, chip },
        WireEvent::SdmaDone { actor, id, ch } => Event::Sdma(SdmaEvent::Done { actor, id, ch }),
        WireEvent::SdmaCleared { ch } => Event::Sdma(SdmaEvent::Cleared { ch }),
        WireEvent::SdmaRemoteRead { desc } => Event::Sdma(SdmaEvent::RemoteRead { desc: Box::new(unwire_desc(desc)?) }),
        WireEvent::SdmaLand { desc, data } => {
            Event::Sdma(SdmaEvent::Land { desc: Box::new(unwire_desc(desc)?), data: unwire_payload(data), check: None })
        }
        WireEvent::Land { dst, data, atomic, writer, op, ids } => {
            Event::Land { dst: unwire_place(dst), data: unwire_payload(data), atomic, writer, op, ids: unwire_ids(ids) }
        }
        WireEvent::Signal { cell, value, op, writer, ids } => Event::Signal(SignalLand {
            cell: CellRef {
                mem: cell.mem,
                offset: cell.offset,
                buffer: Arc::from(cell.buffer),
                coords: Coords::new(&cell.coords),
            },
            value,
            op,
            writer,
            trace_id: None,
            ids: unwire_ids(ids),
        }),
        WireEvent::RemoteRead { actor, src, ticket, issued } => {
            Event::RemoteRead { actor, src: unwire_place(src), caller: None, ticket, issued }
        }
        WireEvent::Loaded { actor, ticket, data, issued, peer } => {
            Event::Loaded { actor, ticket, data: unwire_payload(data), issued, peer }
        }
        WireEvent::ReplyData { actor, data } => Event::Reply { actor, reply: Reply::Data(unwire_payload(data)) },
        WireEvent::CopyRemoteRead { job, chunk, actor, src, op } => {
            Event::CopyRemoteRead { job, chunk, actor, src: unwire_place(src), op, caller: None }
        }
        WireEvent::CopyLoaded { job, chunk, data } => Event::CopyLoaded { job, chunk, data: unwire_payload(data) },
        WireEvent::CopyStored { job } => Event::CopyStored { job },
    })
}

fn wire_payload(p: &Payload) -> WirePayload {
    match p {
        Payload::Bytes(b) => WirePayload::Bytes(b.clone()),
        Payload::Absent(n) => WirePayload::Absent(*n),
    }
}

fn unwire_payload(p: WirePayload) -> Payload {
    match p {
        WirePayload::Bytes(b) => Payload::Bytes(b),
        WirePayload::Absent(n) => Payload::Absent(n),
    }
}

fn wire_place(p: &Place) -> WirePlace {
    let t = &p.tensor.0;
    WirePlace {
        mem: p.mem,
        runs: p.region.runs.to_vec(),
        rows: p.region.rows,
        cols: p.region.cols,
        tensor: (t.name.to_string(), t.dtype, t.shape.clone()),
    }
}

fn unwire_place(w: WirePlace) -> Place {
    let (name, dtype, shape) = w.tensor;
    let meta = TensorMeta::dense(Arc::from(name), Space::Gm { buf: 0 }, 0, 0, dtype, &shape);
    Place {
        mem: w.mem,
        region: Region { runs: Runs::from(w.runs), rows: w.rows, cols: w.cols },
        tensor: Tensor(Arc::new(meta)),
    }
}

fn wire_ids(ids: &WriteIds) -> WireIds {
    WireIds { seq: ids.seq, away: ids.away.map(|a| (a.nth, a.held)) }
}

fn unwire_ids(w: WireIds) -> WriteIds {
    WriteIds { seq: w.seq, check: None, away: w.away.map(|(nth, held)| Away { nth, held }) }
}

fn wire_desc(d: &Desc) -> WireDesc {
    WireDesc {
        actor: d.actor,
        id: d.id,
        ch: d.ch,
        src: wire_place(&d.src),
        dst: wire_place(&d.dst),
        get: d.get,
        atomic: d.atomic,
        ready: d.ready,
        op: d.op,
        clock: d.clock.get(),
    }
}

fn unwire_desc(w: WireDesc) -> Result<Desc, String> {
    Ok(Desc {
        actor: w.actor,
        id: w.id,
        ch: w.ch,
        src: unwire_place(w.src),
        dst: unwire_place(w.dst),
        get: w.get,
        atomic: w.atomic,
        ready: w.ready,
        op: w.op,
        caller: None,
        clock: SdmaId::from_raw(w.clock).ok_or("an SDMA transfer's id was 0")?,
    })
}
