//! The host API: each call validates its operands (reference §3.1) and queues the collective
//! on every rank of the operands' comm domain, as one chip dispatch per rank. `Path::Host`
//! runs the builtin kernel (named like PyPTO's variant, `builtin.tensor.allreduce__sum__fp32`);
//! `Path::InCore` runs the composite lowering as a one-block kernel.

use crate::allreduce::algorithm::{FP, Operands};
use crate::allreduce::{self, hier};
use crate::modes::{max_ranks, modes, signal_shape, signal_shape_on, variant};
use crate::spec::{AllGather, AllReduce, Kind, Mode, Path};
use crate::validate::{self, MAX_BUILTIN_RANKS, fail};
use crate::{all_to_all as a2a, allgather as ag, barrier as bar, broadcast as bc, reduce_scatter as rs};
use sim_core::{DType, Dispatch, Domain, ReduceOp, SimResult, Task, Tensor, World};

/// Builds an async task running `$body(&mut ops, &args)` on `$blocks` blocks.
macro_rules! task {
    ($name:expr, $blocks:expr, $args:expr, $body:path) => {{
        let args = $args;
        Task::new_async($name, $blocks, move |ops| {
            let a = args.clone();
            Box::pin(async move { $body(ops, &a).await })
        })
    }};
}

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

/// `pld.tensor.allreduce(data, signal, op, mode, core_num)`: every rank's `data` becomes the
/// element-wise `op` over all ranks. Mesh reduces peers in ascending order skipping self (so
/// ranks may differ bitwise); ring and two-shot reduce each element once (bit-identical).
pub fn allreduce(world: &mut World, data: &Tensor, signal: &Tensor, spec: AllReduce) -> SimResult<()> {
    let what = format!("allreduce ({} {})", spec.mode, spec.path);
    validate::windows(&what, &[("data", data), ("signal", signal)])?;
    let n = domain_of(data)?.size();
    check_aiv_cores(world, &what, spec.core_num)?;
    if spec.path == Path::InCore && spec.core_num != 1 {
        return fail(&what, format!("the InCore path runs on one block; core_num must be 1, got {}", spec.core_num));
    }
    let Some(algorithm) = crate::modes::serving(Kind::AllReduce, spec.mode).and_then(|row| row.allreduce) else {
        let modes: Vec<String> = modes(Kind::AllReduce).iter().map(|m| m.to_string()).collect();
        return fail(
            &what,
            format!("{} is not an allreduce algorithm; allreduce runs as {}", spec.mode, modes.join(", ")),
        );
    };
    let table_shape = signal_shape_on(Kind::AllReduce, spec.mode, spec.path, n, spec.core_num, world.server_ranks());
    (algorithm.check)(world, &Operands { what: &what, data, signal, n, spec, table_shape })?;
    let name = variant(Kind::AllReduce, spec.mode, spec.op, data.dtype(), 0);
    if too_many_ranks(world, &what, n, (Kind::AllReduce, spec.mode, spec.path)) {
        return no_op(world, data, &name);
    }
    if spec.mode == Mode::Ring && spec.path == Path::Host && n > 1 && !data.numel().is_multiple_of(n) {
        world.warn(format!(
            "{what}: the HOST ring kernel returns at once when numel ({}) is not a multiple of the rank count ({n}); this call moves no data",
            data.numel()
        ));
    }
    let args = allreduce::Args { data: data.clone(), sig: signal.clone(), op: spec.op, server: world.server_ranks() };
    let kernel = if spec.path == Path::Host { algorithm.host } else { algorithm.incore };
    let task = Task::new_async(&name, spec.core_num, move |ops| {
        let a = args.clone();
        Box::pin(async move { kernel(ops, &a).await })
    });
    launch(world, data, &name, task)
}

/// The modes an allgather, reduce_scatter or all_to_all runs in (`kind`), with their signals
/// and core counts.
fn copy_mode(world: &World, what: &str, signal: &Tensor, n: usize, kind: Kind, spec: AllGather) -> SimResult<()> {
    match spec.mode {
        Mode::Mesh if spec.core_num == 1 => validate::rank_signal(what, signal, n, false),
        Mode::Mesh => {
            fail(what, format!("the builtin {kind} runs on one block; core_num must be 1, got {}", spec.core_num))
        }
        Mode::Hier if matches!(kind, Kind::AllGather | Kind::ReduceScatter | Kind::AllToAll) => {
            if let Err(e) = hier::group(n, world.server_ranks()) {
                return fail(what, e);
            }
            check_sdma_cores(world, what, spec.core_num)?;
            validate::signal(what, signal, &signal_shape(kind, spec.mode, spec.path, n, spec.core_num))
        }
        Mode::SdmaMesh | Mode::GroupedMesh if spec.mode == Mode::SdmaMesh || kind == Kind::AllToAll => {
            check_sdma_cores(world, what, spec.core_num)?;
            validate::signal(what, signal, &signal_shape(kind, spec.mode, spec.path, n, spec.core_num))
        }
        Mode::AivMesh if matches!(kind, Kind::ReduceScatter | Kind::AllToAll | Kind::AllGather | Kind::Broadcast) => {
            check_aiv_cores(world, what, spec.core_num)?;
            // HCCL's AIV broadcast runs a block per rank (its relay on NR - 1 of them).
            if kind == Kind::Broadcast && spec.core_num < n {
                return fail(
                    what,
                    format!("core_num {} must be at least {n}: the AIV broadcast runs a block per rank", spec.core_num),
                );
            }
            validate::signal(what, signal, &signal_shape(kind, Mode::AivMesh, spec.path, n, spec.core_num))
        }
        other => {
            let modes: Vec<String> = modes(kind).iter().map(|m| m.to_string()).collect();
            fail(
                what,
                format!(
                    "{kind} runs as {} (mesh: PyPTO's builtin; the others HCCL-class), not {other}",
                    modes.join(", ")
                ),
            )
        }
    }
}

/// A copy-engine mode's machine checks: `core_num` AIV blocks fit the chip, and it has SDMA
/// engines to post to (the `sdma-mesh`, `grouped-mesh` and `hier` copy modes).
fn check_sdma_cores(world: &World, what: &str, core_num: usize) -> SimResult<()> {
    check_aiv_cores(world, what, core_num)?;
    validate::has_sdma(world, what)
}

/// `core_num` is in `1..=` the chip's AIV cores.
fn check_aiv_cores(world: &World, what: &str, core_num: usize) -> SimResult<()> {
    let aiv = world.chip().aiv_cores();
    if core_num == 0 || core_num > aiv {
        return fail(what, format!("core_num {core_num} must be in 1..={aiv} (the chip's AIV cores)"));
    }
    Ok(())
}

/// The operands of a hierarchical call, with the machine's ranks per server.
fn hier_args(world: &World, src: &Tensor, dst: &Tensor, sig: &Tensor) -> crate::hier::Args {
    crate::hier::Args { src: src.clone(), dst: dst.clone(), sig: sig.clone(), server: world.server_ranks() }
}

/// `pld.tensor.barrier(signal)`: no rank leaves before every rank has arrived.
pub fn barrier(world: &mut World, signal: &Tensor, path: Path) -> SimResult<()> {
    let what = format!("barrier ({path})");
    validate::windows(&what, &[("signal", signal)])?;
    let n = domain_of(signal)?.size();
    validate::rank_signal(&what, signal, n, path == Path::Host)?;
    let name = variant(Kind::Barrier, Mode::Mesh, ReduceOp::Sum, DType::F32, 0);
    if too_many_ranks(world, &what, n, (Kind::Barrier, Mode::Mesh, path)) {
        return no_op(world, signal, &name);
    }
    let sig = signal.clone();
    launch(world, signal, &name, task!(&name, 1, sig, bar::kernel))
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
    let builtin_f32 = path == Path::Host && how.mode == Mode::Mesh;
    validate::dtype(&what, data, if builtin_f32 { &[DType::F32] } else { &DType::ALL })?;
    let n = domain_of(data)?.size();
    match how.mode {
        Mode::Mesh => validate::rank_signal(&what, signal, n, path == Path::Host)?,
        _ => copy_mode(world, &what, signal, n, Kind::Broadcast, how)?,
    }
    let name = variant(Kind::Broadcast, how.mode, ReduceOp::Sum, data.dtype(), root);
    if too_many_ranks(world, &what, n, (Kind::Broadcast, how.mode, path)) {
        return no_op(world, data, &name);
    }
    if root >= n {
        if path == Path::InCore || matches!(how.mode, Mode::SdmaMesh | Mode::AivMesh) {
            return fail(&what, format!("root {root} is out of range for {n} ranks"));
        }
        world.warn(format!(
            "{what}: root {root} is out of range for {n} ranks; the HOST kernel returns at once and moves no data"
        ));
    }
    let args = bc::Args { data: data.clone(), sig: signal.clone(), root };
    let task = match (how.mode, path) {
        (Mode::SdmaMesh, _) => task!(&name, how.core_num, args, bc::sdma_mesh),
        (Mode::AivMesh, _) => task!(&name, how.core_num, args, bc::aiv_mesh),
        (_, Path::Host) => task!(&name, 1, args, bc::host),
        (_, Path::InCore) => task!(&name, 1, args, bc::incore),
    };
    launch(world, data, &name, task)
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
    let builtin_f32 = path == Path::Host && spec.mode == Mode::Mesh;
    validate::dtype(&what, target, if builtin_f32 { &[DType::F32] } else { &DType::ALL })?;
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
    copy_mode(world, &what, signal, n, Kind::AllGather, spec)?;
    let name = variant(Kind::AllGather, spec.mode, ReduceOp::Sum, target.dtype(), 0);
    if too_many_ranks(world, &what, n, (Kind::AllGather, spec.mode, path)) {
        return no_op(world, target, &name);
    }
    if spec.mode == Mode::Hier {
        let args = hier_args(world, stage, target, signal);
        return launch(world, target, &name, task!(&name, spec.core_num, args, crate::hier::allgather));
    }
    let args = ag::Args { stage: stage.clone(), target: target.clone(), sig: signal.clone() };
    let task = match (spec.mode, path) {
        (Mode::SdmaMesh, _) => task!(&name, spec.core_num, args, ag::sdma_mesh),
        (Mode::AivMesh, _) => task!(&name, spec.core_num, args, ag::aiv_mesh),
        (_, Path::Host) => task!(&name, 1, args, ag::host),
        (_, Path::InCore) => task!(&name, 1, args, ag::incore),
    };
    launch(world, target, &name, task)
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
    if matches!(how.mode, Mode::SdmaMesh | Mode::Hier) {
        let addable: Vec<DType> = DType::ALL.into_iter().filter(|&d| world.chip().atomic_add_supported(d)).collect();
        validate::dtype(&what, data, &addable)?;
    } else if how.mode == Mode::AivMesh {
        // HCCL's ReduceScatter takes int8 / int16 / int32 / fp16 / fp32 / bf16, as its AIV
        // allreduce does here (PyPTO's builtin paths below take FP16 / FP32 only).
        validate::dtype(&what, data, &DType::ALL)?;
    } else {
        validate::dtype(&what, data, if path == Path::Host { &[DType::F32] } else { &FP })?;
    }
    let n = domain_of(data)?.size();
    validate::leading(&what, data, n)?;
    copy_mode(world, &what, signal, n, Kind::ReduceScatter, how)?;
    let name = variant(Kind::ReduceScatter, how.mode, op, data.dtype(), 0);
    if too_many_ranks(world, &what, n, (Kind::ReduceScatter, how.mode, path)) {
        return no_op(world, data, &name);
    }
    if how.mode == Mode::Hier {
        let args = hier_args(world, data, data, signal);
        return launch(world, data, &name, task!(&name, how.core_num, args, crate::hier::reduce_scatter));
    }
    let args = rs::Args { data: data.clone(), sig: signal.clone(), op };
    let task = match (how.mode, path) {
        (Mode::SdmaMesh, _) => task!(&name, how.core_num, args, rs::sdma_mesh),
        (Mode::AivMesh, _) => task!(&name, how.core_num, args, rs::aiv_mesh),
        (_, Path::Host) => task!(&name, 1, args, rs::host),
        (_, Path::InCore) => task!(&name, 1, args, rs::incore),
    };
    launch(world, data, &name, task)
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
    let builtin_f32 = path == Path::Host && how.mode == Mode::Mesh;
    validate::dtype(&what, target, if builtin_f32 { &[DType::F32] } else { &DType::ALL })?;
    let n = domain_of(target)?.size();
    let r = validate::leading(&what, target, n)?;
    if input.numel() != n * r || input.dtype() != target.dtype() {
        return fail(
            &what,
            format!("input `{}` must match target `{}` ({} x {n} x {r})", input.name(), target.name(), target.dtype()),
        );
    }
    copy_mode(world, &what, signal, n, Kind::AllToAll, how)?;
    let name = variant(Kind::AllToAll, how.mode, ReduceOp::Sum, target.dtype(), 0);
    if too_many_ranks(world, &what, n, (Kind::AllToAll, how.mode, path)) {
        return no_op(world, target, &name);
    }
    if how.mode == Mode::Hier {
        let args = hier_args(world, input, target, signal);
        return launch(world, target, &name, task!(&name, how.core_num, args, crate::hier::all_to_all));
    }
    let args = a2a::Args { input: input.clone(), target: target.clone(), sig: signal.clone() };
    let task = match (how.mode, path) {
        (Mode::SdmaMesh, _) => task!(&name, how.core_num, args, a2a::sdma_mesh),
        (Mode::AivMesh, _) => task!(&name, how.core_num, args, a2a::aiv_mesh),
        (Mode::GroupedMesh, _) => task!(&name, how.core_num, args, a2a::grouped_mesh),
        (_, Path::Host) => task!(&name, 1, args, a2a::host),
        (_, Path::InCore) => task!(&name, 1, args, a2a::incore),
    };
    launch(world, target, &name, task)
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
    let builtin_f32 = path == Path::Host && how.mode == Mode::Mesh;
    validate::dtype(&what, target, if builtin_f32 { &[DType::F32] } else { &DType::ALL })?;
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
    copy_mode(world, &what, signal, n, Kind::AllToAllV, how)?;
    let name = variant(Kind::AllToAllV, how.mode, ReduceOp::Sum, target.dtype(), 0);
    if too_many_ranks(world, &what, n, (Kind::AllToAllV, how.mode, path)) {
        return no_op(world, target, &name);
    }
    let args = a2a::ArgsV {
        input: input.clone(),
        target: target.clone(),
        send_counts: send_counts.clone(),
        recv_counts: recv_counts.clone(),
        sig: signal.clone(),
    };
    let task = match (how.mode, path) {
        (Mode::SdmaMesh, _) => task!(&name, how.core_num, args, a2a::sdma_mesh_v),
        (_, Path::Host) => task!(&name, 1, args, a2a::host_v),
        (_, Path::InCore) => task!(&name, 1, args, a2a::incore_v),
    };
    launch(world, target, &name, task)
}
