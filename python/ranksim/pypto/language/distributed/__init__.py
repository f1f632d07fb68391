"""``ranksim.pypto.language.distributed`` (``pld``): PyPTO's cross-rank language on ranksim.

In the host orchestrator: ``alloc_window_buffer``, ``window``, ``world_size`` and the HOST
collectives (``pld.tensor.allreduce(...)`` at host level: ranksim's builtin, one chip dispatch
per rank). Inside an InCore kernel: ``get_comm_ctx`` / ``rank`` / ``nranks``,
``system.notify`` / ``wait`` / ``fence``, ``tile.remote_load`` / ``remote_store``,
``tensor.put`` / ``get`` / ``remote_store`` and the InCore collective composites (ranksim's
Rust implementations on the calling core)."""

from __future__ import annotations

from enum import IntEnum
from types import SimpleNamespace as _NS

import numpy as np

from .... import _native
from ...._native import AtomicType, NotifyOp, WaitCmp  # ranksim's typed enums, PyPTO's codes
from ...._errors import BadArgument
from ... import _engine as _E
from ..._engine import DistributedTensor, WindowBuffer

_core = _E.core


def _code(cls, v, codes=(0, 1)):
    """The PyPTO code of `v` (a member of `cls` or its code), refused as IntEnum refuses."""
    code = int(v)
    if code not in codes:
        raise ValueError(f"{v!r} is not a valid {cls.__name__}")
    return code


class ReduceOp(IntEnum):
    Sum = 0
    Max = 1
    Min = 2
    Prod = 3


class CommCtx:
    """``pld.get_comm_ctx(window)``: the comm domain of a window, for ``rank`` / ``nranks``."""

    __slots__ = ("window",)

    def __init__(self, window):
        self.window = window

    def __repr__(self):
        return f"<pld.CommCtx of `{self.window.name}`>"


CommCtxType = CommCtx


def alloc_window_buffer(size, *, dtype=None, name=""):
    """A zeroed buffer in the window of every rank whose dispatches take a view of it: ``size``
    bytes, or a shape with ``dtype=``. Host orchestrator only."""
    return _E.alloc_window_buffer(size, dtype=dtype, name=name)


def window(buf, shape, *, dtype):
    """A ``DistributedTensor`` view of a window buffer (the same offsets on every rank)."""
    return _E.window(buf, shape, dtype=dtype)


def world_size():
    """Number of ranks the program runs on (``len(device_ids)``). Host orchestrator only."""
    h = _E.host()
    if h is None:
        raise BadArgument("pld.world_size() is a host-orchestrator value; in a kernel use pld.nranks(pld.get_comm_ctx(window))")
    return h.world_size


def get_comm_ctx(dist_tensor):
    if not isinstance(dist_tensor, DistributedTensor):
        raise BadArgument(f"pld.get_comm_ctx: {dist_tensor!r} is not a window (a pld.DistributedTensor)")
    return CommCtx(dist_tensor)


def rank(ctx):
    """This rank's dense rank in the window's comm domain."""
    return _core().rank_in(ctx.window.t)


def nranks(ctx):
    """Number of ranks of the window's comm domain."""
    return len(ctx.window.members)


def _ints(xs, what="offsets"):
    out = [int(v) for v in xs]
    for k, v in enumerate(out):
        if v < 0:
            raise BadArgument(f"pld: {what} entry {k} is {v}; offsets and shapes count elements from 0, so none may be negative")
    return out


def _window(x, what):
    if not isinstance(x, DistributedTensor):
        raise BadArgument(f"{what}: {x!r} is not a window (a pld.DistributedTensor)")
    return x.t


def notify(target, peer, offsets, value, *, op):
    """Changes cell ``offsets`` of ``target`` in ``peer``'s window (TNOTIFY)."""
    t = target.t if target.__class__ is DistributedTensor else _window(target, "pld.system.notify")
    _core().notify(t, _peer(peer, "pld.system.notify"), offsets, value, NotifyOp.Set if op == 1 else NotifyOp.AtomicAdd)


def wait(signal, offsets, expected, *, cmp):
    """Blocks until cell ``offsets`` of this rank's ``signal`` satisfies ``cmp expected`` (TWAIT)."""
    t = signal.t if signal.__class__ is DistributedTensor else _window(signal, "pld.system.wait")
    _core().wait(t, offsets, expected, WaitCmp.Eq if cmp == 0 else WaitCmp.Ge)


def defer_wait(signal, offsets, expected, *, cmp=WaitCmp.Ge):
    """Registers ``cell >= expected`` (unsigned) and releases the core; return right after."""
    if _code(WaitCmp, cmp) != WaitCmp.Ge:
        raise BadArgument("pld.system.defer_wait: cmp must be WaitCmp.Ge")
    _core().defer_wait([(_window(signal, "pld.system.defer_wait"), _ints(offsets), int(expected))])


def fence():
    """Waits until every write and notify this core issued has landed."""
    _core().fence()


def _peer(peer, what):
    if peer < 0:
        raise BadArgument(f"{what}: peer {peer} is negative; a peer is a dense rank 0..nranks-1 of the window's domain (use (me - 1 + n) % n)")
    return peer


def _atomic(a):
    return AtomicType.Add if _code(AtomicType, a) == AtomicType.Add else AtomicType.None_


def remote_load(target, peer, offsets, shape, valid_shape=None):
    """Loads a region of ``peer``'s copy of window ``target`` into a tile."""
    if valid_shape is not None and _ints(valid_shape) != _ints(shape):
        raise NotImplementedError("pld.tile.remote_load(valid_shape=...) with a partial valid region is not modelled by ranksim.pypto")
    return _core().remote_load(_window(target, "pld.tile.remote_load"), _peer(int(peer), "pld.tile.remote_load"), _ints(offsets), _ints(shape))


def remote_store(src, target, peer, offsets, *, atomic=AtomicType.None_):
    """Stores a tile (or a whole local tensor) into ``peer``'s copy of window ``target``."""
    c = _core()
    t = _window(target, "pld.remote_store")
    if isinstance(src, _E.Tensor):
        src = c.load(src.t, [0] * len(src.shape), list(src.shape))
    c.remote_store(src, t, _peer(int(peer), "pld.remote_store"), _ints(offsets), _atomic(atomic))
    return target


def _chunks(op, extent, chunk_rows, chunk_cols, pipeline):
    for v, n in ((chunk_rows, "chunk_rows"), (chunk_cols, "chunk_cols")):
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"pld.tensor.{op} {n} must be a static int, got {v!r}")
        if v < 0:
            raise ValueError(f"pld.tensor.{op} {n} must be >= 0, got {v}")
    if pipeline and not (chunk_rows > 0 and chunk_cols > 0):
        raise ValueError(
            f"pld.tensor.{op} pipeline=True requires both chunk_rows>0 and chunk_cols>0 (got chunk_rows={chunk_rows}, chunk_cols={chunk_cols})"
        )
    if chunk_rows == 0 and chunk_cols == 0:
        return None
    rows = int(np.prod(extent[:-1])) if len(extent) > 1 else 1
    return (min(chunk_rows or rows, rows), min(chunk_cols or extent[-1], extent[-1]))


def _region(op, dst_offsets, src_offsets, shape):
    given = [x is not None for x in (dst_offsets, src_offsets, shape)]
    if any(given) and not all(given):
        raise ValueError(f"pld.tensor.{op}: dst_offsets, src_offsets and shape go together (give all three or none)")
    return (_ints(dst_offsets), _ints(src_offsets), _ints(shape)) if all(given) else (None, None, None)


def put(dst, peer, src, dst_offsets=None, src_offsets=None, shape=None, *, atomic=AtomicType.None_, chunk_rows=0, chunk_cols=0, pipeline=False):
    """Copies local ``src`` into ``peer``'s window ``dst`` through UB (TPUT)."""
    d, s, sh = _region("put", dst_offsets, src_offsets, shape)
    chunks = _chunks("put", sh or list(src.shape), chunk_rows, chunk_cols, pipeline)
    _core().put(_window(dst, "pld.tensor.put"), _peer(int(peer), "pld.tensor.put"), src.t, dst_offsets=d, src_offsets=s, shape=sh, chunks=chunks, atomic=_atomic(atomic), pipeline=bool(pipeline))
    return dst


def get(dst, peer, src, dst_offsets=None, src_offsets=None, shape=None, *, chunk_rows=0, chunk_cols=0, pipeline=False):
    """Copies ``peer``'s window ``src`` into local ``dst`` through UB (TGET)."""
    d, s, sh = _region("get", dst_offsets, src_offsets, shape)
    chunks = _chunks("get", sh or list(dst.shape), chunk_rows, chunk_cols, pipeline)
    _core().get(dst.t, _peer(int(peer), "pld.tensor.get"), _window(src, "pld.tensor.get"), dst_offsets=d, src_offsets=s, shape=sh, chunks=chunks, pipeline=bool(pipeline))
    return dst


def _signal_2d(sig):
    """A 1-D ``[n]`` signal window as the ``[n, 1]`` cells the collectives index by rank."""
    if isinstance(sig, DistributedTensor) and sig.t is not None and len(sig.shape) == 1:
        return DistributedTensor._wrap(sig, sig.t.view(sig.dtype.rs, [sig.shape[0], 1]))
    return sig


def _collective(kind, operands, result, **kw):
    """An InCore composite (inside a kernel) or a HOST builtin (in the host orchestrator)."""
    if _E.in_kernel():
        operands = [*operands[:-1], _signal_2d(operands[-1])]
        ts = [_window(o, f"pld.tensor.{kind}") if isinstance(o, DistributedTensor) else o.t for o in operands]
        _native._incore_collective(_core(), kind, ts, **{k: v for k, v in kw.items() if k != "core_num"})
        return result
    if _E.host() is not None:
        _E.record_collective(kind, operands, kw)
        return result
    raise BadArgument(f"pld.tensor.{kind} runs in a @pl.jit.host orchestrator or a @pl.jit.incore kernel")


def _op(op):
    return ReduceOp(op).name.lower()


def allreduce(target, signal=None, *, op=ReduceOp.Sum, mode="mesh", core_num=1):
    """Every rank's ``target`` becomes the element-wise ``op`` over ranks (mesh, ring, ...)."""
    if signal is None:
        h = _E.host()
        if h is None:
            raise BadArgument("pld.tensor.allreduce in a kernel needs its signal window")
        buf = _E.alloc_window_buffer([h.world_size, int(core_num)], dtype=_E.T.INT32, name=f"{target.buf.name}__signal")
        signal = _E.window(buf, [h.world_size, int(core_num)], dtype=_E.T.INT32)
    kw = {"op": _op(op), "mode": str(mode)}
    if _E.host() is not None:
        kw["core_num"] = int(core_num)
    elif int(core_num) != 1:
        raise BadArgument(f"pld.tensor.allreduce in a kernel runs on the calling core: core_num must be 1, got {core_num} (core_num > 1 is the HOST builtin's)")
    return _collective("allreduce", [target, signal], target, **kw)


def barrier(signal):
    """No rank leaves before every rank of the signal's domain has arrived (self-clearing)."""
    return _collective("barrier", [signal], signal)


def broadcast(target, signal, *, root):
    """Every rank's ``target`` becomes rank ``root``'s."""
    return _collective("broadcast", [target, signal], target, root=int(root))


def allgather(local_data, target, signal):
    """Row ``me`` of every rank's ``target`` becomes this rank's ``local_data``."""
    return _collective("allgather", [local_data, target, signal], target)


def reduce_scatter(target, signal, *, op=ReduceOp.Sum):
    """Row ``me`` of ``target`` becomes the sum over ranks of their row ``me``."""
    return _collective("reduce_scatter", [target, signal], target, op=_op(op))


def all_to_all(input, target, signal):
    """Row ``d`` of ``input`` lands in row ``me`` of rank ``d``'s ``target``."""
    return _collective("all_to_all", [input, target, signal], target)


def all_to_all_v(input, target, signal, send_counts, recv_counts):
    """all_to_all with per-destination row counts."""
    return _collective("all_to_all_v", [input, target, send_counts, recv_counts, signal], target)


system = _NS(
    world_size=world_size, get_comm_ctx=get_comm_ctx, rank=rank, nranks=nranks, notify=notify, wait=wait,
    defer_wait=defer_wait, fence=fence,
)
tile = _NS(remote_load=remote_load, remote_store=remote_store)
tensor = _NS(
    alloc_window_buffer=alloc_window_buffer, window=window, put=put, get=get, remote_store=remote_store,
    allreduce=allreduce, barrier=barrier, broadcast=broadcast, allgather=allgather, reduce_scatter=reduce_scatter,
    all_to_all=all_to_all, all_to_all_v=all_to_all_v,
)

__all__ = [
    "AtomicType", "CommCtx", "CommCtxType", "DistributedTensor", "NotifyOp", "ReduceOp", "WaitCmp", "WindowBuffer",
    "alloc_window_buffer", "get_comm_ctx", "nranks", "rank", "remote_load", "remote_store", "system", "tensor",
    "tile", "window", "world_size",
]
