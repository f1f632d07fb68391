"""What one Python kernel operation costs in host time.

    python3 python/bench/op_cost.py [N]

Times N operations of each kind inside one kernel on one rank (so no other kernel competes
for the GIL) and prints the host microseconds per operation: local tile math (`adds`, which
holds the GIL), a GM `load` + `store` pair (each releases the GIL and talks to the
scheduler), and `notify` + `wait` on the core's own cell; then two ranks playing ping-pong
(every wait hands the turn to the other kernel's thread) and the whole 8-rank ring allreduce
of the tests (python/tests/ring.py), per operation issued, run setup included. Last, the
same local and memory operations written in PyPTO's language (`ranksim.pypto`: `pl.add`,
`pl.load` + `pl.store`, `pld.system.notify` + `wait` in a `@pl.jit.incore` kernel), whose
layer adds a Python call per operation.
"""

import os
import sys
import time

import ranksim

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
import ring  # noqa: E402


def per_op(n, body):
    world = ranksim.Config.preset("a2a3").with_ranks(1).world()
    dom = world.create_domain("d")
    t = world.alloc_tensor("t", "f32", [1, 64])
    sig = world.alloc_window(dom, "sig", "i32", [1, 1])
    spent = {}

    def kernel(core):
        tile = core.load(t, [0, 0], [1, 64])
        start = time.perf_counter()
        body(core, tile, t, sig, n)
        spent["s"] = time.perf_counter() - start

    world.dispatch_all(dom, ranksim.Dispatch.kernel("bench", 1, kernel))
    world.run()
    return spent["s"] / n * 1e6


def adds(core, tile, t, sig, n):
    for _ in range(n):
        tile = core.adds(tile, 1.0)


def load_store(core, tile, t, sig, n):
    for _ in range(n // 2):
        core.store(core.load(t, [0, 0], [1, 64]), t, [0, 0])


def notify_wait(core, tile, t, sig, n):
    for i in range(n // 2):
        core.notify(sig, 0, [0, 0], 1, "add")
        core.wait(sig, [0, 0], i + 1)


def empty(core, tile, t, sig, n):
    for _ in range(n):
        pass


def ping_pong(rounds):
    """Two ranks take turns: each round, rank 0 notifies rank 1 and waits for its answer."""
    world = ranksim.Config.preset("a2a3").with_ranks(2).world()
    dom = world.create_domain("d")
    sig = world.alloc_window(dom, "sig", "i32", [1, 1])

    def kernel(core):
        me = core.rank()
        for i in range(rounds):
            if me == 0:
                core.notify(sig, 1, [0, 0], 1, "add")
                core.wait(sig, [0, 0], i + 1)
            else:
                core.wait(sig, [0, 0], i + 1)
                core.notify(sig, 0, [0, 0], 1, "add")

    world.dispatch_all(dom, ranksim.Dispatch.kernel("pingpong", 1, kernel))
    start = time.perf_counter()
    world.run()
    return (time.perf_counter() - start) / (4 * rounds) * 1e6


def pypto_per_op(n):
    """Host us per operation of a ranksim.pypto InCore kernel on one rank, by kind."""
    import ranksim.pypto.language as pl
    import ranksim.pypto.language.distributed as pld
    from ranksim.pypto.ir.distributed_compiled_program import DistributedConfig
    from ranksim.pypto.runtime import RunConfig

    spent = {}

    @pl.jit.incore
    def kernel(x: pl.Tensor[[1, 64], pl.FP32], sig: pld.DistributedTensor[[1, 1], pl.INT32]):
        tile = pl.load(x, [0, 0], [1, 64])
        t0 = time.perf_counter()
        for _ in range(n):
            pass
        t1 = time.perf_counter()
        for _ in range(n):
            tile = pl.add(tile, 1.0)
        t2 = time.perf_counter()
        for _ in range(n // 2):
            pl.store(pl.load(x, [0, 0], [1, 64]), [0, 0], x)
        t3 = time.perf_counter()
        for i in range(n // 2):
            pld.system.notify(sig, peer=0, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
            pld.system.wait(sig, offsets=[0, 0], expected=i + 1, cmp=pld.WaitCmp.Ge)
        t4 = time.perf_counter()
        spent.update(loop=t1 - t0, add=t2 - t1, load_store=t3 - t2, notify_wait=t4 - t3)

    @pl.jit.host
    def host(x: pl.Tensor[[1, 1, 64], pl.FP32]):
        buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
        kernel(x[0], pld.window(buf, [1, 1], dtype=pl.INT32), device=0)

    import numpy as np

    x = np.zeros((1, 1, 64), np.float32)
    cfg = RunConfig(platform="a2a3sim", distributed_config=DistributedConfig(device_ids=[0]))
    host.compile(x, config=cfg).run(x)
    return {k: v / n * 1e6 for k, v in spent.items()}


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    loop = per_op(n, empty)
    print(f"{n} operations per kind, host us per operation (the bare Python loop: {loop:.3f} us)")
    for name, body in [("adds (local tile math)", adds), ("load + store", load_store), ("notify + wait", notify_wait)]:
        print(f"  {name:24s} {per_op(n, body):7.3f} us")
    rounds = n // 4
    rust = ranksim._native._rust_ping_pong(rounds) / (4 * rounds) * 1e6
    print(f"  2-rank ping-pong          {ping_pong(rounds):7.3f} us per operation (notify + wait, threads handing over;"
          f" the same kernel in Rust: {rust:.3f} us)")
    chunk = 64
    world, _, _ = ring.build(chunk=chunk)
    start = time.perf_counter()
    rep = world.run()
    wall = time.perf_counter() - start
    # Per rank: rank, nranks; 7 reduce-scatter steps of 8 ops; load + store of its own chunk;
    # 7 allgather steps of 4 ops.
    ops = 8 * (2 + 7 * 8 + 2 + 7 * 4)
    print(f"  8-rank ring allreduce     {wall * 1e6 / ops:7.3f} us per operation ({ops} operations, {wall * 1e3:.1f} ms; "
          f"simulated {rep.device_time_us:.2f} us, {rep.stats['events']} engine events)")
    p = pypto_per_op(n)
    print(f"ranksim.pypto (PyPTO's language), host us per operation (the bare loop: {p['loop']:.3f} us)")
    print(f"  pl.add (tile + scalar)    {p['add']:7.3f} us")
    print(f"  pl.load + pl.store        {p['load_store']:7.3f} us")
    print(f"  pld notify + wait         {p['notify_wait']:7.3f} us")


if __name__ == "__main__":
    main()
