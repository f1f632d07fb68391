"""A ring allreduce written by hand in PyPTO's language: correct at several rank counts, swept
over sizes with benchmark(), checked (a broken variant caught at its Python line) and traced."""

import json
import os
import sys

import numpy as np
import pytest

import ranksim
from ranksim.pypto.ir.distributed_compiled_program import DistributedConfig
from ranksim.pypto.runtime import RunConfig, benchmark

sys.path.insert(0, os.path.dirname(__file__))
import pypto_ring  # noqa: E402


def setup(n, chunk, skip_wait=0):
    x = (np.arange(n * n * chunk, dtype=np.float32) % 97).reshape(n, 1, n * chunk)
    y = np.zeros_like(x)
    cfg = RunConfig(platform="a2a3sim", distributed_config=DistributedConfig(device_ids=list(range(n))))
    return pypto_ring.ring_program(skip_wait).compile(x, y, config=cfg), x, y


@pytest.mark.parametrize("n", [2, 4, 8])
def test_ring_allreduce_sums_every_row(n):
    c, x, y = setup(n, 32)
    c.run(x, y)
    for r in range(n):
        np.testing.assert_array_equal(y[r], x.sum(axis=0))


def test_ring_allreduce_swept_over_sizes():
    n, times = 4, []
    for chunk in (64, 256, 1024, 4096):
        c, x, y = setup(n, chunk)
        st = benchmark(c, [x, y], rounds=2, warmup=1)
        np.testing.assert_array_equal(y[1], x.sum(axis=0))
        times.append(st.device_us_mean)
    assert times == sorted(times) and times[-1] > 2 * times[0], times
    size = n * 4096 * 4
    busbw = size / (times[-1] * 1e-6) / 1e9 * 2 * (n - 1) / n
    assert 0 < busbw < 1000


def test_ring_allreduce_checks_clean_and_the_broken_one_is_caught_at_its_line():
    good, x, y = setup(4, 64)
    assert good.check(x, y, seeds=5).is_clean
    bad, x, y = setup(4, 64, skip_wait=1)
    report = bad.check(x, y, seeds=5)
    races = [f for f in report.findings if f.kind == "data-race"]
    assert races, str(report)
    src = open(pypto_ring.__file__).read().splitlines()
    read_line = next(i + 1 for i, line in enumerate(src) if "# RS-READ" in line)
    assert any(s["location"] == f"{pypto_ring.__file__}:{read_line} in ring_kernel" for f in races for s in f.sites), str(report)


def test_ring_allreduce_traced(tmp_path):
    c, x, y = setup(4, 64)
    report = c.run(x, y, trace=True)
    path = tmp_path / "ring.json"
    report.write_trace(str(path))
    events = json.loads(path.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    names = {e.get("name") for e in events}
    assert any(n and "ring_kernel" in n for n in names), sorted(n for n in names if n)[:20]
    with pytest.raises(ranksim.BadArgument, match="not traced"):
        c.run(x, y).write_trace(str(path))
