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
//! operation may start. It holds the pipe state of a core ([`Pipes`]); the operations that
//! drive it are `Ops` methods in `ops/pipe_ops.rs`.
//!
//! [`Ops::overlap_pipes`]: crate::Ops::overlap_pipes
//! [`Ops::load_async`]: crate::Ops::load_async
//! [`Ops::wait_load`]: crate::Ops::wait_load

use crate::base::dtype::DType;
use crate::base::tile::Tile;
use crate::base::time::SimTime;
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
    /// Every pipe (only for [`Ops::pipe_barrier`](crate::Ops::pipe_barrier)).
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

/// A load issued with [`Ops::load_async`](crate::Ops::load_async), to be collected with
/// [`Ops::wait_load`](crate::Ops::wait_load). It cannot be cloned, so a load is collected once.
#[derive(Debug)]
#[must_use = "a load's tile is only usable after wait_load"]
pub struct TileLoad {
    pub(crate) ticket: u64,
}

/// The tile a load in flight will fill.
#[derive(Copy, Clone, Debug)]
pub(crate) struct LoadShape {
    pub(crate) dtype: DType,
    /// Rows and columns of the tile.
    pub(crate) shape: (usize, usize),
    /// Rows and columns that hold data.
    pub(crate) valid: (usize, usize),
}

impl LoadShape {
    /// Bytes of UB the tile occupies.
    pub(crate) fn bytes(&self) -> usize {
        self.shape.0 * self.shape.1 * self.dtype.size()
    }
}

/// When a flag fires.
#[derive(Copy, Clone, Debug)]
pub(crate) enum Mark {
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
    /// Asynchronous loads issued and not collected, oldest (smallest ticket) first: a core
    /// keeps a few in flight, so a short list beats a tree.
    pending: Vec<(u64, LoadShape)>,
    /// Loads a flag or barrier collected before their `wait_load`, by ticket.
    collected: Vec<(u64, Tile)>,
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

    /// Holds the next operation on `pipe` until `t` at least (a `wait_flag`).
    pub(crate) fn raise_gate(&mut self, pipe: Pipe, t: SimTime) {
        let i = match pipe {
            Pipe::Mte2 => 0,
            Pipe::Vector => 1,
            Pipe::Mte3 => 2,
            Pipe::Scalar | Pipe::All => return,
        };
        self.gate[i] = self.gate[i].max(t);
    }

    /// The number of loads in flight and the UB bytes they hold.
    pub(crate) fn in_flight(&self) -> (usize, usize) {
        (self.pending.len(), self.pending.iter().map(|(_, l)| l.bytes()).sum())
    }

    /// Registers a load now in flight, under a new ticket.
    pub(crate) fn issue(&mut self, load: LoadShape) -> TileLoad {
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        // Tickets grow, so the list stays in ticket order.
        self.pending.push((ticket, load));
        TileLoad { ticket }
    }

    /// The tickets of the loads in flight, oldest first.
    pub(crate) fn tickets(&self) -> Vec<u64> {
        self.pending.iter().map(|&(t, _)| t).collect()
    }

    /// The tile load `ticket` fills, if it is still in flight.
    pub(crate) fn in_flight_load(&self, ticket: u64) -> Option<LoadShape> {
        self.pending.iter().find(|&&(t, _)| t == ticket).map(|&(_, l)| l)
    }

    /// Load `ticket` has arrived as `tile`: kept until its `wait_load` takes it.
    pub(crate) fn arrived(&mut self, ticket: u64, tile: Tile) {
        if let Some(i) = self.pending.iter().position(|&(t, _)| t == ticket) {
            self.pending.remove(i);
        }
        self.collected.retain(|&(t, _)| t != ticket);
        self.collected.push((ticket, tile));
    }

    /// Whether load `ticket` has arrived and is waiting for its `wait_load`.
    pub(crate) fn has_arrived(&self, ticket: u64) -> bool {
        self.collected.iter().any(|&(t, _)| t == ticket)
    }

    /// The tile of arrived load `ticket`, handed out once.
    pub(crate) fn take_arrived(&mut self, ticket: u64) -> Option<Tile> {
        let i = self.collected.iter().position(|&(t, _)| t == ticket)?;
        Some(self.collected.swap_remove(i).1)
    }

    /// When a flag set now on `from` fires, at `clock` on the scalar unit: once everything
    /// issued to `from` so far has finished.
    pub(crate) fn mark(&self, from: Pipe, clock: SimTime) -> Mark {
        match from {
            Pipe::Mte2 => match self.pending.last() {
                Some(&(t, _)) => Mark::AfterLoad(t),
                None => Mark::At(clock),
            },
            Pipe::Vector => Mark::At(self.vector_free.max(clock)),
            Pipe::Mte3 => Mark::At(self.mte3_free.max(clock)),
            Pipe::Scalar | Pipe::All => Mark::At(clock),
        }
    }

    /// Sets flag `(from, to, event)` to fire at `mark`.
    pub(crate) fn set_flag(&mut self, from: Pipe, to: Pipe, event: u32, mark: Mark) {
        self.flags.entry((from, to, event)).or_default().push_back(mark);
    }

    /// Takes the oldest flag `(from, to, event)` set and not waited yet.
    pub(crate) fn take_flag(&mut self, from: Pipe, to: Pipe, event: u32) -> Option<Mark> {
        self.flags.get_mut(&(from, to, event)).and_then(VecDeque::pop_front)
    }

    /// When every pipe has finished what was issued to it (loads in flight aside).
    pub(crate) fn drained(&self) -> SimTime {
        [self.vector_free, self.mte3_free, self.gate[0], self.gate[1], self.gate[2]]
            .into_iter()
            .max()
            .unwrap_or(SimTime::ZERO)
    }
}
