//! The user's observers of a world's runs: attached once, they watch every later run (and
//! each of [`World::check`]'s reruns) until taken back.

use super::World;
use crate::sim::observe::Observe;

impl World {
    /// Attaches `observer` to every later run of this world (and to each run of
    /// [`World::check`]): it sees the facts of [`Observe`] as the scheduler applies events,
    /// from [`Observe::run_started`] to [`Observe::run_ended`]. Observers are called in the
    /// order they were attached. An observer changes nothing of a run: the same bytes at the
    /// same times, the same report. Its results reach the host through state it shares (an
    /// `Arc<Mutex<..>>` it holds a clone of), or through [`World::take_observers`].
    ///
    /// An observer whose [`Observe::wants_links`] is true makes the scheduler collect link
    /// occupancy ([`Observe::link_busy`]) even in an untraced run; local work
    /// (`compute`, `vector`, ... spans) is reported by kernels only in a traced run
    /// ([`RunOptions::trace`](crate::RunOptions::trace)).
    pub fn observe(&mut self, observer: Box<dyn Observe + Send>) {
        self.observers.push(observer);
    }

    /// Detaches every observer and hands them back, in the order they were attached; later
    /// runs are watched by the built-in observers only.
    pub fn take_observers(&mut self) -> Vec<Box<dyn Observe + Send>> {
        std::mem::take(&mut self.observers)
    }
}
