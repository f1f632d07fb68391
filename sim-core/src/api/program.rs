//! What the host hands a chip: dispatches made of tasks, each task a kernel run on one or more
//! AIV blocks, with dependencies between the tasks of one dispatch: explicit ones
//! ([`Task::after`]) and the ones its declared tensors imply ([`Task::input`], ...; see
//! [`crate::api::dataflow`]).

use crate::api::kernel::{Core, Ops};
use crate::base::error::SimResult;
use crate::base::tensor::{Domain, Tensor};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// A kernel: a Rust closure over a core handle, run once per block (as a coroutine by
/// default, or on a thread of its own: [`crate::KernelExec`]).
pub type Kernel = Arc<dyn Fn(&mut Core) -> SimResult<()> + Send + Sync>;

/// The future of one block of an async kernel: it borrows the block's [`Ops`] for as long as
/// it runs and ends with the kernel's result.
pub type KernelFuture<'a> = Pin<Box<dyn Future<Output = SimResult<()>> + Send + 'a>>;

/// An async kernel: run once per block as a future the scheduler polls, with no stack of its
/// own (see [`Task::new_async`]).
pub type AsyncKernel = Arc<dyn for<'a> Fn(&'a mut Ops) -> KernelFuture<'a> + Send + Sync>;

/// The body of a task.
#[derive(Clone)]
pub(crate) enum Body {
    Thread(Kernel),
    Async(AsyncKernel),
}

/// Index of a task inside its dispatch, for dependencies.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TaskId(pub usize);

/// How a task uses a tensor it declares: PyPTO's tensor tags (`TensorArgType`), which are
/// the only source of data-flow edges between the tasks of a dispatch (ARCHITECTURE.md's
/// "Task dependencies" lists the edges each one makes).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ArgDir {
    /// Read only (`INPUT`): after every earlier writer of overlapping bytes.
    Input,
    /// A fresh result (`OUTPUT`): the task creates these bytes, so no earlier task of the
    /// dispatch may use them, and every later task declaring them runs after it.
    Output,
    /// Read and written (`INOUT`): after every earlier writer of overlapping bytes; later
    /// readers run after it.
    InOut,
    /// Written over existing contents (`OUTPUT_EXISTING`): ordered after the bytes' creator
    /// only, not after earlier readers or writers; later readers run after it.
    OutputExisting,
    /// Passed without data-flow ordering (`NO_DEP`): after the bytes' creator only.
    NoDep,
}

impl ArgDir {
    /// PyPTO's name of the tag.
    pub fn pypto_name(self) -> &'static str {
        match self {
            ArgDir::Input => "INPUT",
            ArgDir::Output => "OUTPUT",
            ArgDir::InOut => "INOUT",
            ArgDir::OutputExisting => "OUTPUT_EXISTING",
            ArgDir::NoDep => "NO_DEP",
        }
    }

    /// Whether the task reads the bytes.
    pub fn reads(self) -> bool {
        matches!(self, ArgDir::Input | ArgDir::InOut)
    }
}

/// Which cores a task's blocks are placed on.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum CoreKind {
    /// AIV (vector) cores: UB tiles, vector ops, loads and stores, put / get. The default.
    #[default]
    Vector,
    /// AIC (cube) cores: L1 / L0 staging and matmul (needs `[chip.cube]`).
    Cube,
}

/// One InCore task: `blocks` copies of a kernel started together on free AIV cores (or AIC
/// cores, see [`Task::on_cube`]).
#[derive(Clone)]
pub struct Task {
    pub(crate) name: Arc<str>,
    pub(crate) blocks: usize,
    pub(crate) body: Body,
    pub(crate) deps: Vec<TaskId>,
    pub(crate) lanes: usize,
    /// Declared tensors, in declaration order.
    pub(crate) args: Vec<(ArgDir, Tensor)>,
    pub(crate) kind: CoreKind,
}

impl fmt::Debug for Task {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Task({} x{} deps {:?})", self.name, self.blocks, self.deps)
    }
}

impl Task {
    /// A task running `kernel` on `blocks` cores.
    pub fn new(name: &str, blocks: usize, kernel: impl Fn(&mut Core) -> SimResult<()> + Send + Sync + 'static) -> Task {
        Task {
            name: name.into(),
            blocks,
            body: Body::Thread(Arc::new(kernel)),
            deps: Vec::new(),
            lanes: 1,
            args: Vec::new(),
            kind: CoreKind::Vector,
        }
    }

    /// A task whose blocks run `kernel` as futures polled by the scheduler: every blocking
    /// operation is an `.await` on the block's [`Ops`], which the closure borrows; the future
    /// it returns (boxed, as Rust's closures cannot yet name a future that borrows their
    /// argument) ends with the kernel's result. Captured values are cloned into the future:
    ///
    /// ```ignore
    /// Task::new_async("k", 1, move |ops| {
    ///     let sig = sig.clone();
    ///     Box::pin(async move { ops.wait(&sig, &[0, 0], 1, WaitCmp::Ge).await })
    /// })
    /// ```
    ///
    /// A future switches faster than a coroutine ([`Task::new`]'s default) and needs no
    /// stack, which is how the built-in collectives run; the same code runs in a synchronous
    /// kernel through [`Core::run`].
    pub fn new_async(
        name: &str,
        blocks: usize,
        kernel: impl for<'a> Fn(&'a mut Ops) -> KernelFuture<'a> + Send + Sync + 'static,
    ) -> Task {
        let body: AsyncKernel = Arc::new(kernel);
        Task {
            name: name.into(),
            blocks,
            body: Body::Async(body),
            deps: Vec::new(),
            lanes: 1,
            args: Vec::new(),
            kind: CoreKind::Vector,
        }
    }

    /// The same task, started only after `deps` have completed.
    pub fn after(mut self, deps: &[TaskId]) -> Task {
        self.deps.extend_from_slice(deps);
        self
    }

    /// The same task, declaring that it reads `t` (PyPTO `INPUT`): it starts after every
    /// earlier task of its dispatch that writes bytes of `t` (`output`, `inout`,
    /// `output_existing`).
    pub fn input(self, t: &Tensor) -> Task {
        self.arg(ArgDir::Input, t)
    }

    /// The same task, declaring that it creates `t` (PyPTO `OUTPUT`): no earlier task of the
    /// dispatch may declare those bytes, and every later task that declares them starts after
    /// this one.
    pub fn output(self, t: &Tensor) -> Task {
        self.arg(ArgDir::Output, t)
    }

    /// The same task, declaring that it reads and writes `t` (PyPTO `INOUT`).
    pub fn inout(self, t: &Tensor) -> Task {
        self.arg(ArgDir::InOut, t)
    }

    /// The same task, declaring that it overwrites `t` without reading it (PyPTO
    /// `OUTPUT_EXISTING`): ordered after `t`'s creator only; later readers wait for it.
    pub fn output_existing(self, t: &Tensor) -> Task {
        self.arg(ArgDir::OutputExisting, t)
    }

    /// The same task, passing `t` without data-flow ordering (PyPTO `NO_DEP`).
    pub fn no_dep(self, t: &Tensor) -> Task {
        self.arg(ArgDir::NoDep, t)
    }

    /// The same task, declaring `t` with tag `dir`.
    pub fn arg(mut self, dir: ArgDir, t: &Tensor) -> Task {
        self.args.push((dir, t.clone()));
        self
    }

    /// The declared tensors, in declaration order.
    pub fn args(&self) -> &[(ArgDir, Tensor)] {
        &self.args
    }

    /// The tasks this one starts after: [`Task::after`]'s, and once the dispatch is queued
    /// ([`crate::World::dispatch`]) also the ones its declared tensors imply.
    pub fn deps(&self) -> &[TaskId] {
        &self.deps
    }

    /// The same task with `lanes` cores per block, as a mixed kernel's vector sub-blocks
    /// (PyPTO's AIV lanes): every lane runs the kernel with the same `block_idx` and its own
    /// `sub_block_idx`, so code outside a lane split runs once per lane. At least 1.
    pub fn lanes(mut self, lanes: usize) -> Task {
        self.lanes = lanes.max(1);
        self
    }

    /// The task's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The same task placed on AIC (cube) cores: its blocks stage GM through L1 and L0 and
    /// matmul, and cannot use UB (vector ops, load / store, put / get). Feed vector work with
    /// a later AIV task through GM ([`Task::after`]), as PyPTO schedules a mixed kernel.
    pub fn on_cube(mut self) -> Task {
        self.kind = CoreKind::Cube;
        self
    }

    /// The cores the task runs on.
    pub fn kind(&self) -> CoreKind {
        self.kind
    }
}

/// One kernel launch on one chip: a small task graph run to completion before the chip's next
/// dispatch starts (a chip runs one dispatch at a time, in submission order).
#[derive(Clone, Debug)]
pub struct Dispatch {
    pub(crate) name: Arc<str>,
    pub(crate) domain: Option<Domain>,
    pub(crate) tasks: Vec<Task>,
}

impl Dispatch {
    /// An empty dispatch; add tasks with [`Dispatch::add`].
    pub fn new(name: &str) -> Dispatch {
        Dispatch { name: name.into(), domain: None, tasks: Vec::new() }
    }

    /// A dispatch of one task: `kernel` on `blocks` cores.
    pub fn kernel(
        name: &str,
        blocks: usize,
        kernel: impl Fn(&mut Core) -> SimResult<()> + Send + Sync + 'static,
    ) -> Dispatch {
        let mut d = Dispatch::new(name);
        d.add(Task::new(name, blocks, kernel));
        d
    }

    /// The same dispatch, with `core.rank()` / `core.nranks()` answering for `domain`.
    pub fn in_domain(mut self, domain: &Domain) -> Dispatch {
        self.domain = Some(domain.clone());
        self
    }

    /// Appends a task and returns its id.
    pub fn add(&mut self, task: Task) -> TaskId {
        self.tasks.push(task);
        TaskId(self.tasks.len() - 1)
    }

    /// The dispatch's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tasks, in submission order.
    pub fn tasks(&self) -> &[Task] {
        &self.tasks
    }
}
