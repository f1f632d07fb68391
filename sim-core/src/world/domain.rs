//! One comm domain as the world keeps it: the options it was created with
//! ([`DomainOptions`]) and its state across runs (`DomainState`). The host's operations on
//! domains are in `domains.rs`.

use crate::base::tensor::Domain;

/// Lifetime of a comm domain's windows across runs (reference §1.7).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct DomainOptions {
    /// Keep the windows across runs (`persistent=True`).
    pub persistent: bool,
    /// Zero a persistent domain's windows before each reuse. `None` means "same as
    /// `persistent`"; `Some(true)` without `persistent` is an error, as in PyPTO.
    pub reset: Option<bool>,
}

impl DomainOptions {
    /// Persistent windows, zeroed before each reuse (PyPTO's default for `persistent=True`).
    pub fn persistent() -> DomainOptions {
        DomainOptions { persistent: true, reset: None }
    }

    /// Persistent windows that keep their contents across runs (epoch protocols).
    pub fn persistent_no_reset() -> DomainOptions {
        DomainOptions { persistent: true, reset: Some(false) }
    }

    /// Whether contents survive from one run to the next.
    pub(super) fn keeps_contents(self) -> bool {
        self.persistent && self.reset == Some(false)
    }
}

pub(super) struct DomainState {
    pub(super) domain: Domain,
    pub(super) opts: DomainOptions,
    pub(super) names: Vec<String>,
    pub(super) bytes: usize,
    /// A run has used the windows since they were last zeroed.
    pub(super) dirty: bool,
    /// `window_size` of `World::allocate_domain`: the windows may hold at most this many bytes.
    pub(super) limit: Option<usize>,
    /// `World::release_domain` was called; the windows are freed at the next run fence.
    pub(super) released: bool,
}
