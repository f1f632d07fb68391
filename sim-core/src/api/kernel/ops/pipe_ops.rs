//! The pipe operations of [`Ops`]: overlapping the pipes, asynchronous loads (`load_async`,
//! `wait_load`), flags (`set_flag`, `wait_flag`) and `pipe_barrier`. The pipe state they drive
//! is `Pipes`, in `pipes.rs`, whose module docs say how the pipes run.

use super::Ops;
use crate::api::kernel::pipes::{LoadShape, Mark, Pipe, TileLoad};
use crate::api::request::{Reply, Request};
use crate::base::error::SimResult;
use crate::base::tensor::Tensor;
use crate::base::tile::Tile;

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
        let (in_flight, held) = self.pipes.in_flight();
        if held + load.bytes() > self.chip().ub_bytes() {
            let msg = format!(
                "a {}x{} {} tile needs {} bytes, but {} loads in flight already hold {held} of the {} bytes of UB; \
                 wait_load some of them first or use smaller tiles",
                load.shape.0,
                load.shape.1,
                load.dtype,
                load.bytes(),
                in_flight,
                self.chip().ub_bytes()
            );
            return self.bad(op, msg);
        }
        let issued = self.pipes.issue(load);
        let start = self.clock.max(self.pipes.gate(Pipe::Mte2));
        let caller = self.caller.take();
        let req = Request::Read { src: place, caller, start, ticket: Some(issued.ticket) };
        self.link.post(self.clock, self.clock, req);
        Ok(issued)
    }

    /// The tile of a load started with [`Ops::load_async`], once it is in UB (the consumer's
    /// wait for MTE2: the scalar unit waits here).
    pub async fn wait_load(&mut self, load: TileLoad) -> SimResult<Tile> {
        self.live("wait_load")?;
        if !self.pipes.has_arrived(load.ticket) {
            self.collect_ticket(load.ticket).await?;
        }
        match self.pipes.take_arrived(load.ticket) {
            Some(t) => Ok(t),
            None => self.bad("wait_load", "this load was not issued by this core".into()),
        }
    }

    /// Collects every load still in flight, keeping the tiles for their `wait_load`.
    async fn drain_loads(&mut self) -> SimResult<()> {
        for ticket in self.pipes.tickets() {
            self.collect_ticket(ticket).await?;
        }
        Ok(())
    }

    /// Collects load `ticket` into `collected` once it is in UB (if it is still in flight).
    async fn collect_ticket(&mut self, ticket: u64) -> SimResult<()> {
        let Some(load) = self.pipes.in_flight_load(ticket) else { return Ok(()) };
        let Reply::Data(bytes) = self.call(Request::Collect { ticket }).await? else {
            return self.bad("wait_load", "the scheduler answered a load without data".into());
        };
        let (r, c) = load.shape;
        let mut t = Tile::from_valid_bytes(load.dtype, r, c, load.valid, bytes);
        t.ready = self.clock;
        self.pipes.arrived(ticket, t);
        Ok(())
    }

    /// `set_flag(from, to, event)`: `to` may go on once everything issued to `from` so far
    /// has finished. Every flag set must be waited once with [`Ops::wait_flag`].
    pub fn set_flag(&mut self, from: Pipe, to: Pipe, event: u32) -> SimResult<()> {
        self.live("set_flag")?;
        self.flag_pipes("set_flag", from, to)?;
        let mark = self.pipes.mark(from, self.clock);
        self.pipes.set_flag(from, to, event, mark);
        Ok(())
    }

    /// `wait_flag(from, to, event)`: the next operation on `to` starts no earlier than the
    /// oldest matching `set_flag` fired. A wait with no flag set would hang the pipe on
    /// hardware; here it is an error naming the flag.
    pub async fn wait_flag(&mut self, from: Pipe, to: Pipe, event: u32) -> SimResult<()> {
        self.live("wait_flag")?;
        self.flag_pipes("wait_flag", from, to)?;
        let Some(mark) = self.pipes.take_flag(from, to, event) else {
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
        self.clock = self.clock.max(self.pipes.drained());
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
