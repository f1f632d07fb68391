"""A PyPTO-language collective gated in CI: `python -m ranksim sweep | check` on the chunked
class-form ring allreduce of pypto_ring.py, passing, and failing the gate (exit 1) for a
busbw below the floor, a wrong element, a deadlock and a race, each naming the Python line."""

import os
import subprocess
import sys

import ranksim

HERE = os.path.dirname(os.path.abspath(__file__))
RING = os.path.join(HERE, "pypto_ring.py")


def ranksim_cli(*args):
    r = subprocess.run([sys.executable, "-m", "ranksim", *args], capture_output=True, text=True, cwd=HERE, timeout=600)
    return r.returncode, r.stdout + r.stderr


def line_of(text):
    return next(i + 1 for i, line in enumerate(open(RING).read().splitlines()) if text in line)


def test_a_passing_sweep_exits_0_with_the_bound_line():
    code, out = ranksim_cli("sweep", "pypto_ring:ring_collective", "-b", "32K", "-e", "128K", "--min-busbw", "2")
    assert code == 0, out
    assert "# bound: busbw <=" in out and "# Out of bounds values : 0 OK" in out


def test_busbw_below_the_floor_exits_1():
    code, out = ranksim_cli("sweep", "pypto_ring:ring_collective", "-b", "32K", "-e", "32K", "--min-busbw", "500")
    assert code == 1 and "is below --min-busbw 500" in out, out


def test_a_wrong_element_exits_1():
    code, out = ranksim_cli("sweep", "pypto_ring:ring_wrong", "-b", "32K", "-e", "32K")
    assert code == 1 and "# Out of bounds values : 0 OK" not in out, out


def test_a_deadlock_is_a_failed_row():
    code, out = ranksim_cli("sweep", f"{RING}:ring_deadlock", "-b", "32K", "-e", "32K")
    assert code == 1 and "FAILED: deadlock" in out, out


def test_a_deadlock_fails_the_check_naming_the_wait():
    code, out = ranksim_cli("check", "pypto_ring:ring_deadlock", "-b", "32K")
    assert code == 1 and "deadlock" in out, out
    assert f"pypto_ring.py:{line_of('expected=2 if bug')}" in out, out


def test_a_race_fails_the_check_at_its_line():
    code, out = ranksim_cli("check", "pypto_ring:ring_race", "-b", "32K", "--seeds", "1")
    assert code == 1 and "data-race" in out, out
    assert f"pypto_ring.py:{line_of('atomic=pld.AtomicType.Add')} in ring" in out, out


def test_a_usage_error_exits_2():
    assert ranksim_cli("sweep", "pypto_ring:no_such_thing")[0] == 2
    assert ranksim_cli("sweep", "pypto_ring:ring_collective", "--bogus")[0] == 2
    assert ranksim_cli("frobnicate", "pypto_ring:ring_collective")[0] == 2


def test_the_same_gate_from_pytest():
    sys.path.insert(0, HERE)
    from pypto_ring import ring_collective, ring_wrong

    cfg = ranksim.Config.preset("a2a3")
    out = ranksim.sweep(cfg, ring_collective(), [32 << 10, 256 << 10])
    assert not out["failed"] and all(r["busbw_gbps"] > 2 for r in out["rows"])
    assert ranksim.check(cfg, ring_collective(), 64 << 10, seeds=2).is_clean
    assert ranksim.point(cfg, ring_wrong(), 32 << 10)["nwrong"] > 0


def test_the_golden_comparison_counts_what_differs():
    import numpy as np

    from ranksim.pypto._collective import nwrong

    got = np.ones((3, 1, 10), np.float32)
    want = np.ones((1, 10), np.float32)  # broadcast over the ranks
    assert nwrong(got, np.broadcast_to(want, got.shape), 1e-5, 1e-5) == 0
    got[1, 0, 3] = 1.1
    got[2, 0, 9] = np.nan
    got[0, 0, 0] = 1 + 5e-6  # inside the tolerance
    assert nwrong(got, np.broadcast_to(want, got.shape), 1e-5, 1e-5) == 2


def test_a_keyboard_interrupt_in_a_callback_stays_one():
    import pytest

    sys.path.insert(0, HERE)
    from pypto_ring import ring_collective

    c = ring_collective()

    def call(world, calls):
        raise KeyboardInterrupt

    c.call = call
    cfg = ranksim.Config.preset("a2a3")
    for measure in (lambda: ranksim.point(cfg, c, 32 << 10), lambda: ranksim.sweep(cfg, c, [32 << 10]), lambda: ranksim.check(cfg, c, 32 << 10)):
        with pytest.raises(KeyboardInterrupt):
            measure()
    c.call = lambda world, calls: (_ for _ in ()).throw(ValueError("mine"))
    with pytest.raises(ranksim.SimError, match="call raised ValueError: mine"):
        ranksim.point(cfg, c, 32 << 10)
