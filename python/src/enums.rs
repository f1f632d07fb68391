//! The kernel API's enums as typed Python classes (`ranksim.NotifyOp`, `WaitCmp`,
//! `AtomicType`, `CmpOp`), each declared once by [`py_enum!`]: the `#[pyclass]` with PyPTO's
//! codes (`ranksim.pypto.language.distributed` uses these very classes), and the argument type
//! an operation takes, which accepts the class, its PyPTO code, or the name a string gave before
//! the classes existed.

use crate::errors::bad;
use pyo3::prelude::*;
use sim_core::{AtomicType, CmpOp, NotifyOp, WaitCmp};

/// Declares a Python enum class `$py` (named `$name`) of `$rust`'s values with PyPTO's codes,
/// and `$arg`, the argument that takes it (or its code, or one of a variant's string names;
/// another string fails with `$unknown` and the string, then `$expected`).
macro_rules! py_enum {
    (
        $(#[$doc:meta])* $py:ident $name:literal for $rust:ident, argument $arg:ident,
        unknown $unknown:literal expected $expected:literal {
            $($(#[$vdoc:meta])* $variant:ident $(as $vname:literal)? = $code:literal => $value:ident [$($alias:literal),*],)*
        }
    ) => {
        $(#[$doc])*
        #[pyclass(name = $name, module = "ranksim", eq, eq_int, frozen, hash)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub(crate) enum $py {
            $($(#[$vdoc])* $(#[pyo3(name = $vname)])? $variant = $code,)*
        }

        impl From<$py> for $rust {
            fn from(v: $py) -> $rust {
                match v {
                    $($py::$variant => $rust::$value,)*
                }
            }
        }

        #[doc = concat!("An argument of kind `", $name, "`: the class, its code, or a name.")]
        pub(crate) struct $arg(pub(crate) $rust);

        impl<'a, 'py> FromPyObject<'a, 'py> for $arg {
            type Error = PyErr;

            fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
                if let Ok(v) = obj.cast::<$py>() {
                    return Ok($arg(v.get().clone().into()));
                }
                let text = match obj.extract::<i64>() {
                    Ok(code) => code.to_string(),
                    Err(_) => obj.str()?.to_string(),
                };
                let key = text.trim().to_ascii_lowercase();
                if let Ok(code) = key.parse::<i64>() {
                    match code {
                        $($code => return Ok($arg($rust::$value)),)*
                        _ => {}
                    }
                }
                match key.as_str() {
                    $($($alias)|* => Ok($arg($rust::$value)),)*
                    _ => Err(bad(obj.py(), format!(concat!($unknown, " `{}`: ", $expected), key))),
                }
            }
        }
    };
}

py_enum! {
    /// What a notify does to its cell (TNOTIFY; PyPTO's `NotifyOp`).
    PyNotifyOp "NotifyOp" for NotifyOp, argument NotifyArg,
    unknown "unknown notify op" expected "expected \"add\" or \"set\"" {
        /// Adds the value atomically.
        AtomicAdd = 0 => AtomicAdd ["add", "atomic_add", "atomicadd"],
        /// Sets the cell to the value.
        Set = 1 => Set ["set"],
    }
}

py_enum! {
    /// The comparison a wait waits for (TWAIT; PyPTO's `WaitCmp`).
    PyWaitCmp "WaitCmp" for WaitCmp, argument WaitArg,
    unknown "unknown wait comparison" expected "expected \"ge\" or \"eq\"" {
        /// `cell == expected`.
        Eq = 0 => Eq ["eq", "=="],
        /// `cell >= expected`.
        Ge = 1 => Ge ["ge", ">="],
    }
}

py_enum! {
    /// Whether a store overwrites or adds atomically (PyPTO's `AtomicType`).
    PyAtomicType "AtomicType" for AtomicType, argument AtomicArg,
    unknown "unknown atomic type" expected "expected \"none\" or \"add\"" {
        /// Overwrites (`AtomicType.None_`: `None` is Python's).
        None as "None_" = 0 => None ["none"],
        /// Adds atomically.
        Add = 1 => Add ["add", "atomic_add"],
    }
}

py_enum! {
    /// An element comparison (TCMP / TCMPS; PyPTO's `cmp_type` codes).
    PyCmpOp "CmpOp" for CmpOp, argument CmpArg,
    unknown "cmp: unknown comparison" expected "expected eq, ne, lt, le, gt or ge (or PyPTO's codes 0-5)" {
        /// `a == b`.
        Eq = 0 => Eq ["eq"],
        /// `a != b`.
        Ne = 1 => Ne ["ne"],
        /// `a < b`.
        Lt = 2 => Lt ["lt"],
        /// `a <= b`.
        Le = 3 => Le ["le"],
        /// `a > b`.
        Gt = 4 => Gt ["gt"],
        /// `a >= b`.
        Ge = 5 => Ge ["ge"],
    }
}

/// Adds the enum classes to the module.
pub(crate) fn add_to(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyNotifyOp>()?;
    m.add_class::<PyWaitCmp>()?;
    m.add_class::<PyAtomicType>()?;
    m.add_class::<PyCmpOp>()?;
    Ok(())
}
