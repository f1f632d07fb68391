//! The tile operations on Python's `Core`, written from sim-core's one list of them
//! ([`sim_core::for_each_tile_op!`]): a method for every entry marked `py`, with the list's
//! argument names and doc, and `TILE_OPS`, the table `ranksim.pypto` makes `pl`'s functions
//! of the operations it does not write by hand.
//!
//! The methods live on `Core`, a subclass of the hand-written `CoreBase` (`core.rs`): PyO3 takes
//! one `#[pymethods]` block per class, and this one is all generated.

use crate::core::{PyCore, PyCubeTile, PyTile};
use pyo3::prelude::*;
use sim_core::{CubeTile, Tile};

/// How an argument of kind `Self` (a name in the list) crosses from Python: extracted as
/// `Py`, passed to the Rust operation as `Arg`.
pub(crate) trait ArgKind {
    /// What the Python argument is extracted as.
    type Py<'py>;
    /// What the Rust operation takes.
    type Arg<'a>;
    /// The Rust argument of a Python one.
    fn arg<'a>(p: &'a Self::Py<'_>) -> Self::Arg<'a>;
}

impl ArgKind for Tile {
    type Py<'py> = PyRef<'py, PyTile>;
    type Arg<'a> = &'a Tile;
    fn arg<'a>(p: &'a Self::Py<'_>) -> &'a Tile {
        &p.0
    }
}

impl ArgKind for CubeTile {
    type Py<'py> = PyRef<'py, PyCubeTile>;
    type Arg<'a> = &'a CubeTile;
    fn arg<'a>(p: &'a Self::Py<'_>) -> &'a CubeTile {
        &p.0
    }
}

impl ArgKind for f64 {
    type Py<'py> = f64;
    type Arg<'a> = f64;
    fn arg(p: &f64) -> f64 {
        *p
    }
}

/// How a result of kind `Self` crosses back to Python.
pub(crate) trait RetKind: Sized {
    /// The Python object.
    type Py;
    /// The Python object of a Rust result.
    fn wrap(r: Self) -> Self::Py;
}

impl RetKind for Tile {
    type Py = PyTile;
    fn wrap(r: Tile) -> PyTile {
        PyTile(r)
    }
}

impl RetKind for CubeTile {
    type Py = PyCubeTile;
    fn wrap(r: CubeTile) -> PyCubeTile {
        PyCubeTile(r)
    }
}

/// A kernel's handle on its core (`ranksim.Core`): `CoreBase`'s operations and the tile
/// operations of the list.
#[pyclass(name = "Core", module = "ranksim", frozen, extends = PyCore)]
pub(crate) struct PyCoreOps;

/// `PyCoreOps`' methods: the list munched one entry at a time (a `py` entry becomes a method, a
/// `rust` one nothing) into one `#[pymethods]` block, since PyO3 does not expand macros inside
/// it.
macro_rules! py_core_ops {
    (@acc [$($out:tt)*]) => {
        #[pymethods]
        impl PyCoreOps {
            $($out)*
        }
    };
    (@acc [$($out:tt)*] $(#[$doc:meta])* py $name:ident($($arg:ident: $kind:ident),*) -> $ret:ident $(= $via:ident($($body:tt)*))?; $($rest:tt)*) => {
        py_core_ops! { @acc [$($out)*
            $(#[$doc])*
            fn $name(
                slf: PyRef<'_, Self>,
                py: Python<'_>,
                $($arg: <$kind as ArgKind>::Py<'_>),*
            ) -> PyResult<<$ret as RetKind>::Py> {
                slf.as_super().local(py, |c| c.$name($(<$kind as ArgKind>::arg(&$arg)),*)).map(<$ret as RetKind>::wrap)
            }
        ] $($rest)* }
    };
    (@acc [$($out:tt)*] $(#[$doc:meta])* rust $name:ident($($arg:ident: $kind:ident),*) -> $ret:ident $(= $via:ident($($body:tt)*))?; $($rest:tt)*) => {
        py_core_ops! { @acc [$($out)*] $($rest)* }
    };
    ($($all:tt)*) => {
        py_core_ops! { @acc [] $($all)* }
    };
}

sim_core::for_each_tile_op!(py_core_ops);

/// One row of `TILE_OPS`: name, whether Python binds it as declared (`py`), its argument
/// kinds, its result kind and its doc.
type OpRow = (&'static str, bool, &'static [&'static str], &'static str, &'static str);

/// `TILE_OPS`' rows, every entry of the list in its order.
macro_rules! tile_op_rows {
    ($($(#[doc = $doc:expr])* $bind:ident $name:ident($($arg:ident: $kind:ident),*) -> $ret:ident $(= $via:ident($($body:tt)*))?;)*) => {
        &[$((
            stringify!($name),
            matches!(stringify!($bind).as_bytes(), b"py"),
            &[$(stringify!($kind)),*],
            stringify!($ret),
            concat!($($doc, "\n"),*),
        )),*]
    };
}

/// Every tile operation of the list, as `ranksim._native.TILE_OPS` gives it to Python.
pub(crate) const TILE_OPS: &[OpRow] = sim_core::for_each_tile_op!(tile_op_rows);

/// `TILE_OPS` as Python sees it: a tuple of `(name, bound, kinds, result, doc)` tuples, the doc
/// with each line's leading space gone.
pub(crate) fn table(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    let rows: Vec<(&str, bool, Vec<&str>, &str, String)> = TILE_OPS
        .iter()
        .map(|&(name, bound, kinds, ret, doc)| {
            let doc = doc.lines().map(str::trim).collect::<Vec<_>>().join(" ").trim().to_string();
            (name, bound, kinds.to_vec(), ret, doc)
        })
        .collect();
    Ok(pyo3::types::PyTuple::new(py, rows)?.into_any())
}
