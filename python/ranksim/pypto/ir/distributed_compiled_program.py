"""``DistributedConfig`` and the compiled program of a ``@pl.jit.host`` function.

Calling the compiled program runs it on a fresh ranksim world of the platform's preset with
one rank per device id, copies ``pl.Out`` / ``pl.InOut`` results back into the caller's
arrays and prints one line of ranksim's timing (``RANKSIM_QUIET=1`` silences it). The last
run's report is ``compiled.last_report``; ``compiled.run(...)`` returns it, and
``compiled.check(...)`` runs the program under ranksim's protocol checker."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

import numpy as np

from ... import Config
from ..._errors import BadArgument, ConfigError
from .. import _engine as E
from .. import _types as T
from ..runtime.device_tensor import DeviceTensor, StackedDeviceTensor
from ..runtime.distributed_runner import CompiledProgram, DistributedWorker
from . import dfx

_TORCH_NAMES = {"FP32": "float32", "FP16": "float16", "BF16": "bfloat16", "INT32": "int32", "INT16": "int16", "INT8": "int8"}
_PRESETS = {"a2a3": "a2a3", "a2a3sim": "a2a3", "a5": "a5", "a5sim": "a5"}


@dataclass
class DistributedConfig:
    """Which devices run the program (``len(device_ids)`` ranks; rank r is ``device_ids[r]``)."""

    device_ids: list = field(default_factory=lambda: [0])
    num_sub_workers: int = 0
    runtime: str = "tensormap_and_ringbuffer"
    aicpu_thread_num: int = 0

    def __post_init__(self):
        ids = list(self.device_ids)
        if not ids:
            raise ValueError("DistributedConfig.device_ids must not be empty")
        if any(not isinstance(d, int) or isinstance(d, bool) or d < 0 for d in ids):
            raise ValueError(f"DistributedConfig.device_ids must be non-negative ints, got {ids}")
        if len(set(ids)) != len(ids):
            raise ValueError(f"DistributedConfig.device_ids must be distinct, got {ids}")
        if not isinstance(self.num_sub_workers, int) or self.num_sub_workers < 0:
            raise ValueError(f"DistributedConfig.num_sub_workers must be >= 0, got {self.num_sub_workers}")
        if self.aicpu_thread_num == 1 or self.aicpu_thread_num < 0:
            raise ValueError(f"DistributedConfig.aicpu_thread_num must be 0 or >= 2, got {self.aicpu_thread_num}")
        self.device_ids = ids


def machine(config, dist):
    """The ranksim Config a RunConfig names, with one rank per device id."""
    if config is None:
        raise BadArgument("compile(..., config=RunConfig(platform=..., distributed_config=DistributedConfig(device_ids=[...]))) is required")
    base = getattr(config, "ranksim_config", None)
    if base is None:
        preset = _PRESETS.get(config.platform)
        if preset is None:
            raise ConfigError(f"platform {config.platform!r}: expected one of a2a3, a2a3sim, a5, a5sim")
        base = Config.preset(preset)
    n = len(dist.device_ids)
    if n > base.ranks:
        raise ConfigError(
            f"{n} device ids on platform {getattr(config, 'platform', '?')!r}: ranksim's `{base.name}` machine has {base.ranks} chips, "
            f"so it cannot place them (it would invent a {n}-chip machine that does not exist). Use at most {base.ranks} device ids, "
            f"or a bigger machine: RunConfig(ranksim_config=ranksim.Config.preset('two-node')) (2 servers, 16 chips), "
            f"'a3-supernode' (16), 'cm384' (768) or 'cluster1024' (1024); ir.compile(..., ranksim_config=...) takes it too"
        )
    return base if base.ranks == n else base.with_ranks(n)


class DistributedCompiledProgram(CompiledProgram):
    """A ``@pl.jit.host`` program bound to a platform and its devices."""

    def __init__(self, fn, args, config):
        # `fn` is a host-level program (`JITFunction.compile` wraps a single-device one).
        self.fn = fn
        self.config = config
        dist = getattr(config, "distributed_config", None) or DistributedConfig()
        self.distributed_config = dist
        self.platform = getattr(config, "platform", "a2a3sim")
        self.cfg = machine(config, dist)
        self.last_report = None
        self.last_reports = []
        self._plan_dir = None
        if args:
            self._prepare(args)

    @property
    def output_dir(self):
        """The directory of the program's plan (see ``ir/plan.py``): ranksim compiles no kernels,
        and writes what a call runs in the layout of PyPTO's build."""
        if self._plan_dir is None:
            from . import plan

            parent = getattr(self, "_parent", None)
            if parent is not None:
                self._plan_dir = parent.output_dir / "next_levels" / self.name
                return self._plan_dir
            self._plan_dir = plan.directory(self.fn.__name__, getattr(self, "output_dir_requested", None))
            plan.write(self, self._plan_dir, plan.record(self))
        return self._plan_dir

    @property
    def orchestration_names(self):
        """The chip-level orchestrations of a program without a HOST orchestrator."""
        return list(getattr(self, "_orchs", {}))

    @property
    def param_names(self):
        return self.fn.param_names()

    def __getitem__(self, name):
        """One orchestration of a multi-orchestration program, as its own callable."""
        subs = getattr(self, "_subs", None) or {}
        if name not in subs:
            raise KeyError(f"no orchestration {name!r}; the program has {', '.join(subs) or 'none to select'}")
        return subs[name]

    def __getattr__(self, name):
        subs = self.__dict__.get("_subs") or {}
        if name in subs:
            return subs[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @property
    def world_size(self):
        return len(self.distributed_config.device_ids)

    def __repr__(self):
        return f"<ranksim.pypto compiled {self.fn.__name__} on {self.platform}: {self.world_size} ranks>"

    def _prepare(self, args, *, device_ok=False):
        """Host arrays of `args`, checked against the host function's annotations; device
        tensors (``DistributedWorker`` calls only, `device_ok`) pass as they are."""
        fn = self.fn
        args = tuple(args) + self._allocate_outputs(args)
        if len(args) != len(fn._params):
            raise BadArgument(f"{fn.__name__}() takes {len(fn._params)} argument(s) ({', '.join(fn.param_names())}), got {len(args)}")
        dyn, hargs = {}, []
        for k, (p, ann, a) in enumerate(zip(fn._params, fn._anns, args)):
            if _is_device(a):
                if not device_ok:
                    raise TypeError(
                        f"{fn.__name__}(): argument `{p.name}` is a device tensor; a one-shot call takes host tensors only "
                        f"(pass device tensors through `compiled.prepare()`'s worker: `rt(...)` / `rt.run(compiled, ...)`)"
                    )
                dev = a._arg()
                if isinstance(ann, T.TensorAnn):
                    ann.check(f"{fn.__name__}(): argument `{p.name}`", dev.shape, dev.dtype, dyn)
                hargs.append(dev)
            elif isinstance(ann, T.TensorAnn) or (ann is None and not isinstance(a, (int, float))):
                arr = E.host_array(a, p.name)
                # numpy has no bf16: float32 host data feeds a BF16 tensor (rounded to nearest on
                # the way in, exact on the way out).
                bf16 = isinstance(ann, T.TensorAnn) and ann.dtype is T.BF16 and str(arr.dtype) == "float32"
                h = E.HostTensor(a, arr, p.name, (k,), T.BF16 if bf16 else None)
                if h.dtype is None:
                    raise BadArgument(f"{fn.__name__}(): argument `{p.name}` has dtype {arr.dtype}; ranksim tensors are float32, float16, int32, int16 or int8")
                if isinstance(ann, T.TensorAnn):
                    ann.check(f"{fn.__name__}(): argument `{p.name}`", arr.shape, h.dtype, dyn)
                    if ann.direction != "in" and not arr.flags.writeable:
                        raise BadArgument(f"{fn.__name__}(): argument `{p.name}` is an output but its array is read-only")
                hargs.append(h)
            else:
                hargs.append(a)
        return hargs, dyn

    def _allocate_outputs(self, args):
        """Zeroed host tensors for trailing ``pl.Out`` parameters the call leaves out (PyPTO
        allocates them and returns them); torch tensors when the caller passed torch."""
        fn = self.fn
        missing = list(zip(fn._params, fn._anns))[len(args):]
        if not missing or not args:
            return ()
        dyn = {}
        for p, ann, a in zip(fn._params, fn._anns, args):
            if isinstance(ann, T.TensorAnn) and hasattr(a, "shape"):
                try:
                    ann.check(p.name, a.shape, T.of_numpy(E.host_array(a, p.name).dtype) or ann.dtype, dyn)
                except BadArgument:
                    return ()
        torch = sys.modules.get("torch") if type(args[0]).__module__.split(".")[0] == "torch" else None
        out = []
        for p, ann in missing:
            shape = ann.concrete(dyn) if isinstance(ann, T.TensorAnn) and ann.direction == "out" else None
            if shape is None:
                return ()
            if torch is not None:
                out.append(torch.zeros(tuple(shape), dtype=getattr(torch, _TORCH_NAMES.get(ann.dtype.name, "float32"))))
            else:
                out.append(np.zeros(tuple(shape), dtype=np.float32 if ann.dtype is T.BF16 else ann.dtype.np))
        self._allocated = tuple(out)
        return self._allocated

    def _machine(self, config):
        if config is not None and getattr(config, "platform", None) not in (None, self.platform):
            dist = getattr(config, "distributed_config", None) or self.distributed_config
            return machine(config, dist)
        return self.cfg

    def _timing_only(self, config):
        return bool(getattr(config, "timing_only", False) or getattr(self.config, "timing_only", False))

    def _budgets(self, config):
        """The run's budgets: the compile-time RunConfig's, then the call's."""
        return {**(getattr(self.config, "budgets", None) or {}), **(getattr(config, "budgets", None) or {})}

    def _execute(self, args, config=None, *, check=None, trace=False, check_races=False, session=None, subs=None, jitter=None):
        """Runs one call on `session` (default: a fresh world) and returns its RunReport (the
        last segment's; ``self.last_reports`` has every segment's) or, with `check`, the
        CheckReport."""
        hargs, dyn = self._prepare(args, device_ok=session is not None)
        T.bind(dyn)
        session = session or E.Session(self._machine(config), timing_only=self._timing_only(config), jitter=jitter, budgets=self._budgets(config))
        run = E.Run(self, session, hargs, dyn, subs)
        run.lend = check is None  # a checked call reruns from its staged inputs: copy them
        run.record()
        world = session.world
        world.trace = trace
        world.check_races = check_races
        reports = []
        try:
            run.materialize()
            for seg, sub in run.segments():
                for op in seg:
                    run.queue(op)
                if seg or (sub is None and not reports):
                    reports.append(world.check(seeds=check) if check is not None else world.run())
                run.write_back()
                if sub is not None:
                    run.call_sub(sub)
                    run.upload()
        finally:
            run.release()
        for h in hargs:
            if isinstance(h, E.HostTensor):
                E.copy_back(h.root, h.arr)
        self.last_reports = reports
        what = dfx.wanted(config)
        if what and check is None:
            dfx.write(self.output_dir / "dfx_outputs", run.graphs, reports, what)
        if check is not None:
            dirty = [r for r in reports if not r.is_clean]
            return dirty[0] if dirty else reports[-1]
        return reports[-1]

    def __call__(self, *args, config=None, breakdown=False, **kwargs):
        """Runs one call; outputs are written into the caller's arrays. Trailing ``pl.Out``
        arguments left out are allocated and returned (one, or a tuple). `breakdown=True` (or
        ``RANKSIM_BREAKDOWN=1``) prints, under the timing line, where each rank's device time
        went (``ranksim.breakdown``)."""
        breakdown = breakdown or os.environ.get("RANKSIM_BREAKDOWN", "") not in ("", "0")
        if len(getattr(self, "_subs", None) or {}) > 1:
            raise TypeError(
                f"{self.program.name} has {len(self._subs)} orchestrations ({', '.join(self._subs)}); "
                f"select one explicitly: compiled[name](...) or compiled.<name>(...)"
            )
        self._allocated = ()
        report = self._execute(args, config, trace=breakdown)
        allocated, self._allocated = self._allocated, ()
        self.last_report = report
        if os.environ.get("RANKSIM_QUIET", "") in ("", "0"):
            print(E.timing_line(self.fn.__name__, self.platform, self.cfg, report), flush=True)
        if breakdown:
            from ...breakdown import format_breakdown

            print(format_breakdown(report), flush=True)
        if allocated:
            return allocated[0] if len(allocated) == 1 else allocated
        return None

    def run(self, *args, config=None, trace=False, check_races=False):
        """Runs the program once and returns ranksim's RunReport (outputs written back);
        `trace=True` keeps a timeline (`report.write_trace(path)`), `check_races=True` runs the
        checker along."""
        report = self._execute(args, config, trace=trace, check_races=check_races)
        self.last_report = report
        return report

    def sub_workers(self):
        """Names of the program's HOST sub-worker functions (``role=SubWorker``)."""
        prog = getattr(self, "program", None)
        return [n for n, f in prog.functions.items() if f.level == "sub"] if prog is not None else []

    def prepare(self, config=None, *, extra_compiled=(), persistent=False, reset_persistent_windows=None, callbacks=None, sub_worker_overrides=None, startup_timeout_s=None):
        """A :class:`~ranksim.pypto.runtime.DistributedWorker` for this program (and
        `extra_compiled`): one world for many calls, device tensors, persistent windows."""
        return DistributedWorker(
            [self, *extra_compiled],
            config,
            persistent=persistent,
            reset_persistent_windows=reset_persistent_windows,
            callbacks=callbacks,
            sub_worker_overrides=sub_worker_overrides,
            startup_timeout_s=startup_timeout_s,
        )

    def check(self, *args, seeds=0, config=None):
        """Runs the program under ranksim's protocol checker (unperturbed, then once per seed
        with jitter) and returns the CheckReport; findings name the kernels' Python lines."""
        return self._execute(args, config, check=seeds)


def _is_device(a):
    """Whether `a` is a device tensor (``rt.alloc_tensor`` / ``rt.alloc_stacked_tensor``)."""
    return isinstance(a, (DeviceTensor, StackedDeviceTensor))


__all__ = ["DistributedCompiledProgram", "DistributedConfig"]
