//! What the host API asks of an algorithm, whichever collective it serves: [`Algorithm`], its
//! operand check and its kernel on each path. Each kernel file declares one for every mode it
//! runs, and the modes table's row for that collective and mode (`SERVING`) points to it, so
//! the host API matches on no mode: it checks a call with the row's check and queues the row's
//! kernel over [`CallArgs`].

use crate::spec::{AllReduce, Kind, Path};
use crate::validate::{self, fail};
use sim_core::{DType, KernelFuture, Ops, ReduceOp, SimResult, Tensor, World};
use std::fmt;

/// One call's operands as the host API hands them to any collective's kernel; each kernel
/// file reads its own `Args` out of them (`Args::of`).
#[derive(Clone, Debug)]
pub(crate) struct CallArgs {
    /// What each rank sends: allgather's stage, all_to_all's input; the data itself for the
    /// collectives that work in place.
    pub(crate) src: Tensor,
    /// Where the result lands: allgather's and all_to_all's target; the data itself otherwise.
    pub(crate) dst: Tensor,
    /// The INT32 signal.
    pub(crate) sig: Tensor,
    /// The reduction (allreduce, reduce_scatter; sum elsewhere).
    pub(crate) op: ReduceOp,
    /// The root rank (broadcast; 0 elsewhere).
    pub(crate) root: usize,
    /// The machine's ranks per server (`hier` reads it).
    pub(crate) server: usize,
    /// all_to_all_v's send and receive counts.
    pub(crate) counts: Option<(Tensor, Tensor)>,
}

/// One kernel on the table's terms: one block's future over the call's operands.
pub(crate) type Kernel = for<'a> fn(&'a mut Ops, &'a CallArgs) -> KernelFuture<'a>;

/// A kernel function `f(ops, &args)` as a [`Kernel`], its `args` read out of the call's
/// [`CallArgs`] by `A::of` (`A` is the calling file's `Args` unless named).
macro_rules! kernel {
    ($f:path) => {
        $crate::algorithm::kernel!(Args, $f)
    };
    ($args:ident, $f:path) => {
        |ops, call| {
            let a = $args::of(call);
            Box::pin(async move { $f(ops, &a).await })
        }
    };
}
pub(crate) use kernel;

/// An algorithm as the host API runs it, for one collective.
pub(crate) struct Algorithm {
    /// Checks a call's operands for this algorithm (reduction, element type, blocks, signal,
    /// what the machine needs) after the host API's checks of the collective's own operands;
    /// it may warn of a call that will do nothing.
    pub(crate) check: Check,
    /// The kernel on the HOST path, on `core_num` blocks.
    pub(crate) host: Kernel,
    /// The kernel on the InCore path (for an allreduce also `collectives::incore::allreduce`).
    pub(crate) incore: Kernel,
    /// It needs the machine's ranks per server, which a composite called from a kernel is not
    /// given (`collectives::incore::allreduce_hier` takes them).
    pub(crate) needs_server: bool,
}

/// An algorithm's operand check, as [`Algorithm::check`] holds it.
pub(crate) type Check = fn(&mut World, &Operands<'_>) -> SimResult<()>;

impl Algorithm {
    /// An algorithm with `host` and `incore` kernels that needs no server size.
    pub(crate) const fn new(check: Check, host: Kernel, incore: Kernel) -> Algorithm {
        Algorithm { check, host, incore, needs_server: false }
    }

    /// An algorithm that runs `kernel` on both paths and needs no server size.
    pub(crate) const fn both(check: Check, kernel: Kernel) -> Algorithm {
        Algorithm::new(check, kernel, kernel)
    }
}

/// The check of a copy-engine algorithm that takes the table's signal: `core_num` fits the
/// chip's AIV cores, the chip has copy engines.
pub(crate) fn copy_engine_check(world: &mut World, o: &Operands<'_>) -> SimResult<()> {
    o.copy_engines(world)?;
    o.table_signal()
}

/// The check of an AIV algorithm that takes the table's signal: `core_num` fits the chip's AIV
/// cores.
pub(crate) fn aiv_check(world: &mut World, o: &Operands<'_>) -> SimResult<()> {
    o.aiv_cores(world)?;
    o.table_signal()
}

impl fmt::Debug for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Algorithm").field("needs_server", &self.needs_server).finish_non_exhaustive()
    }
}

/// The floating-point types PyPTO's builtins reduce.
pub(crate) const FP: [DType; 2] = [DType::F32, DType::F16];

/// One host-API call's operands, as an algorithm's check sees them.
pub(crate) struct Operands<'a> {
    /// `allreduce (mode path)`, the errors' prefix.
    pub(crate) what: &'a str,
    /// The collective.
    pub(crate) kind: Kind,
    /// The data (allgather's and all_to_all's target).
    pub(crate) data: &'a Tensor,
    /// The signal.
    pub(crate) signal: &'a Tensor,
    /// Ranks of the domain.
    pub(crate) n: usize,
    /// How it runs (`op` is sum for a collective that does not reduce).
    pub(crate) spec: AllReduce,
    /// The signal shape the modes table gives this call on this machine.
    pub(crate) table_shape: Vec<usize>,
}

impl Operands<'_> {
    /// The reduction is one of `ops` and the data one of `dtypes`.
    pub(crate) fn op_and_dtype(&self, ops: &[ReduceOp], dtypes: &[DType]) -> SimResult<()> {
        validate::op(self.what, self.spec.op, ops)?;
        validate::dtype(self.what, self.data, dtypes)
    }

    /// The signal is exactly the table's shape for this call on this machine's servers.
    pub(crate) fn table_signal(&self) -> SimResult<()> {
        validate::signal(self.what, self.signal, &self.table_shape)
    }

    /// `core_num` is in `1..=` the chip's AIV cores.
    pub(crate) fn aiv_cores(&self, world: &World) -> SimResult<()> {
        let (aiv, core_num) = (world.chip().aiv_cores(), self.spec.core_num);
        if core_num == 0 || core_num > aiv {
            return fail(self.what, format!("core_num {core_num} must be in 1..={aiv} (the chip's AIV cores)"));
        }
        Ok(())
    }

    /// A copy-engine algorithm's machine checks: `core_num` AIV blocks fit the chip, and it has
    /// SDMA engines to post to.
    pub(crate) fn copy_engines(&self, world: &World) -> SimResult<()> {
        self.aiv_cores(world)?;
        validate::has_sdma(world, self.what)
    }

    /// A PyPTO builtin copy collective: one block, signal `[NR, 1]`.
    pub(crate) fn builtin_one_block(&self) -> SimResult<()> {
        let (kind, core_num) = (self.kind, self.spec.core_num);
        if core_num != 1 {
            return fail(
                self.what,
                format!("the builtin {kind} runs on one block; core_num must be 1, got {core_num}"),
            );
        }
        validate::rank_signal(self.what, self.signal, self.n, false)
    }

    /// PyPTO's per-rank signal: `[NR, 1]`, or also `[NR]` on the HOST path (the builtin
    /// barrier and broadcast).
    pub(crate) fn rank_signal(&self) -> SimResult<()> {
        validate::rank_signal(self.what, self.signal, self.n, self.spec.path == Path::Host)
    }

    /// PyPTO's mesh signals: HOST `[NR]` (one block) or `[NR, stride >= core_num]`; InCore
    /// `[NR, 1]`.
    pub(crate) fn mesh_signal(&self) -> SimResult<()> {
        let (what, sig, n, spec) = (self.what, self.signal, self.n, self.spec);
        if spec.path == Path::InCore {
            return validate::rank_signal(what, sig, n, false);
        }
        let s = sig.shape();
        let ok = match s.len() {
            1 => s[0] == n && spec.core_num == 1,
            2 => s[0] == n && s[1] >= spec.core_num,
            _ => false,
        };
        if sig.dtype() != DType::I32 || !ok {
            return fail(
                what,
                format!(
                    "signal `{}` is {}{s:?}; with core_num {} it must be INT32 [{n}] (core_num 1 only) or [{n}, stride >= {}]",
                    sig.name(),
                    sig.dtype(),
                    spec.core_num,
                    spec.core_num
                ),
            );
        }
        Ok(())
    }
}
