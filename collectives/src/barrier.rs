//! barrier: one credit round and its epilogue (reference §3.6); the InCore composite is the
//! same protocol on a `[NR, 1]` signal.

use crate::algorithm::{Algorithm, CallArgs};
use crate::lanes::{Lanes, ranks};
use sim_core::{Ops, SimResult, Tensor};

/// Notify every peer's `signal[me]` +1, wait for every local `signal[peer] >= 1`, then take
/// the credit back (`AtomicAdd(-1)`, not `Set(0)`: a fast peer may already have re-entered).
pub(crate) async fn kernel(ops: &mut Ops, sig: &Tensor) -> SimResult<()> {
    let (me, n) = ranks(ops, sig, "barrier")?;
    let lanes = Lanes::per_rank(sig);
    lanes.barrier(ops, me, n, 1).await?;
    lanes.epilogue(ops, me, n, 1)
}

/// The barrier over a host call's signal.
async fn call(ops: &mut Ops, c: &CallArgs) -> SimResult<()> {
    kernel(ops, &c.sig).await
}

/// PyPTO's builtin barrier, the same protocol on both paths: signal `[NR]` (HOST) or `[NR, 1]`.
pub(crate) const ALGORITHM: Algorithm = Algorithm::both(|_, o| o.rank_signal(), |ops, c| Box::pin(call(ops, c)));
