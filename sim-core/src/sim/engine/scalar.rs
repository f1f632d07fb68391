//! The scalar unit's own accesses: a signal test (one poll, no wait) and scalar reads and
//! writes of single GM elements. They cost the chip's poll / scalar-access time and move no
//! bytes through the DMA engines.

use super::Engine;
use super::event::{Event, Key};
use super::livelock::Spun;
use super::observe::OpAt;
use super::signals::Signals;
use crate::api::request::{OpKind, Reply};
use crate::base::addr::{Caller, Cells, Place, narrow};
use crate::base::payload::Payload;
use crate::base::time::SimTime;

impl Engine {
    /// TTEST: answers whether every cell `actor` polls satisfies the condition now (both kept
    /// in the actor's [`Polled`]), after one poll. A core does not see a cell its own notify
    /// in flight is about to change: the test says no.
    pub(super) fn poll(&mut self, t: SimTime, actor: usize) {
        let p = &mut self.actors[actor].polled;
        let holds = !self.vis.notifying(actor, &p.cells)
            && match (p.place, &p.cells) {
                (Some(place), _) => p.cond.holds(self.mem.cell_in(place)),
                (None, Cells::One(c)) => {
                    let (value, place) = self.mem.cell_and_place(c);
                    p.place = place;
                    p.cond.holds(value)
                }
                (None, cells) => Signals::satisfied(&self.mem, cells, p.cond),
            };
        self.obs.test_polled(actor, &p.cells, p.cond, holds, t);
        self.spun(actor, t, if holds { Spun::Held } else { Spun::Test });
        self.reply(actor, t + self.chip.wait_poll(), Reply::Flag(holds));
    }

    /// A scalar read of one local GM element: the bytes as they are now, after one access.
    pub(super) fn scalar_read(&mut self, t: SimTime, actor: usize, src: Place, caller: Caller) {
        self.obs.read(actor, &src, OpAt::new(OpKind::ReadScalar, t, caller));
        let data = self.mem.read(&src);
        self.obs.op_started(actor, OpKind::ReadScalar, t, data.len(), None);
        self.spun(actor, t, Spun::Read(src, caller));
        self.reply(actor, t + self.chip.scalar_gm_access(), Reply::Data(data));
    }

    /// A scalar write of one local GM element: it lands one access later.
    pub(super) fn scalar_write(&mut self, key: Key, actor: usize, dst: Place, data: Vec<u8>, caller: Caller) {
        let t = key.time;
        let ids = self.issue_write(actor, &dst, false, OpAt::new(OpKind::WriteScalar, t, caller));
        let land = Event::Land {
            dst,
            data: Payload::of(data),
            atomic: None,
            writer: narrow(actor),
            op: OpKind::WriteScalar,
            ids,
        };
        self.push_derived(t + self.chip.scalar_gm_access(), key, land);
    }
}
