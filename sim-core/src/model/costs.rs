//! The chip's fixed costs in nanoseconds, each declared once, in [`for_each_chip_cost`]: its
//! doc, its field of [`ChipCosts`] and its `[chip]` key. From that one list come
//! [`ChipCosts`], which a chip model answers ([`ChipTiming::costs`](super::ChipTiming::costs))
//! and kernels and collectives charge (`chip.costs().dcci`); [`ChipCosts::KEYS`], the keys with
//! their docs for listings; and `chip-model`'s `[chip]` fields, which it builds from the list.
//! A new fixed cost is one entry here, its use, its value in the base preset, and a test.

use crate::base::time::SimDuration;

/// Calls `$m! { required { ... } optional { ... } }` with every fixed cost of a chip, each as
/// its doc, its field of [`ChipCosts`] and its `[chip]` key (in ns). A config must give the
/// required ones; an optional one it leaves out is 0, not charged. `chip-model` builds its
/// `[chip]` fields from this list, as this module builds [`ChipCosts`].
#[macro_export]
macro_rules! for_each_chip_cost {
    ($m:ident) => {
        $m! {
            required {
                /// Time a core spends issuing one notify (atomic or plain 32-bit store plus fences).
                notify_issue: notify_issue_ns,
                /// Time between a satisfying signal write landing and the waiting core resuming; also
                /// the time of one signal test.
                wait_poll: wait_poll_ns,
                /// Device-side gap between two dispatches on one chip (launch of the next kernel).
                dispatch_launch: dispatch_launch_ns,
                /// Time from a task being placed on a core to its kernel starting (task pickup).
                task_start: task_start_ns,
            }
            optional {
                /// Time of one cache clean-and-invalidate of a GM line by the scalar unit (pto-isa's
                /// `dcci`, which a ready-queue producer runs after writing a slot).
                dcci: dcci_ns,
                /// Fixed cost an HCCL-class AIV collective kernel pays on each block before its first
                /// transfer (kernel launch, argument and flag-area setup, the cache maintenance of its
                /// flags beyond `dcci`).
                hccl_aiv_launch: hccl_aiv_launch_ns,
            }
        }
    };
}

/// One fixed cost's `[chip]` key, as [`ChipCosts::KEYS`] lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CostKey {
    /// The key in `[chip]`, in ns (`dcci_ns`).
    pub key: &'static str,
    /// What it costs.
    pub doc: &'static str,
    /// Whether a config must give it (else it is 0 when left out).
    pub required: bool,
}

macro_rules! chip_costs {
    (
        required { $( $(#[doc = $rdoc:literal])* $rname:ident : $rkey:ident, )* }
        optional { $( $(#[doc = $odoc:literal])* $oname:ident : $okey:ident, )* }
    ) => {
        /// A chip's fixed costs (see the module docs), each from its `[chip]` key in ns.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct ChipCosts {
            $( $(#[doc = $rdoc])* pub $rname: SimDuration, )*
            $( $(#[doc = $odoc])* pub $oname: SimDuration, )*
        }

        impl ChipCosts {
            /// Every fixed cost's key, doc and whether a config must give it, in the list's order.
            pub const KEYS: &'static [CostKey] = &[
                $( CostKey { key: stringify!($rkey), doc: concat!($($rdoc),*), required: true }, )*
                $( CostKey { key: stringify!($okey), doc: concat!($($odoc),*), required: false }, )*
            ];

            /// The costs from their keys: `ns(key)` reads and checks one (`Err` stops at it).
            pub fn from_keys<E>(mut ns: impl FnMut(&'static str) -> Result<SimDuration, E>) -> Result<ChipCosts, E> {
                Ok(ChipCosts { $( $rname: ns(stringify!($rkey))?, )* $( $oname: ns(stringify!($okey))?, )* })
            }
        }
    };
}

for_each_chip_cost!(chip_costs);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cost_is_read_from_its_key_in_the_lists_order() {
        let keys: Vec<&str> = ChipCosts::KEYS.iter().map(|k| k.key).collect();
        assert_eq!(
            keys,
            ["notify_issue_ns", "wait_poll_ns", "dispatch_launch_ns", "task_start_ns", "dcci_ns", "hccl_aiv_launch_ns"]
        );
        assert!(ChipCosts::KEYS.iter().all(|k| k.key.ends_with("_ns") && !k.doc.is_empty()));
        let mut n = 0;
        let c = ChipCosts::from_keys(|_| {
            n += 1;
            Ok::<_, ()>(SimDuration::from_ns(n))
        })
        .unwrap();
        assert_eq!(
            (c.notify_issue, c.task_start, c.hccl_aiv_launch),
            (SimDuration::from_ns(1), SimDuration::from_ns(4), SimDuration::from_ns(6))
        );
        assert_eq!(
            ChipCosts::from_keys(|k| if k == "dcci_ns" { Err(k) } else { Ok(SimDuration::ZERO) }),
            Err("dcci_ns")
        );
    }
}
