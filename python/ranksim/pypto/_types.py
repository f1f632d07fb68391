"""Data types and annotation objects of ``ranksim.pypto``: ``pl.FP32``, ``pl.Tensor[[8, 8],
pl.FP32]``, ``pl.Out[...]``, ``pl.Scalar[...]``, ``pld.DistributedTensor[...]``,
``pl.dynamic("NR")``. Annotations are read when a program is compiled and called: they give
each argument's shape, dtype and direction (input, output, in/out, window)."""

from __future__ import annotations

from .._errors import BadArgument


class DataType:
    """An element type. ``rs`` is ranksim's name (None: ranksim has no tensors of it)."""

    __slots__ = ("name", "rs", "np", "itemsize", "is_float")

    def __init__(self, name, rs, np, itemsize, is_float):
        self.name, self.rs, self.np, self.itemsize, self.is_float = name, rs, np, itemsize, is_float

    def __repr__(self):
        return f"pl.{self.name}"

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

ALL = [FP32, FP16, BF16, INT32, INT16, INT8, INT64, UINT8, UINT32, FP64, BOOL, INDEX]
_BY_RS = {d.rs: d for d in ALL if d.rs}
_BY_NP = {"float32": FP32, "float16": FP16, "int32": INT32, "int16": INT16, "int8": INT8}


def of_ranksim(name: str) -> DataType:
    return _BY_RS[name]


def of_numpy(np_dtype) -> DataType | None:
    return _BY_NP.get(str(np_dtype))


class DynVar:
    """``pl.dynamic("NR")``: a dimension fixed by the arguments a program is called with."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"pl.dynamic({self.name!r})"


def dynamic(name: str) -> DynVar:
    """A runtime-resolved dimension (``NR = pl.dynamic("NR")``)."""
    return DynVar(name)


def _shape_text(shape) -> str:
    return "[" + ", ".join(d.name if isinstance(d, DynVar) else str(d) for d in shape) + "]"


class TensorAnn:
    """What ``pl.Tensor[[shape], dtype]`` (``kind="tensor"``) or
    ``pld.DistributedTensor[[shape], dtype]`` (``kind="window"``) evaluates to, with the
    direction ``pl.Out`` / ``pl.InOut`` give it."""

    __slots__ = ("kind", "shape", "dtype", "direction")

    def __init__(self, kind, shape, dtype, direction="in"):
        self.kind, self.shape, self.dtype, self.direction = kind, tuple(shape), dtype, direction

    def with_direction(self, direction):
        return TensorAnn(self.kind, self.shape, self.dtype, direction)

    def __repr__(self):
        base = "pld.DistributedTensor" if self.kind == "window" else "pl.Tensor"
        t = f"{base}[{_shape_text(self.shape)}, {self.dtype!r}]"
        return {"in": t, "out": f"pl.Out[{t}]", "inout": f"pl.InOut[{t}]"}[self.direction]

    def check(self, what: str, shape, dtype, dyn: dict):
        """Raises BadArgument unless `shape` / `dtype` fit; binds dynamic dims in `dyn`."""
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
            elif want != got:
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
