"""A PyPTO program measured as a collective: ``ranksim.sweep / point / bench / check`` take a
:class:`Collective` made of a program (class form or ``@pl.jit.host``) and three small
functions of the user's, and drive it as they drive a Rust collective (nccl-tests rows, the
checker, the same exit codes from ``python -m ranksim``)."""

from __future__ import annotations

import inspect

import numpy as np

from .._errors import BadArgument
from . import _engine as E
from . import _types as T


def _host_fn(program):
    """The host-level function of a class-form program, a ``@pl.jit.host`` function or a
    compiled program."""
    from ._jit import JITFunction
    from ._program import Program
    from .ir.distributed_compiled_program import DistributedCompiledProgram

    if isinstance(program, DistributedCompiledProgram):
        return program.fn
    if isinstance(program, Program):
        return program.entry if program.entry.level == "host" else program.entry._on_rank0()
    if isinstance(program, JITFunction):
        return program if program.level == "host" else program._on_rank0()
    raise BadArgument(
        f"ranksim.pypto.Collective: {program!r} is not a PyPTO program (a @pl.program class, a @pl.jit.host function or a compiled program)"
    )


class _Calls:
    """What `setup` leaves for `stage` / `call` / `wrong`: the host arguments and each call's
    executor."""

    def __init__(self, session, args, expected):
        self.session, self.args, self.expected, self.runs = session, args, expected, []


class Collective:
    """A PyPTO program as a collective for ``ranksim.sweep / point / bench / check``.

    - `args(count, ranks)` gives the host arguments of one call for `count` elements per rank
      (``count`` is the size in bytes over the dtype's size unless `count=` says otherwise);
      when it takes a `timing_only` keyword, a timing-only run (``--no-data``) passes True, and
      it can return ``np.zeros`` arrays, which hold no memory until written;
    - `golden(*args)` gives the expected value of each output parameter (``pl.Out`` /
      ``pl.InOut``, in order; one array, or a tuple), compared with numpy (`rtol`, `atol`),
      or `wrong(args, outputs)` counts the wrong elements itself;
    - `bus_factor(ranks)` is nccl-tests' bus bandwidth factor (a number or a function).

    Every call gets fresh zeroed windows, as a non-persistent PyPTO launch does; sub-workers
    are not allowed (a measured call is device work only)."""

    def __init__(self, program, *, args, golden=None, wrong=None, bus_factor=1.0, name=None, dtype="f32", count=None, size=None, redop="none", root=-1, rtol=1e-5, atol=1e-5):
        self.fn = _host_fn(program)
        if golden is None and wrong is None:
            raise BadArgument("ranksim.pypto.Collective: give golden=(lambda *args: expected outputs) or wrong=(lambda args, outputs: count)")
        self._args, self._golden, self._wrong = args, golden, wrong
        self._bus = bus_factor
        self.name = name or self.fn.__name__
        self.dtype = dtype
        self._count, self._size, self._redop, self._root = count, size, redop, root
        self.rtol, self.atol = rtol, atol
        outs = [i for i, a in enumerate(self.fn._anns) if isinstance(a, T.TensorAnn) and a.direction != "in"]
        if not outs and golden is not None:
            raise BadArgument(f"{self.fn.__name__} has no pl.Out / pl.InOut parameter to compare with golden=")
        self._outs = outs
        self.first_wrong = None

    def __repr__(self):
        return f"<ranksim.pypto.Collective {self.name}>"

    # ---- nccl-tests' columns ------------------------------------------------------------

    def bus_factor(self, ranks):
        return float(self._bus(ranks) if callable(self._bus) else self._bus)

    def count(self, size_bytes, ranks):
        if self._count is not None:
            return int(self._count(size_bytes, ranks))
        return int(size_bytes) // T.of_ranksim(self.dtype).itemsize

    def bytes(self, count, ranks):
        if self._size is not None:
            return int(self._size(count, ranks))
        return int(count) * T.of_ranksim(self.dtype).itemsize

    def redop(self):
        return self._redop

    def root(self):
        return self._root

    # ---- the collective protocol ----------------------------------------------------------

    def _compiled(self, ranks):
        from .ir.distributed_compiled_program import DistributedCompiledProgram, DistributedConfig
        from .runtime import RunConfig

        cfg = RunConfig(platform="a2a3sim", distributed_config=DistributedConfig(device_ids=list(range(ranks))))
        return DistributedCompiledProgram(self.fn, (), cfg)

    def setup(self, world, dom, count):
        ranks = dom.size
        timing_only = not world.has_payload
        if timing_only and "timing_only" in inspect.signature(self._args).parameters:
            # No value is read or written: arrays of zeros (np.zeros maps no memory until written).
            args = tuple(self._args(count, ranks, timing_only=True))
        else:
            args = tuple(self._args(count, ranks))
        session = E.Session(None, world=world, prefix="pypto_d", fresh=True)
        session.ranks = ranks
        calls = _Calls(session, args, None)
        calls.compiled = self._compiled(ranks)
        return calls

    def stage(self, world, calls, count):
        """Inputs are written when a call binds them; nothing to do before."""

    def call(self, world, calls):
        calls.session.world = world  # each callback lends its own World for the call only
        compiled = calls.compiled
        hargs, dyn = compiled._prepare(calls.args)
        T.bind(dyn)
        run = E.Run(compiled, calls.session, hargs, dyn)
        run.record()
        if any(op[0] == "sub" for op in run.h.ops):
            raise BadArgument(f"{self.name}: a measured call runs device work only; it calls a HOST sub-worker")
        run.materialize()
        for op in run.h.ops:
            run.queue(op)
        calls.runs.append((run, hargs))

    def wrong(self, world, calls, count):
        """The number of wrong output elements of the first call (numpy, vectorised)."""
        run, hargs = calls.runs[0]
        calls.session.world = run.world = world
        run.write_back()
        outs = [hargs[i].arr for i in self._outs]
        if self._wrong is not None:
            return int(self._wrong(calls.args, outs[0] if len(outs) == 1 else tuple(outs)))
        expected = self._golden(*calls.args)
        expected = list(expected) if isinstance(expected, (tuple, list)) else [expected]
        if len(expected) != len(outs):
            raise BadArgument(f"{self.name}: golden gave {len(expected)} array(s) for {len(outs)} output parameter(s)")
        n = 0
        self.first_wrong = None
        for k, (got, want) in enumerate(zip(outs, expected)):
            want = np.broadcast_to(np.asarray(want), got.shape)
            bad = nwrong(got, want, self.rtol, self.atol)
            n += bad
            if self.first_wrong is None and bad:
                i = np.unravel_index(int(np.argmax(~_close(got, want, self.rtol, self.atol))), got.shape)
                self.first_wrong = (self.fn._params[self._outs[k]].name, tuple(int(v) for v in i), float(got[i]), float(want[i]))
        return n


_CHUNK = 1 << 22  # elements compared at a time: bounded temporaries, whatever the size


def _close(got, want, rtol, atol):
    d = np.abs(got - want)
    tol = np.abs(want) * rtol
    tol += atol
    return d <= tol  # NaN compares False: wrong


def nwrong(got, want, rtol, atol):
    """How many elements of `got` differ from `want` (broadcast to it) by more than
    ``atol + rtol * |want|``, NaN counted wrong: in the arrays' own dtype, a leading row or a
    chunk at a time (a 64 MiB x 8-rank output compares in about a second, with no copy of a
    broadcast golden)."""
    if got.ndim > 1 and got.shape[0] > 1:
        return sum(nwrong(got[i], want[i], rtol, atol) for i in range(got.shape[0]))
    g, w = got.reshape(-1), want.reshape(-1)
    return sum(int(np.count_nonzero(~_close(g[i : i + _CHUNK], w[i : i + _CHUNK], rtol, atol))) for i in range(0, g.size, _CHUNK))


__all__ = ["Collective"]
