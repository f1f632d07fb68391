"""Python kernels run as greenlets on the run's own thread (one thread for every block, no OS
thread hand-over), or on OS threads with RANKSIM_PY_KERNELS=threads: the same program gives
the same report and values either way."""

import threading

import numpy as np
import pytest

import ranksim
import ring


def ping_pong(rounds=50):
    """Two ranks take turns; each kernel notes the host thread it ran on."""
    world = ranksim.Config.preset("a2a3").with_ranks(2).world()
    dom = world.create_domain("d")
    sig = world.alloc_window(dom, "sig", "i32", [1, 1])
    threads = {}

    def kernel(core):
        me = core.rank()
        threads[me] = threading.get_ident()
        for i in range(rounds):
            if me == 0:
                core.notify(sig, 1, [0, 0], 1, "add")
                core.wait(sig, [0, 0], i + 1)
            else:
                core.wait(sig, [0, 0], i + 1)
                core.notify(sig, 0, [0, 0], 1, "add")

    world.dispatch_all(dom, ranksim.Dispatch.kernel("pingpong", 1, kernel))
    report = world.run()
    return report, [int(world.read(sig, r)[0, 0]) for r in range(2)], threads


def test_kernels_share_the_runs_thread_and_threads_give_the_same_run(monkeypatch):
    pytest.importorskip("greenlet")
    report, cells, threads = ping_pong()
    assert len(set(threads.values())) == 1, "both kernels ran on the run's thread"
    assert threading.get_ident() not in threads.values(), "not on the caller's"
    monkeypatch.setenv("RANKSIM_PY_KERNELS", "threads")
    t_report, t_cells, t_threads = ping_pong()
    assert len(set(t_threads.values())) == 2, "one OS thread per kernel"
    assert (report.device_time_us, report.stats["events"], cells) == (t_report.device_time_us, t_report.stats["events"], t_cells)
    assert cells == [50, 50]


def test_the_ring_gives_the_same_values_and_times_on_greenlets_and_threads(monkeypatch):
    world, out, want = ring.build(chunk=64)
    report = world.run()
    values = [world.read(out, r) for r in range(world.size)]
    monkeypatch.setenv("RANKSIM_PY_KERNELS", "threads")
    t_world, t_out, _ = ring.build(chunk=64)
    t_report = t_world.run()
    assert report.device_time_us == t_report.device_time_us
    for r in range(world.size):
        np.testing.assert_array_equal(values[r], t_world.read(t_out, r))
        np.testing.assert_array_equal(values[r].reshape(-1), np.asarray(want).reshape(-1))


def test_a_kernel_error_on_a_greenlet_names_its_line_and_the_others_end():
    world = ranksim.Config.preset("a2a3").with_ranks(2).world()
    dom = world.create_domain("d")
    sig = world.alloc_window(dom, "sig", "i32", [1, 1])

    def kernel(core):
        if core.rank() == 0:
            raise ValueError("boom")  # the line the error names
        core.wait(sig, [0, 0], 1)  # never notified: aborted when the run fails

    world.dispatch_all(dom, ranksim.Dispatch.kernel("k", 1, kernel))
    with pytest.raises(ranksim.KernelError, match="boom") as e:
        world.run()
    assert "test_greenlets.py" in str(e.value)
