"""PyPTO's tile and tensor operations inside an InCore kernel, each the calling core's ranksim
operation (``pl.load`` is a TLOAD on the core's clock, ``pl.add`` a vector op, ...).

Operands follow PyPTO's unified dispatch: a tile (``ranksim.Tile``), a tensor (a GM tensor or
a window view: the tensor-level API, loaded whole into a tile first), or a scalar (a Python
number; scalar-only arithmetic is plain Python). Results are tiles; ``pl.store`` /
``pl.assemble`` write them back. Operations ranksim's core lacks raise ``NotImplementedError``
naming the operation."""

from __future__ import annotations

import builtins as _b

import numpy as np

from .. import CmpOp
from .. import Tile as _RTile
from .._native import TILE_OPS as _TILE_OPS
from .._errors import BadArgument
from . import _engine as E
from . import _types as T

_core = E.core


def _is_tile(x):
    return isinstance(x, _RTile)


def _is_tensor(x):
    return isinstance(x, E.Tensor)


def _ints(xs, what):
    """Offsets or a shape as ints, each >= 0 (a negative one names the argument here rather
    than failing in the bindings' unsigned conversion)."""
    try:
        out = [int(v) for v in xs]
    except TypeError:
        raise BadArgument(f"{what}: expected a list of ints, got {xs!r}") from None
    for k, v in enumerate(out):
        if v < 0:
            raise BadArgument(f"{what}: entry {k} is {v}; offsets and shapes count elements from 0, so none may be negative")
    return out


def _need(name):
    fn = getattr(_core(), name, None)
    if fn is None:
        raise NotImplementedError(f"pl.{name} has no ranksim core operation in this build")
    return fn


def tile_of(x, what="operand"):
    """`x` as a tile: a tile itself, or a whole tensor loaded (the tensor-level API)."""
    if _is_tile(x):
        return x
    if _is_tensor(x):
        t = x.t if not x.is_window else x._resolved(what)
        return _core().load(t, [0] * len(x.shape), list(x.shape))
    raise BadArgument(f"{what}: {x!r} is neither a tile nor a tensor")


# ---- memory ----------------------------------------------------------------------------------


def load(tensor, offsets, shapes, valid_shapes=None, target_memory=None, valid_shape=None, **kwargs):
    """Loads ``shapes`` elements at ``offsets`` of a tensor or window into a tile (TLOAD).
    With ``valid_shapes`` only that region is read (the tile holds the valid region)."""
    _core()
    if not _is_tensor(tensor):
        raise BadArgument(f"pl.load: {tensor!r} is not a tensor (a kernel argument, a window, or a view of one)")
    valid = valid_shapes if valid_shapes is not None else valid_shape
    shapes = _ints(shapes, "pl.load shapes")
    offsets = _ints(offsets, "pl.load offsets")
    t = tensor.t if not tensor.is_window else tensor._resolved("pl.load")
    if target_memory is not None and target_memory not in (T.MemorySpace.Vec, T.MemorySpace.DDR):
        return _cube_load(t, offsets, shapes, target_memory)
    c = _core()
    if valid is not None:
        valid = _ints(valid, "pl.load valid_shapes")
        if valid != shapes:
            if hasattr(c, "load_valid"):
                return c.load_valid(t, offsets, shapes, valid)
            return c.load(t, offsets, valid)
    return c.load(t, offsets, shapes)


def store(tile, offsets, output_tensor, **kwargs):
    """Stores a tile at ``offsets`` of a tensor or window (TSTORE); returns the tensor."""
    if not _is_tensor(output_tensor):
        raise BadArgument(f"pl.store: {output_tensor!r} is not a tensor to store into")
    t = output_tensor.t if not output_tensor.is_window else output_tensor._resolved("pl.store")
    c = _core()
    if isinstance(tile, E.CubeTile):
        c.store_acc(tile.t, t, _ints(offsets, "pl.store offsets"))
        return output_tensor
    c.store(tile_of(tile, "pl.store"), t, _ints(offsets, "pl.store offsets"))
    return output_tensor


@E.writes_slices
def assemble(target, source, offsets):
    """Writes `source` (a tile, or a tensor's values) into `target` at `offsets`; returns
    `target` (PyPTO's ``pl.assemble``)."""
    return store(tile_of(source, "pl.assemble source"), offsets, target)


def slice(tensor, shape, offsets, valid_shape=None):  # noqa: A001
    """A view of ``shape`` elements of a tensor at ``offsets`` (``pl.slice``)."""
    if not _is_tensor(tensor):
        if _is_tile(tensor):
            raise NotImplementedError("pl.slice of a tile has no ranksim core operation; slice the tensor before loading")
        raise BadArgument(f"pl.slice: {tensor!r} is not a tensor")
    shape, offsets = _ints(shape, "pl.slice shape"), _ints(offsets, "pl.slice offsets")
    t = tensor.t if not tensor.is_window else tensor._resolved("pl.slice")
    return type(tensor)._wrap(tensor, t.slice(offsets, shape))


def read(tensor, offsets):
    """One element of a tensor or window (a scalar load)."""
    v = _core().read_scalar(tensor.t, _ints(offsets, "pl.read offsets"))
    return v if tensor.dtype.is_float else int(v)


def write(tensor, offsets, value):
    """Writes one element of a tensor or window (a scalar store)."""
    _core().write_scalar(tensor.t, _ints(offsets, "pl.write offsets"), float(value))
    return tensor


# ---- element-wise ----------------------------------------------------------------------------


def _binary(name, lhs, rhs, tt, ts, py):
    c = _core() if E.in_kernel() else None
    if c is None or (not _is_tile(lhs) and not _is_tensor(lhs) and not _is_tile(rhs) and not _is_tensor(rhs)):
        return py(lhs, rhs)
    lt = _is_tile(lhs) or _is_tensor(lhs)
    rt = _is_tile(rhs) or _is_tensor(rhs)
    if lt and rt:
        return tt(c, tile_of(lhs, f"pl.{name}"), tile_of(rhs, f"pl.{name}"))
    if lt:
        return ts(c, tile_of(lhs, f"pl.{name}"), float(rhs), False)
    return ts(c, tile_of(rhs, f"pl.{name}"), float(lhs), True)


def add(lhs, rhs):
    """``lhs + rhs``: tile + tile (TADD), tile + scalar (TADDS)."""
    return _binary("add", lhs, rhs, lambda c, a, b: c.add(a, b), lambda c, a, s, _r: c.adds(a, s), lambda a, b: a + b)


def _sub_tt(c, a, b):
    return c.sub(a, b) if hasattr(c, "sub") else c.add(a, c.muls(b, -1.0))


def _sub_ts(c, a, s, reverse):
    return c.adds(c.muls(a, -1.0), s) if reverse else c.adds(a, -s)


def sub(lhs, rhs):
    """``lhs - rhs``: tile - tile (TSUB), tile - scalar (TADDS of -rhs)."""
    return _binary("sub", lhs, rhs, _sub_tt, _sub_ts, lambda a, b: a - b)


def mul(lhs, rhs):
    """``lhs * rhs``: tile * tile (TMUL), tile * scalar (TMULS)."""
    return _binary("mul", lhs, rhs, lambda c, a, b: c.mul(a, b), lambda c, a, s, _r: c.muls(a, s), lambda a, b: a * b)


def _div_tt(c, a, b):
    if not hasattr(c, "div"):
        raise NotImplementedError("pl.div of two tiles has no ranksim core operation in this build")
    return c.div(a, b)


def _div_ts(c, a, s, reverse):
    if reverse:
        return c.muls(_need("recip")(a), s)
    return c.divs(a, s) if hasattr(c, "divs") else c.muls(a, 1.0 / s)


def div(lhs, rhs):
    """``lhs / rhs``: tile / tile (TDIV), tile / scalar, scalar / tile (a reciprocal)."""
    return _binary("div", lhs, rhs, _div_tt, _div_ts, lambda a, b: a / b)


def _extreme(name, lhs, rhs, pyfn):
    def ts(c, a, s, _r):
        op = getattr(c, name + "s", None)
        if op is None:
            raise NotImplementedError(f"pl.{name}imum of a tile and a scalar has no ranksim core operation in this build")
        return op(a, s)

    return _binary(name, lhs, rhs, lambda c, a, b: getattr(c, name)(a, b), ts, pyfn)


def maximum(lhs, rhs):
    """Element-wise max (TMAX); of two scalars, the larger."""
    return _extreme("max", lhs, rhs, _b.max)


def minimum(lhs, rhs):
    """Element-wise min (TMIN); of two scalars, the smaller."""
    return _extreme("min", lhs, rhs, _b.min)


def max(lhs, rhs=None, *args, **kwargs):  # noqa: A001
    return maximum(lhs, rhs) if rhs is not None else row_max(lhs)


def min(lhs, rhs=None, *args, **kwargs):  # noqa: A001
    return minimum(lhs, rhs) if rhs is not None else row_min(lhs)


def maximums(tile, scalar):
    return maximum(tile, scalar)


def minimums(tile, scalar):
    return minimum(tile, scalar)


def neg(x):
    """``-x``."""
    return _core().muls(tile_of(x, "pl.neg"), -1.0) if (_is_tile(x) or _is_tensor(x)) else -x


def _unary(name, doc):
    def op(x, *args, **kwargs):
        if not (_is_tile(x) or _is_tensor(x)):
            raise BadArgument(f"pl.{name}: {x!r} is not a tile or a tensor")
        return _need(name)(tile_of(x, f"pl.{name}"))

    op.__name__ = name
    op.__doc__ = doc
    return op


# exp, log, sqrt, rsqrt, recip, abs, relu, ... are made from the core's op table (see the end
# of this file).


def _reduce(name):
    def op(tile, *args, **kwargs):
        return _need(name)(tile_of(tile, f"pl.{name}"))

    op.__name__ = name
    return op


row_sum = _reduce("row_sum")
row_max = _reduce("row_max")
row_min = _reduce("row_min")
col_sum = _reduce("col_sum")
col_max = _reduce("col_max")
col_min = _reduce("col_min")


def reshape(tile, shape):
    """The same elements as a ``[rows, cols]`` tile."""
    dims = _ints(shape, "pl.reshape shape")
    if len(dims) == 1:
        dims = [1, dims[0]]
    if len(dims) != 2:
        raise BadArgument(f"pl.reshape: tiles are 2-D, got shape {dims}")
    return _core().reshape(tile_of(tile, "pl.reshape"), dims[0], dims[1])


_CMP = {"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}


def cmp(lhs, rhs, cmp_type="eq"):
    """A mask tile: element-wise ``lhs <cmp_type> rhs`` (TCMP / TCMPS)."""
    if isinstance(cmp_type, CmpOp):
        kind = cmp_type
    else:
        kind = getattr(cmp_type, "name", cmp_type)
        kind = _CMP.get(str(kind).lower())
    if kind is None:
        raise BadArgument(f"pl.cmp: cmp_type {cmp_type!r} must be one of eq, ne, lt, le, gt, ge")
    a = tile_of(lhs, "pl.cmp")
    b = tile_of(rhs, "pl.cmp") if (_is_tile(rhs) or _is_tensor(rhs)) else float(rhs)
    return _need("cmp")(a, b, kind)


def cmps(lhs, rhs, cmp_type="eq"):
    return cmp(lhs, rhs, cmp_type)


def sel(mask, lhs, rhs):
    """Element-wise ``mask ? lhs : rhs`` (TSEL)."""
    return _need("select")(mask, tile_of(lhs, "pl.sel"), tile_of(rhs, "pl.sel"))


select = sel


def full(shape, dtype, value, **kwargs):
    """A tile of `shape` filled with `value` (TEXPANDS)."""
    dims = _ints(shape, "pl.full shape")
    if len(dims) == 1:
        dims = [1, dims[0]]
    return _need("full")(dims, dtype.ranksim("pl.full"), float(value))


def expands(tile, value):
    """A tile of `tile`'s shape filled with `value`."""
    t = tile_of(tile, "pl.expands")
    return _need("full")(list(t.shape), t.dtype, float(value))


def create_tile(shape, dtype=None, target_memory=None, **kwargs):
    """A scratch tile (``pl.tile.create``): zeros on ranksim."""
    if dtype is None:
        raise BadArgument("pl.tile.create(shape, dtype=...): give the dtype")
    return full(shape, dtype, 0.0)


def _mode(mode):
    if mode is None:
        return "rint"
    name = getattr(mode, "name", mode)
    return str(name).lower().removeprefix("cast_")


def cast(x, target_type, mode=None):
    """Converts a tile (TCVT, rounding ``mode``, default rint) or a scalar to ``target_type``."""
    if not isinstance(target_type, T.DataType):
        raise BadArgument(f"pl.cast: target_type {target_type!r} is not a dtype")
    if _is_tile(x) or _is_tensor(x):
        return _core().cast(tile_of(x, "pl.cast"), target_type.ranksim("pl.cast"), _mode(mode))
    return float(x) if target_type.is_float else int(x)


# ---- the cube --------------------------------------------------------------------------------


_CUBE_BUF = {T.MemorySpace.Mat: "l1", T.MemorySpace.Left: "l0a", T.MemorySpace.Right: "l0b", T.MemorySpace.Acc: "l0c"}


def _cube_load(t, offsets, shapes, target_memory):
    if target_memory is not T.MemorySpace.Mat:
        raise NotImplementedError(f"pl.load(target_memory={target_memory}) : ranksim loads cube tiles into L1 (MemorySpace.Mat) and moves them on with pl.move")
    return E.CubeTile(_need("load_l1")(t, offsets, shapes), "l1")


def move(tile, target_memory=None, **kwargs):
    """Moves a cube tile between buffers (L1 -> L0A with ``MemorySpace.Left``, L1 -> L0B with
    ``MemorySpace.Right``)."""
    if not isinstance(tile, E.CubeTile):
        raise NotImplementedError("pl.move of a vector tile has no ranksim core operation; it moves cube tiles from L1 (MemorySpace.Mat)")
    if target_memory is T.MemorySpace.Left:
        return E.CubeTile(_need("to_l0a")(tile.t), "l0a")
    if target_memory is T.MemorySpace.Right:
        return E.CubeTile(_need("to_l0b")(tile.t), "l0b")
    raise NotImplementedError(f"pl.move(target_memory={target_memory}): ranksim moves L1 tiles to Left (L0A) or Right (L0B)")


def matmul(lhs, rhs, *args, **kwargs):
    """``lhs @ rhs`` on the cube (L0A x L0B -> L0C)."""
    if not (isinstance(lhs, E.CubeTile) and isinstance(rhs, E.CubeTile)):
        raise NotImplementedError(
            "pl.matmul on ranksim takes cube tiles: load with target_memory=pl.MemorySpace.Mat, pl.move to Left / Right, then matmul"
        )
    return E.CubeTile(_need("matmul")(lhs.t, rhs.t), "l0c")


def matmul_acc(acc, lhs, rhs, *args, **kwargs):
    """``acc + lhs @ rhs`` on the cube."""
    return E.CubeTile(_need("matmul_acc")(acc.t, lhs.t, rhs.t), "l0c")


# ---- scalar arrays -------------------------------------------------------------------------


class ScalarArray(list):
    """``pl.array.create(n, dtype)``: a small array of scalars in the scalar unit's registers
    (a Python list; reads and writes cost nothing on ranksim)."""


def array_create(n, dtype=None, *args, **kwargs):
    return ScalarArray([0.0 if getattr(dtype, "is_float", False) else 0] * int(n))


def _np_shape(shape):
    return tuple(int(s) for s in shape)


def create_tensor(shape, dtype=None, **kwargs):
    """A new tensor: on the host, a zeroed host array (an intermediate between dispatches);
    elsewhere refused (ranksim allocates GM before a run)."""
    if E.host() is not None:
        if dtype is None:
            raise BadArgument("pl.create_tensor(shape, dtype=...): give the dtype")
        arr = np.zeros(_np_shape(shape), dtype=np.float32 if dtype is T.BF16 else dtype.np)
        return E.host_temp(arr, dtype)
    raise NotImplementedError(
        "pl.create_tensor inside a chip's orchestration or a kernel has no ranksim equivalent yet: create the tensor in the "
        "HOST orchestrator (or pass it as an argument)"
    )


# ---- the rest of the core's tile operations, from its op table --------------------------------


def _tile_scalar(name, doc):
    def op(tile, scalar):
        return _need(name)(tile_of(tile, f"pl.{name}"), float(scalar))

    op.__name__, op.__doc__ = name, doc
    return op


def _tile_tile(name, doc, scalar_form):
    """`pl.<name>` of two tiles, or (when the core has `<name>s`) of a tile and a scalar."""

    def ts(c, a, s, reverse):
        if scalar_form is None or reverse:
            order = "a scalar and a tile" if reverse else "a tile and a scalar"
            raise NotImplementedError(f"pl.{name} of {order} has no ranksim core operation")
        return getattr(c, scalar_form)(a, s)

    def scalars(lhs, rhs):
        raise BadArgument(f"pl.{name}: {lhs!r} and {rhs!r} are not tiles or tensors")

    def op(lhs, rhs):
        return _binary(name, lhs, rhs, lambda c, a, b: getattr(c, name)(a, b), ts, scalars)

    op.__name__, op.__doc__ = name, doc
    return op


def _from_table():
    """`pl` functions for the core's tile operations (``ranksim._native.TILE_OPS``, written
    from sim-core's one list of them) that this module does not write by hand: a new
    operation of one, two or a tile and a scalar operand reaches ``pl`` with no Python."""
    table = [(name, bound, tuple(args), ret, doc) for name, bound, args, ret, doc in _TILE_OPS]
    kinds = {name: (args, ret) for name, bound, args, ret, _doc in table if bound}
    made = {}
    for name, bound, args, ret, doc in table:
        if not bound or ret != "Tile" or name in globals():
            continue
        if args == ("Tile",):
            made[name] = _unary(name, doc)
        elif args == ("Tile", "Tile"):
            scalar = name + "s" if kinds.get(name + "s") == (("Tile", "f64"), "Tile") else None
            made[name] = _tile_tile(name, doc, scalar)
        elif args == ("Tile", "f64"):
            made[name] = _tile_scalar(name, doc)
    return made


generated = _from_table()
globals().update(generated)
