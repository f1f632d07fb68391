//! One collective call as a workload: which collective, how it runs, on which element type and
//! ranks. The buffers it needs and the rules of which algorithms run on several blocks live
//! here, once; [`Call::alloc`] lays the buffers out and [`Call::queue`] queues the call through
//! the host API, which validates the operands.

use crate::host;
use crate::mode::Origin;
use crate::modes::{Engine, serving, signal_shape, signal_shape_on};
use crate::spec::{AllGather, AllReduce, Kind, Mode, Path};
use sim_core::{DType, Domain, ReduceOp, SimError, SimResult, Tensor, World};

/// One collective call: what runs (`kind`, `mode`, `path`), on what (`dtype`, `op`, `root`)
/// and where (`ranks`, `core_num` blocks per rank). Build it with [`Call::new`] and the
/// `with_*` setters; every field is public for reading.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// Which collective.
    pub kind: Kind,
    /// The algorithm (see [`crate::modes`] for which collective runs which).
    pub mode: Mode,
    /// The HOST builtin or the InCore lowering.
    pub path: Path,
    /// Element type of the data.
    pub dtype: DType,
    /// Reduce op (allreduce, reduce_scatter).
    pub op: ReduceOp,
    /// Root rank (broadcast).
    pub root: usize,
    /// Ranks taking part (the first `ranks` chips).
    pub ranks: usize,
    /// AIV blocks per rank asked for; see [`Call::blocks`] for those the call runs on.
    pub core_num: usize,
}

impl Call {
    /// `kind` on `ranks` ranks: mesh, HOST, f32, sum, root 0, one block.
    pub fn new(kind: Kind, ranks: usize) -> Call {
        Call {
            kind,
            mode: Mode::Mesh,
            path: Path::Host,
            dtype: DType::F32,
            op: ReduceOp::Sum,
            root: 0,
            ranks,
            core_num: 1,
        }
    }

    /// With algorithm `mode`.
    pub fn with_mode(self, mode: Mode) -> Call {
        Call { mode, ..self }
    }

    /// With lowering `path`.
    pub fn with_path(self, path: Path) -> Call {
        Call { path, ..self }
    }

    /// With element type `dtype`.
    pub fn with_dtype(self, dtype: DType) -> Call {
        Call { dtype, ..self }
    }

    /// With reduce op `op`.
    pub fn with_op(self, op: ReduceOp) -> Call {
        Call { op, ..self }
    }

    /// With root rank `root`.
    pub fn with_root(self, root: usize) -> Call {
        Call { root, ..self }
    }

    /// On `ranks` ranks.
    pub fn with_ranks(self, ranks: usize) -> Call {
        Call { ranks, ..self }
    }

    /// Asking for `core_num` blocks per rank.
    pub fn with_core_num(self, core_num: usize) -> Call {
        Call { core_num, ..self }
    }

    /// AIV blocks the call runs on: `core_num` for the multi-block algorithms (the HOST mesh,
    /// two-shot and HCCL-class allreduces, the HCCL-class allgather, reduce_scatter and all_to_all
    /// forms, the SDMA all_to_all_v, the SDMA broadcast; the AIV broadcast at least one per
    /// rank), 1 otherwise.
    pub fn blocks(&self) -> usize {
        crate::modes::row_or_builtin(self.kind, self.mode)
            .map_or(1, |r| r.blocks.of(self.path, self.core_num, self.ranks))
    }

    /// Whose algorithm the call runs: its row's origin ([`Serving::origin`](crate::modes::Serving::origin)),
    /// or its mode's for a mode the collective does not run.
    pub fn origin(&self) -> Origin {
        serving(self.kind, self.mode).map_or(self.mode.origin(), |row| row.origin)
    }

    /// Whether the collective reduces (uses `op`).
    pub fn reduces(&self) -> bool {
        matches!(self.kind, Kind::AllReduce | Kind::ReduceScatter)
    }

    /// The INT32 signal the call needs (see [`signal_shape`]), its ranks taken as one server.
    pub fn signal_shape(&self) -> Vec<usize> {
        signal_shape(self.kind, self.mode, self.path, self.ranks, self.blocks())
    }

    /// The INT32 signal the call needs on a machine of `server_ranks` ranks per server (see
    /// [`signal_shape_on`]; only `hier` depends on it).
    pub fn signal_shape_on(&self, server_ranks: usize) -> Vec<usize> {
        signal_shape_on(self.kind, self.mode, self.path, self.ranks, self.blocks(), server_ranks)
    }

    /// The data buffers of one rank for `count` elements per segment, as (name, shape) of
    /// `dtype` in allocation order: allreduce / broadcast `data [count]`, reduce_scatter
    /// `data [NR, count]`, allgather `stage [1, count]` and `target [NR, count]`, all_to_all(_v)
    /// `input [NR, count]` and `target [NR, count]`, barrier none. all_to_all_v's INT32 counts
    /// are not data (see [`Call::alloc`]).
    pub fn data_shapes(&self, count: usize) -> Vec<(&'static str, Vec<usize>)> {
        let n = self.ranks;
        match self.kind {
            Kind::AllReduce | Kind::Broadcast => vec![("data", vec![count])],
            Kind::ReduceScatter => vec![("data", vec![n, count])],
            Kind::AllGather => vec![("stage", vec![1, count]), ("target", vec![n, count])],
            Kind::AllToAll | Kind::AllToAllV => vec![("input", vec![n, count]), ("target", vec![n, count])],
            Kind::Barrier => Vec::new(),
        }
    }

    /// Data elements one rank holds for `count` elements per segment (saturating).
    pub fn data_elems(&self, count: u64) -> u64 {
        self.data_shapes(1).iter().fold(0u64, |sum, (_, shape)| {
            // Every shape is linear in `count`: its size at count 1, times count.
            let per: u64 = shape.iter().map(|&d| d as u64).product();
            sum.saturating_add(per.saturating_mul(count))
        })
    }

    /// Allocates the window buffers of one call with `count` elements per segment in `dom`:
    /// the signal first (shaped for `w`'s servers, [`Call::signal_shape_on`]), then
    /// [`Call::data_shapes`], then all_to_all_v's `send_counts [NR]` and `recv_counts [NR, 1]`.
    pub fn alloc(&self, w: &mut World, dom: &Domain, count: usize) -> SimResult<CallBuffers> {
        let signal = w.alloc_window(dom, "signal", DType::I32, &self.signal_shape_on(w.server_ranks()))?;
        let mut data = Vec::new();
        for (name, shape) in self.data_shapes(count) {
            data.push(w.alloc_window(dom, name, self.dtype, &shape)?);
        }
        let mut data = data.into_iter();
        let (input, target) = (data.next(), data.next());
        let counts = if self.kind == Kind::AllToAllV {
            let send = w.alloc_window(dom, "send_counts", DType::I32, &[self.ranks])?;
            let recv = w.alloc_window(dom, "recv_counts", DType::I32, &[self.ranks, 1])?;
            Some((send, recv))
        } else {
            None
        };
        Ok(CallBuffers { input, target, counts, signal })
    }

    /// Queues one call on every rank of the buffers' domain through the host API (which
    /// validates them).
    pub fn queue(&self, w: &mut World, b: &CallBuffers) -> SimResult<()> {
        let input = || b.input.clone().ok_or_else(|| SimError::invalid("no data buffer"));
        let target = || b.target.clone().ok_or_else(|| SimError::invalid("no target buffer"));
        let sig = &b.signal;
        match self.kind {
            Kind::AllReduce => {
                let how = AllReduce { op: self.op, mode: self.mode, path: self.path, core_num: self.blocks() };
                host::allreduce(w, &input()?, sig, how)
            }
            Kind::AllGather => {
                let how = AllGather { mode: self.mode, path: self.path, core_num: self.blocks() };
                host::allgather_with(w, &input()?, &target()?, sig, how)
            }
            Kind::ReduceScatter => {
                let how = AllGather { mode: self.mode, path: self.path, core_num: self.blocks() };
                host::reduce_scatter_with(w, &input()?, sig, self.op, how)
            }
            Kind::Broadcast => {
                let how = AllGather { mode: self.mode, path: self.path, core_num: self.blocks() };
                host::broadcast_with(w, &input()?, sig, self.root, how)
            }
            Kind::AllToAll => {
                let how = AllGather { mode: self.mode, path: self.path, core_num: self.blocks() };
                host::all_to_all_with(w, &input()?, &target()?, sig, how)
            }
            Kind::AllToAllV => {
                let (send, recv) = b.counts.clone().ok_or_else(|| SimError::invalid("no count buffers"))?;
                let how = AllGather { mode: self.mode, path: self.path, core_num: self.blocks() };
                host::all_to_all_v_with(w, &input()?, &target()?, &send, &recv, sig, how)
            }
            Kind::Barrier => host::barrier(w, sig, self.path),
        }
    }
}

/// The window buffers of one [`Call`], as [`Call::alloc`] lays them out.
#[derive(Clone, Debug)]
pub struct CallBuffers {
    /// The first data buffer (`data`, `stage` or `input`); `None` for a barrier.
    pub input: Option<Tensor>,
    /// The second (`target` of allgather and all_to_all(_v)).
    pub target: Option<Tensor>,
    /// all_to_all_v's `send_counts` and `recv_counts`.
    pub counts: Option<(Tensor, Tensor)>,
    /// The signal.
    pub signal: Tensor,
}

/// The note a sweep prints under a series of `call` (with `warmup` untimed calls first): what
/// it models, PyPTO's builtin as written or the vendor library's algorithm, and on how many
/// blocks; a builtin on the InCore path is PyPTO's composite lowering.
pub fn sweep_note(call: &Call, warmup: u32) -> String {
    let (kind, row) = (call.kind, serving(call.kind, call.mode));
    if call.path == Path::InCore && call.origin() == Origin::Builtin {
        return format!("the InCore lowering of PyPTO's {kind} (one block, called from a kernel)");
    }
    let Some(row) = row else {
        return format!("PyPTO's builtin {kind} kernel as written, on {} block(s) per rank", call.blocks());
    };
    let cold = if row.engine == Engine::CopyEngines && warmup == 0 {
        "; its first call pays the channels' cold start (add -w 1)"
    } else {
        ""
    };
    format!("{}{cold}, on {} block(s) per rank", row.note, call.blocks())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setters_change_one_field_and_blocks_follow_the_algorithm() {
        let c = Call::new(Kind::AllReduce, 4).with_core_num(8);
        assert_eq!((c.mode, c.path, c.dtype, c.op, c.root), (Mode::Mesh, Path::Host, DType::F32, ReduceOp::Sum, 0));
        assert_eq!(c.blocks(), 8);
        assert_eq!(c.with_mode(Mode::Ring).blocks(), 1);
        assert_eq!(c.with_path(Path::InCore).blocks(), 1);
        assert_eq!(Call { kind: Kind::AllGather, ..c }.blocks(), 1);
        assert_eq!(Call { kind: Kind::AllGather, ..c }.with_mode(Mode::SdmaMesh).blocks(), 8);
        assert_eq!(c.signal_shape(), vec![4, 8]);
        assert!(c.reduces() && !Call::new(Kind::Broadcast, 4).reduces());
    }

    #[test]
    fn data_shapes_and_elements_agree() {
        for kind in Kind::ALL {
            let c = Call::new(kind, 4);
            let elems: u64 = c.data_shapes(10).iter().map(|(_, s)| s.iter().product::<usize>() as u64).sum();
            assert_eq!(c.data_elems(10), elems, "{kind}");
        }
        assert_eq!(Call::new(Kind::AllGather, 4).data_elems(10), 50);
        assert_eq!(Call::new(Kind::Barrier, 4).data_elems(10), 0);
    }
}
