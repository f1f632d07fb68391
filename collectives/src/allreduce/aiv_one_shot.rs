//! The vendor library's one-shot AIV allreduce, what HCCL's AIV mode runs on one server at
//! and below [`ONE_SHOT_BYTES`] (its `aiv_all_reduce_910b_smalldata` kernel; the threshold is
//! `AIV_ALL_REDUCE_SMALL_SIZE`, [hccl-aiv] `aiv_communication_base.h`, docs/references/
//! hardware.md §4.2). Above it [`aiv_mesh`](super::aiv_mesh) runs the two-shot kernel.
//!
//! One block per rank of the domain, no steps: block 0 makes this rank's data readable and
//! flags every peer; block `k >= 1` waits for the flag of peer `src = me + k`, pulls its whole
//! buffer into UB in one load, and adds it into this rank's data with one atomic store. Every
//! link carries the data once, at the same time, and each block pays one flag wait: the
//! latency-bound shape HCCL picks for small messages.
//!
//! HCCL reads peers' communication buffers and writes a separate output, so its blocks add as
//! soon as the output holds the local input. The model's collective is in place (the data is
//! the window peers read), so a rank adds into it only once every peer has read it: block 0
//! collects a read-done flag from each peer before it lets its blocks add. That is one flag
//! crossing HCCL does not pay, in place of HCCL's local copy into the output, which the model
//! does not need. Block 0 still pays HCCL's copy of the input through UB into its buffer (a
//! copy in place here).
//!
//! Signal `[NR, core_num]`, core_num at least NR: cell `[p, 0]` counts peer `p`'s data as
//! readable, `[p, 1]` peer `p`'s read of this rank's data as done, `[me, k]` block 0's leave to
//! block `k` to add; each is taken back by the block that waited for it.

use super::Args;
use crate::lanes::{aiv_flag, aiv_wait_flag, take_back};
use sim_core::{AtomicType, NotifyOp, Ops, ReduceOp, SimResult, Tensor, WaitCmp};

/// Bytes up to which HCCL's AIV allreduce runs its one-shot kernel (`AIV_ALL_REDUCE_SMALL_SIZE`,
/// [hccl-aiv] `aiv_communication_base.h`: the small-data kernel runs while `len * sizeof(T)` is
/// at most 64 KiB).
pub(crate) const ONE_SHOT_BYTES: usize = 64 * 1024;

/// Whether a call of `numel` elements over `n` ranks on `blocks` blocks runs one shot: small
/// enough, a sum the chip can add atomically, and a block (and a signal lane) per rank; a
/// call that cannot (max / min / prod, or fewer blocks than ranks) runs the two-shot kernel.
pub(crate) fn applies(ops: &Ops, a: &Args, n: usize, blocks: usize) -> bool {
    let bytes = a.data.numel() * a.data.dtype().size();
    let lanes = a.sig.shape().get(1).copied().unwrap_or(1);
    n > 1
        && a.data.numel() > 0
        && bytes <= ONE_SHOT_BYTES
        && a.op == ReduceOp::Sum
        && ops.chip().atomic_add_supported(a.data.dtype())
        && blocks.min(lanes) >= n
}

/// Block `b` of the one-shot allreduce of rank `me` of `n` (see the module's doc).
pub(crate) async fn block(ops: &mut Ops, a: &Args, me: usize, n: usize, flat: &Tensor) -> SimResult<()> {
    let b = ops.block_idx();
    if b >= n {
        return Ok(());
    }
    ops.hccl_aiv_launch()?;
    ops.overlap_pipes();
    let (sig, shape) = (&a.sig, [1, a.data.numel()]);
    let peers = || (0..n).filter(move |&p| p != me);
    if b == 0 {
        // HCCL's copy of the input through UB into its communication buffer.
        let t = ops.load(flat, &[0, 0], &shape).await?;
        ops.store(&t, flat, &[0, 0])?;
        aiv_flag(ops, sig, peers(), me, 0).await?;
        // Every peer's read-done flag, then one cache invalidation for them all (the flags
        // land together; HCCL has no such wait, so the model adds no more than it must).
        for p in peers() {
            ops.wait(sig, &[p, 1], 1, WaitCmp::Ge).await?;
        }
        ops.dcci()?;
        for p in peers() {
            take_back(ops, sig, me, p, 1, 1)?;
        }
        return leave_to_add(ops, sig, me, n);
    }
    let src = (me + b) % n;
    aiv_wait_flag(ops, sig, src, 0, 1).await?;
    take_back(ops, sig, me, src, 0, 1)?;
    let theirs = ops.remote_load(flat, src, &[0, 0], &shape).await?;
    aiv_flag(ops, sig, [src], me, 1).await?;
    aiv_wait_flag(ops, sig, me, b, 1).await?;
    take_back(ops, sig, me, me, b, 1)?;
    ops.remote_store(&theirs, flat, me, &[0, 0], AtomicType::Add)?;
    ops.fence().await
}

/// Block 0's leave to each adding block `k`: one count on this rank's cell `[me, k]`, the
/// flag's cache line cleaned first as HCCL does.
fn leave_to_add(ops: &mut Ops, sig: &Tensor, me: usize, n: usize) -> SimResult<()> {
    ops.dcci()?;
    for k in 1..n {
        ops.notify(sig, me, &[me, k], 1, NotifyOp::AtomicAdd)?;
    }
    Ok(())
}
