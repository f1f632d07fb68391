"""A ring allreduce written by hand in PyPTO's language (ranksim.pypto), and a broken variant:
the program docs/python.md walks through (swept, checked, traced in test_pypto_ring.py).

Every rank's row of n chunks is reduced around the ring: n-1 reduce-scatter steps push a
chunk into the next rank's `recv` slot for that step, then n-1 allgather steps forward the
reduced chunks through `out`. Signal row s counts step s's arrivals."""

import ranksim.pypto.language as pl
import ranksim.pypto.language.distributed as pld

COLS = pl.dynamic("COLS")  # n * chunk elements per rank
CHUNK = pl.dynamic("CHUNK")
STEPS = pl.dynamic("STEPS")  # n - 1
ROWS = pl.dynamic("ROWS")  # 2 (n - 1)
NR = pl.dynamic("NR")
ADD, GE = pld.NotifyOp.AtomicAdd, pld.WaitCmp.Ge


@pl.jit.incore
def ring_kernel(
    x: pl.Tensor[[1, COLS], pl.FP32],
    y: pl.Out[pl.Tensor[[1, COLS], pl.FP32]],
    data: pld.DistributedTensor[[1, COLS], pl.FP32],
    recv: pld.DistributedTensor[[STEPS, CHUNK], pl.FP32],
    out: pld.DistributedTensor[[1, COLS], pl.FP32],
    sig: pld.DistributedTensor[[ROWS, 1], pl.INT32],
    skip_wait: pl.Scalar[pl.INT32],
):
    ctx = pld.get_comm_ctx(data)
    me, n = pld.rank(ctx), pld.nranks(ctx)
    c = recv.shape[1]
    nxt = (me + 1) % n
    data = pl.store(pl.load(x, [0, 0], [1, n * c]), [0, 0], data)
    for s in pl.range(n - 1):  # reduce-scatter
        send = (me - s) % n
        pld.tile.remote_store(pl.load(data, [0, send * c], [1, c]), recv, peer=nxt, offsets=[s, 0])
        pld.system.notify(sig, peer=nxt, offsets=[s, 0], value=1, op=ADD)
        if not skip_wait:
            pld.system.wait(sig, offsets=[s, 0], expected=1, cmp=GE)
        got = pl.load(recv, [s, 0], [1, c])  # RS-READ
        k = (me - s - 1) % n
        pl.store(pl.add(got, pl.load(data, [0, k * c], [1, c])), [0, k * c], data)
    own = (me + 1) % n  # this rank now holds the full sum of chunk `own`
    pl.store(pl.load(data, [0, own * c], [1, c]), [0, own * c], out)
    for s in pl.range(n - 1):  # allgather
        k = (me + 1 - s) % n
        pld.tile.remote_store(pl.load(out, [0, k * c], [1, c]), out, peer=nxt, offsets=[0, k * c])
        pld.system.notify(sig, peer=nxt, offsets=[n - 1 + s, 0], value=1, op=ADD)
        pld.system.wait(sig, offsets=[n - 1 + s, 0], expected=1, cmp=GE)
    return pl.store(pl.load(out, [0, 0], [1, n * c]), [0, 0], y)


def ring_program(skip_wait=0):
    """The host orchestrator: windows sized from the arguments, one dispatch per rank."""

    @pl.jit.host
    def ring_allreduce(x: pl.Tensor[[NR, 1, COLS], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, COLS], pl.FP32]]):
        n = pld.world_size()
        cols = x.shape[2]
        data_buf = pld.alloc_window_buffer([1, cols], dtype=pl.FP32)
        recv_buf = pld.alloc_window_buffer([n - 1, cols // n], dtype=pl.FP32)
        out_buf = pld.alloc_window_buffer([1, cols], dtype=pl.FP32)
        sig_buf = pld.alloc_window_buffer([2 * (n - 1), 1], dtype=pl.INT32)
        for r in pl.range(n):
            ring_kernel(
                x[r], y[r],
                pld.window(data_buf, [1, cols], dtype=pl.FP32),
                pld.window(recv_buf, [n - 1, cols // n], dtype=pl.FP32),
                pld.window(out_buf, [1, cols], dtype=pl.FP32),
                pld.window(sig_buf, [2 * (n - 1), 1], dtype=pl.INT32),
                skip_wait,
                device=r,
            )

    return ring_allreduce
