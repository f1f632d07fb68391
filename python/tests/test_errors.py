"""Bad input and broken protocols are Python exceptions naming the problem; the interpreter
survives them."""

import inspect

import numpy as np
import pytest

import ranksim
import ring


def one_rank_world():
    world = ranksim.Config.preset("a2a3").with_ranks(2).world()
    dom = world.create_domain("d")
    return world, dom


def test_exception_hierarchy():
    assert issubclass(ranksim.DeadlockError, ranksim.SimError)
    assert issubclass(ranksim.BadArgument, ValueError)
    assert issubclass(ranksim.ConfigError, ranksim.SimError)
    assert issubclass(ranksim.KernelError, ranksim.SimError)


def test_config_errors():
    with pytest.raises(ranksim.ConfigError, match="unknown preset `a2a4`; did you mean `a2a3`"):
        ranksim.Config.preset("a2a4")
    with pytest.raises(ranksim.ConfigError, match="config mine"):
        ranksim.Config.from_toml("[machine]\nname = 1\n", "mine")
    with pytest.raises(ranksim.ConfigError):
        ranksim.Config.preset("a2a3").with_ranks(0)
    text = open(__file__).read()  # not TOML
    with pytest.raises(ranksim.ConfigError):
        ranksim.Config.from_toml(text)


def test_host_side_bad_arguments():
    world, dom = one_rank_world()
    with pytest.raises(ranksim.BadArgument, match="unknown dtype `f64`"):
        world.alloc_tensor("t", "f64", [4])
    t = world.alloc_tensor("t", "i32", [1, 4])
    with pytest.raises(ranksim.BadArgument, match=r"numpy dtype float64 cannot be written to a i32 tensor"):
        world.write(t, 0, np.zeros(4))
    with pytest.raises(ranksim.BadArgument, match=r"shape \[3\] does not match the tensor's shape \[1, 4\]"):
        world.write(t, 0, np.zeros(3, dtype=np.int32))
    with pytest.raises(ranksim.BadArgument, match="do not fit in i32"):
        world.write(t, 0, np.array([0, 0, 0, 2**40]))
    with pytest.raises(ranksim.BadArgument, match="cannot be written"):
        world.write(t, 0, np.array(["a", "b", "c", "d"]))
    with pytest.raises(ranksim.BadArgument, match="rank"):
        world.write(t, 5, np.zeros(4, dtype=np.int32))
    with pytest.raises(ranksim.BadArgument):
        world.read(t, 99)
    with pytest.raises(ranksim.BadArgument):
        world.create_domain("bad", [0, 7])
    with pytest.raises(ranksim.BadArgument, match="must be a function"):
        ranksim.Task("k", 1, 42)
    with pytest.raises(ranksim.BadArgument, match="blocks must be at least 1"):
        ranksim.Task("k", 0, lambda core: None)
    d = ranksim.Dispatch("d")
    with pytest.raises(ranksim.BadArgument, match=r"after\(3\)"):
        d.add(ranksim.Task("k", 1, lambda core: None).after(3))
    with pytest.raises(TypeError):
        world.alloc_tensor("t2", "f32", "not a shape")
    with pytest.raises(OverflowError):
        world.alloc_tensor("t3", "f32", [-1])


def test_kernel_bad_peer_is_bad_argument_and_the_world_survives():
    world, dom = one_rank_world()
    w = world.alloc_window(dom, "w", "f32", [1, 8])

    def k(core):
        t = core.load(w, [0, 0], [1, 8])
        core.remote_store(t, w, 9, [0, 0])

    world.dispatch_all(dom, ranksim.Dispatch.kernel("badpeer", 1, k))
    with pytest.raises(ranksim.BadArgument, match="remote_store") as e:
        world.run()
    assert "9" in str(e.value) and "task `badpeer`" in str(e.value)
    # The world runs again afterwards.
    out = world.alloc_tensor("o", "i32", [1, 1])
    world.dispatch(0, ranksim.Dispatch.kernel("ok", 1, lambda core: core.write_scalar(out, [0, 0], 7)))
    world.run()
    assert world.read(out, 0)[0, 0] == 7


def test_kernel_bad_region_caught_by_kernel_still_fails_the_run():
    world, dom = one_rank_world()
    w = world.alloc_window(dom, "w", "f32", [1, 8])
    caught = []

    def k(core):
        try:
            core.load(w, [0, 4], [1, 8])
        except ranksim.BadArgument as e:
            caught.append(str(e))

    world.dispatch_all(dom, ranksim.Dispatch.kernel("k", 1, k))
    with pytest.raises(ranksim.BadArgument):
        world.run()  # an argument error is sticky, as in Rust
    assert caught and "load" in caught[0]


def test_kernel_that_raises():
    world, dom = one_rank_world()

    def k(core):
        if core.rank() == 1:
            return 1 / 0

    world.dispatch_all(dom, ranksim.Dispatch.kernel("divider", 1, k))
    with pytest.raises(ranksim.KernelError) as e:
        world.run()
    msg = str(e.value)
    line = inspect.getsourcelines(k)[1] + 2
    assert "rank 1 block 0 (task `divider`)" in msg
    assert "raised ZeroDivisionError: division by zero" in msg
    assert f"test_errors.py:{line} in k" in msg
    assert isinstance(e.value.__cause__, ZeroDivisionError)


def test_core_outside_its_kernel():
    world, dom = one_rank_world()
    kept = []
    world.dispatch_all(dom, ranksim.Dispatch.kernel("keep", 1, kept.append))
    world.run()
    with pytest.raises(ranksim.BadArgument, match="used after its kernel returned"):
        kept[0].rank()


def test_kernel_using_its_world_is_refused():
    world, dom = one_rank_world()
    t = world.alloc_tensor("t", "f32", [1, 1])
    world.dispatch(0, ranksim.Dispatch.kernel("k", 1, lambda core: world.read(t, 0)))
    with pytest.raises(ranksim.KernelError, match="the world is busy"):
        world.run()


def test_bad_op_names():
    world, dom = one_rank_world()
    s = world.alloc_window(dom, "s", "i32", [1, 1])
    world.dispatch_all(dom, ranksim.Dispatch.kernel("k", 1, lambda core: core.notify(s, 0, [0, 0], 1, "xor")))
    with pytest.raises(ranksim.KernelError, match=r"unknown notify op `xor`"):
        world.run()


def test_deadlock_names_the_python_line():
    world, out, _ = ring.build(broken="deadlock", chunk=8)
    with pytest.raises(ranksim.DeadlockError) as e:
        world.run()
    msg = str(e.value)
    src = inspect.getsource(ring)
    line = 1 + src.splitlines().index(next(l for l in src.splitlines() if "the deadlock's line" in l))
    assert msg.startswith("deadlock at ")
    assert f"called at {ring.__file__}:{line} in kernel" in msg
    assert "core.rs" not in msg
    assert e.value.python_waits and all("ring.py" in w for w in e.value.python_waits)


def test_never_returning_wait_is_a_deadlock():
    world, dom = one_rank_world()
    s = world.alloc_window(dom, "s", "i32", [1, 1])
    world.dispatch_all(dom, ranksim.Dispatch.kernel("forever", 1, lambda core: core.wait(s, [0, 0], 1)))
    with pytest.raises(ranksim.DeadlockError, match="2 blocked wait"):
        world.run()


def test_checker_finds_the_missing_wait_and_the_deadlock():
    world, _, _ = ring.build(broken="no-wait", chunk=8)
    report = world.check(seeds=1)
    assert not report.is_clean
    kinds = {f.kind for f in report.findings}
    assert kinds & {"data-race", "stale-read"}, kinds
    f = report.findings[0]
    assert isinstance(f.rank, int) and f.message and f.sites and "op" in f.sites[0]
    assert str(f).startswith(f"[{f.kind}]")
    # Every site is named by its Python line: the racing store and the load that skipped its wait.
    src = inspect.getsource(ring).splitlines()
    racing = {
        f"{ring.__file__}:{i + 1} in kernel"
        for i, l in enumerate(src)
        if "core.remote_store(t, recv" in l or "got = core.load(recv" in l
    }
    races = [f for f in report.findings if f.kind in ("data-race", "stale-read")]
    locs = {s["location"] for f in races for s in f.sites}
    assert locs and locs <= racing, (locs, racing)
    assert all(s["location"] in str(f) for f in races for s in f.sites)

    world, _, _ = ring.build(broken="deadlock", chunk=8)
    report = world.check()
    dl = [f for f in report.findings if f.kind == "deadlock"]
    assert dl
    locs = [s["location"] for f in dl for s in f.sites if s["location"]]
    assert any("ring.py" in l for l in locs), locs


def test_limits_keep_runs_finite():
    world, dom = one_rank_world()
    with pytest.raises(ranksim.BadArgument, match="at most 100000 jittered reruns"):
        world.check(seeds=2**63)
    with pytest.raises(ranksim.BadArgument, match="jitter must be in"):
        world.check(seeds=1, op_jitter_ns=2**40)
    with pytest.raises(ranksim.BadArgument, match="jitter must be in"):
        world.set_jitter(1, dispatch_ns=2**62)
    cfg = ranksim.Config.preset("a2a3")
    import test_collective

    c = test_collective.RingAllReduce()
    with pytest.raises(ranksim.BadArgument, match="timed calls must be in 1..=10000"):
        ranksim.point(cfg, c, 1024, iters=2**31)
    with pytest.raises(ranksim.BadArgument, match="warmup calls"):
        ranksim.bench(cfg, c, 1024, warmup=2**31)
    with pytest.raises(ranksim.BadArgument, match="a size is at most"):
        ranksim.sweep(cfg, c, [1024, 2**40])
    with pytest.raises(ranksim.BadArgument, match="calls must be in"):
        ranksim.check(cfg, c, 1024, calls=0)
