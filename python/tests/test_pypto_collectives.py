"""ranksim.pypto: comm domains from the dispatches that use each buffer (two overlapping groups),
device tensor views, and the collectives in both places PyPTO allows them (InCore composites
inside a kernel, HOST builtins in the orchestrator)."""

import numpy as np
import pytest

import ranksim
import ranksim.pypto.language as pl
import ranksim.pypto.language.distributed as pld
from ranksim.pypto.ir.distributed_compiled_program import DistributedConfig
from ranksim.pypto.runtime import RunConfig

S = 64
NR = pl.dynamic("NR")


def config(n):
    return RunConfig(platform="a2a3sim", distributed_config=DistributedConfig(device_ids=list(range(n))))


# ---- two groups over overlapping ranks: {0, 1} and {1, 2} -----------------------------------


@pl.jit.incore
def swap(x: pl.Tensor[[1, S], pl.FP32], y: pl.Out[pl.Tensor[[1, S], pl.FP32]], data: pld.DistributedTensor[[1, S], pl.FP32], sig: pld.DistributedTensor[[2, 1], pl.INT32], me_out: pl.Out[pl.Tensor[[1, 2], pl.INT32]]):
    ctx = pld.get_comm_ctx(data)
    me, n = pld.rank(ctx), pld.nranks(ctx)
    data = pl.store(pl.load(x, [0, 0], [1, S]), [0, 0], data)
    pld.tensor.barrier(sig)
    y = pl.store(pld.tile.remote_load(data, peer=1 - me, offsets=[0, 0], shape=[1, S]), [0, 0], y)
    pl.write(me_out, [0, 0], me)
    pl.write(me_out, [0, 1], n)
    return y


@pl.jit.host
def two_groups(x: pl.Tensor[[3, 1, S], pl.FP32], ya: pl.Out[pl.Tensor[[3, 1, S], pl.FP32]], yb: pl.Out[pl.Tensor[[3, 1, S], pl.FP32]], ra: pl.Out[pl.Tensor[[3, 1, 2], pl.INT32]], rb: pl.Out[pl.Tensor[[3, 1, 2], pl.INT32]]):
    a_data = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
    a_sig = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
    b_data = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
    b_sig = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
    for r in [0, 1]:
        swap(x[r], ya[r], pld.window(a_data, [1, S], dtype=pl.FP32), pld.window(a_sig, [2, 1], dtype=pl.INT32), ra[r], device=r)
    for r in [1, 2]:
        swap(x[r], yb[r], pld.window(b_data, [1, S], dtype=pl.FP32), pld.window(b_sig, [2, 1], dtype=pl.INT32), rb[r], device=r)


def test_overlapping_groups_get_their_own_domains_and_dense_ranks():
    x = np.arange(3 * S, dtype=np.float32).reshape(3, 1, S)
    ya, yb = np.zeros_like(x), np.zeros_like(x)
    ra, rb = np.full((3, 1, 2), -1, np.int32), np.full((3, 1, 2), -1, np.int32)
    c = two_groups.compile(x, ya, yb, ra, rb, config=config(3))
    rep = c.run(x, ya, yb, ra, rb)
    np.testing.assert_array_equal(ya[:2], x[[1, 0]])
    np.testing.assert_array_equal(yb[1:], x[[2, 1]])
    assert not ya[2].any() and not yb[0].any(), "untouched slots stay zero"
    assert ra[:2, 0].tolist() == [[0, 2], [1, 2]]
    assert rb[1:, 0].tolist() == [[0, 2], [1, 2]], "rank 2 is dense rank 1 of the second group"
    assert [d["chip"] for d in rep.dispatches if d["chip"] == 1] == [1, 1]


# ---- device tensor views --------------------------------------------------------------------


@pl.jit.incore
def row_copy(x: pl.Tensor[[S], pl.FP32], y: pl.Out[pl.Tensor[[1, S], pl.FP32]]):
    return pl.store(pl.load(x, [0], [S]), [0, 0], y)


@pl.jit
def second_row(x: pl.Tensor[[2, S], pl.FP32], y: pl.Out[pl.Tensor[[1, S], pl.FP32]]):
    return row_copy(x[1], y)


@pl.jit.host
def view_host(x: pl.Tensor[[2, 2, S], pl.FP32], y: pl.Out[pl.Tensor[[2, 1, S], pl.FP32]]):
    for r in pl.range(pld.world_size()):
        second_row(x[r], y[r], device=r)


def test_device_tensor_index_drops_a_dimension():
    x = np.arange(2 * 2 * S, dtype=np.float32).reshape(2, 2, S)
    y = np.zeros((2, 1, S), np.float32)
    view_host.compile(x, y, config=config(2)).run(x, y)
    np.testing.assert_array_equal(y[:, 0], x[:, 1])


# ---- InCore composites ----------------------------------------------------------------------


@pl.jit.incore
def incore_colls(x: pl.Tensor[[1, S], pl.FP32], y: pl.Out[pl.Tensor[[4, S], pl.FP32]], z: pl.Out[pl.Tensor[[4, S], pl.FP32]], stage: pld.DistributedTensor[[1, S], pl.FP32], gathered: pld.DistributedTensor[[4, S], pl.FP32], bc: pld.DistributedTensor[[4, S], pl.FP32], sig: pld.DistributedTensor[[4, 1], pl.INT32]):
    stage = pl.store(pl.load(x, [0, 0], [1, S]), [0, 0], stage)
    gathered = pld.tensor.allgather(stage, gathered, sig)
    y = pl.store(pl.load(gathered, [0, 0], [4, S]), [0, 0], y)
    bc = pl.store(pl.load(gathered, [0, 0], [4, S]), [0, 0], bc)
    bc = pld.tensor.reduce_scatter(bc, sig)  # row me: the sum over ranks of their row me
    pld.tensor.broadcast(bc, sig, root=2)
    return pl.store(pl.load(bc, [0, 0], [4, S]), [0, 0], z)


@pl.jit.host
def incore_host(x: pl.Tensor[[4, 1, S], pl.FP32], y: pl.Out[pl.Tensor[[4, 4, S], pl.FP32]], z: pl.Out[pl.Tensor[[4, 4, S], pl.FP32]]):
    stage = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
    gathered = pld.alloc_window_buffer([4, S], dtype=pl.FP32)
    bc = pld.alloc_window_buffer([4, S], dtype=pl.FP32)
    sig = pld.alloc_window_buffer([4, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        incore_colls(
            x[r], y[r], z[r], pld.window(stage, [1, S], dtype=pl.FP32), pld.window(gathered, [4, S], dtype=pl.FP32),
            pld.window(bc, [4, S], dtype=pl.FP32), pld.window(sig, [4, 1], dtype=pl.INT32), device=r,
        )


def test_incore_allgather_reduce_scatter_broadcast_on_one_signal():
    x = np.arange(4 * S, dtype=np.float32).reshape(4, 1, S)
    y, z = np.zeros((4, 4, S), np.float32), np.zeros((4, 4, S), np.float32)
    incore_host.compile(x, y, z, config=config(4)).run(x, y, z)
    for r in range(4):
        np.testing.assert_array_equal(y[r], x[:, 0])
    # after reduce_scatter rank 2's row 2 is 4 * x[2]; the broadcast gives every rank rank 2's bc
    np.testing.assert_array_equal(z[0, 2], 4 * x[2, 0])
    for r in range(4):
        np.testing.assert_array_equal(z[r], z[0])


# ---- HOST builtins --------------------------------------------------------------------------


@pl.jit.incore
def put_rows(x: pl.Tensor[[4, S], pl.FP32], data: pld.DistributedTensor[[4, S], pl.FP32]):
    pl.store(pl.load(x, [0, 0], [4, S]), [0, 0], data)


@pl.jit.incore
def get_rows(y: pl.Out[pl.Tensor[[4, S], pl.FP32]], data: pld.DistributedTensor[[4, S], pl.FP32]):
    return pl.store(pl.load(data, [0, 0], [4, S]), [0, 0], y)


def host_program(kind):
    @pl.jit.host
    def host(x: pl.Tensor[[4, 4, S], pl.FP32], y: pl.Out[pl.Tensor[[4, 4, S], pl.FP32]]):
        data_buf = pld.alloc_window_buffer([4, S], dtype=pl.FP32)
        out_buf = pld.alloc_window_buffer([4, S], dtype=pl.FP32)
        sig_buf = pld.alloc_window_buffer([4, 1], dtype=pl.INT32)
        data = [pld.window(data_buf, [4, S], dtype=pl.FP32) for _ in range(4)]
        out = [pld.window(out_buf, [4, S], dtype=pl.FP32) for _ in range(4)]
        sig = pld.window(sig_buf, [4, 1], dtype=pl.INT32)
        for r in pl.range(4):
            put_rows(x[r], data[r], device=r)
        if kind == "broadcast":
            pld.tensor.broadcast(data[0], sig, root=3)
        elif kind == "reduce_scatter":
            pld.tensor.reduce_scatter(data[0], sig)
        elif kind == "all_to_all":
            pld.tensor.all_to_all(data[0], out[0], sig)
        for r in pl.range(4):
            get_rows(y[r], out[r] if kind == "all_to_all" else data[r], device=r)

    return host


@pytest.mark.parametrize("kind", ["broadcast", "reduce_scatter", "all_to_all"])
def test_host_builtins(kind):
    x = np.random.default_rng(5).integers(-50, 50, (4, 4, S)).astype(np.float32)
    y = np.zeros_like(x)
    rep = host_program(kind).compile(x, y, config=config(4)).run(x, y)
    for r in range(4):
        if kind == "broadcast":
            np.testing.assert_array_equal(y[r], x[3])
        elif kind == "reduce_scatter":
            np.testing.assert_array_equal(y[r, r], x[:, r].sum(axis=0))
        else:
            np.testing.assert_array_equal(y[r], x[:, r])
    assert any(d["name"].startswith(f"builtin.tensor.{kind}") for d in rep.dispatches)


def test_a_host_collective_error_names_its_line():
    @pl.jit.host
    def host(x: pl.Tensor[[4, 4, S], pl.FP32]):
        data_buf = pld.alloc_window_buffer([4, S], dtype=pl.FP32)
        sig_buf = pld.alloc_window_buffer([4, 2], dtype=pl.INT32)
        views = [pld.window(data_buf, [4, S], dtype=pl.FP32) for _ in range(4)]
        for r in pl.range(4):
            put_rows(x[r], views[r], device=r)
        pld.tensor.reduce_scatter(views[0], pld.window(sig_buf, [4, 2], dtype=pl.INT32))  # BAD SIGNAL

    import inspect

    src, first = inspect.getsourcelines(host.fn)
    line = first + next(k for k, t in enumerate(src) if "# BAD SIGNAL" in t)
    x = np.zeros((4, 4, S), np.float32)
    with pytest.raises(ranksim.BadArgument, match=rf"it must be INT32 \[4, 1\] \(pld.tensor.reduce_scatter at .*test_pypto_collectives.py:{line}\)"):
        host.compile(x, config=config(4))(x)


def test_negative_peer_names_the_fix():
    @pl.jit.incore
    def left(x: pl.Tensor[[1, S], pl.FP32], data: pld.DistributedTensor[[1, S], pl.FP32]):
        me = pld.rank(pld.get_comm_ctx(data))
        pld.tile.remote_load(data, peer=me - 1, offsets=[0, 0], shape=[1, S])

    @pl.jit.host
    def host(x: pl.Tensor[[2, 1, S], pl.FP32]):
        buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            left(x[r], pld.window(buf, [1, S], dtype=pl.FP32), device=r)

    x = np.ones((2, 1, S), np.float32)
    with pytest.raises(ranksim.KernelError, match=r"peer -1 is negative.*\(me - 1 \+ n\) % n"):
        host.compile(x, config=config(2))(x)
