//! Signal semantics (PyPTO's `NotifyOp`, `WaitCmp`, `AtomicType`): INT32 cells in a receiver's
//! window that senders notify and the receiver waits on.

use std::fmt;

/// How a notify changes its cell.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum NotifyOp {
    /// Signed 32-bit atomic add (wrapping); negative values are legal.
    AtomicAdd,
    /// Plain 32-bit store.
    Set,
}

/// How a wait compares a cell with its expected value (signed 32-bit).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum WaitCmp {
    /// The cell equals the expected value.
    Eq,
    /// The cell is at least the expected value.
    Ge,
}

impl WaitCmp {
    /// Whether `value cmp expected` holds (signed compare).
    pub fn holds(self, value: i32, expected: i32) -> bool {
        match self {
            WaitCmp::Eq => value == expected,
            WaitCmp::Ge => value >= expected,
        }
    }

    /// The operator as written in reports (`==`, `>=`).
    pub fn symbol(self) -> &'static str {
        match self {
            WaitCmp::Eq => "==",
            WaitCmp::Ge => ">=",
        }
    }
}

impl fmt::Display for WaitCmp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

/// Whether a remote store or put overwrites or accumulates.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum AtomicType {
    /// Plain overwrite.
    #[default]
    None,
    /// Element-wise atomic add; allowed for f32, f16, bf16, i32, i16, i8.
    Add,
}

/// The value a notify leaves in a cell holding `old`.
pub(crate) fn apply_notify(old: i32, op: NotifyOp, value: i32) -> i32 {
    match op {
        NotifyOp::AtomicAdd => old.wrapping_add(value),
        NotifyOp::Set => value,
    }
}

/// The deferred-wait test: the cell read as `u32` is at least `expected` (reference §2.6).
pub(crate) fn deferred_holds(value: i32, expected: u32) -> bool {
    value as u32 >= expected
}

/// The condition a waiter waits for: what the engine tests on every write of a waited cell,
/// what the checker records a satisfied wait under, and what a deadlock report says a blocked
/// wait needs.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Cond {
    /// `wait`: signed compare.
    Signed(WaitCmp, i32),
    /// `defer_wait`: the cell read as u32 is `>=` the value.
    UnsignedGe(u32),
}

impl Cond {
    /// Whether a cell holding `v` satisfies the condition.
    pub fn holds(self, v: i32) -> bool {
        match self {
            Cond::Signed(cmp, e) => cmp.holds(v, e),
            Cond::UnsignedGe(e) => deferred_holds(v, e),
        }
    }

    /// The value compared with.
    pub fn expected(self) -> i64 {
        match self {
            Cond::Signed(_, e) => i64::from(e),
            Cond::UnsignedGe(e) => i64::from(e),
        }
    }

    /// Whether the condition is "at least" (a `Ge` wait or a deferred one): a value below it
    /// left by a `Set` can never satisfy it.
    pub fn is_at_least(self) -> bool {
        matches!(self, Cond::Signed(WaitCmp::Ge, _) | Cond::UnsignedGe(_))
    }

    /// The comparison as reports print it: `==`, `>=`, or `>= (unsigned, deferred)`.
    pub fn symbol(self) -> &'static str {
        match self {
            Cond::Signed(c, _) => c.symbol(),
            Cond::UnsignedGe(_) => ">= (unsigned, deferred)",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_compares_signed_and_defer_unsigned() {
        assert!(WaitCmp::Ge.holds(1, 1));
        assert!(!WaitCmp::Ge.holds(-1, 1));
        assert!(!WaitCmp::Eq.holds(3, 2));
        // -1 reads as u32::MAX and satisfies every deferred condition.
        assert!(deferred_holds(-1, 5));
        assert!(!deferred_holds(4, 5));
    }

    #[test]
    fn notify_adds_signed_and_wraps() {
        assert_eq!(apply_notify(3, NotifyOp::AtomicAdd, -4), -1);
        assert_eq!(apply_notify(i32::MAX, NotifyOp::AtomicAdd, 1), i32::MIN);
        assert_eq!(apply_notify(9, NotifyOp::Set, 2), 2);
    }

    #[test]
    fn a_wait_condition_holds_as_its_kind_compares() {
        assert!(Cond::Signed(WaitCmp::Ge, 2).holds(3));
        assert!(!Cond::Signed(WaitCmp::Ge, 2).holds(-3));
        assert!(Cond::Signed(WaitCmp::Eq, -1).holds(-1));
        // A deferred condition reads the cell as u32: -1 is u32::MAX.
        assert!(Cond::UnsignedGe(2).holds(-1));
        assert!(!Cond::UnsignedGe(2).holds(1));
    }
}
