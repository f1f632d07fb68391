"""``ranksim.pypto.runtime``: ``RunConfig`` and ``benchmark()`` with PyPTO's call shapes.

``benchmark(compiled, args, rounds=100, warmup=3)`` runs the program ``warmup + rounds``
times on ranksim, turns every chip dispatch into PyPTO's ``[STRACE]`` spans (one pid per rank,
a fresh ``inv`` per dispatch) and aggregates them with PyPTO's L3 rule into a
``BenchmarkStats``: per-round ``device_wall_us`` / ``host_wall_us``, the aggregates, the
dispatch grid, ``format_tree`` / ``format_mean_tree``, and ``strace``, the log itself."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

from ... import _native

from .device_tensor import DeviceTensor, StackedDeviceTensor
from .distributed_runner import DistributedRunHandle, DistributedWorker

_PLATFORMS = ("a2a3sim", "a2a3", "a5sim", "a5")

TraceSpan = _native.TraceSpan
TraceInvocation = _native.TraceInvocation


@dataclass
class RunConfig:
    """How to run a program: ``platform`` (a2a3/a2a3sim: ranksim's a2a3 preset; a5/a5sim: a5)
    and ``distributed_config``. ``ranksim_config`` (a ranksim.Config) replaces the preset.
    ``timing_only=True`` runs without payload (same times, no values written back);
    ``max_sim_time_us``, ``max_events`` and ``livelock_polls`` set the run's budgets (a run
    past one ends with ``ranksim.BudgetError``; a protocol that only polls, with
    ``ranksim.LivelockError`` after that many polls).
    PyPTO's other fields are accepted and have no effect on ranksim."""

    platform: str = "a2a3sim"
    device_id: int = 0
    rtol: float = 1e-5
    atol: float = 1e-5
    distributed_config: object = None  # an ir.DistributedConfig
    ranksim_config: object = None
    options: dict = field(default_factory=dict)

    def __init__(self, platform="a2a3sim", device_id=0, rtol=1e-5, atol=1e-5, distributed_config=None, ranksim_config=None, **options):
        if platform not in _PLATFORMS:
            raise ValueError(f"RunConfig.platform {platform!r}: expected one of {', '.join(_PLATFORMS)}")
        self.platform, self.device_id, self.rtol, self.atol = platform, device_id, rtol, atol
        self.codegen_only = bool(options.get("codegen_only", False))
        # ranksim's own: keep no payload (same times, no values; memory bounded by the model),
        # and the run's budgets (None: the world's defaults).
        self.timing_only = bool(options.get("timing_only", False))
        self.budgets = {k: options[k] for k in ("max_sim_time_us", "max_events", "livelock_polls") if options.get(k) is not None}
        self.distributed_config, self.ranksim_config, self.options = distributed_config, ranksim_config, options


class BenchmarkStats(_native._BenchmarkStats):
    """PyPTO's BenchmarkStats (L3 rule) over ranksim's runs."""

    def print_tree(self, launch=None, *, us=True, file=None):
        print(self.format_tree(launch, us=us), file=file or sys.stdout)

    def print_mean_tree(self, *, us=True, spread="stdev", pid=None, slot=None, file=None):
        print(self.format_mean_tree(us=us, spread=spread, pid=pid, slot=slot), file=file or sys.stdout)


def benchmark(compiled, args, *, rounds=100, warmup=3, platform=None, device_id=None, config=None, persistent=False, reset_persistent_windows=None, seed=None, op_jitter_ns=500, dispatch_jitter_ns=5000):
    """Runs `compiled(*args)` `warmup + rounds` times and returns PyPTO's BenchmarkStats.

    Each launch gets fresh zeroed windows (a non-persistent PyPTO launch). ranksim is
    deterministic, so without jitter every launch times the same: it simulates one and counts
    it `warmup + rounds` times (``stats.simulations`` says how many it ran). With `seed`,
    launch i runs with seeded timing jitter (seed + i; up to `op_jitter_ns` per transfer and
    `dispatch_jitter_ns` per dispatch), each simulated. With `persistent=True` the launches
    share one world whose windows persist (zeroed before each reuse unless
    `reset_persistent_windows=False`), each simulated."""
    from .. import _engine as E
    from .distributed_runner import resolve_reset

    if not isinstance(rounds, int) or rounds <= 0:
        raise ValueError(f"benchmark(): rounds must be a positive int, got {rounds!r}")
    if not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"benchmark(): warmup must be a non-negative int, got {warmup!r}")
    if platform is not None or device_id is not None:
        raise ValueError("benchmark(): platform/device_id are L2 options; an L3 program takes config=RunConfig(...)")
    if seed is not None and (not isinstance(seed, int) or seed < 0):
        raise ValueError(f"benchmark(): seed must be a non-negative int, got {seed!r}")
    launches = warmup + rounds
    if persistent:
        session = E.Session(compiled._machine(config), persistent=True, reset=resolve_reset(True, reset_persistent_windows))
        reports = [compiled._execute(tuple(args), config, session=session) for _ in range(launches)]
    elif reset_persistent_windows:
        raise ValueError("benchmark(): reset_persistent_windows=True requires persistent=True")
    elif seed is not None:
        reports = [compiled._execute(tuple(args), config, jitter=(seed + i, op_jitter_ns, dispatch_jitter_ns)) for i in range(launches)]
    else:
        reports = [compiled._execute(tuple(args), config)] * launches
    compiled.last_report = reports[-1]
    stats = BenchmarkStats(compiled.cfg, reports, rounds, warmup)
    stats.simulations = len({id(r) for r in reports})
    if os.environ.get("RANKSIM_STRACE", "") not in ("", "0"):
        # Where PyPTO's runtime writes them, for tools that read [STRACE] from stderr.
        sys.stderr.write(stats.strace)
        sys.stderr.flush()
    return stats


__all__ = [
    "BenchmarkStats", "DeviceTensor", "DistributedRunHandle", "DistributedWorker", "RunConfig", "StackedDeviceTensor",
    "TraceInvocation", "TraceSpan", "benchmark",
]
