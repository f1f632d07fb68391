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
from .. import _scope as _S
from .._jit import JITFunction, jit
from .._program import FunctionSpec, Program, function, program
from .._scope import AtContext, TaskId, at, cond, manual_scope, parallel, pipeline, scope, unroll, while_, yield_
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
    TASK_ID,
    UINT16,
    UINT64,
    DataType,
    DynVar,
    FunctionType,
    InOut,
    Level,
    MemorySpace,
    Out,
    Role,
    Scalar,
    Tile,
    Tuple,
    dynamic,
)

Mem = MemorySpace

Tensor = _E.Tensor
_core = _E.core


range = _S.range  # noqa: A001


def const(value, dtype):
    """A typed constant: the value itself, as an int or a float by `dtype`."""
    return float(value) if getattr(dtype, "is_float", False) else int(value)


from .._ops import generated as _generated
from .._ops import (
    ScalarArray,
    add,
    array_create,
    assemble,
    cast,
    cmp,
    cmps,
    col_max,
    col_min,
    col_sum,
    create_tensor,
    create_tile,
    div,
    expands,
    full,
    load,
    matmul,
    matmul_acc,
    max,
    maximum,
    maximums,
    min,
    minimum,
    minimums,
    move,
    mul,
    neg,
    read,
    reshape,
    row_max,
    row_min,
    row_sum,
    sel,
    select,
    slice,
    store,
    sub,
    write,
)


def get_block_idx():
    return _core().block_idx()


def get_block_num():
    return _core().block_num()


def get_subblock_idx():
    return _core().sub_block_idx()


tile = _NS(
    load=load, store=store, add=add, sub=sub, mul=mul, div=div, neg=neg, maximum=maximum, minimum=minimum,
    max=max, min=min, maximums=maximums, minimums=minimums, row_sum=row_sum, row_max=row_max, row_min=row_min,
    col_sum=col_sum, col_max=col_max, col_min=col_min, reshape=reshape, cast=cast, read=read, write=write,
    cmp=cmp, cmps=cmps, sel=sel, full=full,
    expands=expands, create=create_tile, create_tile=create_tile, move=move, matmul=matmul, matmul_acc=matmul_acc,
    slice=slice, assemble=assemble,
)
tensor = _NS(
    read=read, write=write, get_block_idx=get_block_idx, get_block_num=get_block_num, slice=slice, assemble=assemble,
    add=add, sub=sub, mul=mul, div=div, maximum=maximum, minimum=minimum, cast=cast, full=full,
    create_tensor=create_tensor, create=create_tensor, reshape=reshape, matmul=matmul,
)
# The operations made from the core's op table (exp, log, ..., and any added to it).
globals().update(_generated)
for _name, _fn in _generated.items():
    setattr(tile, _name, _fn)
tensor.exp = _generated["exp"]
system = _NS(get_block_idx=get_block_idx, get_block_num=get_block_num, get_subblock_idx=get_subblock_idx)
array = _NS(create=array_create)
TaskId = Scalar[TASK_ID]


def __getattr__(name):
    # AttributeError (so that `hasattr(pl, name)` is False), saying what exists.
    raise AttributeError(
        f"pl.{name} is not available in ranksim.pypto: ranksim runs PyPTO programs eagerly on its own core "
        f"operations (see docs/python.md, \"What runs\", for the list)"
    )


__all__ = [
    "BF16", "BOOL", "FP16", "FP32", "FP64", "INDEX", "INT8", "INT16", "INT32", "INT64", "TASK_ID", "UINT8", "UINT16",
    "UINT32", "UINT64", "AtContext", "DataType", "DynVar", "FunctionSpec", "FunctionType", "InOut", "JITFunction",
    "Level", "Mem", "MemorySpace", "Out", "Program", "Role", "Scalar", "ScalarArray", "TaskId", "Tensor", "Tile",
    "Tuple", "abs", "add", "array", "assemble", "at", "cast", "cmp", "cmps", "col_max", "col_min", "col_sum", "cond",
    "const", "create_tensor", "div", "dynamic", "exp", "expands", "full", "function", "get_block_idx", "get_block_num",
    "get_subblock_idx", "jit", "load", "log", "manual_scope", "matmul", "matmul_acc", "max", "maximum", "maximums",
    "min", "minimum", "minimums", "move", "mul", "neg", "parallel", "pipeline", "program", "range", "read", "recip",
    "relu", "reshape", "row_max", "row_min", "row_sum", "rsqrt", "scope", "sel", "select", "slice", "sqrt", "store",
    "sub", "system", "tensor", "tile", "unroll", "while_", "write", "yield_",
]
__all__ += sorted(n for n in _generated if n not in __all__)
