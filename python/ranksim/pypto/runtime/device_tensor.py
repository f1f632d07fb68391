"""``DeviceTensor`` and ``StackedDeviceTensor``: tensors resident on a worker's device across
calls (``rt.alloc_tensor``, ``rt.alloc_stacked_tensor``). On ranksim a device tensor is a GM
tensor of the worker's world, on the rank of its ``worker_id``; a program that takes one
reads and writes it in place, with no upload per call."""

from __future__ import annotations

from .. import _engine as E
from .. import _types as T
from ..._errors import BadArgument

_DTYPES = {
    "float32": T.FP32,
    "float16": T.FP16,
    "bfloat16": T.BF16,
    "int32": T.INT32,
    "int16": T.INT16,
    "int8": T.INT8,
}


def dtype_of(dtype, what):
    """The PyPTO dtype of a torch or numpy dtype (``torch.float32``, ``np.float32``, "f32")."""
    if isinstance(dtype, T.DataType):
        return dtype
    name = getattr(dtype, "__name__", None) or str(dtype)
    name = name.removeprefix("torch.").removeprefix("numpy.")
    try:
        import numpy as np

        name = np.dtype(dtype).name
    except TypeError:
        pass
    dt = _DTYPES.get(name) or next((d for d in T.ALL if d.rs == name), None)
    if dt is None or dt.rs is None:
        raise BadArgument(f"{what}: dtype {dtype!r} has no ranksim tensor type; use float32, float16, bfloat16, int32, int16 or int8")
    return dt


class DeviceTensor:
    """A tensor resident on one worker (``worker_id``: a rank of the program's devices)."""

    def __init__(self, worker, t, shape, dtype, worker_id, pdtype):
        self._worker, self._t, self.worker_id, self._pdtype = worker, t, worker_id, pdtype
        self.shape, self.dtype = tuple(shape), dtype
        self.freed = False

    @property
    def data_ptr(self):
        """A stable identity (ranksim has no device addresses)."""
        return id(self._t)

    @property
    def nbytes(self):
        return self._t.nbytes

    def __repr__(self):
        return f"<DeviceTensor {list(self.shape)} {self.dtype!r} on worker {self.worker_id}>"

    def _arg(self):
        if self.freed:
            raise BadArgument(f"{self!r} was freed (free_tensor / close); allocate a new one")
        return E.DeviceArg(self._t, self.worker_id, self._pdtype)


class StackedDeviceTensor:
    """Shard ``i`` of a ``[B, ...]`` host tensor resident on worker ``worker_ids[i]``;
    ``obj[i]`` is shard i's :class:`DeviceTensor`."""

    def __init__(self, shards, shape, dtype, worker_ids):
        self.shards, self.shape, self.dtype, self.worker_ids = list(shards), tuple(shape), dtype, list(worker_ids)

    def __len__(self):
        return len(self.shards)

    def __getitem__(self, i):
        return self.shards[i]

    def __repr__(self):
        return f"<StackedDeviceTensor {list(self.shape)} on workers {self.worker_ids}>"

    def _arg(self):
        shards = [s._arg() for s in self.shards]
        return E.StackedArg(shards, self.shape, shards[0].dtype, "stacked")


__all__ = ["DeviceTensor", "StackedDeviceTensor"]
