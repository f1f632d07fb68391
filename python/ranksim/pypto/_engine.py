"""The eager executor behind ``ranksim.pypto``.

A call of a compiled ``@pl.jit.host`` program runs in three steps:

1. **Host.** The host function runs as plain Python. ``pld.alloc_window_buffer`` and
   ``pld.window`` record buffers and views, a call of a ``@pl.jit`` / ``@pl.jit.incore``
   function with ``device=r`` records a dispatch, and a ``pld.tensor.<collective>`` records a
   HOST builtin, all in program order.
2. **Build.** Window buffers are grouped into comm domains by the ranks whose dispatches use
   them (as PyPTO's MaterializeCommDomainScopes does) and allocated; every host tensor a
   dispatch takes becomes a GM tensor on that rank, written from the host array. Each
   ``@pl.jit`` orchestration function runs once per dispatch to list its InCore calls, which
   become the dispatch's tasks (tensor arguments tagged input / output / in-out as annotated,
   windows untagged).
3. **Run.** ranksim runs the world; each InCore call is a Python kernel on its core's thread
   and ``pl.*`` / ``pld.*`` operations there are the Rust ``Core``'s. Outputs (``pl.Out`` /
   ``pl.InOut`` host arguments) are copied back into the caller's arrays in place.
"""

from __future__ import annotations

import linecache
import os
import re
import sys
import contextvars
import threading

import numpy as np

from .. import _native
from .._errors import BadArgument, SimError
from . import _types as T

_tls = threading.local()
# The core of the kernel running here: a context variable, which each kernel has its own of
# whether it runs on a thread or as a greenlet on the run's thread (greenlets share a thread).
_core = contextvars.ContextVar("ranksim_pypto_core", default=None)

# Frames of this package are not the user's kernel lines: reports name the user's line.
_native._skip_frames_under(os.path.dirname(os.path.abspath(__file__)) + os.sep)


def core():
    """The Rust core of the InCore kernel running here."""
    c = _core.get()
    if c is None:
        raise BadArgument(
            "this operation runs inside a @pl.jit.incore kernel; call the kernel from a @pl.jit function dispatched by a compiled @pl.jit.host program"
        )
    return c


def host():
    """The host orchestrator being recorded on this thread, or None."""
    return getattr(_tls, "host", None)


def orch():
    """The dispatch being built on this thread, or None."""
    return getattr(_tls, "orch", None)


def in_kernel() -> bool:
    return _core.get() is not None


# ---- tensors -------------------------------------------------------------------------------


class Tensor:
    """``pl.Tensor``: a tensor argument of a device function (a GM tensor on one rank).
    ``pl.Tensor[[shape], dtype]`` is an annotation."""

    __slots__ = ("t", "shape", "dtype", "name")
    _ann_kind = "tensor"

    def __class_getitem__(cls, item):
        return T._tensor_ann("window" if cls is DistributedTensor else "tensor", item)

    def __init__(self, t, dtype=None):
        self.t = t
        self.shape = tuple(t.shape) if t is not None else ()
        self.dtype = dtype or (T.of_ranksim(t.dtype) if t is not None else None)
        self.name = t.name if t is not None else ""

    is_window = False

    def __repr__(self):
        return f"<pl.Tensor `{self.name}` {self.dtype!r} {list(self.shape)}>"

    def __getitem__(self, idx):
        """A view of part of the tensor: ``t[i]`` drops the first dimension, ``t[a:b]`` keeps
        it (contiguous regions only)."""
        offs, shape, drop = _index(self.shape, idx, repr(self))
        v = self.t.slice(offs, shape)
        if drop:
            v = v.view(self.dtype.rs, [s for k, s in enumerate(shape) if k not in drop] or [1])
        return type(self)._wrap(self, v)

    def __setitem__(self, idx, value):
        """``out[a:b, c:d] = src``: PyPTO's slice-assign (``tensor.assemble``): the region gets
        `src`'s values (a tile, or a tensor's, loaded whole)."""
        offs, shape, _ = _index(self.shape, idx, repr(self))
        _slice_assign(self, value, offs)

    @classmethod
    def _wrap(cls, like, t):
        return Tensor(t, like.dtype)


def _slice_assign(target, source, offsets):
    raise NotImplementedError("slice-assign needs ranksim.pypto's operations: import ranksim.pypto")


def writes_slices(assemble):
    """Names `assemble(target, source, offsets)` as what ``t[a:b] = src`` runs (PyPTO's
    ``tensor.assemble``): the operations module, which builds on this one, names it when it
    loads (``ranksim.pypto`` always loads it), so this module never imports it."""
    global _slice_assign
    _slice_assign = assemble
    return assemble


class DistributedTensor(Tensor):
    """``pld.DistributedTensor``: a view of a window buffer, the same offsets on every rank
    of its comm domain. ``pld.DistributedTensor[[shape], dtype]`` is an annotation."""

    __slots__ = ("buf", "members")
    is_window = True
    _ann_kind = "window"

    def __init__(self, buf, shape, dtype):
        super().__init__(None, dtype)
        self.buf, self.shape, self.name, self.members = buf, tuple(int(s) for s in shape), buf.name, None

    def __repr__(self):
        return f"<pld.DistributedTensor of `{self.buf.name}` {self.dtype!r} {list(self.shape)}>"

    @classmethod
    def _wrap(cls, like, t):
        v = DistributedTensor(like.buf, t.shape, like.dtype)
        v.t, v.members = t, like.members
        return v

    def _resolved(self, what):
        if self.t is None:
            raise BadArgument(f"{what}: window `{self.buf.name}` was never given to a dispatch, so no comm domain holds it")
        return self.t


def _index(shape, idx, what):
    """offsets, extents and dropped dims of `idx` (ints and unit-step slices) on `shape`."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    if len(idx) > len(shape):
        raise BadArgument(f"{what}: {len(idx)} indices for {len(shape)} dimensions")
    offs, ext, drop = [], [], set()
    for k, n in enumerate(shape):
        i = idx[k] if k < len(idx) else slice(None)
        if isinstance(i, slice):
            a, b, step = i.indices(n)
            if step != 1 or b <= a:
                raise BadArgument(f"{what}: index {i} of dimension {k} must be a non-empty unit-step slice")
            offs.append(a)
            ext.append(b - a)
        else:
            i = int(i)
            if i < 0:
                i += n
            if not 0 <= i < n:
                raise BadArgument(f"{what}: index {idx[k]} is out of range for dimension {k} of size {n}")
            offs.append(i)
            ext.append(1)
            drop.add(k)
    return offs, ext, drop


class WindowBuffer:
    """``pld.alloc_window_buffer``: a zeroed allocation in the window of every rank of a comm
    domain (``pld.window`` views it)."""

    __slots__ = ("name", "nbytes", "dtype", "shape", "views", "ranks", "order", "window")

    def __init__(self, name, nbytes, dtype, shape, order):
        self.name, self.nbytes, self.dtype, self.shape, self.order = name, nbytes, dtype, shape, order
        self.views, self.ranks, self.window = [], set(), None

    def __repr__(self):
        return f"<pld window buffer `{self.name}` {self.nbytes} bytes>"


class HostTensor:
    """A host array argument of a ``@pl.jit.host`` program, or a view ``x[r]`` of one."""

    __slots__ = ("root", "arr", "name", "shape", "dtype", "key")

    def __init__(self, root, arr, name, key, dtype=None):
        self.root, self.arr, self.name, self.key = root, arr, name, key
        self.shape, self.dtype = tuple(arr.shape), dtype or T.of_numpy(arr.dtype)

    def __getitem__(self, idx):
        sub = self.arr[idx]
        if not isinstance(sub, np.ndarray) or sub.ndim == 0:
            raise BadArgument(f"host tensor `{self.name}`{_idx_text(idx)} is a scalar; pass a tensor region to a dispatch")
        if not (sub.flags.c_contiguous):
            raise BadArgument(f"host tensor `{self.name}`{_idx_text(idx)} is not contiguous; slice whole rows")
        return HostTensor(self.root, sub, self.name, self.key + (_idx_text(idx),), self.dtype)

    def __repr__(self):
        return f"<host tensor `{self.name}` {list(self.shape)}>"

    @property
    def ndim(self):
        return len(self.shape)


def _idx_text(idx):
    return repr(idx) if isinstance(idx, tuple) else f"[{idx!r}]"


# ---- what the host records -----------------------------------------------------------------


class _Host:
    def __init__(self, program, world_size):
        self.program, self.world_size = program, world_size
        self.ops = []  # ("dispatch", fn, args, device, line) | ("collective", kind, operands, kw, line)
        self.buffers = []
        self.next_rr = 0
        self.names = set()
        self.temps = []


def user_line(depth=2):
    """`file:line` of the caller's caller outside this package."""
    f = sys._getframe(depth)
    here = os.path.dirname(os.path.abspath(__file__))
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(here):
        f = f.f_back
    return (f.f_code.co_filename, f.f_lineno) if f is not None else ("<unknown>", 0)


_ASSIGN = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=]*)?=")


def alloc_window_buffer(size, *, dtype=None, name=""):
    h = host()
    if h is None:
        raise BadArgument("pld.alloc_window_buffer runs in a @pl.jit.host orchestrator")
    if isinstance(size, (list, tuple)):
        if dtype is None:
            raise BadArgument("pld.alloc_window_buffer(shape, dtype=...): the shape form needs dtype=")
        shape = [int(s) for s in size]
        if not shape or any(s <= 0 for s in shape):
            raise BadArgument(f"pld.alloc_window_buffer: shape {shape} must be non-empty with positive dims")
        nbytes = int(np.prod(shape)) * dtype.itemsize
        dtype.ranksim("pld.alloc_window_buffer")
    else:
        if dtype is not None:
            raise BadArgument("pld.alloc_window_buffer(size_bytes): the byte form takes no dtype= (pass a shape to give one)")
        nbytes, shape = int(size), None
        if nbytes <= 0:
            raise BadArgument(f"pld.alloc_window_buffer: size {nbytes} bytes must be positive")
    if not name:
        file, line = user_line()
        m = _ASSIGN.match(linecache.getline(file, line))
        name = m.group(1) if m else f"buf{len(h.buffers)}"
    if name in h.names:
        raise BadArgument(f"pld.alloc_window_buffer: a buffer named `{name}` already exists in this program; name buffers uniquely")
    h.names.add(name)
    buf = WindowBuffer(name, nbytes, dtype, shape, len(h.buffers))
    h.buffers.append(buf)
    return buf


def window(buf, shape, *, dtype):
    if not isinstance(buf, WindowBuffer):
        raise TypeError(f"pld.window: {buf!r} is not a buffer from pld.alloc_window_buffer")
    shape = [int(s) for s in shape]
    dtype.ranksim("pld.window")
    need = int(np.prod(shape)) * dtype.itemsize
    if need > buf.nbytes:
        raise BadArgument(f"pld.window: {dtype.name}{shape} needs {need} bytes but `{buf.name}` has {buf.nbytes}")
    v = DistributedTensor(buf, shape, dtype)
    buf.views.append(v)
    return v


def record_dispatch(fn, args, device):
    h = host()
    n = h.world_size
    if device is None:
        device = h.next_rr % n
        h.next_rr += 1
    if not isinstance(device, (int, np.integer)) or not 0 <= int(device) < n:
        raise BadArgument(f"{fn.__name__}(..., device={device!r}): device must be a rank in 0..{n - 1} (DistributedConfig has {n} device ids)")
    device = int(device)
    for a in args:
        if isinstance(a, DistributedTensor):
            a.buf.ranks.add(device)
    h.ops.append(("dispatch", fn, args, device, user_line(3)))


def record_sub(fn, args):
    """A HOST sub-worker call: it runs on the host once everything recorded before it ran."""
    host().ops.append(("sub", fn, args, user_line(3)))


def record_collective(kind, operands, kw):
    h = host()
    for o in operands:
        if not isinstance(o, DistributedTensor):
            raise BadArgument(f"pld.tensor.{kind}: {o!r} is not a window (pld.window of a pld.alloc_window_buffer)")
    h.ops.append(("collective", kind, operands, kw, user_line(3)))


# ---- building and running ------------------------------------------------------------------


class Call:
    """One InCore task of a dispatch: the kernel function and its arguments; `deps` are the
    indices of earlier calls it waits for (``pl.at(..., deps=[...])``), `manual` says it was
    made in a ``pl.manual_scope`` (no dependencies from its tensors)."""

    __slots__ = ("fn", "args", "deps", "manual", "name")

    def __init__(self, fn, args, deps=(), manual=False, name=None):
        self.fn, self.args, self.deps, self.manual, self.name = fn, args, list(deps), manual, name


class _Orch:
    """The InCore calls of one dispatch's orchestration function."""

    def __init__(self, rank):
        self.rank, self.calls, self.manual = rank, [], 0

    def add(self, fn, args, deps=(), name=None):
        self.calls.append(Call(fn, args, deps, self.manual > 0, name))
        return len(self.calls) - 1


def _align32(n):
    return (n + 31) // 32 * 32


class Session:
    """A ranksim world that one or more program calls run on: a fresh one per one-shot call,
    or a ``DistributedWorker``'s for its whole life (its device tensors, the GM tensors host
    arguments were bound to and, with ``persistent=True``, its comm domains persist)."""

    def __init__(self, cfg, *, persistent=False, reset=None, world=None, prefix="comm_d", fresh=False, timing_only=False, jitter=None, budgets=None):
        # `world`: run on a world made elsewhere (a measured collective's); `fresh`: windows
        # zeroed at every run, as a non-persistent PyPTO launch gets them; `jitter`: (seed,
        # op_ns, dispatch_ns).
        self.cfg = cfg
        self.world = world if world is not None else cfg.world()
        if timing_only and world is None:
            self.world.set_timing_only()
        if jitter is not None:
            self.world.set_jitter(*jitter)
        for name, value in (budgets or {}).items():
            setattr(self.world, name, value)
        self.ranks = self.world.size
        self.persistent, self.reset, self.prefix, self.fresh = persistent, reset, prefix, fresh
        self.gm = {}  # (program, root key, shape, dtype, k) -> ranksim Tensor
        self.gm_names = set()
        self.domains = {}  # (program, descriptor) -> (Domain, {buffer name: window})
        self.ndomains = 0

    @property
    def payload(self):
        """Whether the world keeps values (not timing-only)."""
        return self.world.has_payload

    def gm_tensor(self, key, name, dtype, shape):
        t = self.gm.get(key)
        if t is None:
            while name in self.gm_names:
                name += "'"
            self.gm_names.add(name)
            t = self.world.alloc_tensor(name, dtype, list(shape))
            self.gm[key] = t
        return t

    def domain(self, owner, ranks, bufs):
        """The comm domain for `bufs` over `ranks`, and whether it is temporary (released
        after the call)."""
        key = (id(owner), ranks, tuple((b.name, b.nbytes, b.dtype.name if b.dtype else None, tuple(b.shape or ())) for b in bufs))
        if self.persistent and key in self.domains:
            return self.domains[key], False
        size = sum(_align32(b.nbytes) for b in bufs)
        name = f"{self.prefix}{self.ndomains}"
        self.ndomains += 1
        w = self.world
        if self.fresh:
            dom = w.allocate_domain(name, list(ranks), size)
        elif self.persistent:
            dom = w.allocate_domain(name, list(ranks), size, persistent=True, reset=self.reset)
        else:
            # One call's windows live across its segments (runs split at sub-worker calls).
            dom = w.allocate_domain(name, list(ranks), size, persistent=True, reset=False)
        wins = {}
        for b in bufs:
            if b.shape is not None:
                wins[b.name] = w.alloc_window(dom, b.name, b.dtype.rs, b.shape)
            else:
                wins[b.name] = w.alloc_window(dom, b.name, "i8", [b.nbytes])
        entry = (dom, wins)
        if self.persistent:
            self.domains[key] = entry
        return entry, not self.persistent


class PlanSession:
    """A session that only records (``ir/plan.py``): no world is built."""

    def __init__(self, cfg):
        self.cfg, self.world, self.ranks = cfg, None, cfg.ranks


class Run:
    """One call of a program on a session's world: record the host orchestrator, build its
    comm domains, then queue and run its operations in segments (a HOST sub-worker call
    ends a segment: the run so far completes, outputs come back to the host arrays and the
    callback runs on them)."""

    def __init__(self, program, session, hargs, dyn, subs=None):
        self.program, self.session, self.hargs, self.dyn = program, session, hargs, dyn
        self.cfg = session.cfg
        self.world = session.world
        self.subs = subs or {}
        self.bound = {}  # (rank, host key) -> ranksim Tensor
        self.slots = {}  # (rank, root key, shape, dtype) -> [host keys]
        self.writeback = []  # (HostTensor, rank, ranksim Tensor)
        self.uploads = []  # (HostTensor, rank, ranksim Tensor)
        self.temporary = []  # domains released when the call ends
        self.graphs = []  # (rank, [task: {name, deps, inputs, outputs, inouts}]) per dispatch, in queue order
        # Host arrays lent to their GM copies (World.lend) instead of copied: set for plain
        # runs of a compiled program, whose call ends the loans (`release`).
        self.lend = False
        self.lent = []  # (array, writable)

    def record(self):
        h = _Host(self.program, self.session.ranks)
        _tls.host = h
        try:
            self.program.fn.fn(*self.hargs)
        finally:
            _tls.host = None
        self.h = h

    def materialize(self):
        h = self.h
        # A HOST collective's operands live where their dispatches put them; operands no
        # dispatch took span the whole world.
        for op in h.ops:
            if op[0] == "collective":
                ranks = set().union(*(o.buf.ranks for o in op[2]))
                for o in op[2]:
                    o.buf.ranks |= ranks or set(range(h.world_size))
        groups = {}
        for b in h.buffers:
            if b.ranks:
                groups.setdefault(tuple(sorted(b.ranks)), []).append(b)
        for ranks, bufs in sorted(groups.items(), key=lambda g: g[1][0].order):
            (dom, wins), temporary = self.session.domain(self.program, ranks, bufs)
            if temporary:
                self.temporary.append(dom)
            for b in bufs:
                b.window = wins[b.name]
                for v in b.views:
                    same = b.shape is not None and v.dtype is b.dtype and list(v.shape) == list(b.shape)
                    v.t = b.window if same else b.window.view(v.dtype.rs, list(v.shape))
                    v.members = list(ranks)

    def release(self):
        if self.lent:
            self.world.end_loans()
            self.lent = []
        for dom in self.temporary:
            self.world.release_domain(dom)
        self.temporary = []

    def device_arg(self, a, rank, fname, pname, out=False):
        if isinstance(a, HostTensor):
            return Tensor(self.gm_tensor(a, rank, f"{fname}({pname}=...)", out), a.dtype)
        if isinstance(a, DeviceArg):
            return a.on(rank, f"{fname}({pname}=...)")
        if isinstance(a, DistributedTensor):
            a._resolved(f"{fname}({pname}=...)")
            return a
        if isinstance(a, Tensor):
            return a
        if isinstance(a, (bool, int, float, np.integer, np.floating)) or a is None or getattr(type(a), "deferred", False):
            return a
        if isinstance(a, (list, tuple)):
            return type(a)(self.device_arg(x, rank, fname, pname, out) for x in a)
        raise BadArgument(f"{fname}({pname}=...): {a!r} is neither a tensor nor a scalar")

    def gm_tensor(self, a, rank, what, out=False):
        if a.dtype is None:
            raise BadArgument(f"{what}: host array dtype {a.arr.dtype} has no ranksim type; use float32, float16, int32, int16 or int8")
        key = (rank, a.key)
        if key in self.bound:
            t = self.bound[key]
            if self._returns(a, out) and not any(w[0] is a and w[1] == rank for w in self.writeback):
                self.writeback.append((a, rank, t))
            return t
        slot = (rank, a.key[0], a.shape, a.dtype.name)
        used = self.slots.setdefault(slot, [])
        k = len(used)
        used.append(a.key)
        name = a.name if k == 0 else f"{a.name}.{k}"
        t = self.session.gm_tensor((id(self.program), a.key[0], a.shape, a.dtype.name, k), name, a.dtype.rs, a.shape)
        if self.session.payload:
            if not (self.lend and self._lend(a, rank, t, self._returns(a, out))):
                self.world.write(t, rank, a.arr)
        else:
            self.world.mark_staged(t, rank)  # timing-only: no values, the input counts as staged
        self.bound[key] = t
        self.uploads.append((a, rank, t))
        if self._returns(a, out):
            self.writeback.append((a, rank, t))
        return t

    def _lend(self, a, rank, t, writable):
        """Lends host array `a` to its GM copy `t` on `rank` (no staging copy, and for an
        output no copy back): not when it may overlap another lent array and either is written
        (separate device copies must stay separate), nor when the world cannot take it as it is."""
        arr = a.arr
        if any((writable or w) and np.may_share_memory(arr, o) for o, w in self.lent):
            return False
        if not self.world.lend(t, rank, arr, writable):
            return False
        self.lent.append((arr, writable))
        return True

    def _returns(self, a, out):
        """Whether a dispatch's GM copy of host tensor `a` comes back to the host: the host
        program's outputs, and its intermediates (``pl.create_tensor``) a dispatch writes."""
        temp = isinstance(a.key[0], tuple)
        return (out and temp) or (not temp and self.program.fn.directions.get(a.name, "in") != "in")

    def queue(self, op):
        """Queues one recorded host operation (a dispatch or a HOST collective)."""
        from .. import Dispatch, Task

        w = self.world
        if op[0] == "collective":
            _, kind, operands, kw, _line = op
            ts = [o.t for o in operands]
            if ts and len(ts[-1].shape) == 1 and operands[-1].dtype.name == "INT32":
                ts[-1] = ts[-1].view("i32", [ts[-1].shape[0], 1])  # a 1-D signal: one cell per rank
            try:
                _native._host_collective(w, kind, ts, **kw)
            except SimError as e:
                raise type(e)(f"{e} (pld.tensor.{kind} at {_line[0]}:{_line[1]})") from None
            return
        _, fn, args, rank, _line = op
        params = fn.param_names()
        anns = fn.anns(len(args))
        writes = getattr(fn, "writes", None) or ()

        def out(i):
            ann = anns[i]
            return (isinstance(ann, T.TensorAnn) and ann.direction != "in") or (i < len(params) and params[i] in writes)

        dargs = [
            self.device_arg(a, rank, fn.__name__, params[i] if i < len(params) else f"#{i}", out(i)) for i, a in enumerate(args)
        ]
        if fn.level == "incore":
            calls = [Call(fn, dargs)]
        else:
            o = _Orch(rank)
            _tls.orch = o
            try:
                fn.check_args(dargs, {})
                fn.fn(*dargs)
            finally:
                _tls.orch = None
            calls = o.calls
        d = Dispatch(fn.__name__)
        tasks = []
        for call in calls:
            kfn, kargs = call.fn, call.args
            task = Task(call.name or kfn.__name__, 1, _kernel(kfn, kargs))
            if getattr(kfn, "on_cube", False):
                if not hasattr(task, "on_cube"):
                    raise NotImplementedError(f"{kfn.__name__} uses the cube (pl.matmul), which this build of ranksim's Python bindings cannot place")
                task.on_cube()
            writes = getattr(kfn, "writes", None)
            written = getattr(kfn, "written_params", ())
            names = kfn.param_names()
            for k, (ann, a) in enumerate(zip(kfn.anns(len(kargs)), kargs)):
                if not isinstance(a, Tensor) or a.t is None:
                    continue
                pname = names[k] if k < len(names) else None
                if call.manual:
                    task.no_dep(a.t)
                elif writes is not None:
                    task.inout(a.t) if pname in writes else task.input(a.t)
                elif a.is_window:
                    # PyPTO's DeriveCallDirections: a window is written when annotated
                    # Out / InOut or when the kernel stores into it (store, remote_store,
                    # put, ...), read otherwise; tasks order by it like any tensor.
                    if (ann is not None and ann.direction != "in") or pname in written:
                        task.inout(a.t)
                    else:
                        task.input(a.t)
                elif ann is None or ann.direction == "in":
                    task.input(a.t)
                elif ann.direction == "out":
                    task.output_existing(a.t)
                else:
                    task.inout(a.t)
            if call.deps:
                task.after(call.deps)
            d.add(task)
            tasks.append(_task_facts(call, kfn, kargs))
        w.dispatch(rank, d)
        self.graphs.append((rank, fn.__name__, tasks))

    def write_back(self):
        if not self.session.payload:
            return
        for a, rank, t in self.writeback:
            # Straight into the host array when its layout and dtype allow (no copy between).
            if not self.world.read_into(t, rank, a.arr):
                np.copyto(a.arr, self.world.read(t, rank), casting="unsafe")

    def upload(self):
        """Host arrays are the truth between segments: a sub-worker may have changed them."""
        if not self.session.payload:
            return
        for a, rank, t in self.uploads:
            self.world.write(t, rank, a.arr)

    def segments(self):
        """The recorded operations split at sub-worker calls: lists of operations to queue
        and run, each followed by the sub-worker op that ends it (or None)."""
        seg = []
        for op in self.h.ops:
            if op[0] == "sub":
                yield seg, op
                seg = []
            else:
                seg.append(op)
        yield seg, None

    def call_sub(self, op):
        _, fn, args, line = op
        views = [host_view(a) if isinstance(a, HostTensor) else a for a in args]
        override = self.subs.get(fn.__name__)
        if override is not None:
            override(views)
        else:
            fn.fn(*views)


def _task_facts(call, kfn, kargs):
    """What a DFX dependency dump says of one task: its name, the tasks it waits for by id
    (``deps=``), and the tensors it reads and writes."""
    names = kfn.param_names()
    reads, writes = [], []
    written = set(getattr(kfn, "writes", None) or ()) | set(getattr(kfn, "written_params", ()))
    for k, (ann, a) in enumerate(zip(kfn.anns(len(kargs)), kargs)):
        if not isinstance(a, Tensor) or a.t is None:
            continue
        pname = names[k] if k < len(names) else f"#{k}"
        out = (ann is not None and getattr(ann, "direction", "in") != "in") or pname in written
        (writes if out else reads).append(a.t.name)
    return {"name": call.name or kfn.__name__, "deps": list(call.deps), "manual": call.manual, "reads": reads, "writes": writes}


def host_view(h):
    """What a sub-worker callback receives for a host tensor: a torch tensor on the caller's
    memory when the caller passed torch tensors, else the numpy array."""
    if type(h.root).__module__.split(".")[0] == "torch":
        import torch

        return torch.from_numpy(h.arr)
    return h.arr


class CubeTile:
    """A tile in one of the cube's buffers (``buf``: l1, l0a, l0b, l0c), from ``pl.load(...,
    target_memory=pl.MemorySpace.Mat)``, ``pl.move`` or ``pl.matmul``."""

    __slots__ = ("t", "buf")

    def __init__(self, t, buf):
        self.t, self.buf = t, buf

    def __repr__(self):
        return f"<cube tile in {self.buf.upper()}>"


def host_temp(arr, dtype):
    """A host intermediate (``pl.create_tensor`` in the HOST orchestrator), named after the
    variable it is assigned to."""
    h = host()
    file, line = user_line(3)
    m = _ASSIGN.match(linecache.getline(file, line))
    name = m.group(1) if m else f"tmp{len(h.temps)}"
    t = HostTensor(arr, arr, name, (("tmp", len(h.temps)),), dtype)
    h.temps.append(t)
    return t


class DeviceArg:
    """A device tensor (``rt.alloc_tensor``) or one shard of a stacked one, as a program
    argument: already resident on its worker's rank, so nothing is uploaded."""

    __slots__ = ("t", "rank", "shape", "dtype", "name")

    def __init__(self, t, rank, dtype):
        self.t, self.rank, self.dtype = t, rank, dtype
        self.shape, self.name = tuple(t.shape), t.name

    def __repr__(self):
        return f"<device tensor `{self.name}` {list(self.shape)} on worker {self.rank}>"

    def __getitem__(self, idx):
        offs, shape, drop = _index(self.shape, idx, repr(self))
        v = self.t.slice(offs, shape)
        if drop:
            v = v.view(self.dtype.rs, [s for k, s in enumerate(shape) if k not in drop] or [1])
        return DeviceArg(v, self.rank, self.dtype)

    def on(self, rank, what):
        if rank != self.rank:
            raise BadArgument(f"{what}: {self!r} lives on worker {self.rank}, but this dispatch runs on device {rank}; allocate it with worker_id={rank}")
        return Tensor(self.t, self.dtype)


class StackedArg:
    """A stacked device tensor as a program argument: ``x[i]`` is shard i, on its worker."""

    __slots__ = ("shards", "shape", "dtype", "name")

    def __init__(self, shards, shape, dtype, name):
        self.shards, self.shape, self.dtype, self.name = shards, tuple(shape), dtype, name

    def __repr__(self):
        return f"<stacked device tensor `{self.name}` {list(self.shape)}>"

    def __getitem__(self, idx):
        first = idx[0] if isinstance(idx, tuple) else idx
        if not isinstance(first, (int, np.integer)):
            raise BadArgument(f"{self!r}: index the leading (shard) dimension with an int, got {idx!r}")
        shard = self.shards[int(first)]
        rest = idx[1:] if isinstance(idx, tuple) else ()
        return shard[rest] if rest else shard


def _kernel(fn, args):
    body = fn.fn

    def kernel(c):
        token = _core.set(c)
        try:
            body(*args)
        finally:
            _core.reset(token)

    kernel.__name__ = fn.__name__
    return kernel


# ---- host arrays in and out ----------------------------------------------------------------


def host_array(obj, name):
    """A writable numpy view of `obj` sharing its memory when it can (numpy arrays, the
    buffer protocol, `__array__` objects such as CPU torch tensors)."""
    if isinstance(obj, np.ndarray):
        return obj
    try:
        return np.asarray(memoryview(obj))
    except TypeError:
        pass
    if hasattr(obj, "__array__") or hasattr(obj, "__array_interface__"):
        try:
            return np.asarray(obj)
        except Exception as e:
            raise BadArgument(f"argument `{name}`: numpy cannot view this {type(obj).__name__} ({e}); pass float32, float16 or integer data") from None
    raise BadArgument(f"argument `{name}`: {type(obj).__name__} is not a host tensor (pass a numpy array, a torch tensor, or anything with __array__ or the buffer protocol)")


def copy_back(obj, arr):
    """Makes sure `obj` holds `arr`'s values (for objects whose `__array__` copies)."""
    if isinstance(obj, np.ndarray):
        return
    try:
        if np.shares_memory(np.asarray(obj), arr):
            return
    except Exception:
        pass
    try:
        obj[...] = arr
    except Exception as e:
        raise BadArgument(
            f"cannot write the result back into a {type(obj).__name__}: it neither shares memory with numpy nor accepts obj[...] = array ({e})"
        ) from None


def timing_line(name, platform, cfg, report):
    per = report.device_time_per_call_us
    ranks = cfg.ranks
    return (
        f"[ranksim] {name} on {platform} ({cfg.name}, {ranks} ranks): device time {report.device_time_us:.3f} us, "
        f"{len(report.dispatches)} dispatch(es), {len(per)} call(s)"
    )



