//! The scalar unit's own accesses: a signal test (one poll, no wait) and scalar reads and
//! writes of single GM elements. They cost the chip's poll / scalar-access time and move no
//! bytes through the DMA engines.

use super::Engine;
use super::event::{Event, Key};
use super::observe::OpAt;
use super::signals::Signals;
use crate::api::request::{OpKind, Reply};
use crate::base::addr::{Caller, Place, narrow};
use crate::base::payload::Payload;
use crate::base::time::SimTime;

impl Engine {
    /// TTEST: answers whether every cell `actor` polls satisfies the condition now (both kept
    /// in the actor's `polled`), after one poll. A core does not see a cell its own notify in
    /// flight is about to change: the test says no.
    pub(super) fn poll(&mut self, t: SimTime, actor: usize) {
        let (cells, cond) = &self.actors[actor].polled;
        let holds = !self.vis.notifying(actor, cells) && Signals::satisfied(&self.mem, cells, *cond);
        self.obs.test_polled(actor, cells, *cond, holds, t);
        self.reply(actor, t + self.chip.wait_poll(), Reply::Flag(holds));
    }

    /// A scalar read of one local GM element: the bytes as they are now, after one access.
    pub(super) fn scalar_read(&mut self, t: SimTime, actor: usize, src: &Place, caller: Caller) {
        self.obs.read(actor, src, OpAt::new(OpKind::ReadScalar, t, caller));
        let data = self.mem.read(src);
        self.obs.op_started(actor, OpKind::ReadScalar, t, data.len(), None);
        self.reply(actor, t + self.chip.scalar_gm_access(), Reply::Data(data));
    }

    /// A scalar write of one local GM element: it lands one access later.
    pub(super) fn scalar_write(&mut self, key: Key, actor: usize, dst: Place, data: Vec<u8>, caller: Caller) {
        let t = key.time;
        let ids = self.issue_write(actor, &dst, false, OpAt::new(OpKind::WriteScalar, t, caller));
        let land = Event::Land {
            dst,
            data: Payload::Bytes(data),
            atomic: None,
            writer: narrow(actor),
            op: OpKind::WriteScalar,
            ids,
        };
        self.push_derived(t + self.chip.scalar_gm_access(), key, land);
    }
}
