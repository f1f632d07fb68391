//! The InCore composites, callable from your own kernel: write the kernel as `async` code on
//! [`Ops`] (or call them through `core.run(..)` from a thread kernel):
//!
//! ```ignore
//! Dispatch::kernel("step", 1, move |core| {
//!     core.run(async |ops| collectives::incore::allreduce(ops, &data, &sig, ReduceOp::Sum, Mode::Mesh).await)
//! })
//! ```
//!
//! Signals are `[NR, 1]` (ring: `[2(NR-1), NR]`, rhd: `[2 + 3 log2(NR), 1]`, hier: see
//! [`allreduce_hier`]) and the composite runs on the calling block.
//! Operands are checked as the host API checks them.

use crate::algorithm::CallArgs;
use crate::allreduce::{self, hier};
use crate::spec::{Kind, Mode};
use crate::{all_to_all as a2a, allgather as ag, barrier as bar, broadcast as bc, reduce_scatter as rs};
use sim_core::{Ops, ReduceOp, SimResult, Tensor};

/// The allreduce composite (`mode`: mesh, ring, two-shot, aiv-mesh, sdma-mesh or rhd; `hier`
/// needs the server size, so it is [`allreduce_hier`]).
pub async fn allreduce(ops: &mut Ops, data: &Tensor, signal: &Tensor, op: ReduceOp, mode: Mode) -> SimResult<()> {
    let (src, sig) = (data.clone(), signal.clone());
    let a = CallArgs { dst: src.clone(), src, sig, op, root: 0, server: 1, counts: None };
    match crate::modes::serving(Kind::AllReduce, mode).map(|row| row.algorithm) {
        Some(algorithm) if !algorithm.needs_server => (algorithm.incore)(ops, &a).await,
        Some(_) => Err(ops.error(
            "allreduce",
            format!("{mode} needs the machine's ranks per server: call collectives::incore::allreduce_hier"),
        )),
        None => Err(ops.error("allreduce", format!("{mode} is not an allreduce algorithm"))),
    }
}

/// The hierarchical allreduce composite ([`Mode::Hier`]) on servers of `server_ranks` ranks
/// (the host's [`World::server_ranks`](sim_core::World::server_ranks)): signal
/// [`signal_shape_on`](crate::modes::signal_shape_on)`(AllReduce, Hier, InCore, NR, 1, server_ranks)`.
pub async fn allreduce_hier(
    ops: &mut Ops,
    data: &Tensor,
    signal: &Tensor,
    op: ReduceOp,
    server_ranks: usize,
) -> SimResult<()> {
    hier::block(ops, &allreduce::Args { data: data.clone(), sig: signal.clone(), op, server: server_ranks }).await
}

/// The barrier composite.
pub async fn barrier(ops: &mut Ops, signal: &Tensor) -> SimResult<()> {
    bar::kernel(ops, signal).await
}

/// The broadcast composite: barrier, then every non-root gets the root's `data`.
pub async fn broadcast(ops: &mut Ops, data: &Tensor, signal: &Tensor, root: usize) -> SimResult<()> {
    bc::incore(ops, &bc::Args { data: data.clone(), sig: signal.clone(), root }).await
}

/// The allgather composite: put `stage` into row `me` of every rank's `target`.
pub async fn allgather(ops: &mut Ops, stage: &Tensor, target: &Tensor, signal: &Tensor) -> SimResult<()> {
    ag::incore(ops, &ag::Args { stage: stage.clone(), target: target.clone(), sig: signal.clone() }).await
}

/// The reduce_scatter composite on `[NR, R]` data: row `me` becomes the sum over ranks.
pub async fn reduce_scatter(ops: &mut Ops, data: &Tensor, signal: &Tensor, op: ReduceOp) -> SimResult<()> {
    if op != ReduceOp::Sum {
        return Err(ops.error("reduce_scatter", format!("op {op} is not supported; reduce_scatter is Sum only")));
    }
    rs::incore(ops, &rs::Args { data: data.clone(), sig: signal.clone(), op }).await
}

/// The all_to_all composite (PyPTO's builtin lowering).
pub async fn all_to_all(ops: &mut Ops, input: &Tensor, target: &Tensor, signal: &Tensor) -> SimResult<()> {
    a2a::incore(ops, &a2a::Args { input: input.clone(), target: target.clone(), sig: signal.clone() }).await
}

/// The all_to_all_v composite.
pub async fn all_to_all_v(
    ops: &mut Ops,
    input: &Tensor,
    target: &Tensor,
    send_counts: &Tensor,
    recv_counts: &Tensor,
    signal: &Tensor,
) -> SimResult<()> {
    let a = a2a::ArgsV {
        input: input.clone(),
        target: target.clone(),
        send_counts: send_counts.clone(),
        recv_counts: recv_counts.clone(),
        sig: signal.clone(),
    };
    a2a::incore_v(ops, &a).await
}
