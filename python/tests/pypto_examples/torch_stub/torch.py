"""A numpy stand-in for the few torch calls PyPTO's distributed examples make (torch is not
installed on ranksim's machines). Only `run_examples.py` puts this directory on the path.

Tensors are numpy arrays with `.view`, `.abs().max().item()` and the like available through
a thin ndarray subclass; the examples' `y` is written in place through `__array__`."""

import numpy as np

float32 = np.float32
float16 = np.float16
int32 = np.int32
int64 = np.int64
__version__ = "0.0-ranksim-stub"

_rng = np.random.default_rng(20260101)


class Tensor(np.ndarray):
    def view(self, *shape):
        return self.reshape(*shape)

    def item(self):
        return np.ndarray.item(self)

    def abs(self):
        return np.abs(self)

    def max(self, *a, **k):
        return np.ndarray.max(self, *a, **k)

    def tolist(self):
        return np.ndarray.tolist(self)


def _t(a):
    return np.asarray(a).view(Tensor)


def randn(shape, dtype=float32):
    return _t(_rng.standard_normal(shape).astype(dtype))


def zeros(shape, dtype=float32):
    return _t(np.zeros(shape, dtype=dtype))


def arange(*args, dtype=None):
    return _t(np.arange(*args, dtype=dtype))


def stack(xs):
    return _t(np.stack([np.asarray(x) for x in xs]))


def allclose(a, b, rtol=1e-5, atol=1e-8):
    return bool(np.allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol))


def equal(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.array_equal(a, b))
