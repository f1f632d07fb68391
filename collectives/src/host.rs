//! The host API: each call validates its operands (reference §3.1) and queues the collective
//! on every rank of the operands' comm domain, as one chip dispatch per rank. What a mode
//! needs and runs comes from the call's row of the modes table (its `Algorithm`: the check,
//! and the kernel for `Path::Host` or `Path::InCore`), so nothing here matches on a mode; the
//! dispatch is named like PyPTO's variant (`builtin.tensor.allreduce__sum__fp32`).

use crate::algorithm::{CallArgs, FP, Operands};
use crate::mode::Origin;
use crate::modes::{Engine, Serving, max_ranks, modes, serving, signal_shape_on, variant};
use crate::spec::{AllGather, AllReduce, Kind, Mode, Path};
use crate::validate::{self, MAX_BUILTIN_RANKS, fail};
use sim_core::{DType, Dispatch, Domain, ReduceOp, SimResult, Task, Tensor, World};

/// Queues `task` as its own dispatch on every member of `t`'s domain.
fn launch(world: &mut World, t: &Tensor, name: &str, task: Task) -> SimResult<()> {
    let domain = domain_of(t)?;
    let mut d = Dispatch::new(name);
    d.add(task);
    world.dispatch_all(&domain, d)
}

fn domain_of(t: &Tensor) -> SimResult<Domain> {
    t.domain_handle().ok_or_else(|| sim_core::SimError::invalid(format!("`{}` is not a window buffer", t.name())))
}

/// Warns (and returns true) when the call would silently do nothing on `n` ranks (see
/// [`max_ranks`]).
fn too_many_ranks(world: &mut World, what: &str, n: usize, (kind, mode, path): (Kind, Mode, Path)) -> bool {
    if max_ranks(kind, mode, path).is_some_and(|max| n > max) {
        world.warn(format!(
            "{what}: the HOST builtin kernels return at once for more than {MAX_BUILTIN_RANKS} ranks (kMaxSupportedRanks); with {n} ranks this call moves no data and runs no barrier"
        ));
        return true;
    }
    false
}

/// Queues a dispatch per rank that does nothing (a builtin's silent early return).
fn no_op(world: &mut World, t: &Tensor, name: &str) -> SimResult<()> {
    launch(world, t, name, Task::new_async(name, 1, |_| Box::pin(async { Ok(()) })))
}

/// One call as the host API runs it once the collective's own operands are checked: the
/// collective, how it runs, its operands for the kernel and the tensors its checks read.
struct Run<'a> {
    what: &'a str,
    kind: Kind,
    spec: AllReduce,
    /// The data an algorithm's check reads (allgather's and all_to_all's target).
    data: &'a Tensor,
    /// Ranks of the domain.
    n: usize,
    /// The element type the dispatch's name gives.
    dtype: DType,
    /// The kernel's operands.
    args: CallArgs,
}

impl Run<'_> {
    /// Checks the call against its row of the modes table (a mode the collective does not run
    /// fails with `unserved`'s message) and names its dispatch; `None` when the call is a
    /// builtin's silent early return, queued as a no-op already.
    fn check(
        &self,
        world: &mut World,
        unserved: impl FnOnce() -> String,
    ) -> SimResult<Option<(&'static Serving, String)>> {
        let (kind, spec) = (self.kind, self.spec);
        let Some(row) = serving(kind, spec.mode) else {
            return fail(self.what, unserved());
        };
        let table_shape = signal_shape_on(kind, spec.mode, spec.path, self.n, spec.core_num, world.server_ranks());
        let (what, data, signal, n) = (self.what, self.data, &self.args.sig, self.n);
        (row.algorithm.check)(world, &Operands { what, kind, data, signal, n, spec, table_shape })?;
        let name = variant(kind, spec.mode, spec.op, self.dtype, self.args.root);
        if too_many_ranks(world, what, n, (kind, spec.mode, spec.path)) {
            no_op(world, data, &name)?;
            return Ok(None);
        }
        Ok(Some((row, name)))
    }

    /// Queues the row's kernel for the call's path on every rank, on the blocks the row gives it.
    fn launch(self, world: &mut World, row: &Serving, name: &str) -> SimResult<()> {
        let algorithm = row.algorithm;
        let kernel = if self.spec.path == Path::Host { algorithm.host } else { algorithm.incore };
        let blocks = row.blocks.of(self.spec.path, self.spec.core_num, self.n);
        let args = self.args;
        let task = Task::new_async(name, blocks, move |ops| {
            let a = args.clone();
            Box::pin(async move { kernel(ops, &a).await })
        });
        launch(world, self.data, name, task)
    }

    /// [`Run::check`], then [`Run::launch`].
    fn go(self, world: &mut World, unserved: impl FnOnce() -> String) -> SimResult<()> {
        match self.check(world, unserved)? {
            Some((row, name)) => self.launch(world, row, &name),
            None => Ok(()),
        }
    }
}

/// What a call of a mode a copy collective does not run is told.
fn not_a_mode_of(kind: Kind, mode: Mode) -> String {
    let modes: Vec<String> = modes(kind).iter().map(|m| m.to_string()).collect();
    format!("{kind} runs as {} (mesh: PyPTO's builtin; the others HCCL-class), not {mode}", modes.join(", "))
}

/// Whether the call runs a PyPTO builtin's HOST kernel (which takes f32 only).
fn builtin_host(kind: Kind, how: AllGather) -> bool {
    how.path == Path::Host && serving(kind, how.mode).is_some_and(|r| r.origin == Origin::Builtin)
}

/// How a copy collective runs, as the checks read it: `op` on the reduction's, sum elsewhere.
fn spec_of(how: AllGather, op: ReduceOp) -> AllReduce {
    AllReduce { op, mode: how.mode, path: how.path, core_num: how.core_num }
}

/// A call's operands for the kernels: `src` sent, `dst` received into.
fn call_args(world: &World, src: &Tensor, dst: &Tensor, sig: &Tensor) -> CallArgs {
    CallArgs {
        src: src.clone(),
        dst: dst.clone(),
        sig: sig.clone(),
        op: ReduceOp::Sum,
        root: 0,
        server: world.server_ranks(),
        counts: None,
    }
}

/// `pld.tensor.allreduce(data, signal, op, mode, core_num)`: every rank's `data` becomes the
/// element-wise `op` over all ranks. Mesh reduces peers in ascending order skipping self (so
/// ranks may differ bitwise); ring and two-shot reduce each element once (bit-identical).
pub fn allreduce(world: &mut World, data: &Tensor, signal: &Tensor, spec: AllReduce) -> SimResult<()> {
    let what = format!("allreduce ({} {})", spec.mode, spec.path);
    validate::windows(&what, &[("data", data), ("signal", signal)])?;
    let n = domain_of(data)?.size();
    let checks = Operands { what: &what, kind: Kind::AllReduce, data, signal, n, spec, table_shape: Vec::new() };
    checks.aiv_cores(world)?;
    if spec.path == Path::InCore && spec.core_num != 1 {
        return fail(&what, format!("the InCore path runs on one block; core_num must be 1, got {}", spec.core_num));
    }
    let args = CallArgs { op: spec.op, ..call_args(world, data, data, signal) };
    let run = Run { what: &what, kind: Kind::AllReduce, spec, data, n, dtype: data.dtype(), args };
    run.go(world, || {
        let modes: Vec<String> = modes(Kind::AllReduce).iter().map(|m| m.to_string()).collect();
        format!("{} is not an allreduce algorithm; allreduce runs as {}", spec.mode, modes.join(", "))
    })
}

/// `pld.tensor.barrier(signal)`: no rank leaves before every rank has arrived.
pub fn barrier(world: &mut World, signal: &Tensor, path: Path) -> SimResult<()> {
    let what = format!("barrier ({path})");
    validate::windows(&what, &[("signal", signal)])?;
    let n = domain_of(signal)?.size();
    let spec = AllReduce { path, ..AllReduce::default() };
    let args = call_args(world, signal, signal, signal);
    let run = Run { what: &what, kind: Kind::Barrier, spec, data: signal, n, dtype: DType::F32, args };
    run.go(world, || not_a_mode_of(Kind::Barrier, spec.mode))
}

/// `pld.tensor.broadcast(data, signal, root)`: every rank's `data` becomes the root's.
pub fn broadcast(world: &mut World, data: &Tensor, signal: &Tensor, root: usize, path: Path) -> SimResult<()> {
    broadcast_with(world, data, signal, root, AllGather { path, ..AllGather::default() })
}

/// A broadcast run as `how` says: PyPTO's builtin (`Mode::Mesh`), the HCCL-class SDMA
/// broadcast (`Mode::SdmaMesh`: a scatter from the root then an allgather, copy-engine puts on
/// `core_num` blocks, signal `[NR, core_num]` or `[NR, 1]` on one block; needs `[chip.sdma]`)
/// or the HCCL-class AIV broadcast (`Mode::AivMesh`: one shot up to 190 KiB, a relay on
/// `NR - 1` blocks above; `core_num >= NR`, signal `[NR, NR - 1]`). Operands as for
/// [`broadcast`].
pub fn broadcast_with(world: &mut World, data: &Tensor, signal: &Tensor, root: usize, how: AllGather) -> SimResult<()> {
    let path = how.path;
    let what = format!("broadcast ({} {path})", how.mode);
    validate::windows(&what, &[("data", data), ("signal", signal)])?;
    let builtin = builtin_host(Kind::Broadcast, how);
    validate::dtype(&what, data, if builtin { &[DType::F32] } else { &DType::ALL })?;
    let n = domain_of(data)?.size();
    let args = CallArgs { root, ..call_args(world, data, data, signal) };
    let run = Run {
        what: &what,
        kind: Kind::Broadcast,
        spec: spec_of(how, ReduceOp::Sum),
        data,
        n,
        dtype: data.dtype(),
        args,
    };
    let Some((row, name)) = run.check(world, || not_a_mode_of(Kind::Broadcast, how.mode))? else {
        return Ok(());
    };
    if root >= n {
        if !builtin {
            return fail(&what, format!("root {root} is out of range for {n} ranks"));
        }
        world.warn(format!(
            "{what}: root {root} is out of range for {n} ranks; the HOST kernel returns at once and moves no data"
        ));
    }
    run.launch(world, row, &name)
}

/// `pld.tensor.allgather(stage, target, signal)`: row r of every rank's `[NR, R]` target
/// becomes rank r's `[1, R]` stage.
pub fn allgather(world: &mut World, stage: &Tensor, target: &Tensor, signal: &Tensor, path: Path) -> SimResult<()> {
    allgather_with(world, stage, target, signal, AllGather { path, ..AllGather::default() })
}

/// An allgather run as `spec` says: PyPTO's builtin (`Mode::Mesh`), the HCCL-class SDMA
/// allgather (`Mode::SdmaMesh`: signal `[NR, core_num]`, or `[NR, 1]` on one block; needs
/// `[chip.sdma]`) or the HCCL-class AIV allgather (`Mode::AivMesh`: signal `[NR, 1]`, on
/// `min(core_num, NR)` blocks). Operands as for [`allgather`].
pub fn allgather_with(
    world: &mut World,
    stage: &Tensor,
    target: &Tensor,
    signal: &Tensor,
    spec: AllGather,
) -> SimResult<()> {
    let path = spec.path;
    let what = format!("allgather ({} {path})", spec.mode);
    validate::windows(&what, &[("stage", stage), ("target", target), ("signal", signal)])?;
    let builtin = builtin_host(Kind::AllGather, spec);
    validate::dtype(&what, target, if builtin { &[DType::F32] } else { &DType::ALL })?;
    let n = domain_of(target)?.size();
    let r = validate::leading(&what, target, n)?;
    if stage.numel() != r || stage.dtype() != target.dtype() {
        return fail(
            &what,
            format!(
                "stage `{}` must hold one target row: {} x {r}, got {} x {}",
                stage.name(),
                target.dtype(),
                stage.dtype(),
                stage.numel()
            ),
        );
    }
    let args = call_args(world, stage, target, signal);
    let run = Run {
        what: &what,
        kind: Kind::AllGather,
        spec: spec_of(spec, ReduceOp::Sum),
        data: target,
        n,
        dtype: target.dtype(),
        args,
    };
    run.go(world, || not_a_mode_of(Kind::AllGather, spec.mode))
}

/// `pld.tensor.reduce_scatter(data, signal, op)`: row r of rank r's `[NR, R]` data becomes the
/// sum of row r over all ranks (Sum only, as in PyPTO).
pub fn reduce_scatter(world: &mut World, data: &Tensor, signal: &Tensor, op: ReduceOp, path: Path) -> SimResult<()> {
    reduce_scatter_with(world, data, signal, op, AllGather { path, ..AllGather::default() })
}

/// A reduce_scatter run as `how` says: PyPTO's builtin (`Mode::Mesh`) or the HCCL-class SDMA
/// reduce-scatter (`Mode::SdmaMesh`: inline-reduce copy-engine puts on `core_num` blocks,
/// signal `[NR, core_num]` or `[NR, 1]` on one block; a dtype the chip adds atomically; needs
/// `[chip.sdma]`). Operands as for [`reduce_scatter`].
pub fn reduce_scatter_with(
    world: &mut World,
    data: &Tensor,
    signal: &Tensor,
    op: ReduceOp,
    how: AllGather,
) -> SimResult<()> {
    let path = how.path;
    let what = format!("reduce_scatter ({} {path})", how.mode);
    validate::windows(&what, &[("data", data), ("signal", signal)])?;
    validate::op(&what, op, &[ReduceOp::Sum])?;
    match serving(Kind::ReduceScatter, how.mode) {
        Some(row) if row.engine == Engine::CopyEngines => {
            let addable: Vec<DType> =
                DType::ALL.into_iter().filter(|&d| world.chip().atomic_add_supported(d)).collect();
            validate::dtype(&what, data, &addable)?;
        }
        // HCCL's ReduceScatter takes int8 / int16 / int32 / fp16 / fp32 / bf16, as its AIV
        // allreduce does here (PyPTO's builtin paths below take FP16 / FP32 only).
        Some(row) if row.origin != Origin::Builtin => validate::dtype(&what, data, &DType::ALL)?,
        _ => validate::dtype(&what, data, if path == Path::Host { &[DType::F32] } else { &FP })?,
    }
    let n = domain_of(data)?.size();
    validate::leading(&what, data, n)?;
    let args = CallArgs { op, ..call_args(world, data, data, signal) };
    let run =
        Run { what: &what, kind: Kind::ReduceScatter, spec: spec_of(how, op), data, n, dtype: data.dtype(), args };
    run.go(world, || not_a_mode_of(Kind::ReduceScatter, how.mode))
}

/// `pld.tensor.all_to_all(input, target, signal)`: row `me` of rank d's target becomes row d
/// of rank `me`'s input.
pub fn all_to_all(world: &mut World, input: &Tensor, target: &Tensor, signal: &Tensor, path: Path) -> SimResult<()> {
    all_to_all_with(world, input, target, signal, AllGather { path, ..AllGather::default() })
}

/// An all_to_all run as `how` says: PyPTO's builtin (`Mode::Mesh`) or an HCCL-class one: the
/// SDMA all_to_all (`Mode::SdmaMesh`: copy-engine puts to every peer at once on `core_num`
/// blocks), the AIV all_to_all (`Mode::AivMesh`: every block pulls its tiles from every peer)
/// or the grouped full mesh (`Mode::GroupedMesh`: copy-engine puts to 8 peers at a time,
/// round after round); signal `[NR, core_num]`, or `[NR, 1]` on one block; the copy-engine
/// ones need `[chip.sdma]`. Operands as for [`all_to_all`].
pub fn all_to_all_with(
    world: &mut World,
    input: &Tensor,
    target: &Tensor,
    signal: &Tensor,
    how: AllGather,
) -> SimResult<()> {
    let path = how.path;
    let what = format!("all_to_all ({} {path})", how.mode);
    validate::windows(&what, &[("input", input), ("target", target), ("signal", signal)])?;
    let builtin = builtin_host(Kind::AllToAll, how);
    validate::dtype(&what, target, if builtin { &[DType::F32] } else { &DType::ALL })?;
    let n = domain_of(target)?.size();
    let r = validate::leading(&what, target, n)?;
    if input.numel() != n * r || input.dtype() != target.dtype() {
        return fail(
            &what,
            format!("input `{}` must match target `{}` ({} x {n} x {r})", input.name(), target.name(), target.dtype()),
        );
    }
    let args = call_args(world, input, target, signal);
    let run = Run {
        what: &what,
        kind: Kind::AllToAll,
        spec: spec_of(how, ReduceOp::Sum),
        data: target,
        n,
        dtype: target.dtype(),
        args,
    };
    run.go(world, || not_a_mode_of(Kind::AllToAll, how.mode))
}

/// `pld.tensor.all_to_all_v(input, target, send_counts, recv_counts, signal)`: like all_to_all
/// over `[NR * MAX_RECV, R]` blocks, with rank `me` telling rank d (by `Set` into
/// `recv_counts[me]`) how many of the `MAX_RECV` rows it sent are valid.
pub fn all_to_all_v(
    world: &mut World,
    input: &Tensor,
    target: &Tensor,
    send_counts: &Tensor,
    recv_counts: &Tensor,
    signal: &Tensor,
    path: Path,
) -> SimResult<()> {
    let how = AllGather { path, ..AllGather::default() };
    all_to_all_v_with(world, input, target, send_counts, recv_counts, signal, how)
}

/// An all_to_all_v run as `how` says: PyPTO's builtin (`Mode::Mesh`) or the HCCL-class SDMA
/// all_to_all_v (`Mode::SdmaMesh`: block 0 sets the counts, every block puts its columns of
/// each `MAX_RECV`-row block with a copy engine; signal `[NR, core_num]` or `[NR, 1]` on one
/// block; needs `[chip.sdma]`). Operands as for [`all_to_all_v`].
#[allow(clippy::too_many_arguments)] // PyPTO's five tensors, the world and how it runs
pub fn all_to_all_v_with(
    world: &mut World,
    input: &Tensor,
    target: &Tensor,
    send_counts: &Tensor,
    recv_counts: &Tensor,
    signal: &Tensor,
    how: AllGather,
) -> SimResult<()> {
    let path = how.path;
    let what = format!("all_to_all_v ({} {path})", how.mode);
    let ops = [
        ("input", input),
        ("target", target),
        ("send_counts", send_counts),
        ("recv_counts", recv_counts),
        ("signal", signal),
    ];
    validate::windows(&what, &ops)?;
    let builtin = builtin_host(Kind::AllToAllV, how);
    validate::dtype(&what, target, if builtin { &[DType::F32] } else { &DType::ALL })?;
    let n = domain_of(target)?.size();
    let rows = target.shape()[0];
    if target.shape().len() < 2
        || !rows.is_multiple_of(n)
        || input.shape() != target.shape()
        || input.dtype() != target.dtype()
    {
        return fail(
            &what,
            format!(
                "target `{}` {:?} must be [NR * MAX_RECV, ...] with NR = {n}, and input `{}` {:?} the same",
                target.name(),
                target.shape(),
                input.name(),
                input.shape()
            ),
        );
    }
    if send_counts.dtype() != DType::I32 || send_counts.numel() != n {
        return fail(&what, format!("send_counts `{}` must be INT32 with {n} elements", send_counts.name()));
    }
    validate::rank_signal(&what, recv_counts, n, false)?;
    let counts = Some((send_counts.clone(), recv_counts.clone()));
    let args = CallArgs { counts, ..call_args(world, input, target, signal) };
    let run = Run {
        what: &what,
        kind: Kind::AllToAllV,
        spec: spec_of(how, ReduceOp::Sum),
        data: target,
        n,
        dtype: target.dtype(),
        args,
    };
    run.go(world, || not_a_mode_of(Kind::AllToAllV, how.mode))
}
