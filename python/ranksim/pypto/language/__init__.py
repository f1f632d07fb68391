"""``ranksim.pypto.language`` (``pl``): PyPTO's single-device language, run eagerly.

Inside a ``@pl.jit.incore`` kernel every operation is the calling core's ranksim operation:
``pl.load`` is a TLOAD on the core's clock, ``pl.add`` a vector op, and so on. Tiles are
``ranksim.Tile`` objects; scalars are Python numbers.
"""

from __future__ import annotations

import builtins as _b
from types import SimpleNamespace as _NS

from ... import Tile as _RTile
from ..._errors import BadArgument
from .. import _engine as _E
from .._jit import JITFunction, jit
from .._types import (
    BF16,
    BOOL,
    FP16,
    FP32,
    FP64,
    INDEX,
    INT8,
    INT16,
    INT32,
    INT64,
    UINT8,
    UINT32,
    DataType,
    DynVar,
    InOut,
    Out,
    Scalar,
    Tile,
    dynamic,
)

Tensor = _E.Tensor
_core = _E.core


def range(*args, **kwargs):
    """``pl.range(stop)`` / ``(start, stop[, step])``: a Python range (loops run eagerly).
    Loop-carried values (``init_values=``) are PyPTO IR: use ordinary Python variables."""
    if kwargs:
        raise NotImplementedError(
            f"pl.range({', '.join(kwargs)}=...) is not modelled by ranksim.pypto: loops run as Python loops, so carry values in ordinary variables"
        )
    return _b.range(*(int(a) for a in args))


parallel = range
unroll = range


def load(tensor, offsets, shapes, valid_shapes=None, **kwargs):
    """Loads ``shapes`` elements at ``offsets`` of a tensor or window into a tile (TLOAD)."""
    if valid_shapes is not None and [int(v) for v in valid_shapes] != [int(v) for v in shapes]:
        raise NotImplementedError("pl.load(valid_shapes=...) with a partial valid region is not modelled by ranksim.pypto; load the valid region")
    return _core().load(tensor.t, offsets, shapes)


def store(tile, offsets, output_tensor, **kwargs):
    """Stores a tile at ``offsets`` of a tensor or window (TSTORE); returns the tensor."""
    _core().store(tile, output_tensor.t, offsets)
    return output_tensor


def _is_tile(x):
    return isinstance(x, _RTile)


def add(lhs, rhs):
    """``lhs + rhs``: tile + tile (TADD), tile + scalar (TADDS)."""
    c = _core()
    if _is_tile(lhs):
        return c.add(lhs, rhs) if _is_tile(rhs) else c.adds(lhs, float(rhs))
    if _is_tile(rhs):
        return c.adds(rhs, float(lhs))
    return lhs + rhs


def sub(lhs, rhs):
    """``lhs - rhs`` (tile - scalar is TADDS of -rhs; tile - tile is TMULS then TADD)."""
    c = _core()
    if _is_tile(lhs):
        return c.add(lhs, c.muls(rhs, -1.0)) if _is_tile(rhs) else c.adds(lhs, -float(rhs))
    if _is_tile(rhs):
        return c.adds(c.muls(rhs, -1.0), float(lhs))
    return lhs - rhs


def mul(lhs, rhs):
    """``lhs * rhs``: tile * tile (TMUL), tile * scalar (TMULS)."""
    c = _core()
    if _is_tile(lhs):
        return c.mul(lhs, rhs) if _is_tile(rhs) else c.muls(lhs, float(rhs))
    if _is_tile(rhs):
        return c.muls(rhs, float(lhs))
    return lhs * rhs


def div(lhs, rhs):
    """``tile / scalar`` (TMULS by the reciprocal); tile / tile has no ranksim op."""
    if _is_tile(lhs) and not _is_tile(rhs):
        return _core().muls(lhs, 1.0 / float(rhs))
    if not _is_tile(lhs) and not _is_tile(rhs):
        return lhs / rhs
    raise NotImplementedError("pl.div of two tiles has no ranksim core operation (only tile / scalar)")


def neg(x):
    """``-x``."""
    return _core().muls(x, -1.0) if _is_tile(x) else -x


def maximum(lhs, rhs):
    """Element-wise max of two tiles (TMAX)."""
    return _core().max(lhs, rhs)


def minimum(lhs, rhs):
    """Element-wise min of two tiles (TMIN)."""
    return _core().min(lhs, rhs)


max = maximum
min = minimum


def row_sum(tile, *args, **kwargs):
    return _core().row_sum(tile)


def row_max(tile, *args, **kwargs):
    return _core().row_max(tile)


def col_sum(tile, *args, **kwargs):
    return _core().col_sum(tile)


def col_max(tile, *args, **kwargs):
    return _core().col_max(tile)


def reshape(tile, shape):
    """The same elements as a ``[rows, cols]`` tile."""
    rows, cols = (int(v) for v in shape)
    return _core().reshape(tile, rows, cols)


def _mode(mode):
    if mode is None:
        return "rint"
    name = getattr(mode, "name", mode)
    return str(name).lower().removeprefix("cast_")


def cast(x, target_type, mode=None):
    """Converts a tile (TCVT, rounding ``mode``, default rint) or a scalar to ``target_type``."""
    if _is_tile(x):
        return _core().cast(x, target_type.ranksim("pl.cast"), _mode(mode))
    if not isinstance(target_type, DataType):
        raise BadArgument(f"pl.cast: target_type {target_type!r} is not a dtype")
    return float(x) if target_type.is_float else int(x)


def read(tensor, offsets):
    """One element of a tensor or window (a scalar load)."""
    v = _core().read_scalar(tensor.t, [int(o) for o in offsets])
    return v if tensor.dtype.is_float else int(v)


def write(tensor, offsets, value):
    """Writes one element of a tensor or window (a scalar store)."""
    _core().write_scalar(tensor.t, [int(o) for o in offsets], float(value))
    return tensor


def get_block_idx():
    return _core().block_idx()


def get_block_num():
    return _core().block_num()


def get_subblock_idx():
    return _core().sub_block_idx()


tile = _NS(
    load=load, store=store, add=add, sub=sub, mul=mul, div=div, neg=neg, maximum=maximum, minimum=minimum,
    max=maximum, min=minimum, row_sum=row_sum, row_max=row_max, col_sum=col_sum, col_max=col_max,
    reshape=reshape, cast=cast, read=read, write=write,
)
tensor = _NS(read=read, write=write, get_block_idx=get_block_idx, get_block_num=get_block_num)
system = _NS(get_block_idx=get_block_idx, get_block_num=get_block_num, get_subblock_idx=get_subblock_idx)


def __getattr__(name):
    raise NotImplementedError(
        f"pl.{name} is not available in ranksim.pypto: ranksim runs PyPTO programs eagerly on its own core "
        f"operations, which cover load/store, add/sub/mul/div-by-scalar, maximum/minimum, row/col sum and max, "
        f"reshape, cast, read/write and the distributed ops (see docs/python.md)"
    )


__all__ = [
    "BF16", "BOOL", "FP16", "FP32", "FP64", "INDEX", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT32",
    "DataType", "DynVar", "InOut", "JITFunction", "Out", "Scalar", "Tensor", "Tile", "add", "cast", "col_max",
    "col_sum", "div", "dynamic", "get_block_idx", "get_block_num", "get_subblock_idx", "jit", "load", "max",
    "maximum", "min", "minimum", "mul", "neg", "parallel", "range", "read", "reshape", "row_max", "row_sum",
    "store", "sub", "system", "tensor", "tile", "unroll", "write",
]
