"""``pl.jit``: the three call levels of a PyPTO program, run eagerly on ranksim.

``@pl.jit.host`` is the host orchestrator (compiled with ``.compile(..., config=RunConfig(...))``
and then called), ``@pl.jit`` a per-device orchestration function dispatched with ``device=r``,
``@pl.jit.incore`` an InCore kernel called from a ``@pl.jit`` function (each call is one task
of the dispatch)."""

from __future__ import annotations

import ast
import inspect
import textwrap


from .._errors import BadArgument
from . import _engine as E
from . import _types as T

_LEVELS = {
    "host": "@pl.jit.host",
    "orch": "@pl.jit",
    "incore": "@pl.jit.incore",
    "sub": "@pl.function(level=HOST, role=SubWorker)",
}


def _annotations(fn):
    """`fn`'s parameter annotations, with string annotations (``from __future__ import
    annotations``) evaluated in the function's globals and closure."""
    ann = dict(getattr(fn, "__annotations__", {}) or {})
    if not any(isinstance(v, str) for v in ann.values()):
        return ann
    ns = dict(getattr(fn, "__globals__", {}))
    code = getattr(fn, "__code__", None)
    for name, cell in zip(code.co_freevars if code else (), getattr(fn, "__closure__", None) or ()):
        try:
            ns[name] = cell.cell_contents
        except ValueError:
            pass
    for k, v in ann.items():
        if isinstance(v, str):
            try:
                ann[k] = eval(v, ns)  # noqa: S307 - the user's own annotation text
            except Exception:
                ann[k] = None
    return ann


# Calls that write a tensor argument, and where the tensor is: (position, keyword).
_WRITERS = {
    "store": (2, "output_tensor"),
    "assemble": (0, "target"),
    "write": (0, "tensor"),
    "remote_store": (1, "target"),
    "put": (0, "dst"),
    "get": (0, "dst"),
}


def written_names(fn):
    """Names a function's body writes through (the tensor of ``pl.store``, ``pl.assemble``,
    ``pl.write``, ``pld.tile.remote_store``, ``pld.tensor.put`` / ``get``), as PyPTO's
    DeriveCallDirections finds a kernel's outputs."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return set()
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _WRITERS:
            pos, kw = _WRITERS[n.func.attr]
            arg = n.args[pos] if len(n.args) > pos else None
            for k in n.keywords:
                if k.arg == kw:
                    arg = k.value
            if isinstance(arg, ast.Name):
                out.add(arg.id)
    return out


def _bare(ann):
    """A bare ``pl.Tensor`` / ``pld.DistributedTensor`` annotation as a shape-less one."""
    kind = getattr(ann, "_ann_kind", None) if isinstance(ann, type) else None
    return T.TensorAnn(kind, None, None) if kind is not None else ann


_CUBE = {"matmul", "matmul_acc", "matmul_bias", "Mat", "Left", "Right", "Acc"}


def uses_cube(fn):
    """Whether `fn`'s source names a cube operation or buffer."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return False
    return any(isinstance(n, ast.Attribute) and n.attr in _CUBE for n in ast.walk(tree))


def _numel(shape):
    n = 1
    for d in shape:
        n *= int(d)
    return n


class JITFunction:
    """A function under one of the ``pl.jit`` decorators."""

    def __init__(self, fn, level, *, source=None, skip_first=False):
        # `source` is the function as the user wrote it (its signature and annotations) when
        # `fn` is a rewritten or bound form of it; `skip_first` drops a bound `self`.
        src = source if source is not None else fn
        self.fn, self.level = fn, level
        self.__name__ = getattr(src, "__name__", "kernel")
        self.__qualname__ = getattr(src, "__qualname__", self.__name__)
        self.__doc__ = src.__doc__
        self.__wrapped__ = src
        sig = inspect.signature(src)
        params = [p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        self._params = params[1:] if skip_first else params
        ann = _annotations(src)
        self._anns = [_bare(ann.get(p.name)) for p in self._params]
        self.spec = None
        self._written = None
        self._cube = None
        self.directions = {
            p.name: a.direction for p, a in zip(self._params, self._anns) if isinstance(a, T.TensorAnn)
        }

    def __repr__(self):
        return f"<{_LEVELS[self.level]} {self.__name__}>"

    @property
    def on_cube(self):
        """Whether the kernel uses the cube (``pl.matmul``, cube buffers): it then runs on an
        AIC core (``Task.on_cube``), as PyPTO places an InCore function by what it does."""
        if self._cube is None:
            self._cube = self.level == "incore" and uses_cube(self.__wrapped__)
        return self._cube

    @property
    def written_params(self):
        if self._written is None:
            self._written = written_names(self.__wrapped__) if self.level == "incore" else set()
        return self._written

    def param_names(self):
        return [p.name for p in self._params]

    def anns(self, n):
        return (self._anns + [None] * n)[:n]

    def check_args(self, args, dyn):
        """Checks tensor arguments against the annotations (shape, dtype, window or not)."""
        if len(args) != len(self._params):
            raise BadArgument(f"{self.__name__}() takes {len(self._params)} argument(s) ({', '.join(self.param_names())}), got {len(args)}")
        for p, ann, a in zip(self._params, self._anns, args):
            what = f"{self.__name__}(): argument `{p.name}`"
            if isinstance(ann, T.TensorAnn):
                if not isinstance(a, (E.Tensor, E.HostTensor, E.DeviceArg, E.StackedArg)):
                    raise BadArgument(f"{what} is annotated {ann!r} but got {type(a).__name__} {a!r}")
                if ann.kind == "window" and not getattr(a, "is_window", False):
                    raise BadArgument(f"{what} is annotated {ann!r}: pass a pld.window view, not a plain tensor")
                if a.dtype is None:
                    raise BadArgument(f"{what}: host dtype {a.arr.dtype} has no ranksim type; use float32, float16, int32, int16 or int8")
                if ann.shape is not None and ann.kind == "window" and not ann.same_rank(a.shape) and ann.numel(dyn) == _numel(a.shape):
                    # PyPTO views a window of the same elements with the annotated shape.
                    continue
                ann.check(what, a.shape, a.dtype, dyn)
            elif isinstance(ann, T.ScalarAnn):
                if isinstance(a, (E.Tensor, E.HostTensor)):
                    raise BadArgument(f"{what} is annotated {ann!r} but got the tensor {a!r}")

    def conform(self, args):
        """`args` with each window view given the shape its parameter is annotated with, when
        the two hold as many elements (``pld.window(buf, [64])`` for a ``[1, 64]`` window)."""
        out = list(args)
        for k, (ann, a) in enumerate(zip(self._anns, args)):
            if isinstance(ann, T.TensorAnn) and ann.kind == "window" and isinstance(a, E.DistributedTensor) and a.t is not None:
                shape = ann.concrete()
                if shape is not None and list(shape) != list(a.shape):
                    out[k] = E.DistributedTensor._wrap(a, a.t.view(a.dtype.rs, list(shape)))
        return out

    def _outs(self, args):
        outs = [a for ann, a in zip(self._anns, args) if isinstance(ann, T.TensorAnn) and ann.direction != "in"]
        return outs[0] if len(outs) == 1 else (tuple(outs) if outs else None)

    def __call__(self, *args, device=None, **kwargs):
        if kwargs:
            args = self._bind(args, kwargs)
        if E.in_kernel():
            return self.fn(*args)
        o = E.orch()
        if o is not None:
            if self.level == "incore":
                self.check_args(list(args), {})
                o.add(self, self.conform(args))
                return self._outs(args)
            if self.level == "sub":
                raise BadArgument(f"{self.__name__} is a HOST sub-worker: call it from the HOST orchestrator, not from a chip's orchestration")
            return self.fn(*args)
        if E.host() is not None:
            if self.level == "host":
                return self.fn(*args)
            if self.level == "sub":
                E.record_sub(self, list(args))
                return None
            self.check_args(list(args), {})
            E.record_dispatch(self, list(args), device)
            return self._outs(args)
        raise BadArgument(
            f"{self.__name__}: ranksim runs PyPTO programs compiled from a @pl.jit.host function: "
            f"call `prog.compile(*args, config=RunConfig(platform=..., distributed_config=DistributedConfig(device_ids=[...])))` "
            f"and then the compiled program"
        )

    def _bind(self, args, kwargs):
        sig = inspect.Signature(self._params)
        try:
            b = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise BadArgument(f"{self.__name__}(): {e}") from None
        return tuple(b.args)

    def compile(self, *args, config=None, **kwargs):
        """A program to call (``compiled(*args, config=...)``). ranksim compiles nothing: the
        arguments are checked against the annotations and the config is kept."""
        from .ir.distributed_compiled_program import DistributedCompiledProgram

        host = self if self.level == "host" else self._on_rank0()
        return DistributedCompiledProgram(host, args, config)

    def _on_rank0(self):
        """A single-device @pl.jit / @pl.jit.incore program as a host program that dispatches it
        once on rank 0 with the same arguments."""

        def host(*args):
            self(*args, device=0)

        host.__name__ = self.__name__
        host.__annotations__ = {p.name: a for p, a in zip(self._params, self._anns) if a is not None}
        host.__signature__ = inspect.Signature(self._params)
        return JITFunction(host, "host")


class _Jit:
    """``pl.jit`` (per-device orchestration) with ``.host`` and ``.incore``."""

    def __call__(self, fn=None, **options):
        if fn is None:
            return lambda f: JITFunction(f, "orch")
        return JITFunction(fn, "orch")

    def host(self, fn=None, **options):
        if fn is None:
            return lambda f: JITFunction(f, "host")
        return JITFunction(fn, "host")

    def incore(self, fn=None, **options):
        if fn is None:
            return lambda f: JITFunction(f, "incore")
        return JITFunction(fn, "incore")


jit = _Jit()
