"""Data types and annotation objects of ``ranksim.pypto``: ``pl.FP32``, ``pl.Tensor[[8, 8],
pl.FP32]``, ``pl.Out[...]``, ``pl.Scalar[...]``, ``pld.DistributedTensor[...]``,
``pl.dynamic("NR")``. Annotations are read when a program is compiled and called: they give
each argument's shape, dtype and direction (input, output, in/out, window)."""

from __future__ import annotations

import enum as _enum
import threading

from .._errors import BadArgument


class DataType:
    """An element type. ``rs`` is ranksim's name (None: ranksim has no tensors of it)."""

    __slots__ = ("name", "rs", "np", "itemsize", "is_float")

    def __init__(self, name, rs, np, itemsize, is_float):
        self.name, self.rs, self.np, self.itemsize, self.is_float = name, rs, np, itemsize, is_float

    def __repr__(self):
        return f"pl.{self.name}"

    def get_byte(self) -> int:
        """Bytes per element (PyPTO's ``DataType.get_byte()``)."""
        return self.itemsize

    def get_bit(self) -> int:
        return self.itemsize * 8

    def ranksim(self, what: str) -> str:
        if self.rs is None:
            raise BadArgument(
                f"{what}: dtype {self.name} has no ranksim tensor type; use FP32, FP16, BF16, INT32, INT16 or INT8"
            )
        return self.rs


FP32 = DataType("FP32", "f32", "float32", 4, True)
FP16 = DataType("FP16", "f16", "float16", 2, True)
BF16 = DataType("BF16", "bf16", "float32", 2, True)
INT32 = DataType("INT32", "i32", "int32", 4, False)
INT16 = DataType("INT16", "i16", "int16", 2, False)
INT8 = DataType("INT8", "i8", "int8", 1, False)
INT64 = DataType("INT64", None, "int64", 8, False)
UINT8 = DataType("UINT8", None, "uint8", 1, False)
UINT32 = DataType("UINT32", None, "uint32", 4, False)
FP64 = DataType("FP64", None, "float64", 8, True)
BOOL = DataType("BOOL", None, "bool", 1, False)
INDEX = DataType("INDEX", None, "int64", 8, False)
UINT16 = DataType("UINT16", None, "uint16", 2, False)
UINT64 = DataType("UINT64", None, "uint64", 8, False)
TASK_ID = DataType("TASK_ID", None, "int64", 8, False)

ALL = [FP32, FP16, BF16, INT32, INT16, INT8, INT64, UINT8, UINT32, FP64, BOOL, INDEX, UINT16, UINT64, TASK_ID]
_BY_RS = {d.rs: d for d in ALL if d.rs}
_BY_NP = {"float32": FP32, "float16": FP16, "int32": INT32, "int16": INT16, "int8": INT8}


def of_ranksim(name: str) -> DataType:
    return _BY_RS[name]


def of_numpy(np_dtype) -> DataType | None:
    return _BY_NP.get(str(np_dtype))


class _DynArith:
    """Arithmetic on dynamic dimensions (``NR * SIZE``): builds a :class:`DynExpr`."""

    def _op(self, other, fn, sym, rev=False):
        a, b = (other, self) if rev else (self, other)
        return DynExpr(lambda env: fn(_value(a, env), _value(b, env)), f"({_text(a)} {sym} {_text(b)})")

    def __add__(self, o):
        return self._op(o, lambda a, b: a + b, "+")

    def __radd__(self, o):
        return self._op(o, lambda a, b: a + b, "+", True)

    def __sub__(self, o):
        return self._op(o, lambda a, b: a - b, "-")

    def __rsub__(self, o):
        return self._op(o, lambda a, b: a - b, "-", True)

    def __mul__(self, o):
        return self._op(o, lambda a, b: a * b, "*")

    def __rmul__(self, o):
        return self._op(o, lambda a, b: a * b, "*", True)

    def __floordiv__(self, o):
        return self._op(o, lambda a, b: a // b, "//")

    def __rfloordiv__(self, o):
        return self._op(o, lambda a, b: a // b, "//", True)


def _value(x, env):
    if isinstance(x, DynVar):
        return env[x.name]
    if isinstance(x, DynExpr):
        return x.fn(env)
    return int(x)


def _text(x):
    return x.name if isinstance(x, DynVar) else (x.text if isinstance(x, DynExpr) else str(x))


class _Bound(threading.local):
    """The dynamic dimensions of the program call being set up on this thread (PyPTO resolves
    them at run time); other threads (kernels) see the ones set last."""

    last = {}

    def __init__(self):
        self.dims = None

    def get(self):
        return self.dims if self.dims is not None else _Bound.last


_BOUND = _Bound()


def bind(dyn):
    """Binds the dynamic dimensions of the call being set up on this thread."""
    _BOUND.dims = dict(dyn)
    _Bound.last = _BOUND.dims


def bound():
    """The dynamic dimensions in force here."""
    return _BOUND.get()


class DynVar(_DynArith):
    """``pl.dynamic("NR")``: a dimension fixed by the arguments a program is called with."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"pl.dynamic({self.name!r})"

    def __index__(self):
        dims = bound()
        if self.name not in dims:
            raise BadArgument(f"dynamic dimension {self.name} is not bound: no argument of the running program has it")
        return dims[self.name]

    __int__ = __index__


class DynExpr(_DynArith):
    """A dimension computed from dynamic ones (``NR * SIZE``), checked once they are bound."""

    __slots__ = ("fn", "text")

    def __init__(self, fn, text):
        self.fn, self.text = fn, text

    def __repr__(self):
        return self.text

    def __index__(self):
        try:
            return self.fn(bound())
        except KeyError as e:
            raise BadArgument(f"dimension {self.text}: {e.args[0]} is not bound by the running program's arguments") from None

    __int__ = __index__


def dynamic(name: str) -> DynVar:
    """A runtime-resolved dimension (``NR = pl.dynamic("NR")``)."""
    return DynVar(name)


def _shape_text(shape) -> str:
    return "[" + ", ".join(_text(d) for d in shape) + "]"


class TensorAnn:
    """What ``pl.Tensor[[shape], dtype]`` (``kind="tensor"``) or
    ``pld.DistributedTensor[[shape], dtype]`` (``kind="window"``) evaluates to, with the
    direction ``pl.Out`` / ``pl.InOut`` give it."""

    __slots__ = ("kind", "shape", "dtype", "direction")

    def __init__(self, kind, shape, dtype, direction="in"):
        # shape and dtype None: a bare ``pl.Tensor`` (any shape and dtype, fixed by the call).
        self.kind, self.shape, self.dtype, self.direction = kind, tuple(shape) if shape is not None else None, dtype, direction

    def with_direction(self, direction):
        return TensorAnn(self.kind, self.shape, self.dtype, direction)

    def __repr__(self):
        base = "pld.DistributedTensor" if self.kind == "window" else "pl.Tensor"
        t = f"{base}[{_shape_text(self.shape)}, {self.dtype!r}]" if self.shape is not None else base
        return {"in": t, "out": f"pl.Out[{t}]", "inout": f"pl.InOut[{t}]"}[self.direction]

    def same_rank(self, shape):
        return self.shape is None or len(tuple(shape)) == len(self.shape)

    def concrete(self, dyn=None):
        """The annotated shape with dynamic dims resolved (None if one is unbound)."""
        if self.shape is None:
            return None
        try:
            return [_value(d, dyn if dyn is not None else bound()) for d in self.shape]
        except KeyError:
            return None

    def numel(self, dyn=None):
        shape = self.concrete(dyn)
        if shape is None:
            return -1
        n = 1
        for d in shape:
            n *= d
        return n

    def check(self, what: str, shape, dtype, dyn: dict):
        """Raises BadArgument unless `shape` / `dtype` fit; binds dynamic dims in `dyn`."""
        if self.shape is None:
            return
        shape = tuple(int(s) for s in shape)
        if dtype is not self.dtype:
            raise BadArgument(f"{what}: dtype {dtype.name} does not match the annotation {self!r}; pass {self.dtype.name} data")
        if len(shape) != len(self.shape):
            raise BadArgument(f"{what}: shape {list(shape)} does not match the annotation {self!r} (rank {len(self.shape)})")
        for k, (got, want) in enumerate(zip(shape, self.shape)):
            if isinstance(want, DynVar):
                bound = dyn.setdefault(want.name, got)
                if bound != got:
                    raise BadArgument(
                        f"{what}: dimension {k} is {got} but {want.name} is already {bound} from another argument"
                    )
        for k, (got, want) in enumerate(zip(shape, self.shape)):
            if isinstance(want, DynExpr):
                try:
                    need = want.fn(dyn)
                except KeyError:
                    continue
                if need != got:
                    raise BadArgument(f"{what}: dimension {k} is {got} but {want.text} = {need} (dimensions {dyn})")
            elif not isinstance(want, DynVar) and want != got:
                raise BadArgument(f"{what}: shape {list(shape)} does not match the annotation {self!r} (dimension {k})")


class ScalarAnn:
    __slots__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = dtype

    def __repr__(self):
        return f"pl.Scalar[{self.dtype!r}]"


def _tensor_ann(kind, item):
    if not isinstance(item, tuple) or len(item) < 2:
        raise TypeError(f"{'pld.DistributedTensor' if kind == 'window' else 'pl.Tensor'}[[shape], dtype]: give a shape and a dtype")
    shape, dtype = item[0], item[1]
    if not isinstance(dtype, DataType):
        raise TypeError(f"tensor annotation: {dtype!r} is not a dtype (pl.FP32, pl.INT32, ...)")
    return TensorAnn(kind, list(shape), dtype)


class _Direction:
    def __init__(self, direction):
        self.direction = direction

    def __getitem__(self, ann):
        kind = getattr(ann, "_ann_kind", None) if isinstance(ann, type) else None
        if kind is not None:
            ann = TensorAnn(kind, None, None)
        if not isinstance(ann, TensorAnn):
            raise TypeError(f"pl.{'Out' if self.direction == 'out' else 'InOut'}[...] wraps a tensor annotation, got {ann!r}")
        return ann.with_direction(self.direction)


Out = _Direction("out")
InOut = _Direction("inout")


class _ScalarMeta(type):
    def __getitem__(cls, dtype):
        return ScalarAnn(dtype)


class Scalar(metaclass=_ScalarMeta):
    """``pl.Scalar[pl.INT32]``: a scalar argument (a Python int or float)."""


class _TileMeta(type):
    def __getitem__(cls, item):
        return _tensor_ann("tile", item)


class Tile(metaclass=_TileMeta):
    """``pl.Tile[[r, c], dtype]`` annotates a tile value; tiles are ``ranksim.Tile`` objects."""


class _TupleMeta(type):
    def __getitem__(cls, item):
        return tuple(item) if isinstance(item, tuple) else (item,)


class Tuple(metaclass=_TupleMeta):
    """``pl.Tuple[...]`` annotates a tuple return; ranksim reads nothing from it."""


class FunctionType(_enum.Enum):
    """``pl.FunctionType``: what a ``@pl.function`` is. ranksim runs ``InCore`` (and the
    cube / vector kinds) as kernels on cores and ``Orchestration`` as a chip's task list;
    ``Opaque`` (the default) runs as an orchestration function."""

    Opaque = "opaque"
    Orchestration = "orchestration"
    InCore = "incore"
    AIC = "aic"
    AIV = "aiv"
    Group = "group"
    Spmd = "spmd"
    Inline = "inline"


class Level(_enum.Enum):
    """``pl.Level``: the hierarchy level a function or ``pl.at`` scope runs at."""

    AIV = "aiv"
    AIC = "aic"
    CORE_GROUP = "core_group"
    CHIP_DIE = "chip_die"
    CHIP = "chip"
    HOST = "host"
    CLUSTER_0 = "cluster_0"
    CLUSTER_1 = "cluster_1"
    CLUSTER_2 = "cluster_2"
    GLOBAL = "global"


class Role(_enum.Enum):
    """``pl.Role``: an orchestrator (dispatches work) or a worker / sub-worker (runs it)."""

    Orchestrator = "orchestrator"
    Worker = "worker"
    SubWorker = "sub_worker"


class MemorySpace(_enum.Enum):
    """``pl.MemorySpace``: where a tile lives. ``Vec`` is the AIV core's UB; ``Mat`` (L1),
    ``Left`` (L0A), ``Right`` (L0B) and ``Acc`` (L0C) are the cube's buffers."""

    DDR = "ddr"
    Vec = "vec"
    Mat = "mat"
    Left = "left"
    Right = "right"
    Acc = "acc"
    Bias = "bias"
    ScaleLeft = "scale_left"
    ScaleRight = "scale_right"
