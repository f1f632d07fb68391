//! What each actor polls: the cells of its last test and their condition (`scalar.rs`
//! answers the polls).

use crate::base::addr::{Caller, Cells};
use crate::base::signal::{Cond, WaitCmp};

/// What an actor tests when it polls: the cells of its last [`Request::Test`], the condition
/// of its latest test, and where the memory keeps its one cell once found (timing-only runs),
/// so a polling loop finds its cell once.
///
/// [`Request::Test`]: crate::api::request::Request::Test
#[derive(Clone, Debug)]
pub(in crate::sim::engine) struct Polled {
    pub(in crate::sim::engine) cells: Cells,
    pub(in crate::sim::engine) cond: Cond,
    pub(in crate::sim::engine) place: Option<usize>,
    /// Where the kernel first tested these cells (a retest records none), for reports.
    pub(in crate::sim::engine) caller: Caller,
}

impl Polled {
    pub(in crate::sim::engine) fn new(cells: Cells, cond: Cond, caller: Caller) -> Polled {
        Polled { cells, cond, place: None, caller }
    }
}

impl Default for Polled {
    fn default() -> Polled {
        Polled::new(Cells::default(), Cond::Signed(WaitCmp::Ge, 0), None)
    }
}
