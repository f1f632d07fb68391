//! What the scalar unit does by itself: test a signal without waiting (TTEST) and read or
//! write single GM elements (`pl.read` / `pl.write`). Each costs the chip's poll or
//! scalar-access time on the scalar unit and moves nothing through the DMA engines, so a
//! polling loop or a ready queue is priced as written.

use super::ops::{Ops, ones};
use super::polled::PolledCell;
use crate::api::request::{Reply, Request};
use crate::base::addr::{Cells, Coords};
use crate::base::error::SimResult;
use crate::base::signal::WaitCmp;
use crate::base::tensor::Tensor;
use std::panic::Location;

impl Ops {
    /// Whether cell `offsets` of this rank's `signal` satisfies `cmp expected` now (signed;
    /// TTEST). One poll; never waits.
    pub async fn test_signal(
        &mut self,
        signal: &Tensor,
        offsets: &[usize],
        expected: i32,
        cmp: WaitCmp,
    ) -> SimResult<bool> {
        let reply = if self.is_retest(signal, offsets)? {
            // Polled again: no request is built (the link's short way).
            self.retest(expected, cmp).await?
        } else {
            let req = self.first_test(signal, offsets, expected, cmp)?;
            self.call(req).await?
        };
        self.test_reply(reply)
    }

    /// Whether a test of `signal[offsets]` tests the cell tested last (checked).
    pub(crate) fn is_retest(&mut self, signal: &Tensor, offsets: &[usize]) -> SimResult<bool> {
        self.live("test_signal")?;
        let again = self.polled.is(signal, offsets);
        if again {
            // The scheduler keeps the first test's caller.
            self.caller = None;
        }
        Ok(again)
    }

    /// The request of a test of another cell than the last (checked).
    pub(crate) fn first_test(
        &mut self,
        signal: &Tensor,
        offsets: &[usize],
        expected: i32,
        cmp: WaitCmp,
    ) -> SimResult<Request> {
        // One cell, resolved as `wait` resolves it (the same checks and messages as a region
        // of ones, without building one).
        let cell = self.cell("test_signal", signal, None, offsets)?;
        self.polled = PolledCell { signal: Some(signal.clone()), offsets: Coords::new(offsets) };
        let caller = self.caller.take();
        Ok(Request::Test { cells: Cells::from(cell), expected, cmp, caller })
    }

    /// What [`Ops::test_signal`] returns for the scheduler's `reply`.
    pub(crate) fn test_reply(&mut self, reply: Reply) -> SimResult<bool> {
        match reply {
            Reply::Flag(holds) => Ok(holds),
            _ => self.bad("test_signal", "the scheduler answered a test without a flag".into()),
        }
    }

    /// Reads element `offsets` of a local GM tensor or of this rank's window with the scalar
    /// unit (`pl.read`), as f64 (exact for every dtype).
    pub async fn read_scalar(&mut self, src: &Tensor, offsets: &[usize]) -> SimResult<f64> {
        self.live("read_scalar")?;
        let place = self.place("read_scalar", src, None, offsets, &ones(src.shape().len()))?;
        let caller = self.caller.take();
        if self.self_notified && place.chip() == self.world_rank() {
            // The core's own notify into its own window lands before its later read of that
            // window: program order on one core (a self-notify then `pl.read` of the cell
            // reads the notified value, as PyPTO's self-notify credit reset relies on).
            self.self_notified = false;
            self.call(Request::Fence).await?;
        }
        match self.call(Request::ScalarRead { src: place, caller }).await? {
            Reply::Data(bytes) => Ok(src.dtype().read_f64(&bytes.into_bytes(), 0)),
            _ => self.bad("read_scalar", "the scheduler answered a scalar read without data".into()),
        }
    }

    /// Writes `value` (rounded to nearest for floats, saturated for integers) into element
    /// `offsets` of a local GM tensor or of this rank's window with the scalar unit
    /// (`pl.write`). Posted: it lands one scalar access later.
    #[track_caller]
    pub fn write_scalar(&mut self, dst: &Tensor, offsets: &[usize], value: f64) -> SimResult<()> {
        let caller = self.caller.take().or(Some(Location::caller()));
        self.live("write_scalar")?;
        let place = self.place("write_scalar", dst, None, offsets, &ones(dst.shape().len()))?;
        let mut data = vec![0u8; dst.dtype().size()];
        dst.dtype().write_f64(&mut data, 0, value);
        let at = self.clock;
        self.clock += self.chip().scalar_gm_access();
        self.link.post(at, self.clock, Request::ScalarWrite { dst: place, data, caller });
        Ok(())
    }

    /// Cleans and invalidates the scalar unit's cache line (pto-isa's `dcci`, run after a
    /// ready-queue slot is written so the consumer sees it): costs `chip.dcci_ns` on the
    /// core. The model keeps no cache, so scalar GM accesses always see memory; the cost is
    /// what a kernel ported from pto-isa pays for it.
    pub fn dcci(&mut self) -> SimResult<()> {
        self.live("dcci")?;
        self.clock += self.chip().dcci();
        Ok(())
    }

    /// The fixed start-up of an HCCL-class AIV collective kernel on this block: costs
    /// `chip.hccl_aiv_launch_ns` on the core (the collectives library calls it first).
    pub fn hccl_aiv_launch(&mut self) -> SimResult<()> {
        self.live("hccl_aiv_launch")?;
        self.clock += self.chip().hccl_aiv_launch();
        Ok(())
    }
}
