//! The replay of a split run's facts: each recorded [`Fact`] told again to one engine's
//! observers, its ids numbered as one engine would have, generated from the list of facts
//! (each argument renumbered and lent back by its [`Keep`]).

use super::Observers;
use super::keep::{IdMap, Keep, Renumber};
use super::record::Fact;
use crate::base::signal::{Cond, NotifyOp};
use crate::base::time::SimTime;
use crate::results::trace::LinkBusy;
// The types the list of facts names, which the generated code spells.
use crate::sim::observe::{
    BlockStart, CoreId, EqWaiters, MemRegion, Observe, OpAt, OpId, OpInfo, SdmaId, SignalCell, SignalCells, WriteId,
    for_each_fact,
};

impl Observers {
    /// Feeds `facts` (in one engine's order) to these observers, numbering ids again.
    pub(crate) fn replay(&mut self, facts: Vec<Fact>) {
        let mut map = IdMap::default();
        for f in facts {
            self.replay_one(&mut map, f);
        }
    }
}

/// `Observers::replay_one`: one recorded fact, its arguments renumbered, lent back and fanned
/// out.
macro_rules! replayed_facts {
    ($($(#[$doc:meta])* $variant:ident $method:ident($($arg:ident: $ty:ty),*);)*) => {
        impl Observers {
            fn replay_one(&mut self, map: &mut IdMap, fact: Fact) {
                match fact {
                    $(
                        Fact::$variant { $($arg),* } => {
                            let mut renumber = Renumber { ids: &mut self.ids, map };
                            $(let $arg = <fn($ty) as Keep>::renumber($arg, &mut renumber);)*
                            $(let $arg = <fn($ty) as Keep>::view(&$arg);)*
                            fan!(self.$method($(<fn($ty) as Keep>::pass(&$arg)),*));
                        }
                    )*
                }
            }
        }
    };
}

for_each_fact!(replayed_facts);
