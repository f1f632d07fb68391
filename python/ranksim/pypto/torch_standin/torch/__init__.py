"""numpy stand-in for torch (see ``ranksim.pypto.torch_standin``): only the calls PyPTO's
examples and distributed system tests make."""

from types import SimpleNamespace as _NS

import numpy as np

__version__ = "0.0-ranksim-standin"


class dtype:  # noqa: N801 - torch's spelling
    """A torch dtype: a name and the numpy dtype that holds its values."""

    def __init__(self, name, np_dtype, itemsize):
        # `dtype` makes it a dtype-like for numpy: np.zeros(n, dtype=torch.float32) and
        # `array.dtype == torch.float32` work (bfloat16 is held as float32).
        self.name, self.dtype, self.itemsize = name, np.dtype(np_dtype), itemsize

    def __repr__(self):
        return f"torch.{self.name}"

    def __eq__(self, other):
        if isinstance(other, dtype):
            return self is other
        try:
            return self.dtype == np.dtype(other)
        except TypeError:
            return NotImplemented

    def __hash__(self):
        return hash(self.name)

    @property
    def np(self):
        return self.dtype

    @property
    def is_floating_point(self):
        return self.dtype.kind == "f"


float32 = float = dtype("float32", np.float32, 4)  # noqa: A001
float16 = half = dtype("float16", np.float16, 2)
bfloat16 = dtype("bfloat16", np.float32, 2)
float64 = double = dtype("float64", np.float64, 8)
int32 = int = dtype("int32", np.int32, 4)  # noqa: A001
int64 = long = dtype("int64", np.int64, 8)
int16 = short = dtype("int16", np.int16, 2)
int8 = dtype("int8", np.int8, 1)
uint8 = dtype("uint8", np.uint8, 1)
bool = dtype("bool", np.bool_, 1)  # noqa: A001
_ALL = [float32, float16, bfloat16, float64, int32, int64, int16, int8, uint8, bool]
_BY_NP = {d.np: d for d in _ALL if d is not bfloat16}


def _np_dtype(d):
    if d is None:
        return None
    return d.np if isinstance(d, dtype) else np.dtype(d)


def _round_bf16(a):
    a = np.asarray(a, dtype=np.float32)
    bits = a.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return rounded.astype(np.uint32).view(np.float32)


class Tensor(np.ndarray):
    """A numpy array with torch's method names."""

    _bf16 = False

    def __array_finalize__(self, obj):
        self._bf16 = getattr(obj, "_bf16", False)

    def numpy(self):
        return np.asarray(self)

    def view(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], dtype):
            return _wrap(np.asarray(self).view(shape[0].np))
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return np.ndarray.reshape(self, shape)

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return np.ndarray.reshape(self, shape)

    def fill_(self, v):
        np.ndarray.fill(self, v)
        return self

    def zero_(self):
        np.ndarray.fill(self, 0)
        return self

    def copy_(self, src):
        np.copyto(np.asarray(self), np.asarray(src), casting="unsafe")
        return self

    def share_memory_(self):
        return self

    def contiguous(self):
        return _wrap(np.ascontiguousarray(self), self._bf16)

    def clone(self):
        return _wrap(np.array(self), self._bf16)

    def to(self, d=None, *args, **kwargs):
        d = kwargs.get("dtype", d)
        if not isinstance(d, dtype):
            return self
        out = np.asarray(self).astype(d.np)
        if d is bfloat16:
            out = _round_bf16(out)
        return _wrap(out, d is bfloat16)

    def float(self):  # noqa: A003
        return self.to(float32)

    def half(self):
        return self.to(float16)

    def item(self):
        return np.ndarray.item(self)

    def tolist(self):
        return np.ndarray.tolist(self)

    def abs(self):  # noqa: A003
        return np.abs(self)

    def numel(self):
        return self.size

    def dim(self):
        return self.ndim

    def unsqueeze(self, d):
        return np.expand_dims(self, d)

    def squeeze(self, dim=None, axis=None):
        axis = dim if dim is not None else axis
        return np.ndarray.squeeze(self, axis) if axis is not None else np.ndarray.squeeze(self)

    def flatten(self):
        return np.ndarray.flatten(self)

    def permute(self, *dims):
        return np.transpose(self, dims[0] if len(dims) == 1 else dims)

    def expand(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return np.broadcast_to(self, shape).view(Tensor)

    # torch's reductions take `dim`; numpy calls these methods with `axis=` (and out=,
    # keepdims=...), which then behave as numpy's.

    def sum(self, dim=None, *args, **kwargs):  # noqa: A003
        if "axis" in kwargs or args:
            return np.ndarray.sum(self, *args, **kwargs)
        return np.ndarray.sum(self, axis=kwargs.get("dim", dim), keepdims=kwargs.get("keepdim", False))

    def max(self, dim=None, *args, **kwargs):  # noqa: A003
        if "axis" in kwargs or args:
            return np.ndarray.max(self, *args, **kwargs)
        dim = kwargs.get("dim", dim)
        if dim is None:
            return np.ndarray.max(self)
        return _MinMax(np.ndarray.max(self, axis=dim), np.ndarray.argmax(self, axis=dim))

    def min(self, dim=None, *args, **kwargs):  # noqa: A003
        if "axis" in kwargs or args:
            return np.ndarray.min(self, *args, **kwargs)
        dim = kwargs.get("dim", dim)
        if dim is None:
            return np.ndarray.min(self)
        return _MinMax(np.ndarray.min(self, axis=dim), np.ndarray.argmin(self, axis=dim))

    def remainder(self, other):
        return np.remainder(self, other)

    def __mod__(self, other):
        return np.remainder(self, other)

    def prod(self, dim=None, *args, **kwargs):
        if "axis" in kwargs or args:
            return np.ndarray.prod(self, *args, **kwargs)
        return np.ndarray.prod(self, axis=kwargs.get("dim", dim))

    def mean(self, dim=None, *args, **kwargs):
        if "axis" in kwargs or args:
            return np.ndarray.mean(self, *args, **kwargs)
        return np.ndarray.mean(self, axis=kwargs.get("dim", dim))

    def data_ptr(self):
        return self.ctypes.data

    def untyped_storage(self):
        base = self
        while isinstance(base.base, np.ndarray):
            base = base.base
        return _NS(data_ptr=lambda: base.ctypes.data)


class _MinMax(tuple):
    """torch's (values, indices) result of ``max(dim=...)`` / ``min(dim=...)``."""

    def __new__(cls, values, indices):
        return tuple.__new__(cls, (values, indices))

    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]


def _wrap(a, bf16=False):
    t = np.asarray(a).view(Tensor)
    t._bf16 = bf16
    return t


def _make(a, d):
    if d is bfloat16:
        return _wrap(_round_bf16(a), True)
    return _wrap(np.asarray(a, dtype=_np_dtype(d)) if d is not None else np.asarray(a))


def _shape(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(size)


def from_numpy(a):
    return _wrap(a)


def tensor(data, dtype=None, **kwargs):
    return _make(np.array(data), dtype)


def zeros(*size, dtype=None, **kwargs):
    return _make(np.zeros(_shape(size), dtype=np.float32), dtype or float32)


def ones(*size, dtype=None, **kwargs):
    return _make(np.ones(_shape(size), dtype=np.float32), dtype or float32)


def empty(*size, dtype=None, **kwargs):
    return zeros(*size, dtype=dtype)


def full(size, fill_value, dtype=None, **kwargs):
    if dtype is None:
        dtype = float32 if isinstance(fill_value, __builtins__["float"] if isinstance(__builtins__, dict) else __import__("builtins").float) else int64
    return _make(np.full(tuple(size), fill_value), dtype)


def zeros_like(t, dtype=None, **kwargs):
    return zeros(np.shape(t), dtype=dtype or _dtype_of(t))


def ones_like(t, dtype=None, **kwargs):
    return ones(np.shape(t), dtype=dtype or _dtype_of(t))


def full_like(t, v, dtype=None, **kwargs):
    return full(np.shape(t), v, dtype=dtype or _dtype_of(t))


def empty_like(t, dtype=None, **kwargs):
    return zeros_like(t, dtype=dtype)


def _dtype_of(t):
    if getattr(t, "_bf16", False):
        return bfloat16
    d = getattr(t, "dtype", None)
    return d if isinstance(d, dtype) else _BY_NP.get(np.dtype(d), float32)


def arange(start, end=None, step=1, dtype=None, **kwargs):
    if end is None:
        start, end = 0, start
    import builtins

    if dtype is None:
        dtype = float32 if any(isinstance(v, builtins.float) for v in (start, end, step)) else int64
    return _make(np.arange(start, end, step), dtype)


def stack(xs, dim=0):
    return _wrap(np.stack([np.asarray(x) for x in xs], axis=dim), any(getattr(x, "_bf16", False) for x in xs))


def cat(xs, dim=0):
    return _wrap(np.concatenate([np.asarray(x) for x in xs], axis=dim))


def allclose(a, b, rtol=1e-5, atol=1e-8, equal_nan=False):
    return __import__("builtins").bool(np.allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=rtol, atol=atol, equal_nan=equal_nan))


def equal(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and __import__("builtins").bool(np.array_equal(a, b))


def all(a):  # noqa: A001
    return _wrap(np.all(a))


def any(a):  # noqa: A001
    return _wrap(np.any(a))


def where(c, a, b):
    return _wrap(np.where(c, a, b))


def add(a, b, **kwargs):
    return _wrap(np.add(a, b))


def sub(a, b, **kwargs):
    return _wrap(np.subtract(a, b))


def mul(a, b, **kwargs):
    return _wrap(np.multiply(a, b))


def matmul(a, b):
    return _wrap(np.matmul(np.asarray(a, np.float32), np.asarray(b, np.float32)))


def abs(a):  # noqa: A001
    return _wrap(np.abs(a))


def max(a, *args, **kwargs):  # noqa: A001
    return _wrap(np.max(a)) if not args else _wrap(np.maximum(a, args[0]))


def min(a, *args, **kwargs):  # noqa: A001
    return _wrap(np.min(a)) if not args else _wrap(np.minimum(a, args[0]))


def maximum(a, b):
    return _wrap(np.maximum(a, b))


def minimum(a, b):
    return _wrap(np.minimum(a, b))


def prod(a, dim=None):
    return _wrap(np.prod(a, axis=dim))


def sum(a, dim=None):  # noqa: A001
    return _wrap(np.sum(a, axis=dim))


class Generator:
    def __init__(self, device=None):
        self.rng = np.random.default_rng(0)

    def manual_seed(self, seed):
        self.rng = np.random.default_rng(seed)
        return self


_default = Generator()


def manual_seed(seed):
    _default.manual_seed(seed)
    return _default


def _rng(generator):
    return (generator or _default).rng


def randn(*size, dtype=None, generator=None, **kwargs):
    return _make(_rng(generator).standard_normal(_shape(size)).astype(np.float32), dtype or float32)


def rand(*size, dtype=None, generator=None, **kwargs):
    return _make(_rng(generator).random(_shape(size)).astype(np.float32), dtype or float32)


def randint(low, high=None, size=(), dtype=None, generator=None, **kwargs):
    if high is None:
        low, high = 0, low
    return _make(_rng(generator).integers(low, high, size=tuple(size)), dtype or int64)


def randperm(n, generator=None, dtype=None, **kwargs):
    return _make(_rng(generator).permutation(n), dtype or int64)


class _NoGrad:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, f):
        return f


no_grad = _NoGrad
inference_mode = _NoGrad


def _assert_close(actual, expected, rtol=None, atol=None, **kwargs):
    a, e = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
    if a.shape != e.shape:
        raise AssertionError(f"The values for attribute 'shape' do not match: {a.shape} != {e.shape}.")
    rtol = 1.3e-6 if rtol is None else rtol
    atol = 1e-5 if atol is None else atol
    bad = ~np.isclose(a, e, rtol=rtol, atol=atol)
    if bad.any():
        i = np.unravel_index(np.argmax(bad), a.shape)
        raise AssertionError(f"Tensor-likes are not close! Mismatched elements: {int(bad.sum())} / {a.size}; first at {i}: {a[i]} vs {e[i]}")


testing = _NS(assert_close=_assert_close)
