"""``DistributedWorker``: the runtime around a launch, as PyPTO's L3 runner has it.

``compiled.prepare(...)`` (or ``DistributedWorker(compiled, ...)``) sets up one ranksim world
for the worker's whole life. Every call (``rt(...)``, ``rt.run(compiled, ...)``,
``rt.submit(...)``, a registration handle) runs on that world, so device tensors
(``alloc_tensor``, ``alloc_stacked_tensor``) stay resident and, with ``persistent=True``, the
comm domains and their windows are kept from call to call (zeroed before each reuse unless
``reset_persistent_windows=False``). Sub-worker callbacks (``sub_worker_overrides=`` /
``callbacks=``) replace a program's ``role=SubWorker`` functions by name.

ranksim runs each call to completion before returning, so a submitted call's handle is
already done; no process is forked and host tensors need no ``share_memory_()``.
"""

from __future__ import annotations

import os

import numpy as np

from .. import _engine as E
from ..._errors import BadArgument
from .device_tensor import DeviceTensor, StackedDeviceTensor, dtype_of


def _tensor_from_continuous(arg):
    """A sub-worker callback's argument as a tensor: on ranksim it already is one."""
    return arg


def resolve_reset(persistent, reset):
    """``reset_persistent_windows``: ``None`` means "same as `persistent`"; ``True`` without
    `persistent` is an error, as in PyPTO."""
    if reset is None:
        return bool(persistent)
    if reset and not persistent:
        raise ValueError("reset_persistent_windows=True requires persistent=True (non-persistent windows are always fresh)")
    return bool(reset)


class CompiledProgram:
    """What a worker runs: a compiled program (``ir``'s ``DistributedCompiledProgram`` is the
    one kind). It is declared here, below the compiler, so that the runtime never imports it."""


class DistributedRunHandle:
    """A submitted call. ranksim completes the call inside ``submit``, so the handle is done."""

    def __init__(self, compiled, report, error=None):
        self.compiled, self.report, self._error = compiled, report, error

    @property
    def done(self):
        return True

    def result(self, timeout=None):
        if self._error is not None:
            raise self._error
        return None

    wait = result


class RegistrationHandle:
    """``rt.register(compiled)``: a callable bound to one program of the worker."""

    def __init__(self, worker, compiled):
        self.worker, self.compiled, self.closed = worker, compiled, False

    def __call__(self, *args, config=None):
        if self.closed:
            raise RuntimeError(f"registration handle of {self.compiled!r} called after close")
        return self.worker.run(self.compiled, *args, config=config)


class DistributedWorker:
    """One ranksim world for a set of compiled programs (see module docs)."""

    def __init__(
        self,
        compiled,
        config=None,
        *,
        persistent=False,
        reset_persistent_windows=None,
        callbacks=None,
        sub_worker_overrides=None,
        inherited_host_tensors=None,
        startup_timeout_s=None,
    ):
        progs = list(compiled) if isinstance(compiled, (list, tuple)) else [compiled]
        if not progs or not all(isinstance(p, CompiledProgram) for p in progs):
            raise TypeError(f"DistributedWorker takes compiled programs (ir.compile / fn.compile), got {compiled!r}")
        first = progs[0]
        for p in progs[1:]:
            if p.distributed_config.device_ids != first.distributed_config.device_ids or p.platform != first.platform:
                raise ValueError(f"DistributedWorker: {p!r} runs on other devices or another platform than {first!r}")
        reset = resolve_reset(persistent, reset_persistent_windows)
        overrides = {**(callbacks or {}), **(sub_worker_overrides or {})}
        subs = {n for p in progs for n in p.sub_workers()}
        unknown = sorted(set(overrides) - subs)
        if unknown:
            raise ValueError(
                f"sub_worker_overrides {unknown} are not sub-workers of the program(s) "
                f"(sub-workers: {sorted(subs) or 'none'})"
            )
        self._programs = progs
        self._overrides = overrides
        self._session = E.Session(first._machine(config), persistent=persistent, reset=reset, timing_only=first._timing_only(config), budgets=first._budgets(config))
        self._owned_tensors = {}
        self._handles = []
        self._closed = False
        self.last_report = None

    @property
    def _w(self):
        """What PyPTO's tests read of simpler's worker: ``_next_alloc_id``, the number of comm
        domains allocated on this worker so far."""
        from types import SimpleNamespace

        return SimpleNamespace(_next_alloc_id=self._session.ndomains)

    def __repr__(self):
        return f"<ranksim DistributedWorker: {', '.join(p.fn.__name__ for p in self._programs)}>"

    # ---- dispatch ----------------------------------------------------------------------

    def _require_open(self, op):
        if self._closed:
            raise RuntimeError(f"DistributedWorker.{op}() called after close")

    def _registered(self, compiled, op):
        if not any(compiled is p for p in self._programs):
            raise ValueError(f"DistributedWorker.{op}(): {compiled!r} was not prepared on this worker; pass it to prepare()/DistributedWorker([...])")

    def _dispatch(self, compiled, args, config=None):
        report = compiled._execute(tuple(args), config, session=self._session, subs=self._overrides)
        compiled.last_report = report
        self.last_report = report
        if os.environ.get("RANKSIM_QUIET", "") in ("", "0"):
            print(E.timing_line(compiled.fn.__name__, compiled.platform, self._session.cfg, report), flush=True)
        return report

    def __call__(self, *args, config=None):
        self._require_open("__call__")
        if len(self._programs) != 1:
            raise TypeError(f"rt(*args) is ambiguous with {len(self._programs)} programs prepared; use rt.run(compiled, *args)")
        self._dispatch(self._programs[0], args, config)

    def run(self, compiled, *args, config=None):
        """Runs one call of `compiled` on this worker's world (outputs written back)."""
        self._require_open("run")
        self._registered(compiled, "run")
        self._dispatch(compiled, args, config)

    def submit(self, compiled, *args, config=None):
        """Runs one call and returns its (already done) handle."""
        self._require_open("submit")
        self._registered(compiled, "submit")
        h = DistributedRunHandle(compiled, self._dispatch(compiled, args, config))
        self._handles.append(h)
        return h

    def register(self, compiled):
        self._require_open("register")
        self._registered(compiled, "register")
        h = RegistrationHandle(self, compiled)
        self._handles.append(h)
        return h

    # ---- device memory -----------------------------------------------------------------

    def alloc_tensor(self, shape, dtype, *, init=None, worker_id=0):
        """A tensor resident on worker `worker_id` (zeroed, or `init`'s values)."""
        self._require_open("alloc_tensor")
        n = self._session.cfg.ranks
        if not isinstance(worker_id, int) or not 0 <= worker_id < n:
            raise ValueError(f"alloc_tensor: worker_id {worker_id!r} must be a rank in 0..{n - 1}")
        shape = tuple(int(s) for s in shape)
        if not shape or any(s <= 0 for s in shape):
            raise ValueError(f"alloc_tensor: shape {list(shape)} must be non-empty with positive dims")
        pd = dtype_of(dtype, "alloc_tensor")
        name = f"device_tensor{len(self._session.gm_names)}"
        t = self._session.gm_tensor(("device", name), name, pd.rs, shape)
        if init is not None:
            arr = E.host_array(init, "init")
            if tuple(arr.shape) != shape:
                raise ValueError(f"alloc_tensor: init has shape {list(arr.shape)}, the tensor {list(shape)}")
            self._session.world.write(t, worker_id, arr)
        dt = DeviceTensor(self, t, shape, dtype, worker_id, pd)
        self._owned_tensors[(worker_id, dt.data_ptr)] = dt
        return dt

    def free_tensor(self, t, *, worker_id=None):
        self._require_open("free_tensor")
        if not isinstance(t, DeviceTensor):
            raise TypeError(f"free_tensor takes a DeviceTensor, got {t!r}")
        if self._owned_tensors.pop((t.worker_id, t.data_ptr), None) is None:
            raise ValueError(f"free_tensor: {t!r} is not owned by this worker (already freed?)")
        t.freed = True

    def copy_from(self, t, host=None):
        """The values of device tensor `t` (into `host` in place when given)."""
        self._require_open("copy_from")
        vals = self._session.world.read(t._t, t.worker_id)
        if host is None:
            return vals
        arr = E.host_array(host, "host")
        np.copyto(arr, vals.reshape(arr.shape), casting="unsafe")
        E.copy_back(host, arr)
        return host

    def copy_to(self, t, host):
        """Writes host values into device tensor `t`."""
        self._require_open("copy_to")
        self._session.world.write(t._t, t.worker_id, E.host_array(host, "host"))

    def alloc_stacked_tensor(self, host, *, worker_ids=None):
        """Shard ``host[i]`` resident on worker ``worker_ids[i]`` (default: worker i)."""
        self._require_open("alloc_stacked_tensor")
        arr = E.host_array(host, "host")
        b = arr.shape[0]
        ids = list(range(b)) if worker_ids is None else [int(w) for w in worker_ids]
        if len(ids) != b:
            raise ValueError(f"alloc_stacked_tensor: {len(ids)} worker_ids for {b} shards")
        shards = [self.alloc_tensor(arr.shape[1:], arr.dtype, init=arr[i], worker_id=w) for i, w in enumerate(ids)]
        return StackedDeviceTensor(shards, arr.shape, getattr(host, "dtype", arr.dtype), ids)

    def copy_stacked_from(self, stacked, host):
        self._require_open("copy_stacked_from")
        arr = E.host_array(host, "host")
        for i, s in enumerate(stacked.shards):
            np.copyto(arr[i], self._session.world.read(s._t, s.worker_id).reshape(arr[i].shape), casting="unsafe")
        E.copy_back(host, arr)

    def free_stacked_tensor(self, stacked):
        for s in stacked.shards:
            if not s.freed:
                self.free_tensor(s)

    def release_inherited_host_tensor_refs(self):
        """Nothing to release: ranksim keeps no host tensor references across calls."""

    # ---- lifetime ----------------------------------------------------------------------

    def close(self):
        if self._closed:
            return
        for t in list(self._owned_tensors.values()):
            t.freed = True
        self._owned_tensors.clear()
        for h in self._handles:
            if isinstance(h, RegistrationHandle):
                h.closed = True
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def execute_distributed(compiled, *args, config=None):
    """Runs one call of `compiled` (PyPTO's module-level entry)."""
    return compiled(*args, config=config)


__all__ = ["DistributedRunHandle", "DistributedWorker", "RegistrationHandle", "execute_distributed"]
