"""A ring allreduce written by hand in Python, and broken variants of it (shared by tests and
the benchmark)."""

import numpy as np

import ranksim


def build(cfg=None, chunk=64, broken=None):
    """A world with one ring allreduce queued on every rank.

    Each rank's `data` row (n chunks of `chunk` f32) is reduced around the ring: n-1
    reduce-scatter steps into per-step `recv` slots, then n-1 allgather steps into `out`.
    `broken`: None, "deadlock" (rank 0 waits for a notify nobody sends) or "no-wait" (the
    reduce-scatter reads its slot without waiting for it).
    Returns (world, out tensor, expected row).
    """
    world = (cfg or ranksim.Config.preset("a2a3")).world()
    n = world.size
    dom = world.create_domain("ring")
    data = world.alloc_window(dom, "data", "f32", [1, n * chunk])
    recv = world.alloc_window(dom, "recv", "f32", [n - 1, chunk])
    out = world.alloc_window(dom, "out", "f32", [1, n * chunk])
    sig = world.alloc_window(dom, "sig", "i32", [2 * (n - 1), 1])
    for r in range(n):
        world.write(data, r, (r * 1000 + np.arange(n * chunk)).astype(np.float32))

    def kernel(core):
        me, n = core.rank(), core.nranks()
        nxt = (me + 1) % n
        for s in range(n - 1):  # reduce-scatter
            send = (me - s) % n
            t = core.load(data, [0, send * chunk], [1, chunk])
            core.remote_store(t, recv, nxt, [s, 0])
            core.notify(sig, nxt, [s, 0], 1, "add")
            need = 2 if (broken == "deadlock" and me == 0) else 1
            if broken != "no-wait":
                core.wait(sig, [s, 0], need, "ge")  # the deadlock's line
            got = core.load(recv, [s, 0], [1, chunk])
            k = (me - s - 1) % n
            mine = core.load(data, [0, k * chunk], [1, chunk])
            core.store(core.add(got, mine), data, [0, k * chunk])
        own = (me + 1) % n  # this rank now holds the full sum of chunk `own`
        t = core.load(data, [0, own * chunk], [1, chunk])
        core.store(t, out, [0, own * chunk])
        for s in range(n - 1):  # allgather
            k = (me + 1 - s) % n
            t = core.load(out, [0, k * chunk], [1, chunk])
            core.remote_store(t, out, nxt, [0, k * chunk])
            core.notify(sig, nxt, [n - 1 + s, 0], 1, "add")
            core.wait(sig, [n - 1 + s, 0], 1, "ge")

    d = ranksim.Dispatch("ring_allreduce")
    d.add(ranksim.Task("ring", 1, kernel).inout(data).output_existing(out))
    world.dispatch_all(dom, d)
    expected = sum(r * 1000 for r in range(n)) + n * np.arange(n * chunk, dtype=np.float64)
    return world, out, expected.reshape(1, -1)
