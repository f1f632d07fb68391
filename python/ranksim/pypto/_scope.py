"""Scopes and loops of PyPTO's language, run eagerly: ``pl.at`` (a body outlined by
``_program.rewrite`` becomes a task or a dispatch), ``pl.manual_scope``, and the loops
``pl.range`` / ``pl.parallel`` / ``pl.unroll`` / ``pl.while_`` with loop-carried values
(``init_values=`` and ``pl.yield_``)."""

from __future__ import annotations

import builtins as _b
import contextvars

from .._errors import BadArgument
from . import _engine as E
from . import _types as T
from ._jit import JITFunction

# Each kernel's stack of carried loops: a context variable, which each kernel has its own
# of, on a thread or as a greenlet sharing the run's thread.
_loops = contextvars.ContextVar("ranksim_pypto_loops", default=None)

# ---- loops with carried values -------------------------------------------------------------


def _frames():
    f = _loops.get()
    if f is None:
        f = []
        _loops.set(f)
    return f


class _Carried:
    """The carried values of one loop; ``pl.yield_`` inside its body replaces them."""

    __slots__ = ("values", "yielded")

    def __init__(self, values):
        self.values, self.yielded = tuple(values), False


def _carried_loop(indices, init):
    frame = _Carried(init)
    stack = _frames()
    stack.append(frame)
    try:
        for i in indices:
            frame.yielded = False
            yield (i, frame.values) if indices is not None else frame.values
    finally:
        if frame in stack:
            stack.remove(frame)


def _int(v, what):
    if isinstance(v, bool) or not hasattr(v, "__index__"):
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise BadArgument(f"{what}: {v!r} is not an integer") from None
        if f != int(f):
            raise BadArgument(f"{what}: {v!r} is not an integer")
        return int(f)
    return int(v)


def range(*args, init_values=None, **kwargs):
    """``pl.range(stop)`` / ``(start, stop[, step])``, optionally with loop-carried
    ``init_values=(...)``: then each iteration gives ``(i, (values...))`` and ``pl.yield_(...)``
    at the end of the body passes the next iteration's values. Runs as a Python loop."""
    if kwargs:
        raise BadArgument(f"pl.range: unknown keyword(s) {', '.join(kwargs)}")
    if not 1 <= len(args) <= 3:
        raise BadArgument(f"pl.range takes 1 to 3 bounds, got {len(args)}")
    rng = _b.range(*(_int(a, "pl.range") for a in args))
    if init_values is None:
        return rng
    if not isinstance(init_values, (tuple, list)):
        raise BadArgument("pl.range(init_values=...) takes a tuple of initial values, e.g. init_values=(acc,)")
    return _carried_loop(rng, init_values)


def parallel(*args, init_values=None, **kwargs):
    """``pl.parallel``: a loop whose iterations PyPTO may run in parallel; runs in order."""
    return range(*args, init_values=init_values, **kwargs)


def unroll(*args):
    """``pl.unroll``: a loop PyPTO unrolls at compile time; runs as a Python loop."""
    return range(*args)


def pipeline(*args, stage=1, init_values=None):
    """``pl.pipeline(N, stage=F)``: a software-pipelined loop; runs as a plain loop."""
    return range(*args, init_values=init_values)


class _Forever:
    def __iter__(self):
        i = 0
        while True:
            yield i
            i += 1


def while_(*, init_values=None):
    """``for (x, ...) in pl.while_(init_values=(...)):`` with ``pl.cond(c)`` first in the body
    (ranksim's rewrite makes it ``if not c: break``) and ``pl.yield_`` last."""
    if init_values is None:
        raise BadArgument("pl.while_ needs init_values=(...): the loop-carried values")
    frame = _Carried(init_values)
    stack = _frames()

    def gen():
        stack.append(frame)
        try:
            while True:
                frame.yielded = False
                yield frame.values
        finally:
            if frame in stack:
                stack.remove(frame)

    return gen()


def cond(condition):
    """``pl.cond(c)`` heads a ``pl.while_`` body; reached unrewritten it means the function
    could not be rewritten (no source), so the loop could not stop."""
    raise BadArgument(
        "pl.cond(...) must be the first statement of a `for ... in pl.while_(...)` loop in a @pl.program or @pl.jit "
        "function whose source ranksim can read"
    )


def yield_(*values):
    """Ends a loop body with the next iteration's carried values; returns them (one value,
    or a tuple), as PyPTO's ``pl.yield_``."""
    stack = _frames()
    if stack:
        frame = stack[-1]
        if len(values) != len(frame.values):
            raise BadArgument(f"pl.yield_ gives {len(values)} value(s) but the loop carries {len(frame.values)} (init_values)")
        frame.values = tuple(values)
        frame.yielded = True
    return values[0] if len(values) == 1 else tuple(values)


# ---- pl.at and pl.manual_scope -------------------------------------------------------------


class TaskId:
    """What ``with pl.at(...) as tid`` binds: the task, for ``deps=[tid]`` of a later one."""

    __slots__ = ("index", "orch")

    def __init__(self, index, orch):
        self.index, self.orch = index, orch

    def __repr__(self):
        return f"<pl.TaskId {self.index}>"


class _Deferred:
    """A name assigned inside a ``pl.at`` body that runs later, as its own task: it has no
    value where the orchestrator continues."""

    __slots__ = ("name", "line")
    deferred = True

    def __init__(self, name, line):
        self.name, self.line = name, line

    def __repr__(self):
        return f"<`{self.name}` assigned inside the pl.at scope at line {self.line}, which runs later as a task>"

    def _fail(self, *a, **k):
        raise BadArgument(
            f"`{self.name}` is assigned inside the `with pl.at(...)` scope at line {self.line}, which ranksim runs later "
            f"as its own task: the orchestrator has no value for it. Pass data between scopes through tensors"
        )

    __getattr__ = __getitem__ = __call__ = __int__ = __float__ = __index__ = __bool__ = _fail


class ScopeResult:
    """The outcome of a ``pl.at`` scope: its task id and the values of names its body binds."""

    __slots__ = ("task_id", "values", "env", "aliases", "line")

    def __init__(self, task_id, values, env=None, aliases=(), line=0):
        self.task_id, self.values, self.env, self.aliases, self.line = task_id, values, env, dict(aliases), line

    def value(self, name):
        if self.values is not None:
            if name in self.values:
                return self.values[name]
            return self.env.get(name) if self.env else None
        alias = self.aliases.get(name)
        if alias is not None and self.env is not None and alias in self.env:
            return self.env[alias]
        return _Deferred(name, self.line)


def _scope_function(fn, level, name, writes, cube):
    jf = JITFunction(fn, level)
    jf.__name__ = name
    jf.writes = set(writes)
    jf._cube = cube
    return jf


_CUBE_HINTS = ("matmul", "Mat", "Left", "Right", "Acc")


class AtContext:
    """``pl.at(level, role=None, *, deps=None, name_hint="", ...)``: a region of code for one
    level. In a ``@pl.program`` / ``@pl.jit`` function ranksim outlines the body, so that
    ``pl.at(level=CORE_GROUP)`` in an orchestration function is one InCore task (named
    `name_hint`, after the tasks of `deps`), ``pl.at(level=CHIP)`` in the HOST orchestrator is
    one chip dispatch (round-robin over the devices, as PyPTO assigns comm-less dispatches),
    and a scope inside a kernel runs in place."""

    def __init__(self, level, role=None, *, optimizations=None, deps=None, no_dep_args=None, dumps=None, allow_early_resolve=False, name_hint="", windowize=False, device=None):
        if not isinstance(level, T.Level):
            raise BadArgument(f"pl.at(level={level!r}): expected a pl.Level member (pl.Level.CORE_GROUP, pl.Level.CHIP, ...)")
        self.level, self.role, self.deps, self.name_hint, self.device = level, role, list(deps or []), name_hint, device

    def __enter__(self):
        raise BadArgument(
            "`with pl.at(...)` runs on ranksim only inside a @pl.program method or a @pl.jit function whose source "
            "ranksim can read (it outlines the body as PyPTO's parser does)"
        )

    def __exit__(self, *exc):
        return False

    def _run(self, fn, env, meta):
        """Runs or records the outlined body `fn` with the values of its names in `env`."""
        args = [env.get(p) for p in fn.__code__.co_varnames[: fn.__code__.co_argcount]]
        line = meta.get("line", 0)
        if E.in_kernel():
            return ScopeResult(None, fn(*args), env)
        o = E.orch()
        incore = self.level in (T.Level.CORE_GROUP, T.Level.AIV, T.Level.AIC)
        name = self.name_hint or f"pl_at_line{line}"
        cube = _mentions(fn, _CUBE_HINTS)
        if o is not None and incore:
            deps = []
            for d in self.deps:
                if d is None:
                    continue
                if not isinstance(d, TaskId) or d.orch is not o:
                    raise BadArgument(f"pl.at(deps=[{d!r}]): a dependency is a task id bound by `with pl.at(...) as tid` in the same orchestration function")
                deps.append(d.index)
            jf = _scope_function(fn, "incore", name, meta.get("writes", ()), cube)
            idx = o.add(jf, args, deps, name)
            return ScopeResult(TaskId(idx, o), None, env, meta.get("aliases", ()), line)
        if E.host() is not None:
            if self.level in (T.Level.CHIP, T.Level.CHIP_DIE):
                jf = _scope_function(fn, "orch", name, meta.get("writes", ()), cube)
            elif incore:
                jf = _scope_function(fn, "incore", name, meta.get("writes", ()), cube)
            else:
                return ScopeResult(None, fn(*args), env)
            E.record_dispatch(jf, args, self.device)
            return ScopeResult(None, None, env, meta.get("aliases", ()), line)
        if o is not None:
            # A chip-level scope inside an orchestration function: the same function.
            return ScopeResult(None, fn(*args), env)
        raise BadArgument(f"pl.at(level={self.level.name}) at line {line} runs in a HOST orchestrator, an orchestration function or a kernel")


def _mentions(fn, words):
    names = set(fn.__code__.co_names)
    for c in fn.__code__.co_consts:
        if hasattr(c, "co_names"):
            names |= set(c.co_names)
    return any(w in names for w in words)


def at(level, role=None, **kwargs):
    return AtContext(level, role, **kwargs)


class manual_scope:
    """``with pl.manual_scope():`` tasks made inside depend only on their ``deps=`` (no
    dependencies derived from their tensors)."""

    def __init__(self, *args, **kwargs):
        self.orch = None

    def __enter__(self):
        self.orch = E.orch()
        if self.orch is not None:
            self.orch.manual += 1
        return self

    def __exit__(self, *exc):
        if self.orch is not None:
            self.orch.manual -= 1
        return False


class scope(manual_scope):
    """``with pl.scope(...)``: a runtime scope; ranksim derives dependencies as usual."""

    def __enter__(self):
        return self


__all__ = ["AtContext", "TaskId", "at", "cond", "manual_scope", "parallel", "pipeline", "range", "scope", "unroll", "while_", "yield_"]
