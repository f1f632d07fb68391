"""Runs that can only spin end with a LivelockError naming the Python line of each poll; runs
that never end otherwise reach a budget (BudgetError); Ctrl-C ends a long run with
KeyboardInterrupt."""

import inspect
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import ranksim


def spinning_world(kernel_body):
    """A 2-rank world whose one-block kernel is `kernel_body(core, sig, scratch)`."""
    world = ranksim.Config.preset("a2a3").with_ranks(2).world()
    dom = world.create_domain("d")
    sig = world.alloc_window(dom, "signal", "i32", [2, 1])
    scratch = world.alloc_tensor("scratch", "i32", [1, 8])

    def kernel(core):
        kernel_body(core, sig, scratch)

    world.dispatch_all(dom, ranksim.Dispatch.kernel("spin", 1, kernel))
    return world


def line_of(fn, text):
    """`file:line` of the line of `fn` containing `text`."""
    lines, first = inspect.getsourcelines(fn)
    i = next(k for k, l in enumerate(lines) if text in l)
    return f"{inspect.getsourcefile(fn)}:{first + i}"


def wrong_cell(core, sig, scratch):
    me = core.rank()
    core.notify(sig, 1 - me, [me, 0], 1, "add")
    while not core.test_signal(sig, [me, 0], 1, "ge"):  # the peer notified row `1 - me`
        pass


def read_loop(core, sig, scratch):
    if core.rank() == 1:
        while core.read_scalar(sig, [0, 0]) == 0:  # nobody sets it
            pass


def spin_and_write(core, sig, scratch):
    if core.rank() == 1:
        k = 0
        while not core.test_signal(sig, [0, 0], 1, "ge"):
            k += 1
            core.write_scalar(scratch, [0, 0], k)


@pytest.mark.parametrize("body,op,line", [(wrong_cell, "test_signal", "core.test_signal"), (read_loop, "read_scalar", "core.read_scalar")])
def test_a_broken_poll_loop_is_a_livelock_at_its_python_line(body, op, line):
    world = spinning_world(body)
    t0 = time.monotonic()
    with pytest.raises(ranksim.LivelockError) as e:
        world.run()
    assert time.monotonic() - t0 < 30, "found quickly"
    text = str(e.value)
    assert text.startswith("livelock at "), text
    assert f"{op} since" in text, text
    assert "nobody ever wrote this" in text, text
    where = line_of(body, line)
    assert f"called at {where} in {body.__name__}" in text, text
    assert any(where in p for p in e.value.python_polls), e.value.python_polls
    # A livelock is a deadlock of a kind: `except DeadlockError` catches it too.
    assert isinstance(e.value, ranksim.DeadlockError)


def test_a_livelock_is_a_finding_of_check():
    world = spinning_world(wrong_cell)
    r = world.check(seeds=2)
    kinds = [f.kind for f in r.findings]
    assert kinds == ["livelock"], kinds


def test_budgets_end_a_spin_that_writes_and_can_be_raised():
    world = spinning_world(spin_and_write)
    assert world.max_events == 2**32 and world.livelock_polls == 1000
    assert world.max_sim_time_us == 3_600_000_000.0
    with pytest.raises(ranksim.BudgetError, match="the limit of 3000 events") as e:
        world.run(max_events=3000)
    assert "max_events=" in str(e.value)
    assert world.max_events == 2**32, "a run's keyword leaves the world's budget alone"
    world = spinning_world(spin_and_write)
    world.max_sim_time_us = 20.0
    with pytest.raises(ranksim.BudgetError, match=r"simulated-time limit of 20.000us") as e:
        world.run()
    assert line_of(spin_and_write, "core.write_scalar") in str(e.value) or line_of(
        spin_and_write, "core.test_signal"
    ) in str(e.value), str(e.value)
    with pytest.raises(ranksim.BadArgument, match="max_sim_time_us=-1"):
        world.run(max_sim_time_us=-1)


CHILD = textwrap.dedent(
    """
    import faulthandler, signal, sys, time
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    # Python leaves SIGINT ignored when it starts with it ignored (a command started in the
    # background by a shell without job control, as `cmd &` in a script): Ctrl-C's handler
    # is what this tests, so install it whatever the parent did.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.path.insert(0, {tests!r})
    import ranksim
    from test_livelock import spinning_world, spin_and_write
    world = spinning_world(spin_and_write)
    print("running", flush=True)
    t0 = time.monotonic()
    try:
        world.run(max_events=2**62, max_sim_time_us=1e12)
    except KeyboardInterrupt:
        print("KeyboardInterrupt after %.3f s" % (time.monotonic() - t0), flush=True)
        sys.exit(42)
    print("finished", flush=True)
    """
)


def test_ctrl_c_ends_a_long_run_with_keyboard_interrupt():
    code = CHILD.format(tests=os.path.dirname(__file__))
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert child.stdout.readline().strip() == "running"
    time.sleep(1.0)
    child.send_signal(signal.SIGINT)
    sent = time.monotonic()
    try:
        out, err = child.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        # Where every thread of the child stands (faulthandler), for the failure's message.
        child.send_signal(signal.SIGUSR1)
        time.sleep(2.0)
        child.kill()
        out, err = child.communicate()
        pytest.fail(f"no end 60 s after Ctrl-C; stdout:\n{out}\nstderr:\n{err}")
    took = time.monotonic() - sent
    assert child.returncode == 42, out + err
    assert "KeyboardInterrupt" in out, out
    assert took < 5, f"ended {took:.2f} s after the signal"


def test_a_run_over_max_memory_is_refused_before_it_starts():
    world = ranksim.Config.preset("a2a3").with_ranks(2).world()
    dom = world.create_domain("d")
    world.alloc_window(dom, "x", "f32", [1 << 20])
    world.dispatch_all(dom, ranksim.Dispatch.kernel("noop", 1, lambda core: None))
    assert world.max_memory is None, "by default: what the host has when the run starts"
    with pytest.raises(ranksim.MemoryLimitError, match=r"this run would hold about .* more than the 1\.0 MiB") as e:
        world.run(max_memory=1 << 20)
    text = str(e.value)
    assert "payload 8.0 MiB" in text and "Not run." in text, text
    assert isinstance(e.value, ranksim.BudgetError)
    world.max_memory = 1 << 20
    with pytest.raises(ranksim.MemoryLimitError):
        world.run()
    with pytest.raises(ranksim.BadArgument, match="max_memory=0"):
        world.max_memory = 0
    world.max_memory = None
    world.run()


def test_a_collective_over_max_memory_is_refused_with_what_fits():
    sys.path.insert(0, os.path.dirname(__file__))
    from test_collective import CFG, RingAllReduce

    with pytest.raises(ranksim.MemoryLimitError, match=r"at 1M on 8 ranks would hold about") as e:
        ranksim.point(CFG, RingAllReduce(), 1 << 20, max_memory=40 << 20)
    assert "timing-only" in str(e.value), str(e.value)
    assert ranksim.point(CFG, RingAllReduce(), 1 << 20, max_memory=1 << 30)["nwrong"] == 0
