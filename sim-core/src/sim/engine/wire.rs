//! Crossings as bytes, for partitions in other processes (a run split over MPI).
//!
//! A [`Crossing`] holds what the receiving partition's engine reads: the event's key, the
//! event, the events its flow ends with, and its path as a route (each process numbers its
//! own paths), with what the checker and the tracer read of them (the observers' ids, a
//! kernel's call site as its text, a place's buffer as the checker names it). A place's
//! tensor travels as its name, dtype, shape and offsets, without its memory space. Every
//! process runs the same program, so the rest (memory keys, regions, cores) means the same
//! everywhere. A recorded fact of a checked or traced run travels with the same parts
//! (the `facts` module).

use super::desc::Desc;
use super::event::{Away, Event, Key, SdmaEvent, SignalLand, WriteIds};
use super::state::part::{Crossing, WriterJob};
use crate::api::request::{OpKind, Reply};
use crate::base::addr::{CellRef, Coords, MemKey, Place};
use crate::base::call_site::CallSite;
use crate::base::dtype::DType;
use crate::base::payload::Payload;
use crate::base::signal::NotifyOp;
use crate::base::tensor::{Region, Runs, Space, Tensor, TensorMeta};
use crate::base::time::SimTime;
use crate::model::{Onward, PathId, Route};
use crate::sim::observe::{OpId, SdmaId, WriteId};
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
    SdmaLand { desc: WireDesc, data: WirePayload, check: Option<u64> },
    Land { dst: WirePlace, data: WirePayload, atomic: Option<DType>, writer: u32, op: OpKind, ids: WireIds },
    Signal { cell: WireCell, value: i32, op: NotifyOp, writer: usize, ids: WireIds, trace_id: Option<u64> },
    RemoteRead { actor: usize, src: WirePlace, ticket: Option<u64>, issued: SimTime, caller: WireSite },
    Loaded { actor: usize, ticket: u64, data: WirePayload, issued: SimTime, peer: Option<usize> },
    ReplyData { actor: usize, data: WirePayload },
    CopyRemoteRead { job: usize, chunk: usize, actor: usize, src: WirePlace, op: OpKind, caller: WireSite },
    CopyLoaded { job: usize, chunk: usize, data: WirePayload },
    CopyStored { job: usize },
}

#[derive(Serialize, Deserialize)]
enum WirePayload {
    Bytes(Vec<u8>),
    Absent(usize),
}

/// A kernel's call site as its text: file, line, column.
type WireSite = Option<(String, u32, u32)>;

#[derive(Serialize, Deserialize)]
pub(super) struct WirePlace {
    mem: MemKey,
    runs: Vec<(usize, usize)>,
    rows: usize,
    cols: usize,
    tensor: WireTensor,
}

/// A tensor view without its memory space.
#[derive(Serialize, Deserialize)]
struct WireTensor {
    name: String,
    dtype: DType,
    shape: Vec<usize>,
    base: usize,
    capacity: usize,
    start: usize,
    strides: Option<Vec<usize>>,
}

#[derive(Serialize, Deserialize)]
pub(super) struct WireCell {
    mem: MemKey,
    offset: usize,
    buffer: String,
    coords: Vec<usize>,
}

#[derive(Serialize, Deserialize)]
struct WireIds {
    seq: u64,
    away: Option<(u32, bool)>,
    check: Option<u64>,
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
    data_from: SimTime,
    op: OpKind,
    clock: u64,
    caller: WireSite,
}

impl Crossing {
    /// The crossing as bytes, or why it cannot travel (an event no crossing carries).
    pub(crate) fn to_bytes(&self) -> Result<Vec<u8>, String> {
        let w = WireCrossing {
            key: (self.key.time, self.key.order(), self.key.sub),
            ev: wire(&self.ev)?,
            end: self.end.as_deref().map(wire).transpose()?,
            cleared: self.cleared.as_deref().map(wire).transpose()?,
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
            end: w.end.map(unwire).transpose()?.map(Box::new),
            cleared: w.cleared.map(unwire).transpose()?.map(Box::new),
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
        Event::Sdma(SdmaEvent::Land { desc, data, check }) => {
            WireEvent::SdmaLand { desc: wire_desc(desc), data: wire_payload(data), check: check.map(WriteId::get) }
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
            cell: wire_cell(&s.cell),
            value: s.value,
            op: s.op,
            writer: s.writer,
            ids: wire_ids(&s.ids),
            trace_id: s.trace_id.map(OpId::get),
        },
        Event::RemoteRead { actor, src, ticket, issued, caller } => WireEvent::RemoteRead {
            actor: *actor,
            src: wire_place(src),
            ticket: *ticket,
            issued: *issued,
            caller: wire_site(*caller),
        },
        Event::Loaded { actor, ticket, data, issued, peer } => {
            WireEvent::Loaded { actor: *actor, ticket: *ticket, data: wire_payload(data), issued: *issued, peer: *peer }
        }
        Event::Reply { actor, reply: Reply::Data(data) } => {
            WireEvent::ReplyData { actor: *actor, data: wire_payload(data) }
        }
        Event::CopyRemoteRead { job, chunk, actor, src, op, caller } => WireEvent::CopyRemoteRead {
            job: *job,
            chunk: *chunk,
            actor: *actor,
            src: wire_place(src),
            op: *op,
            caller: wire_site(*caller),
        },
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
        WireEvent::SdmaLand { desc, data, check } => Event::Sdma(SdmaEvent::Land {
            desc: Box::new(unwire_desc(desc)?),
            data: unwire_payload(data),
            check: check.and_then(WriteId::from_raw),
        }),
        WireEvent::Land { dst, data, atomic, writer, op, ids } => {
            Event::Land { dst: unwire_place(dst), data: unwire_payload(data), atomic, writer, op, ids: unwire_ids(ids) }
        }
        WireEvent::Signal { cell, value, op, writer, ids, trace_id } => Event::Signal(SignalLand {
            cell: unwire_cell(cell),
            value,
            op,
            writer,
            trace_id: trace_id.and_then(OpId::from_raw),
            ids: unwire_ids(ids),
        }),
        WireEvent::RemoteRead { actor, src, ticket, issued, caller } => {
            Event::RemoteRead { actor, src: unwire_place(src), caller: unwire_site(caller), ticket, issued }
        }
        WireEvent::Loaded { actor, ticket, data, issued, peer } => {
            Event::Loaded { actor, ticket, data: unwire_payload(data), issued, peer }
        }
        WireEvent::ReplyData { actor, data } => Event::Reply { actor, reply: Reply::Data(unwire_payload(data)) },
        WireEvent::CopyRemoteRead { job, chunk, actor, src, op, caller } => {
            Event::CopyRemoteRead { job, chunk, actor, src: unwire_place(src), op, caller: unwire_site(caller) }
        }
        WireEvent::CopyLoaded { job, chunk, data } => Event::CopyLoaded { job, chunk, data: unwire_payload(data) },
        WireEvent::CopyStored { job } => Event::CopyStored { job },
    })
}

fn wire_payload(p: &Payload) -> WirePayload {
    match p {
        Payload::Bytes(b) => WirePayload::Bytes(b.to_vec()),
        Payload::Absent(n) => WirePayload::Absent(*n),
    }
}

fn unwire_payload(p: WirePayload) -> Payload {
    match p {
        WirePayload::Bytes(b) => Payload::of(b),
        WirePayload::Absent(n) => Payload::Absent(n),
    }
}

pub(super) fn wire_place(p: &Place) -> WirePlace {
    let t = &p.tensor.0;
    WirePlace {
        mem: p.mem,
        runs: p.region.runs.to_vec(),
        rows: p.region.rows,
        cols: p.region.cols,
        tensor: WireTensor {
            name: t.name.to_string(),
            dtype: t.dtype,
            shape: t.shape.clone(),
            base: t.base,
            capacity: t.capacity,
            start: t.start,
            strides: t.strides.clone(),
        },
    }
}

/// The place `w` names; its tensor stands in a GM space of its own.
pub(super) fn unwire_place(w: WirePlace) -> Place {
    let t = w.tensor;
    let mut meta = TensorMeta::dense(Arc::from(t.name), Space::Gm { buf: 0 }, t.base, t.capacity, t.dtype, &t.shape);
    (meta.start, meta.strides) = (t.start, t.strides);
    Place {
        mem: w.mem,
        region: Region { runs: Runs::from(w.runs), rows: w.rows, cols: w.cols },
        tensor: Tensor(Arc::new(meta)),
    }
}

pub(super) fn wire_cell(c: &CellRef) -> WireCell {
    WireCell { mem: c.mem, offset: c.offset, buffer: c.buffer.to_string(), coords: c.coords.to_vec() }
}

pub(super) fn unwire_cell(w: WireCell) -> CellRef {
    CellRef { mem: w.mem, offset: w.offset, buffer: Arc::from(w.buffer), coords: Coords::new(&w.coords) }
}

pub(super) fn wire_site(s: Option<CallSite>) -> WireSite {
    s.map(|s| (s.file().to_string(), s.line(), s.column()))
}

pub(super) fn unwire_site(w: WireSite) -> Option<CallSite> {
    w.map(|(file, line, column)| CallSite::named(&file, line, column))
}

fn wire_ids(ids: &WriteIds) -> WireIds {
    WireIds { seq: ids.seq, away: ids.away.map(|a| (a.nth, a.held)), check: ids.check.map(WriteId::get) }
}

fn unwire_ids(w: WireIds) -> WriteIds {
    let check = w.check.and_then(WriteId::from_raw);
    WriteIds { seq: w.seq, check, away: w.away.map(|(nth, held)| Away { nth, held }) }
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
        data_from: d.data_from,
        op: d.op,
        clock: d.clock.get(),
        caller: wire_site(d.caller),
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
        data_from: w.data_from,
        op: w.op,
        caller: unwire_site(w.caller),
        clock: SdmaId::from_raw(w.clock).ok_or("an SDMA transfer's id was 0")?,
    })
}

/// Serde for the owned parts of a recorded fact (`observe/record.rs`), as crossings carry
/// them: `#[serde(with = "...")]` on the fact's fields.
pub(crate) mod facts {
    use super::*;
    use crate::base::call_site::static_text;
    use crate::sim::engine::observe::keep::Wired;
    use crate::sim::observe::{CoreId, OpAt, OpInfo};
    use serde::{Deserializer, Serializer};

    /// The serde of a kept argument of a recorded fact, through its wire form `$wire`.
    macro_rules! wired {
        ($($t:ty as $wire:ty: |$x:ident| $to:expr, |$w:ident| $from:expr;)*) => {$(
            impl Serialize for Wired<$t> {
                fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                    let $x = &self.0;
                    let wire: $wire = $to;
                    wire.serialize(s)
                }
            }

            impl<'de> Deserialize<'de> for Wired<$t> {
                fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                    let $w = <$wire>::deserialize(d)?;
                    let back: Result<$t, D::Error> = $from;
                    back.map(Wired)
                }
            }
        )*};
    }

    wired! {
        Place as WirePlace: |p| wire_place(p), |w| Ok(unwire_place(w));
        CellRef as WireCell: |c| wire_cell(c), |w| Ok(unwire_cell(w));
        Vec<CellRef> as Vec<WireCell>: |c| c.iter().map(wire_cell).collect(), |w| Ok(w.into_iter().map(unwire_cell).collect());
        OpAt as (OpKind, SimTime, WireSite): |a| (a.op, a.time, wire_site(a.caller)),
            |w| Ok(OpAt { op: w.0, time: w.1, caller: unwire_site(w.2) });
        OpInfo as WireOp: |o| wire_op(o), |w| unwire_op(w).map_err(serde::de::Error::custom);
    }

    /// A name (`Arc<str>`).
    pub(crate) mod name {
        use super::*;

        pub(crate) fn serialize<S: Serializer>(n: &Arc<str>, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_str(n)
        }

        pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<str>, D::Error> {
            String::deserialize(d).map(Arc::from)
        }
    }

    /// A chip's active dispatch: its name and instance.
    pub(crate) mod dispatch {
        use super::*;

        pub(crate) fn serialize<S: Serializer>(x: &Option<(Arc<str>, usize)>, s: S) -> Result<S::Ok, S::Error> {
            x.as_ref().map(|(n, i)| (n.to_string(), *i)).serialize(s)
        }

        pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<(Arc<str>, usize)>, D::Error> {
            Ok(Option::<(String, usize)>::deserialize(d)?.map(|(n, i)| (Arc::from(n), i)))
        }
    }

    #[derive(Serialize, Deserialize)]
    struct WireOp {
        id: u64,
        actor: usize,
        cores: usize,
        name: String,
        start: SimTime,
        bytes: u64,
        peer: Option<usize>,
    }

    fn wire_op(o: &OpInfo) -> WireOp {
        WireOp {
            id: o.id.get(),
            actor: o.core.actor,
            cores: o.core.cores,
            name: o.name.to_string(),
            start: o.start,
            bytes: o.bytes,
            peer: o.peer,
        }
    }

    fn unwire_op(w: WireOp) -> Result<OpInfo, &'static str> {
        let id = OpId::from_raw(w.id).ok_or("an operation's id was 0")?;
        let core = CoreId::new(w.actor, w.cores);
        let name = static_text(&w.name);
        Ok(OpInfo { id, core, name, start: w.start, bytes: w.bytes, peer: w.peer })
    }
}
