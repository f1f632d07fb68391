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

from ..ir.distributed_compiled_program import DistributedConfig
from .device_tensor import DeviceTensor, StackedDeviceTensor
from .distributed_runner import DistributedRunHandle, DistributedWorker

_PLATFORMS = ("a2a3sim", "a2a3", "a5sim", "a5")

TraceSpan = _native.TraceSpan
TraceInvocation = _native.TraceInvocation


@dataclass
class RunConfig:
    """How to run a program: ``platform`` (a2a3/a2a3sim: ranksim's a2a3 preset; a5/a5sim: a5)
    and ``distributed_config``. ``ranksim_config`` (a ranksim.Config) replaces the preset.
    PyPTO's other fields are accepted and have no effect on ranksim."""

    platform: str = "a2a3sim"
    device_id: int = 0
    rtol: float = 1e-5
    atol: float = 1e-5
    distributed_config: DistributedConfig | None = None
    ranksim_config: object = None
    options: dict = field(default_factory=dict)

    def __init__(self, platform="a2a3sim", device_id=0, rtol=1e-5, atol=1e-5, distributed_config=None, ranksim_config=None, **options):
        if platform not in _PLATFORMS:
            raise ValueError(f"RunConfig.platform {platform!r}: expected one of {', '.join(_PLATFORMS)}")
        self.platform, self.device_id, self.rtol, self.atol = platform, device_id, rtol, atol
        self.codegen_only = bool(options.get("codegen_only", False))
        self.distributed_config, self.ranksim_config, self.options = distributed_config, ranksim_config, options


class BenchmarkStats(_native._BenchmarkStats):
    """PyPTO's BenchmarkStats (L3 rule) over ranksim's runs."""

    def print_tree(self, launch=None, *, us=True, file=None):
        print(self.format_tree(launch, us=us), file=file or sys.stdout)

    def print_mean_tree(self, *, us=True, spread="stdev", pid=None, slot=None, file=None):
        print(self.format_mean_tree(us=us, spread=spread, pid=pid, slot=slot), file=file or sys.stdout)


def benchmark(compiled, args, *, rounds=100, warmup=3, platform=None, device_id=None, config=None, persistent=False, reset_persistent_windows=None):
    """Runs `compiled(*args)` `warmup + rounds` times and returns PyPTO's BenchmarkStats.
    Each launch runs on a fresh world (windows zeroed, as a non-persistent PyPTO launch);
    ranksim is deterministic, so every round times the same."""
    if not isinstance(rounds, int) or rounds <= 0:
        raise ValueError(f"benchmark(): rounds must be a positive int, got {rounds!r}")
    if not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"benchmark(): warmup must be a non-negative int, got {warmup!r}")
    if platform is not None or device_id is not None:
        raise ValueError("benchmark(): platform/device_id are L2 options; an L3 program takes config=RunConfig(...)")
    if persistent or reset_persistent_windows:
        raise ValueError("benchmark(): persistent windows are not modelled by ranksim.pypto (every launch starts from zeroed windows)")
    reports = [compiled._execute(tuple(args), config) for _ in range(warmup + rounds)]
    compiled.last_report = reports[-1]
    stats = BenchmarkStats(compiled.cfg, reports, rounds, warmup)
    if os.environ.get("RANKSIM_STRACE", "") not in ("", "0"):
        # Where PyPTO's runtime writes them, for tools that read [STRACE] from stderr.
        sys.stderr.write(stats.strace)
        sys.stderr.flush()
    return stats


__all__ = [
    "BenchmarkStats", "DeviceTensor", "DistributedRunHandle", "DistributedWorker", "RunConfig", "StackedDeviceTensor",
    "TraceInvocation", "TraceSpan", "benchmark",
]
