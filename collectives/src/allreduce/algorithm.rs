//! What the host API and the InCore composite ask of an allreduce algorithm: [`Algorithm`], its
//! operand check and its kernel on each path, which each algorithm's file declares and the
//! modes table (`SERVING`) points to, so the host API matches on no mode.

use super::Args;
use crate::spec::{AllReduce, Path};
use crate::validate::{self, fail};
use sim_core::{DType, KernelFuture, Ops, ReduceOp, SimResult, Tensor, World};
use std::fmt;

/// One allreduce kernel on the table's terms: one block's future over the call's operands.
pub(crate) type Kernel = for<'a> fn(&'a mut Ops, &'a Args) -> KernelFuture<'a>;

/// A kernel function `f(ops, args)` as a [`Kernel`].
macro_rules! kernel {
    ($f:path) => {
        |ops, a| Box::pin($f(ops, a))
    };
}
pub(crate) use kernel;

/// An allreduce algorithm as the host API runs it.
pub(crate) struct Algorithm {
    /// Checks a call's operands (reduction, element type, signal, what the machine needs),
    /// after the host API's common checks (windows, `core_num` in the chip's AIV cores, one
    /// block on the InCore path).
    pub(crate) check: fn(&World, &Operands<'_>) -> SimResult<()>,
    /// The kernel on the HOST path, on `core_num` blocks.
    pub(crate) host: Kernel,
    /// The kernel on the InCore path, on one block (also `collectives::incore::allreduce`).
    pub(crate) incore: Kernel,
    /// It needs the machine's ranks per server, which a composite called from a kernel is not
    /// given (`collectives::incore::allreduce_hier` takes them).
    pub(crate) needs_server: bool,
}

impl fmt::Debug for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Algorithm").field("needs_server", &self.needs_server).finish_non_exhaustive()
    }
}

/// The floating-point types PyPTO's builtins reduce.
pub(crate) const FP: [DType; 2] = [DType::F32, DType::F16];

/// One host-API allreduce call's operands, as an algorithm's check sees them.
pub(crate) struct Operands<'a> {
    /// `allreduce (mode path)`, the errors' prefix.
    pub(crate) what: &'a str,
    /// The data.
    pub(crate) data: &'a Tensor,
    /// The signal.
    pub(crate) signal: &'a Tensor,
    /// Ranks of the domain.
    pub(crate) n: usize,
    /// How it runs.
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
