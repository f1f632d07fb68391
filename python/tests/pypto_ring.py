"""A ring allreduce written by hand in PyPTO's language (ranksim.pypto), and a broken variant:
the program docs/python.md walks through (swept, checked, traced in test_pypto_ring.py).

Every rank's row of n chunks is reduced around the ring: n-1 reduce-scatter steps push a
chunk into the next rank's `recv` slot for that step, then n-1 allgather steps forward the
reduced chunks through `out`. Signal row s counts step s's arrivals."""

import numpy as np

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


def ring_class(skip_wait=0):
    """The same ring allreduce in PyPTO's class form."""

    @pl.program
    class RingAllReduce:
        @pl.function(type=pl.FunctionType.InCore)
        def ring(
            self,
            x: pl.Tensor[[1, COLS], pl.FP32],
            y: pl.Out[pl.Tensor[[1, COLS], pl.FP32]],
            data: pld.DistributedTensor[[1, COLS], pl.FP32],
            recv: pld.DistributedTensor[[STEPS, CHUNK], pl.FP32],
            out: pld.DistributedTensor[[1, COLS], pl.FP32],
            sig: pld.DistributedTensor[[ROWS, 1], pl.INT32],
        ):
            return ring_kernel.fn(x, y, data, recv, out, sig, skip_wait)

        @pl.function(type=pl.FunctionType.Orchestration)
        def chip(self, x, y: pl.Out[pl.Tensor[[1, COLS], pl.FP32]], data, recv, out, sig):
            return self.ring(x, y, data, recv, out, sig)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[NR, 1, COLS], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, COLS], pl.FP32]]):
            n = pld.world_size()
            cols = x.shape[2]
            data_buf = pld.alloc_window_buffer(cols * 4)
            recv_buf = pld.alloc_window_buffer(cols // n * (n - 1) * 4)
            out_buf = pld.alloc_window_buffer(cols * 4)
            sig_buf = pld.alloc_window_buffer(2 * (n - 1) * 4)
            for r in pl.range(n):
                self.chip(
                    x[r], y[r],
                    pld.window(data_buf, [1, cols], dtype=pl.FP32),
                    pld.window(recv_buf, [n - 1, cols // n], dtype=pl.FP32),
                    pld.window(out_buf, [1, cols], dtype=pl.FP32),
                    pld.window(sig_buf, [2 * (n - 1), 1], dtype=pl.INT32),
                    device=r,
                )

    return RingAllReduce


TILE = 4096  # elements a put stages through UB at a time (16 KiB of f32)
SIGS = pl.dynamic("SIGS")  # 2n - 1 signal rows


def ring_chunked(skip_wait=False, bug=None):
    """A ring allreduce for any size in PyPTO's class form: each step is one
    ``pld.tensor.put`` of a whole chunk, staged through UB TILE elements at a time; the
    reduce-scatter puts add into the next rank's copy (``atomic=Add``), the allgather puts
    overwrite. Signal row 0 says a rank's copy is staged, rows 1..n-1 the reduce-scatter
    steps, rows n..2n-2 the allgather steps. `skip_wait` drops the reduce-scatter waits (a
    race the checker finds); `bug="deadlock"` waits for two arrivals of the last allgather
    step (one comes), `bug="wrong"` forwards the wrong chunk in the allgather."""

    @pl.program
    class RingChunked:
        @pl.function(type=pl.FunctionType.InCore)
        def ring(
            self,
            x: pl.Tensor[[1, COLS], pl.FP32],
            y: pl.Out[pl.Tensor[[1, COLS], pl.FP32]],
            data: pld.DistributedTensor[[1, COLS], pl.FP32],
            sig: pld.DistributedTensor[[SIGS, 1], pl.INT32],
        ):
            ctx = pld.get_comm_ctx(data)
            me, n = pld.rank(ctx), pld.nranks(ctx)
            c = x.shape[1] // n
            cols = min(TILE, c)
            nxt, prv = (me + 1) % n, (me - 1) % n
            pld.tensor.put(data, peer=me, src=x, chunk_cols=cols)  # stage our own copy
            pld.system.notify(sig, peer=prv, offsets=[0, 0], value=1, op=ADD)
            pld.system.wait(sig, offsets=[0, 0], expected=1, cmp=GE)  # the next rank's copy is staged
            for s in pl.range(n - 1):  # reduce-scatter: add our chunk into the next rank's
                if s > 0 and not skip_wait:
                    pld.system.wait(sig, offsets=[s, 0], expected=1, cmp=GE)
                k = (me - s) % n
                pld.tensor.put(data, peer=nxt, src=data, dst_offsets=[0, k * c], src_offsets=[0, k * c], shape=[1, c], atomic=pld.AtomicType.Add, chunk_cols=cols)
                pld.system.notify(sig, peer=nxt, offsets=[1 + s, 0], value=1, op=ADD)
            pld.system.wait(sig, offsets=[n - 1, 0], expected=1, cmp=GE)
            for s in pl.range(n - 1):  # allgather: forward the reduced chunks
                if s > 0:
                    pld.system.wait(sig, offsets=[n - 1 + s, 0], expected=1, cmp=GE)
                k = (me + 1 - s) % n
                j = (k + 1) % n if bug == "wrong" and s == 0 else k
                pld.tensor.put(data, peer=nxt, src=data, dst_offsets=[0, k * c], src_offsets=[0, j * c], shape=[1, c], chunk_cols=cols)
                pld.system.notify(sig, peer=nxt, offsets=[n + s, 0], value=1, op=ADD)
            pld.system.wait(sig, offsets=[2 * n - 2, 0], expected=2 if bug == "deadlock" else 1, cmp=GE)
            pld.tensor.get(y, peer=me, src=data, chunk_cols=cols)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def chip(self, x, y: pl.Out[pl.Tensor[[1, COLS], pl.FP32]], data, sig):
            return self.ring(x, y, data, sig)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[NR, 1, COLS], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, COLS], pl.FP32]]):
            n = pld.world_size()
            cols = x.shape[2]
            data_buf = pld.alloc_window_buffer(cols * 4)
            sig_buf = pld.alloc_window_buffer((2 * n - 1) * 4)
            for r in pl.range(n):
                self.chip(x[r], y[r], pld.window(data_buf, [1, cols], dtype=pl.FP32), pld.window(sig_buf, [2 * n - 1, 1], dtype=pl.INT32), device=r)

    return RingChunked


def ring_args(count, n, timing_only=False):
    """Host arguments of one call for `count` elements per rank (a multiple of n); zeros, which
    take no memory until written, when the run keeps no values."""
    cols = max(n, count - count % n)
    if timing_only:
        return np.zeros((n, 1, cols), np.float32), np.zeros((n, 1, cols), np.float32)
    x = (np.arange(n * cols, dtype=np.float32) % 97).reshape(n, 1, cols)
    return x, np.zeros_like(x)


def ring_golden(x, y):
    return np.broadcast_to(x.sum(axis=0), x.shape)


def ring_collective(skip_wait=False, bug=None):
    """The chunked ring as a collective for ranksim.sweep / check and `python -m ranksim`."""
    from ranksim.pypto import Collective

    return Collective(ring_chunked(skip_wait, bug), args=ring_args, golden=ring_golden, bus_factor=lambda n: 2 * (n - 1) / n, name="pypto_ring", redop="sum")


def ring_race():
    return ring_collective(skip_wait=True)


def ring_deadlock():
    return ring_collective(bug="deadlock")


def ring_wrong():
    return ring_collective(bug="wrong")
