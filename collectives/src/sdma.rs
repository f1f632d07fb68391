//! The copy-engine steps the HCCL-class kernels share: put a flat run of elements to a peer,
//! and wait for what was posted, in posting order.

use sim_core::{Ops, SdmaHandle, SdmaOpts, SimResult, Tensor};

/// Puts elements `[lo, hi)` of the local `[1, n]` `flat` into the same place of `peer`'s,
/// with `opts` (an inline add, say); nothing for an empty run.
pub(crate) fn put_run(
    ops: &mut Ops,
    flat: &Tensor,
    peer: usize,
    (lo, hi): (usize, usize),
    opts: SdmaOpts,
) -> SimResult<Option<SdmaHandle>> {
    if lo == hi {
        return Ok(None);
    }
    let opts = opts.region(&[0, lo], &[0, lo], &[1, hi - lo]);
    ops.put_async(flat, peer, flat, &opts).map(Some)
}

/// Waits for every transfer of `posted`, in order.
pub(crate) async fn wait_all(ops: &mut Ops, posted: impl IntoIterator<Item = SdmaHandle>) -> SimResult<()> {
    for h in posted {
        ops.wait_async(h).await?;
    }
    Ok(())
}
