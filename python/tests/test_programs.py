"""Programs written in Python run, give the right values, and are deterministic."""

import json

import numpy as np
import pytest

import ranksim
import ring


def readme_program():
    """The README's Rust "Writing a program" snippet, in Python."""
    world = ranksim.Config.preset("a2a3").world()
    ranks = list(range(world.size))
    dom = world.allocate_domain("comm_d0", ranks, 4096)
    x = world.alloc_window(dom, "x", ranksim.dtype.f32, [1, 256])
    y = world.alloc_window(dom, "y", "f32", [1, 256])
    sig = world.alloc_window(dom, "signal", "i32", [8, 1])
    out = world.alloc_tensor("out", "f32", [1, 256])
    for r in ranks:
        world.write(x, r, np.full((1, 256), r, dtype=np.float32))

    def shift(core):
        me, n = core.rank(), core.nranks()
        t = core.load(x, [0, 0], [1, 256])
        core.remote_store(t, y, (me + 1) % n, [0, 0])
        core.notify(sig, (me + 1) % n, [me, 0], 1, "add")
        core.wait(sig, [(me + n - 1) % n, 0], 1, "ge")

    def plus_one(core):
        t = core.load(y, [0, 0], [1, 256])
        core.store(core.adds(t, 1.0), out, [0, 0])

    step = ranksim.Dispatch("step")
    step.add(ranksim.Task("shift", 1, shift).input(x).output_existing(y))
    step.add(ranksim.Task("plus_one", 1, plus_one).input(y).output(out))
    world.dispatch_all(dom, step)
    report = world.run()
    return world, out, report


def test_hello_rank():
    world = ranksim.Config.default().world()
    dom = world.create_domain("all")
    out = world.alloc_tensor("out", "i32", [1, 4])

    def hello(core):
        core.write_scalar(out, [0, 0], core.rank())
        core.write_scalar(out, [0, 1], core.nranks())
        core.write_scalar(out, [0, 2], core.world_rank())
        core.write_scalar(out, [0, 3], core.block_idx())

    world.dispatch_all(dom, ranksim.Dispatch.kernel("hello", 1, hello))
    report = world.run()
    for r in range(world.size):
        assert world.read(out, r).tolist() == [[r, 8, r, 0]]
    assert len(report.dispatches) == 8
    assert report.device_time_ps > 0


def test_readme_program_values():
    world, out, report = readme_program()
    got = world.read(out, 0)
    assert got.shape == (1, 256) and got.dtype == np.float32
    assert (got == 8.0).all()  # rank 0 got rank 7's x, plus one
    for r in range(1, 8):
        assert (world.read(out, r) == float(r)).all()
    t = report.traffic
    assert len(t) == 8
    assert t[0]["remote_write_bytes"] == 1024 and t[0]["remote_notifies"] == 1 and t[0]["waits"] == 1
    assert report.device_time_us == pytest.approx(report.device_time_ps / 1e6)
    names = sorted({d["name"] for d in report.dispatches})
    assert names == ["step"]
    assert [tk["name"] for tk in report.dispatches[0]["tasks"]] == ["shift", "plus_one"]


def test_ring_allreduce_is_right_and_checks_clean():
    world, out, expected = ring.build()
    report = world.run()
    for r in range(world.size):
        np.testing.assert_array_equal(world.read(out, r), expected)
    assert report.device_time_us > 0
    world2, out2, expected2 = ring.build()
    check = world2.check(seeds=2)
    assert check.runs == 3
    assert check.is_clean, str(check)


def test_determinism_same_program_twice():
    def once():
        world, out, _ = ring.build()
        rep = world.run()
        outs = [world.read(out, r).tobytes() for r in range(world.size)]
        return (rep.device_time_ps, rep.end_ps, rep.dispatches, rep.traffic, rep.stats, outs)

    assert once() == once()

    def checked():
        world, _, _ = ring.build(broken="no-wait", chunk=8)
        return str(world.check(seeds=2))

    assert checked() == checked()
    a, b = readme_program()[2], readme_program()[2]
    assert (a.device_time_ps, a.dispatches, a.traffic) == (b.device_time_ps, b.dispatches, b.traffic)


def test_trace():
    world, out, _ = ring.build(chunk=16)
    world.trace = True
    rep = world.run()
    assert rep.traced
    trace = json.loads(rep.chrome_trace())
    assert trace["traceEvents"]
    world2, _, _ = ring.build(chunk=16)
    assert world2.run().chrome_trace() is None


def test_trace_file_timing_only_and_jitter(tmp_path):
    world, _, _ = ring.build(chunk=16)
    world.trace = True
    rep = world.run()
    rep.write_trace(tmp_path / "t.json")
    assert json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    with pytest.raises(ranksim.BadArgument, match="not traced"):
        ring.build(chunk=16)[0].run().write_trace(tmp_path / "u.json")

    def timed(seed):
        world, _, _ = ring.build(chunk=16)
        world.set_jitter(seed)
        return world.run().device_time_ps

    base = ring.build(chunk=16)[0].run().device_time_ps
    assert timed(None) == base
    assert timed(3) == timed(3) != base

    world = ranksim.Config.preset("a2a3").with_ranks(2).world()
    world.set_timing_only()
    dom = world.create_domain("d")
    w = world.alloc_window(dom, "w", "f32", [1, 1024])
    world.dispatch_all(dom, ranksim.Dispatch.kernel("k", 1, lambda core: core.store(core.load(w, [0, 0], [1, 1024]), w, [0, 0])))
    assert world.run().device_time_ps > 0


def test_after_orders_tasks():
    world = ranksim.Config.preset("a2a3").with_ranks(1).world()
    dom = world.create_domain("d")
    log = world.alloc_tensor("log", "i32", [1, 3])
    d = ranksim.Dispatch("order")
    a = d.add(ranksim.Task("a", 1, lambda core: core.compute(5000)))
    b = d.add(ranksim.Task("b", 1, lambda core: core.compute(100)))
    c = d.add(ranksim.Task("c", 1, lambda core: core.write_scalar(log, [0, 2], core.now())).after([a, b]))
    d.add(ranksim.Task("e", 1, lambda core: core.write_scalar(log, [0, 0], core.now())).after(c))
    world.dispatch(0, d)
    rep = world.run()
    tasks = {t["name"]: t for t in rep.dispatches[0]["tasks"]}
    assert tasks["c"]["start_ps"] >= max(tasks["a"]["end_ps"], tasks["b"]["end_ps"])
    assert tasks["e"]["start_ps"] >= tasks["c"]["end_ps"]
    with pytest.raises(TypeError):
        ranksim.Task("x", 1, lambda core: None).after("zero")


def test_dtypes_round_trip():
    world = ranksim.World()
    vals = np.array([[1.0, 1.00390625, -2.5, 65504.0]], dtype=np.float64)
    for dt, want in [
        ("f32", vals.astype(np.float32)),
        ("f16", vals.astype(np.float16)),
        ("bf16", np.array([[1.0, 1.0, -2.5, 65536.0]], dtype=np.float32)),  # bf16 keeps 8 bits
        ("i32", np.array([[1, 2, -3, 4]], dtype=np.int32)),
        ("i16", np.array([[1, 2, -3, 4]], dtype=np.int16)),
        ("i8", np.array([[1, 2, -3, 4]], dtype=np.int8)),
    ]:
        t = world.alloc_tensor(f"t_{dt}", dt, [1, 4])
        world.write(t, 3, want if dt.startswith("i") else vals)
        got = world.read(t, 3)
        assert got.dtype == (np.float32 if dt == "bf16" else want.dtype), dt
        np.testing.assert_array_equal(got, want)
        assert t.dtype == dt and t.shape == [1, 4] and t.numel == 4


def test_array_like_input_and_flat_shape():
    class Holder:
        def __array__(self, dtype=None, copy=None):
            return np.arange(8, dtype=np.float32)

    world = ranksim.World()
    t = world.alloc_tensor("t", "f32", [2, 4])
    world.write(t, 0, Holder())
    np.testing.assert_array_equal(world.read(t, 0), np.arange(8, dtype=np.float32).reshape(2, 4))
    world.write(t, 1, [[1, 2, 3, 4], [5, 6, 7, 8]])
    assert world.read(t, 1)[1, 3] == 8.0


def test_tile_math_and_cast():
    world = ranksim.World(ranksim.Config.preset("a2a3"))
    dom = world.create_domain("d", [0])
    src = world.alloc_tensor("src", "f32", [2, 4])
    dst = world.alloc_tensor("dst", "f16", [2, 4])
    sums = world.alloc_tensor("sums", "f32", [2, 1])
    world.write(src, 0, np.array([[1, -2, 3, -4], [0.5, 0.25, 8, 1]], dtype=np.float32))
    seen = {}

    def k(core):
        a = core.load(src, [0, 0], [2, 4])
        b = core.muls(core.max(a, core.muls(a, -1.0)), 2.0)  # 2 |a|
        c = core.min(core.mul(a, a), core.adds(b, 0.0))
        seen["shape"], seen["dtype"] = b.shape, b.dtype
        seen["c"] = c.tolist()
        core.store(core.cast(b, ranksim.dtype.f16), dst, [0, 0])
        core.store(core.row_sum(a), sums, [0, 0])

    d = ranksim.Dispatch("math")
    d.add(ranksim.Task("k", 1, k).input(src).output(dst).output(sums))
    world.dispatch(0, d)
    world.run()
    assert seen["shape"] == (2, 4) and seen["dtype"] == "f32"
    assert seen["c"] == [[1, 4, 6, 8], [0.25, 0.0625, 16, 1]]
    np.testing.assert_array_equal(world.read(dst, 0), [[2, 4, 6, 8], [1, 0.5, 16, 2]])
    np.testing.assert_array_equal(world.read(sums, 0), [[-2], [9.75]])


def test_put_get_fence_test_signal_read_scalar():
    world = ranksim.Config.preset("a2a3").with_ranks(2).world()
    assert world.size == 2
    dom = world.create_domain("d")
    src = world.alloc_window(dom, "src", "f32", [1, 64])
    dst = world.alloc_window(dom, "dst", "f32", [1, 64])
    back = world.alloc_window(dom, "back", "f32", [1, 64])
    sig = world.alloc_window(dom, "sig", "i32", [1, 1])
    res = world.alloc_tensor("res", "f32", [1, 2])
    for r in range(2):
        world.write(src, r, np.full(64, 10.0 * (r + 1), dtype=np.float32))

    def k(core):
        me = core.rank()
        peer = 1 - me
        early = core.test_signal(sig, [0, 0], 1)
        core.put(dst, peer, src, chunks=(1, 16))
        core.fence()
        core.notify(sig, peer, [0, 0], 1, "add")
        core.wait(sig, [0, 0], 1)
        core.get(back, peer, dst)  # the peer's dst holds my src
        core.write_scalar(res, [0, 0], core.read_scalar(dst, [0, 5]))
        core.write_scalar(res, [0, 1], 1.0 if early else 0.0)

    world.dispatch_all(dom, ranksim.Dispatch.kernel("pg", 1, k))
    world.run()
    for r in range(2):
        assert world.read(res, r)[0, 0] == 10.0 * (2 - r)
        assert world.read(res, r)[0, 1] == 0.0
        assert (world.read(back, r) == 10.0 * (r + 1)).all()


def test_same_program_in_rust_and_python_gives_the_same_run():
    from ranksim import _native

    rust, rust_out = _native._rust_readme_program()
    world, out, py = readme_program()
    assert (py.device_time_ps, py.end_ps) == (rust.device_time_ps, rust.end_ps)
    assert py.dispatches == rust.dispatches
    assert py.traffic == rust.traffic
    assert py.stats == rust.stats
    assert world.read(out, 0).ravel().tolist() == rust_out


def test_sdma_put_async_and_defer_wait():
    world = ranksim.Config.preset("a2a3").with_ranks(2).world()
    dom = world.create_domain("d")
    src = world.alloc_window(dom, "src", "f32", [4, 64])
    dst = world.alloc_window(dom, "dst", "f32", [4, 64])
    sig = world.alloc_window(dom, "sig", "i32", [1, 1])
    seen = {}
    for r in range(2):
        world.write(src, r, np.full((4, 64), r + 1.0, dtype=np.float32))

    def k(core):
        me = core.rank()
        h = core.put_async(dst, 1 - me, src)
        seen[me] = (h.bytes, core.test_async(h) in (True, False))
        core.wait_async(h)
        with pytest.raises(ranksim.BadArgument, match="already waited"):
            core.wait_async(h)
        core.notify(sig, 1 - me, [0, 0], 1, "add")
        core.defer_wait([(sig, [0, 0], 1)])

    world.dispatch_all(dom, ranksim.Dispatch.kernel("sdma", 1, k))
    world.run()
    assert seen == {0: (1024, True), 1: (1024, True)}
    for r in range(2):
        assert (world.read(dst, r) == 2.0 - r).all()


def test_sdma_session_options_dcci_and_waiting_through():
    # pto-isa's session options from Python: 4 descriptors of 256 B striped over 2 channels,
    # an earlier transfer closed by waiting the later one through, and dcci's cost.
    world = ranksim.Config.preset("a2a3").with_ranks(2).world()
    dom = world.create_domain("d")
    src = world.alloc_window(dom, "src", "f32", [4, 64])
    dst = world.alloc_window(dom, "dst", "f32", [4, 64])
    for r in range(2):
        world.write(src, r, np.full((4, 64), r + 1.0, dtype=np.float32))
    seen = {}

    def k(core):
        me = core.rank()
        first = core.put_async(dst, 1 - me, src, block_bytes=256, queues=2)
        second = core.put_async(dst, 1 - me, src, queues=2)
        seen[me] = (first.queues, second.channel)
        core.wait_async_through(second)
        t = core.now()
        core.dcci()
        seen[me] += (core.now() - t,)

    world.dispatch_all(dom, ranksim.Dispatch.kernel("sdma", 1, k))
    world.run()
    assert seen == {0: (2, 0, 50_000), 1: (2, 0, 50_000)}
    for r in range(2):
        assert (world.read(dst, r) == 2.0 - r).all()
    # A queue count the chip cannot give fails the run, saying what is allowed.
    bad = ranksim.Config.preset("a2a3").with_ranks(2).world()
    dom = bad.create_domain("d")
    win = bad.alloc_window(dom, "win", "f32", [4, 64])
    bad.dispatch_all(dom, ranksim.Dispatch.kernel("sdma", 1, lambda c: c.put_async(win, 1 - c.rank(), win, queues=0)))
    with pytest.raises(ranksim.BadArgument, match=r"queues\(0\): a transfer is striped over 1..=48 channels"):
        bad.run()


def test_defer_wait_never_true_is_a_deadlock():
    world = ranksim.Config.preset("a2a3").with_ranks(2).world()
    dom = world.create_domain("d")
    sig = world.alloc_window(dom, "sig", "i32", [1, 1])
    world.dispatch_all(dom, ranksim.Dispatch.kernel("k", 1, lambda core: core.defer_wait([(sig, [0, 0], 1)])))
    with pytest.raises(ranksim.DeadlockError, match="defer_wait"):
        world.run()
