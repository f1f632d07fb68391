//! The signal cell a kernel tested last, kept by its [`Ops`](super::Ops) so that a polling
//! loop resolves its cell once (`scalar.rs` tests it).

use crate::base::addr::Coords;
use crate::base::tensor::Tensor;

/// The cell a kernel tested last, so that a polling loop names it once: the tensor (held, so
/// that its address names it while cached) and the offsets. The scheduler keeps the resolved
/// cells of the core's last test, so a test of the same cell again is a
/// [`Request::Retest`](crate::api::request::Request::Retest).
#[derive(Default)]
pub(super) struct PolledCell {
    pub(super) signal: Option<Tensor>,
    pub(super) offsets: Coords,
}

impl PolledCell {
    /// Whether `signal[offsets]` is the cell tested last.
    pub(super) fn is(&self, signal: &Tensor, offsets: &[usize]) -> bool {
        match &self.signal {
            Some(s) => std::sync::Arc::ptr_eq(&s.0, &signal.0) && same(&self.offsets, offsets),
            None => false,
        }
    }
}

/// Whether two cells' coordinates are equal: compared in place (a signal's one or two
/// coordinates), not through `memcmp`.
fn same(a: &[usize], b: &[usize]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}
