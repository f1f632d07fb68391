//! The pipes of an AIV core: MTE2 (GM -> UB), the vector unit, MTE3 (UB -> GM) and the
//! scalar unit that issues to them (pto-isa's PIPE_MTE2, PIPE_V, PIPE_MTE3, PIPE_S).
//!
//! By default a core runs serially: every operation finishes before the next one starts, as
//! in PyPTO's builtin collectives, which put `pipe_barrier(PIPE_ALL)` between their steps.
//! After [`Ops::overlap_pipes`] each operation occupies only its own pipe: vector operations
//! and stores are queued on their pipes and the scalar unit goes on issuing, so a load, a
//! vector operation and a store on different pipes overlap. Data orders them: an operation
//! starts no earlier than the tiles it reads are ready (read-after-write through UB). Programs
//! that manage their own order use flags (`set_flag` / `wait_flag`) and `pipe_barrier`, as
//! compiled PTO code does. Loads overlap other work when issued with [`Ops::load_async`] and
//! collected with [`Ops::wait_load`] (the consumer's wait for MTE2).
//!
//! MTE2 and MTE3 transfers are timed by the chip's DMA resources in the network model, which
//! already serialise each core's loads and stores; this module only decides when each
//! operation may start.

use super::ops::Ops;
use crate::dtype::DType;
use crate::error::SimResult;
use crate::request::{Reply, Request};
use crate::tensor::Tensor;
use crate::tile::Tile;
use crate::time::SimTime;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;

/// A pipe of an AIV core.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pipe {
    /// GM -> UB transfers (TLOAD).
    Mte2,
    /// The vector unit (tile arithmetic).
    Vector,
    /// UB -> GM transfers (TSTORE).
    Mte3,
    /// The scalar unit, which issues to the others (signals, scalar GM access, control).
    Scalar,
    /// Every pipe (only for [`Ops::pipe_barrier`]).
    All,
}

impl fmt::Display for Pipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Pipe::Mte2 => "MTE2",
            Pipe::Vector => "V",
            Pipe::Mte3 => "MTE3",
            Pipe::Scalar => "S",
            Pipe::All => "ALL",
        })
    }
}

/// A load issued with [`Ops::load_async`], to be collected with [`Ops::wait_load`]. It cannot
/// be cloned, so a load is collected once.
#[derive(Debug)]
#[must_use = "a load's tile is only usable after wait_load"]
pub struct TileLoad {
    ticket: u64,
}

/// The tile a load in flight will fill.
#[derive(Copy, Clone, Debug)]
struct LoadShape {
    dtype: DType,
    shape: (usize, usize),
    valid: (usize, usize),
}

impl LoadShape {
    /// Bytes of UB the tile occupies.
    fn bytes(&self) -> usize {
        self.shape.0 * self.shape.1 * self.dtype.size()
    }
}

/// When a flag fires.
#[derive(Copy, Clone, Debug)]
enum Mark {
    /// At a known time.
    At(SimTime),
    /// When asynchronous load `ticket` has arrived.
    AfterLoad(u64),
}

/// The pipe state of one core.
#[derive(Debug, Default)]
pub(crate) struct Pipes {
    /// Operations occupy only their own pipe (off: every operation finishes before the next).
    pub(crate) overlap: bool,
    /// When the vector pipe and MTE3 finish their last operation.
    pub(crate) vector_free: SimTime,
    pub(crate) mte3_free: SimTime,
    /// Earliest start of the next operation on MTE2, V and MTE3, from `wait_flag`.
    gate: [SimTime; 3],
    /// Flags set and not waited yet, oldest first, by (from, to, event).
    flags: BTreeMap<(Pipe, Pipe, u32), VecDeque<Mark>>,
    /// Asynchronous loads issued and not collected, by ticket.
    pending: BTreeMap<u64, LoadShape>,
    /// Loads a flag or barrier collected before their `wait_load`.
    collected: BTreeMap<u64, Tile>,
    next_ticket: u64,
}

impl Pipes {
    /// The earliest time an operation on `pipe` may start, from its flags.
    pub(crate) fn gate(&self, pipe: Pipe) -> SimTime {
        match pipe {
            Pipe::Mte2 => self.gate[0],
            Pipe::Vector => self.gate[1],
            Pipe::Mte3 => self.gate[2],
            Pipe::Scalar | Pipe::All => SimTime::ZERO,
        }
    }

    fn raise_gate(&mut self, pipe: Pipe, t: SimTime) {
        let i = match pipe {
            Pipe::Mte2 => 0,
            Pipe::Vector => 1,
            Pipe::Mte3 => 2,
            Pipe::Scalar | Pipe::All => return,
        };
        self.gate[i] = self.gate[i].max(t);
    }

    /// UB bytes held by loads in flight.
    fn pending_bytes(&self) -> usize {
        self.pending.values().map(LoadShape::bytes).sum()
    }
}

impl Ops {
    /// Lets this core's pipes overlap from now on (see the module docs): vector operations and
    /// stores no longer hold the scalar unit, and data dependencies and flags order them. This
    /// is how compiled PyPTO kernels run; PyPTO's builtin collectives stay serial.
    pub fn overlap_pipes(&mut self) {
        self.pipes.overlap = true;
    }

    /// Starts loading `shape` elements at `offsets` of a local GM tensor or of this rank's
    /// window into UB on MTE2 (TLOAD) and returns at once; [`Ops::wait_load`] gives the tile.
    /// The loads in flight and the new one must fit in UB together.
    pub fn load_async(&mut self, src: &Tensor, offsets: &[usize], shape: &[usize]) -> SimResult<TileLoad> {
        self.issue_load("load_async", src, None, offsets, shape)
    }

    /// As [`Ops::load_async`], from `peer`'s copy of window `target` (TLOAD from peer GM).
    pub fn remote_load_async(
        &mut self,
        target: &Tensor,
        peer: usize,
        offsets: &[usize],
        shape: &[usize],
    ) -> SimResult<TileLoad> {
        self.issue_load("remote_load_async", target, Some(peer), offsets, shape)
    }

    fn issue_load(
        &mut self,
        op: &'static str,
        src: &Tensor,
        peer: Option<usize>,
        offsets: &[usize],
        shape: &[usize],
    ) -> SimResult<TileLoad> {
        self.ub_op(op)?;
        let full = self.region(op, src, offsets, shape)?;
        let place = self.place(op, src, peer, offsets, shape)?;
        let load = LoadShape {
            dtype: src.dtype(),
            shape: (full.rows, full.cols),
            valid: (place.region.rows, place.region.cols),
        };
        let held = self.pipes.pending_bytes();
        if held + load.bytes() > self.chip().ub_bytes() {
            let msg = format!(
                "a {}x{} {} tile needs {} bytes, but {} loads in flight already hold {held} of the {} bytes of UB; \
                 wait_load some of them first or use smaller tiles",
                load.shape.0,
                load.shape.1,
                load.dtype,
                load.bytes(),
                self.pipes.pending.len(),
                self.chip().ub_bytes()
            );
            return self.bad(op, msg);
        }
        let ticket = self.pipes.next_ticket;
        self.pipes.next_ticket += 1;
        self.pipes.pending.insert(ticket, load);
        let start = self.clock.max(self.pipes.gate(Pipe::Mte2));
        let caller = self.caller.take();
        let req = Request::Read { src: place, caller, start, ticket: Some(ticket) };
        self.link.post(self.clock, self.clock, req);
        Ok(TileLoad { ticket })
    }

    /// The tile of a load started with [`Ops::load_async`], once it is in UB (the consumer's
    /// wait for MTE2: the scalar unit waits here).
    pub async fn wait_load(&mut self, load: TileLoad) -> SimResult<Tile> {
        self.live("wait_load")?;
        if !self.pipes.collected.contains_key(&load.ticket) {
            self.collect_ticket(load.ticket).await?;
        }
        match self.pipes.collected.remove(&load.ticket) {
            Some(t) => Ok(t),
            None => self.bad("wait_load", "this load was not issued by this core".into()),
        }
    }

    /// Collects every load still in flight, keeping the tiles for their `wait_load`.
    async fn drain_loads(&mut self) -> SimResult<()> {
        let tickets: Vec<u64> = self.pipes.pending.keys().copied().collect();
        for ticket in tickets {
            self.collect_ticket(ticket).await?;
        }
        Ok(())
    }

    /// Collects load `ticket` into `collected` once it is in UB (if it is still in flight).
    async fn collect_ticket(&mut self, ticket: u64) -> SimResult<()> {
        let Some(&load) = self.pipes.pending.get(&ticket) else { return Ok(()) };
        let Reply::Data(bytes) = self.call(Request::Collect { ticket }).await? else {
            return self.bad("wait_load", "the scheduler answered a load without data".into());
        };
        self.pipes.pending.remove(&ticket);
        let (r, c) = load.shape;
        let mut t = Tile::from_valid_bytes(load.dtype, r, c, load.valid, bytes);
        t.ready = self.clock;
        self.pipes.collected.insert(ticket, t);
        Ok(())
    }

    /// `set_flag(from, to, event)`: `to` may go on once everything issued to `from` so far
    /// has finished. Every flag set must be waited once with [`Ops::wait_flag`].
    pub fn set_flag(&mut self, from: Pipe, to: Pipe, event: u32) -> SimResult<()> {
        self.live("set_flag")?;
        self.flag_pipes("set_flag", from, to)?;
        let mark = match from {
            Pipe::Mte2 => match self.pipes.pending.keys().next_back() {
                Some(&t) => Mark::AfterLoad(t),
                None => Mark::At(self.clock),
            },
            Pipe::Vector => Mark::At(self.pipes.vector_free.max(self.clock)),
            Pipe::Mte3 => Mark::At(self.pipes.mte3_free.max(self.clock)),
            Pipe::Scalar | Pipe::All => Mark::At(self.clock),
        };
        self.pipes.flags.entry((from, to, event)).or_default().push_back(mark);
        Ok(())
    }

    /// `wait_flag(from, to, event)`: the next operation on `to` starts no earlier than the
    /// oldest matching `set_flag` fired. A wait with no flag set would hang the pipe on
    /// hardware; here it is an error naming the flag.
    pub async fn wait_flag(&mut self, from: Pipe, to: Pipe, event: u32) -> SimResult<()> {
        self.live("wait_flag")?;
        self.flag_pipes("wait_flag", from, to)?;
        let Some(mark) = self.pipes.flags.get_mut(&(from, to, event)).and_then(VecDeque::pop_front) else {
            let msg = format!(
                "wait_flag({from} -> {to}, event {event}) has no set_flag({from} -> {to}, event {event}) before it \
                 on this core: the {to} pipe would wait forever (deadlock); set the flag after the {from} operation \
                 it should wait for"
            );
            return self.bad("wait_flag", msg);
        };
        let at = match mark {
            Mark::At(t) => t,
            Mark::AfterLoad(ticket) => {
                self.collect_ticket(ticket).await?;
                self.clock
            }
        };
        if to == Pipe::Scalar {
            self.clock = self.clock.max(at);
        } else {
            self.pipes.raise_gate(to, at);
        }
        Ok(())
    }

    /// `pipe_barrier(pipe)`: later operations wait for everything issued to `pipe`. Each pipe
    /// already runs its own operations in order, so only `Pipe::All` changes anything: the
    /// scalar unit waits until every pipe has drained, loads in flight included.
    pub async fn pipe_barrier(&mut self, pipe: Pipe) -> SimResult<()> {
        self.live("pipe_barrier")?;
        if pipe != Pipe::All {
            return Ok(());
        }
        self.drain_loads().await?;
        let p = &self.pipes;
        let drained = [p.vector_free, p.mte3_free, p.gate[0], p.gate[1], p.gate[2]].into_iter().max();
        self.clock = self.clock.max(drained.unwrap_or(SimTime::ZERO));
        Ok(())
    }

    fn flag_pipes(&mut self, op: &'static str, from: Pipe, to: Pipe) -> SimResult<()> {
        if from == Pipe::All || to == Pipe::All || from == to {
            let msg = format!(
                "{op}({from} -> {to}): a flag joins two different pipes (MTE2, V, MTE3, S); use pipe_barrier(Pipe::All) \
                 to wait for every pipe"
            );
            return self.bad(op, msg);
        }
        Ok(())
    }
}
