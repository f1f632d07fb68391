"""ranksim.pypto: PyPTO programs written for these tests, one per construct of PyPTO's
distributed examples 01-07 (rank identity, the three levels, windows, barriers, remote
load/store, put/get, a dynamic rank count), plus the HOST collectives. Each checks values."""

import numpy as np
import pytest

import ranksim
import ranksim.pypto.language as pl
import ranksim.pypto.language.distributed as pld
from ranksim.pypto.ir.distributed_compiled_program import DistributedConfig
from ranksim.pypto.runtime import RunConfig

R, C = 4, 16
S = 64
NR = pl.dynamic("NR")


def config(n, platform="a2a3sim"):
    return RunConfig(platform=platform, distributed_config=DistributedConfig(device_ids=list(range(n))))


def run(prog, *args, n=2, platform="a2a3sim"):
    compiled = prog.compile(*args, config=config(n, platform))
    return compiled.run(*args)


# ---- 01: rank identity, per-rank dispatch, scalar cast ------------------------------------


@pl.jit.incore
def shift_scale(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]], rank: pl.Scalar[pl.INT32]):
    t = pl.load(x, [0, 0], [R, C])
    r = pl.cast(rank, target_type=pl.FP32)
    t = pl.mul(pl.sub(t, r), 2.0)
    return pl.store(t, [0, 0], y)


@pl.jit
def shift_scale_orch(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]], rank: pl.Scalar[pl.INT32]):
    return shift_scale(x, y, rank)


@pl.jit.host
def shift_scale_host(x: pl.Tensor[[NR, R, C], pl.FP32], y: pl.Out[pl.Tensor[[NR, R, C], pl.FP32]]):
    for r in pl.range(pld.world_size()):
        shift_scale_orch(x[r], y[r], r, device=r)


@pytest.mark.parametrize("platform", ["a2a3", "a2a3sim", "a5", "a5sim"])
def test_rank_identity_per_rank_dispatch(platform):
    x = np.arange(3 * R * C, dtype=np.float32).reshape(3, R, C)
    y = np.zeros_like(x)
    report = run(shift_scale_host, x, y, n=3, platform=platform)
    np.testing.assert_array_equal(y, (x - np.arange(3, dtype=np.float32).reshape(3, 1, 1)) * 2)
    assert sorted(d["chip"] for d in report.dispatches) == [0, 1, 2]
    assert {d["name"] for d in report.dispatches} == {"shift_scale_orch"}
    assert report.device_time_us > 0


def test_platform_presets_differ_and_unknown_platform_is_refused():
    x = np.ones((2, R, C), np.float32)
    a2 = run(shift_scale_host, x, np.zeros_like(x), platform="a2a3sim")
    a5 = run(shift_scale_host, x, np.zeros_like(x), platform="a5sim")
    assert shift_scale_host.compile(x, x.copy(), config=config(2, "a5")).cfg.name == a5_name()
    assert a2.device_time_ps != a5.device_time_ps
    with pytest.raises(ValueError, match="a2a3, a2a3sim, a5sim, a5|expected one of"):
        RunConfig(platform="gpu")


def a5_name():
    return ranksim.Config.preset("a5").name


# ---- 02: three levels; two InCore calls chained through an intermediate ---------------------


@pl.jit.incore
def double(x: pl.Tensor[[R, C], pl.FP32], tmp: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    return pl.store(pl.add(pl.load(x, [0, 0], [R, C]), pl.load(x, [0, 0], [R, C])), [0, 0], tmp)


@pl.jit.incore
def plus_rank_rows(tmp: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]], rank: pl.Scalar[pl.INT32]):
    t = pl.load(tmp, [0, 0], [R, C])
    return pl.store(pl.add(t, pl.cast(rank, target_type=pl.FP32)), [0, 0], y)


@pl.jit
def two_step(x: pl.Tensor[[R, C], pl.FP32], tmp: pl.Out[pl.Tensor[[R, C], pl.FP32]], y: pl.Out[pl.Tensor[[R, C], pl.FP32]], rank: pl.Scalar[pl.INT32]):
    tmp = double(x, tmp)
    return plus_rank_rows(tmp, y, rank)


@pl.jit.host
def two_step_host(x: pl.Tensor[[2, R, C], pl.FP32], tmp: pl.Tensor[[2, R, C], pl.FP32], y: pl.Out[pl.Tensor[[2, R, C], pl.FP32]]):
    for r in pl.range(pld.world_size()):
        two_step(x[r], tmp[r], y[r], r, device=r)


def test_three_levels_tasks_ordered_by_their_tensors():
    x = np.random.default_rng(1).standard_normal((2, R, C)).astype(np.float32)
    tmp, y = np.zeros_like(x), np.zeros_like(x)
    report = run(two_step_host, x, tmp, y)
    np.testing.assert_allclose(y, 2 * x + np.array([0, 1], np.float32).reshape(2, 1, 1), rtol=1e-6)
    for d in report.dispatches:
        names = [t["name"] for t in d["tasks"]]
        assert names == ["double", "plus_rank_rows"]
        first, second = d["tasks"]
        assert second["start_ps"] >= first["end_ps"], "the reader of tmp starts after its writer ends"
    # `tmp` is an input of the host program: not written back.
    assert not tmp.any()


# ---- 03: windows: shape form and byte form, a second view dtype -----------------------------


@pl.jit.incore
def through_window(x: pl.Tensor[[1, S], pl.FP32], y: pl.Out[pl.Tensor[[1, S], pl.INT32]], data: pld.DistributedTensor[[1, S], pl.FP32], raw: pld.DistributedTensor[[1, S], pl.INT32]):
    data = pl.store(pl.load(x, [0, 0], [1, S]), [0, 0], data)
    back = pl.load(data, [0, 0], [1, S])
    raw = pl.store(pl.cast(back, target_type=pl.INT32), [0, 0], raw)
    return pl.store(pl.load(raw, [0, 0], [1, S]), [0, 0], y)


@pl.jit.host
def window_host(x: pl.Tensor[[2, 1, S], pl.FP32], y: pl.Out[pl.Tensor[[2, 1, S], pl.INT32]]):
    data_buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
    raw_buf = pld.alloc_window_buffer(S * 4)
    for r in pl.range(pld.world_size()):
        through_window(x[r], y[r], pld.window(data_buf, [1, S], dtype=pl.FP32), pld.window(raw_buf, [1, S], dtype=pl.INT32), device=r)


def test_window_buffers_shape_and_byte_forms():
    x = (np.arange(2 * S, dtype=np.float32) * 0.75).reshape(2, 1, S)
    y = np.zeros((2, 1, S), np.int32)
    run(window_host, x, y)
    np.testing.assert_array_equal(y, np.rint(x).astype(np.int32))


# ---- 04: hand-rolled barrier with Set notifies and scalar read/write; the builtin barrier ---


@pl.jit.incore
def tally(y: pl.Out[pl.Tensor[[4, 1], pl.INT32]], signal: pld.DistributedTensor[[4, 1], pl.INT32]):
    ctx = pld.get_comm_ctx(signal)
    me, n = pld.rank(ctx), pld.nranks(ctx)
    for peer in pl.range(n):
        if peer != me:
            pld.system.notify(signal, peer=peer, offsets=[me, 0], value=10 + me, op=pld.NotifyOp.Set)
    for src in pl.range(n):
        if src != me:
            pld.system.wait(signal, offsets=[src, 0], expected=10 + src, cmp=pld.WaitCmp.Eq)
    for i in pl.range(n):
        pl.write(y, [i, 0], pl.read(signal, [i, 0]))
    return y


@pl.jit.host
def tally_host(y: pl.Out[pl.Tensor[[4, 4, 1], pl.INT32]]):
    signal_buf = pld.alloc_window_buffer([4, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        tally(y[r], pld.window(signal_buf, [4, 1], dtype=pl.INT32), device=r)


def test_hand_rolled_barrier_leaves_every_peers_tag():
    y = np.full((4, 4, 1), -1, np.int32)
    run(tally_host, y, n=4)
    want = np.array([[10 + i if i != r else 0 for i in range(4)] for r in range(4)], np.int32).reshape(4, 4, 1)
    np.testing.assert_array_equal(y, want)


@pl.jit.incore
def pull_previous(x: pl.Tensor[[1, S], pl.FP32], y: pl.Out[pl.Tensor[[1, S], pl.FP32]], data: pld.DistributedTensor[[1, S], pl.FP32], signal: pld.DistributedTensor[[4, 1], pl.INT32]):
    ctx = pld.get_comm_ctx(data)
    me, n = pld.rank(ctx), pld.nranks(ctx)
    data = pl.store(pl.load(x, [0, 0], [1, S]), [0, 0], data)
    signal = pld.tensor.barrier(signal)
    got = pld.tile.remote_load(data, peer=(me + n - 1) % n, offsets=[0, 0], shape=[1, S])
    y = pl.store(got, [0, 0], y)
    for i in pl.range(n):
        pl.write(y, [0, i], pl.read(signal, [i, 0]))  # the builtin leaves no credit behind
    return y


@pl.jit.host
def pull_previous_host(x: pl.Tensor[[4, 1, S], pl.FP32], y: pl.Out[pl.Tensor[[4, 1, S], pl.FP32]]):
    data_buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([4, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        pull_previous(x[r], y[r], pld.window(data_buf, [1, S], dtype=pl.FP32), pld.window(signal_buf, [4, 1], dtype=pl.INT32), device=r)


def test_builtin_barrier_orders_a_remote_load_and_clears_its_signal():
    x = np.arange(4 * S, dtype=np.float32).reshape(4, 1, S) + 1
    y = np.zeros_like(x)
    run(pull_previous_host, x, y, n=4)
    want = np.stack([x[(r - 1) % 4] for r in range(4)])
    want[:, 0, :4] = 0
    np.testing.assert_array_equal(y, want)


# ---- 05: remote_store, atomic add into one rank ---------------------------------------------


@pl.jit.incore
def gather_sum(x: pl.Tensor[[1, S], pl.FP32], y: pl.Out[pl.Tensor[[1, S], pl.FP32]], acc: pld.DistributedTensor[[1, S], pl.FP32], signal: pld.DistributedTensor[[4, 1], pl.INT32]):
    ctx = pld.get_comm_ctx(acc)
    me, n = pld.rank(ctx), pld.nranks(ctx)
    pld.tile.remote_store(pl.load(x, [0, 0], [1, S]), acc, peer=0, offsets=[0, 0], atomic=pld.AtomicType.Add)
    pld.system.fence()
    pld.system.notify(signal, peer=0, offsets=[me, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    if me == 0:
        for src in pl.range(n):
            pld.system.wait(signal, offsets=[src, 0], expected=1, cmp=pld.WaitCmp.Ge)
        y = pl.store(pl.load(acc, [0, 0], [1, S]), [0, 0], y)
    return y


@pl.jit.host
def gather_sum_host(x: pl.Tensor[[NR, 1, S], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, S], pl.FP32]]):
    acc_buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([4, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        gather_sum(x[r], y[r], pld.window(acc_buf, [1, S], dtype=pl.FP32), pld.window(signal_buf, [4, 1], dtype=pl.INT32), device=r)


def test_remote_store_atomic_add_accumulates_on_rank_0():
    x = np.arange(3 * S, dtype=np.float32).reshape(3, 1, S)
    y = np.zeros_like(x)
    run(gather_sum_host, x, y, n=3)
    np.testing.assert_array_equal(y[0], x.sum(axis=0))
    assert not y[1:].any()


# ---- 06: put / get with sub-regions, chunks and the pipeline --------------------------------


@pl.jit.incore
def swap_rows(x: pl.Tensor[[8, S], pl.FP32], y: pl.Out[pl.Tensor[[8, S], pl.FP32]], src: pld.DistributedTensor[[8, S], pl.FP32], dst: pld.DistributedTensor[[8, S], pl.FP32], signal: pld.DistributedTensor[[1, 1], pl.INT32]):
    ctx = pld.get_comm_ctx(src)
    me, n = pld.rank(ctx), pld.nranks(ctx)
    src = pl.store(pl.load(x, [0, 0], [8, S]), [0, 0], src)
    peer = (me + 1) % n
    # rows 0..4 of mine -> rows 4..8 of the next rank's dst, in 2x32 chunks, ping-pong staged
    pld.tensor.put(dst, peer=peer, src=src, dst_offsets=[4, 0], src_offsets=[0, 0], shape=[4, S], atomic=pld.AtomicType.None_, chunk_rows=2, chunk_cols=32, pipeline=True)
    pld.system.notify(signal, peer=peer, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(signal, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
    # rows 4..8 of the next rank's src -> rows 0..4 of my dst
    pld.tensor.get(dst, peer=peer, src=src, dst_offsets=[0, 0], src_offsets=[4, 0], shape=[4, S])
    return pl.store(pl.load(dst, [0, 0], [8, S]), [0, 0], y)


@pl.jit.host
def swap_rows_host(x: pl.Tensor[[NR, 8, S], pl.FP32], y: pl.Out[pl.Tensor[[NR, 8, S], pl.FP32]]):
    src_buf = pld.alloc_window_buffer([8, S], dtype=pl.FP32)
    dst_buf = pld.alloc_window_buffer([8, S], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        swap_rows(x[r], y[r], pld.window(src_buf, [8, S], dtype=pl.FP32), pld.window(dst_buf, [8, S], dtype=pl.FP32), pld.window(signal_buf, [1, 1], dtype=pl.INT32), device=r)


@pytest.mark.parametrize("n", [2, 3])
def test_put_and_get_of_sub_regions(n):
    x = np.arange(n * 8 * S, dtype=np.float32).reshape(n, 8, S)
    y = np.zeros_like(x)
    run(swap_rows_host, x, y, n=n)
    for r in range(n):
        np.testing.assert_array_equal(y[r, 4:], x[(r - 1) % n, :4])
        np.testing.assert_array_equal(y[r, :4], x[(r + 1) % n, 4:])


def test_put_pipeline_without_chunks_is_refused_with_pypto_message():
    @pl.jit.incore
    def bad(x: pl.Tensor[[1, S], pl.FP32], dst: pld.DistributedTensor[[1, S], pl.FP32]):
        pld.tensor.put(dst, peer=0, src=x, pipeline=True)

    @pl.jit.host
    def host(x: pl.Tensor[[2, 1, S], pl.FP32]):
        buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            bad(x[r], pld.window(buf, [1, S], dtype=pl.FP32), device=r)

    x = np.ones((2, 1, S), np.float32)
    with pytest.raises(ranksim.KernelError, match="pipeline=True requires both chunk_rows>0 and chunk_cols>0"):
        run(host, x)


# ---- 07: one source at any rank count; InCore and HOST collectives --------------------------


@pl.jit.incore
def ring_sum(x: pl.Tensor[[1, 256], pl.FP32], y: pl.Out[pl.Tensor[[1, 256], pl.FP32]], data: pld.DistributedTensor[[1, 256], pl.FP32], signal: pld.DistributedTensor[[NR, 1], pl.INT32]):
    data = pl.store(pl.load(x, [0, 0], [1, 256]), [0, 0], data)
    data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum)
    return pl.store(pl.load(data, [0, 0], [1, 256]), [0, 0], y)


@pl.jit.host
def ring_sum_host(x: pl.Tensor[[NR, 1, 256], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, 256], pl.FP32]]):
    data_buf = pld.alloc_window_buffer([1, 256], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([pld.world_size(), 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        ring_sum(x[r], y[r], pld.window(data_buf, [1, 256], dtype=pl.FP32), pld.window(signal_buf, [pld.world_size(), 1], dtype=pl.INT32), device=r)


@pytest.mark.parametrize("n", [2, 3, 5])
def test_incore_allreduce_at_any_rank_count(n):
    x = np.arange(n * 256, dtype=np.float32).reshape(n, 1, 256)
    y = np.zeros_like(x)
    run(ring_sum_host, x, y, n=n)
    for r in range(n):
        np.testing.assert_allclose(y[r], x.sum(axis=0), rtol=1e-6)


@pl.jit.incore
def publish(x: pl.Tensor[[1, 256], pl.FP32], data: pld.DistributedTensor[[1, 256], pl.FP32]):
    pl.store(pl.load(x, [0, 0], [1, 256]), [0, 0], data)


@pl.jit.incore
def consume(y: pl.Out[pl.Tensor[[1, 256], pl.FP32]], data: pld.DistributedTensor[[1, 256], pl.FP32]):
    return pl.store(pl.load(data, [0, 0], [1, 256]), [0, 0], y)


@pl.jit.host
def host_allreduce(x: pl.Tensor[[NR, 1, 256], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, 256], pl.FP32]]):
    data_buf = pld.alloc_window_buffer([1, 256], dtype=pl.FP32)
    views = [pld.window(data_buf, [1, 256], dtype=pl.FP32) for _ in pl.range(pld.world_size())]
    for r in pl.range(pld.world_size()):
        publish(x[r], views[r], device=r)
    pld.tensor.allreduce(views[0], op=pld.ReduceOp.Max)
    for r in pl.range(pld.world_size()):
        consume(y[r], views[r], device=r)


def test_host_builtin_allreduce_between_publish_and_consume_dispatches():
    x = np.random.default_rng(7).standard_normal((4, 1, 256)).astype(np.float32)
    y = np.zeros_like(x)
    report = run(host_allreduce, x, y, n=4)
    for r in range(4):
        np.testing.assert_array_equal(y[r], x.max(axis=0))
    names = [d["name"] for d in report.dispatches if d["chip"] == 0]
    assert names == ["publish", "builtin.tensor.allreduce__max__fp32", "consume"]


class HostArray:
    """A host tensor that is neither numpy nor a buffer: only `__array__` (like torch)."""

    def __init__(self, a):
        self._a = a

    def __array__(self, dtype=None, copy=None):
        return self._a


def test_array_like_host_tensors_are_written_in_place():
    x = np.arange(2 * R * C, dtype=np.float32).reshape(2, R, C)
    y = HostArray(np.zeros_like(x))
    compiled = shift_scale_host.compile(HostArray(x), y, config=config(2))
    compiled(HostArray(x), y)
    np.testing.assert_array_equal(y._a, (x - np.array([0, 1], np.float32).reshape(2, 1, 1)) * 2)


@pl.jit.incore
def widen(x: pl.Tensor[[1, S], pl.BF16], y: pl.Out[pl.Tensor[[1, S], pl.FP32]], z: pl.Out[pl.Tensor[[1, S], pl.FP16]]):
    t = pl.load(x, [0, 0], [1, S])
    pl.store(pl.cast(pl.cast(t, target_type=pl.FP32), target_type=pl.FP16), [0, 0], z)  # no bf16 -> f16 TCVT
    return pl.store(pl.cast(pl.add(t, 0.5), target_type=pl.FP32), [0, 0], y)


@pl.jit.host
def widen_host(x: pl.Tensor[[2, 1, S], pl.BF16], y: pl.Out[pl.Tensor[[2, 1, S], pl.FP32]], z: pl.Out[pl.Tensor[[2, 1, S], pl.FP16]]):
    for r in pl.range(pld.world_size()):
        widen(x[r], y[r], z[r], device=r)


def test_bf16_and_fp16_tensors_from_float32_host_data():
    x = np.full((2, 1, S), 1.00390625, np.float32)  # 1 + 2**-8: not a bf16, rounds to 1.0
    y, z = np.zeros((2, 1, S), np.float32), np.zeros((2, 1, S), np.float16)
    run(widen_host, x, y, z)
    assert (y == 1.5).all() and (z == 1.0).all()


def test_single_device_program_and_comm_less_dispatches():
    x = np.arange(R * C, dtype=np.float32).reshape(R, C)
    y = np.zeros_like(x)
    # A @pl.jit function compiled on its own runs on one device (PyPTO's L2 form).
    compiled = shift_scale_orch.compile(x, y, 0, config=RunConfig(platform="a5sim"))
    report = compiled.run(x, y, 0)
    np.testing.assert_array_equal(y, x * 2)
    assert [d["chip"] for d in report.dispatches] == [0]

    @pl.jit.host
    def round_robin(x: pl.Tensor[[3, R, C], pl.FP32], y: pl.Out[pl.Tensor[[3, R, C], pl.FP32]]):
        for r in pl.range(3):
            shift_scale_orch(x[r], y[r], r)  # no device=: round-robin over the program's chips

    x3 = np.ones((3, R, C), np.float32)
    y3 = np.zeros_like(x3)
    rep = run(round_robin, x3, y3, n=2)
    assert sorted(d["chip"] for d in rep.dispatches) == [0, 0, 1]
    np.testing.assert_array_equal(y3[:, 0, 0], [2, 0, -2])


@pl.jit.incore
def plus_one(x: pl.Tensor[[S], pl.FP32], y: pl.Out[pl.Tensor[[S], pl.FP32]]):
    return pl.store(pl.add(pl.load(x, [0], [S]), 1.0), [0], y)


@pl.jit.host
def plus_one_host(x: pl.Tensor[[2 * S], pl.FP32], y: pl.Out[pl.Tensor[[2 * S], pl.FP32]]):
    for r in pl.range(pld.world_size()):
        plus_one(x[r * S : (r + 1) * S], y[r * S : (r + 1) * S], device=r)


def test_buffer_protocol_host_tensors_are_written_in_place():
    import array

    x = array.array("f", range(2 * S))
    y = array.array("f", [0.0] * (2 * S))
    plus_one_host.compile(x, y, config=config(2))(x, y)
    assert list(y) == [v + 1 for v in range(2 * S)]
