//! HCCL's communication-buffer staging for its copy-engine (SDMA) collectives. In op-base
//! mode a peer can reach only a rank's communication buffers (`HCCL_BUFFSIZE` each, 200 MiB
//! by default), not its user buffers, so HCCL copies user data in, moves it between the
//! ranks' buffers, and copies results out, one buffer-full at a time, handshaking with every
//! peer around each transfer. The loop runs chunk after chunk on HCCL's main stream, so one
//! chunk's copies do not overlap another's transfers (CANN HCCL, e.g.
//! `CollReduceScatterExecutor::RunLoop` / `RunLoopInner` and `CollBroadcastExecutor::RunLoop`,
//! GitHub yzh1703456/cann-hccl @ d218e8b0, `src/domain/collective_communication/algorithm/impl/
//! coll_executor/`; docs/references/hardware.md §4.5).
//!
//! The model keeps one buffer per collective (the window the caller passed): a staging copy is
//! a local copy-engine copy of a region onto itself, which crosses the chip's HBM as HCCL's
//! device-to-device copy does (read and write) and leaves the data where the algorithm reads
//! it next.

use sim_core::{Ops, SdmaHandle, SdmaOpts, SimResult, Tensor};

/// The column ranges `[lo, hi)` a staged pass over `cols` columns runs in when one column
/// takes `col_bytes` of a buffer of `buffer_bytes`: every range but the last fills the buffer
/// (at least one column each), as HCCL's loop does; one empty range for no columns.
pub(crate) fn chunks(cols: usize, col_bytes: usize, buffer_bytes: u64) -> Vec<(usize, usize)> {
    if cols == 0 {
        return vec![(0, 0)];
    }
    let per = usize::try_from(buffer_bytes / col_bytes.max(1) as u64).unwrap_or(usize::MAX).max(1);
    (0..cols).step_by(per).map(|lo| (lo, cols.min(lo.saturating_add(per)))).collect()
}

/// Block `b`'s share of `[lo, hi)` when `active` blocks split it.
pub(crate) fn share((lo, hi): (usize, usize), b: usize, active: usize) -> (usize, usize) {
    let w = hi - lo;
    (lo + b * w / active, lo + (b + 1) * w / active)
}

/// Posts one staging copy (HCCL's `HcclD2DMemcpyAsync` between a user buffer and a
/// communication buffer) of the `rows x (hi - lo)` region of `t` at row `row`, column `lo`,
/// onto itself; nothing for an empty one.
pub(crate) fn copy(
    ops: &mut Ops,
    t: &Tensor,
    me: usize,
    (row, rows): (usize, usize),
    (lo, hi): (usize, usize),
) -> SimResult<Option<SdmaHandle>> {
    if lo == hi || rows == 0 {
        return Ok(None);
    }
    let opts = SdmaOpts::new().region(&[row, lo], &[row, lo], &[rows, hi - lo]);
    ops.put_async(t, me, t, &opts).map(Some)
}

/// Copies as [`copy`] and waits for it.
pub(crate) async fn copy_now(
    ops: &mut Ops,
    t: &Tensor,
    me: usize,
    rows: (usize, usize),
    cols: (usize, usize),
) -> SimResult<()> {
    if let Some(h) = copy(ops, t, me, rows, cols)? {
        ops.wait_async(h).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_fill_the_buffer_and_leave_the_rest_last() {
        assert_eq!(chunks(10, 4, 40), vec![(0, 10)]);
        assert_eq!(chunks(10, 4, 16), vec![(0, 4), (4, 8), (8, 10)]);
        // A column larger than the buffer still moves, one at a time.
        assert_eq!(chunks(3, 64, 16), vec![(0, 1), (1, 2), (2, 3)]);
        assert_eq!(chunks(0, 4, 16), vec![(0, 0)]);
        assert_eq!(share((10, 20), 0, 3), (10, 13));
        assert_eq!(share((10, 20), 2, 3), (16, 20));
    }
}
