"""Your collective from Python, measured as the Rust `custom::Collective` is: point, sweep,
bench and check build fresh worlds and call the object's methods."""

import numpy as np
import pytest

import ranksim


class RingAllReduce:
    """A ring allreduce of f32 rows: reduce-scatter into per-step slots, then allgather into
    `out`. Signal cells count calls, so repeated calls on the same buffers need no clearing."""

    name = "py_ring_allreduce"
    dtype = "f32"

    def __init__(self, broken=None):
        self.broken = broken

    def bus_factor(self, ranks):
        return 2 * (ranks - 1) / ranks

    def count(self, size_bytes, ranks):  # whole chunks per rank
        return size_bytes // 4 // ranks * ranks

    def redop(self):
        return "sum"

    def setup(self, world, dom, count):
        n = dom.size
        c = count // n
        return {
            "dom": dom,
            "n": n,
            "c": c,
            "data": world.alloc_window(dom, "data", "f32", [1, count]),
            "recv": world.alloc_window(dom, "recv", "f32", [max(n - 1, 1), c]),
            "out": world.alloc_window(dom, "out", "f32", [1, count]),
            "sig": world.alloc_window(dom, "sig", "i32", [2 * max(n - 1, 1), 1]),
            "calls": 0,
        }

    def stage(self, world, b, count):
        for r in range(b["n"]):
            world.write(b["data"], r, ((r + 1) * 100 + np.arange(count) % 100).astype(np.float32))

    def call(self, world, b):
        b["calls"] += 1
        data, recv, out, sig, c, k = b["data"], b["recv"], b["out"], b["sig"], b["c"], b["calls"]
        broken = self.broken
        # Each call reduces the data as staged: the reduce-scatter works on a copy in `out`.

        def kernel(core):
            me, n = core.rank(), core.nranks()
            nxt = (me + 1) % n
            for i in range(n):
                core.store(core.load(data, [0, i * c], [1, c]), out, [0, i * c])
            for s in range(n - 1):
                t = core.load(out, [0, ((me - s) % n) * c], [1, c])
                core.remote_store(t, recv, nxt, [s, 0])
                core.notify(sig, nxt, [s, 0], 1, "add")
                if broken != "no-wait":
                    core.wait(sig, [s, 0], k)
                j = ((me - s - 1) % n) * c
                core.store(core.add(core.load(recv, [s, 0], [1, c]), core.load(out, [0, j], [1, c])), out, [0, j])
            for s in range(n - 1):
                j = ((me + 1 - s) % n) * c
                core.remote_store(core.load(out, [0, j], [1, c]), out, nxt, [0, j])
                core.notify(sig, nxt, [n - 1 + s, 0], 1, "add")
                core.wait(sig, [n - 1 + s, 0], k + (1 if broken == "deadlock" else 0))

        world.dispatch_all(b["dom"], ranksim.Dispatch.kernel("py_ring", 1, kernel))

    def wrong(self, world, b, count):
        n = b["n"]
        golden = sum((r + 1) * 100 for r in range(n)) + n * (np.arange(count) % 100)
        return [(r, world.read(b["out"], r), golden) for r in range(n)]


CFG = ranksim.Config.preset("a2a3")


def test_point_times_and_checks_every_element():
    row = ranksim.point(CFG, RingAllReduce(), 64 << 10)
    assert row["size"] == 64 << 10 and row["count"] == 16384 and row["type"] == "float"
    assert row["redop"] == "sum" and row["nwrong"] == 0
    assert row["time_us"] > 0 and row["busbw_gbps"] == pytest.approx(row["algbw_gbps"] * 2 * 7 / 8)
    # Deterministic: the same row again.
    assert ranksim.point(CFG, RingAllReduce(), 64 << 10) == row
    # 4 ranks, 2 timed calls after a warmup (signal cells count calls).
    row4 = ranksim.point(CFG, RingAllReduce(), 64 << 10, ranks=4, iters=2, warmup=1)
    assert row4["nwrong"] == 0 and row4["time_us"] > 0


def test_sweep_rows_and_table():
    res = ranksim.sweep(CFG, RingAllReduce(), [8 << 10, 32 << 10, 128 << 10])
    assert not res["failed"]
    rows = res["rows"]
    assert [r["size"] for r in rows] == [8 << 10, 32 << 10, 128 << 10]
    assert all(r["nwrong"] == 0 for r in rows)
    assert rows[0]["time_us"] < rows[2]["time_us"]
    assert "# ranksim sweep: collective py_ring_allreduce ranks 8" in res["table"]


def test_bench_and_check():
    stats = ranksim.bench(CFG, RingAllReduce(), 16 << 10, iters=3, warmup=1)
    assert stats["rounds"] == 3 and stats["warmup"] == 1 and len(stats["device_wall_us"]) == 3
    assert 0 < stats["device_us_min"] <= stats["device_us_median"] <= stats["device_us_max"]
    assert stats["device_us_mean"] == pytest.approx(sum(stats["device_wall_us"]) / 3)
    assert stats["text"]
    report = ranksim.check(CFG, RingAllReduce(), 16 << 10, seeds=1)
    assert report.runs == 2 and report.is_clean, str(report)


def test_broken_collective_is_caught():
    report = ranksim.check(CFG, RingAllReduce(broken="no-wait"), 16 << 10, seeds=1)
    races = [f for f in report.findings if f.kind in ("data-race", "stale-read")]
    assert races
    locs = {s["location"] for f in races for s in f.sites}
    assert all(l and l.startswith(__file__ + ":") and l.endswith(" in kernel") for l in locs), locs
    res = ranksim.sweep(CFG, RingAllReduce(broken="deadlock"), [8 << 10])
    assert res["failed"] and res["rows"][0]["failed"].startswith("deadlock")
    with pytest.raises(ranksim.SimError, match="deadlock"):
        ranksim.point(CFG, RingAllReduce(broken="deadlock"), 8 << 10)


def test_bad_collectives():
    with pytest.raises(ranksim.BadArgument, match="needs a `setup` method"):
        ranksim.point(CFG, object(), 1024)

    class Raises(RingAllReduce):
        def setup(self, world, dom, count):
            raise RuntimeError("no buffers today")

    with pytest.raises(ranksim.SimError, match=r"py_ring_allreduce.setup raised RuntimeError: no buffers today"):
        ranksim.point(CFG, Raises(), 1024)

    class Writes(RingAllReduce):
        def wrong(self, world, b, count):
            world.write(b["data"], 0, np.zeros(count, dtype=np.float32))

    with pytest.raises(ranksim.SimError, match="read-only in wrong"):
        ranksim.point(CFG, Writes(), 1024)

    kept = []

    class Keeps(RingAllReduce):
        def stage(self, world, b, count):
            kept.append(world)

    ranksim.point(CFG, Keeps(), 1024)
    with pytest.raises(ranksim.BadArgument, match="lent to a collective's callback"):
        kept[0].alloc_tensor("x", "f32", [1])
    with pytest.raises(ranksim.BadArgument, match="9 ranks"):
        ranksim.point(CFG, RingAllReduce(), 1024, ranks=9)
