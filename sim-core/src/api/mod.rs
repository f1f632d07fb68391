//! The program API, what a user writes: kernels over a core (`kernel`), the dispatches and tasks
//! that launch them (`program`) with the dependencies their declared tensors imply
//! (`dataflow`), and `request`, the one interface through which a kernel's operations reach
//! the scheduler. Nothing here knows how requests are applied.

pub(crate) mod dataflow;
pub(crate) mod kernel;
pub(crate) mod program;
pub(crate) mod request;
