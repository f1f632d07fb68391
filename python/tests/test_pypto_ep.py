"""An MoE expert-parallel layer in PyPTO's class form, in the shape of PyPTO's EP system test
(top-k routing, per-source signal cells, three kernels chained on every rank): written for
ranksim, checked against a numpy golden at 8 and 16 ranks, and under the protocol checker.

Each rank holds T tokens and L experts; a token goes to its TOPK experts (global expert e
lives on rank e // L as local expert e % L).

- ``dispatch``: counts its rows per destination expert, publishes each non-zero count into
  the destination's ``counts[me, l]`` (notify AtomicAdd), pushes each routed token row into the
  destination's ``recv_x`` in the region of (local expert, source) and raises ``data_done[me]``
  on every rank, then waits for every source's ``data_done``.
- ``expert``: expert e scales its received rows by (e + 1) into ``recv_y``, then the
  ``expert_done`` barrier (one cell per source again).
- ``combine``: every token pulls its TOPK expert outputs back (remote_load) and sums them
  weighted by its routing weights.
"""

import numpy as np
import pytest

import ranksim
import ranksim.pypto.language as pl
import ranksim.pypto.language.distributed as pld
from ranksim.pypto import ir
from ranksim.pypto.ir.distributed_compiled_program import DistributedConfig

T, TOPK, D, L = 8, 2, 32, 2


def build(n):
    E = n * L  # noqa: N806 - the experts of the world
    ROWS = L * n * T  # noqa: N806 - a rank's receive rows: (local expert, source, slot)

    @pl.program
    class ExpertParallel:
        @pl.function(type=pl.FunctionType.InCore)
        def dispatch(
            self,
            x: pl.Tensor[[T, D], pl.FP32],
            route: pl.Tensor[[T, TOPK], pl.INT32],
            counts: pld.DistributedTensor[[n, L], pl.INT32],
            recv_x: pld.DistributedTensor[[ROWS, D], pl.FP32],
            data_done: pld.DistributedTensor[[n, 1], pl.INT32],
        ):
            me = pld.rank(pld.get_comm_ctx(recv_x))
            sent = pl.array.create(E, pl.INT32)
            for t in pl.range(T):
                row = pl.load(x, [t, 0], [1, D])
                for k in pl.range(TOPK):
                    e = pl.read(route, [t, k])
                    dst, local = e // L, e % L
                    slot = (local * n + me) * T + sent[e]
                    pld.tile.remote_store(row, target=recv_x, peer=dst, offsets=[slot, 0])
                    sent[e] = sent[e] + 1
            for e in pl.range(E):
                if sent[e] > 0:  # a zeroed window already says 0 (the checker flags an AtomicAdd of 0)
                    pld.system.notify(target=counts, peer=e // L, offsets=[me, e % L], value=sent[e], op=pld.NotifyOp.AtomicAdd)
            pld.system.fence()
            for d in pl.range(n):
                pld.system.notify(target=data_done, peer=d, offsets=[me, 0], value=1, op=pld.NotifyOp.AtomicAdd)
            for s in pl.range(n):
                pld.system.wait(signal=data_done, offsets=[s, 0], expected=1, cmp=pld.WaitCmp.Ge)

        @pl.function(type=pl.FunctionType.InCore)
        def expert(
            self,
            counts: pld.DistributedTensor[[n, L], pl.INT32],
            recv_x: pld.DistributedTensor[[ROWS, D], pl.FP32],
            recv_y: pld.DistributedTensor[[ROWS, D], pl.FP32],
            expert_done: pld.DistributedTensor[[n, 1], pl.INT32],
        ):
            me = pld.rank(pld.get_comm_ctx(recv_y))
            for local in pl.range(L):
                scale = pl.cast(me * L + local + 1, pl.FP32)
                for s in pl.range(n):
                    base = (local * n + s) * T
                    for r in pl.range(pl.read(counts, [s, local])):
                        y = pl.mul(pl.load(recv_x, [base + r, 0], [1, D]), scale)
                        recv_y = pl.store(y, [base + r, 0], recv_y)
            pld.system.fence()
            for d in pl.range(n):
                pld.system.notify(target=expert_done, peer=d, offsets=[me, 0], value=1, op=pld.NotifyOp.AtomicAdd)
            for s in pl.range(n):
                pld.system.wait(signal=expert_done, offsets=[s, 0], expected=1, cmp=pld.WaitCmp.Ge)

        @pl.function(type=pl.FunctionType.InCore)
        def combine(
            self,
            route: pl.Tensor[[T, TOPK], pl.INT32],
            weight: pl.Tensor[[T, TOPK], pl.FP32],
            recv_y: pld.DistributedTensor[[ROWS, D], pl.FP32],
            out: pl.Out[pl.Tensor[[T, D], pl.FP32]],
        ):
            me = pld.rank(pld.get_comm_ctx(recv_y))
            taken = pl.array.create(E, pl.INT32)
            for t in pl.range(T):
                for k, (acc,) in pl.range(TOPK, init_values=(None,)):
                    e = pl.read(route, [t, k])
                    slot = (e % L * n + me) * T + taken[e]
                    taken[e] = taken[e] + 1
                    y = pl.mul(pld.tile.remote_load(recv_y, peer=e // L, offsets=[slot, 0], shape=[1, D]), pl.read(weight, [t, k]))
                    acc = pl.yield_(y if acc is None else pl.add(acc, y))
                out = pl.store(acc, [t, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def layer(
            self,
            x: pl.Tensor[[T, D], pl.FP32],
            route: pl.Tensor[[T, TOPK], pl.INT32],
            weight: pl.Tensor[[T, TOPK], pl.FP32],
            out: pl.Out[pl.Tensor[[T, D], pl.FP32]],
            counts: pld.DistributedTensor[[n, L], pl.INT32],
            recv_x: pld.DistributedTensor[[ROWS, D], pl.FP32],
            recv_y: pld.DistributedTensor[[ROWS, D], pl.FP32],
            data_done: pld.DistributedTensor[[n, 1], pl.INT32],
            expert_done: pld.DistributedTensor[[n, 1], pl.INT32],
        ):
            self.dispatch(x, route, counts, recv_x, data_done)
            self.expert(counts, recv_x, recv_y, expert_done)
            return self.combine(route, weight, recv_y, out)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(
            self,
            x: pl.Tensor[[n, T, D], pl.FP32],
            route: pl.Tensor[[n, T, TOPK], pl.INT32],
            weight: pl.Tensor[[n, T, TOPK], pl.FP32],
            out: pl.Out[pl.Tensor[[n, T, D], pl.FP32]],
        ):
            counts_buf = pld.alloc_window_buffer(n * L * 4)
            recv_x_buf = pld.alloc_window_buffer(ROWS * D * 4)
            recv_y_buf = pld.alloc_window_buffer(ROWS * D * 4)
            data_buf = pld.alloc_window_buffer(n * 4)
            expert_buf = pld.alloc_window_buffer(n * 4)
            for r in pl.range(pld.world_size()):
                self.layer(
                    x[r], route[r], weight[r], out[r],
                    pld.window(counts_buf, [n, L], dtype=pl.INT32),
                    pld.window(recv_x_buf, [ROWS, D], dtype=pl.FP32),
                    pld.window(recv_y_buf, [ROWS, D], dtype=pl.FP32),
                    pld.window(data_buf, [n, 1], dtype=pl.INT32),
                    pld.window(expert_buf, [n, 1], dtype=pl.INT32),
                    device=r,
                )
            return out

    return ExpertParallel


def inputs(n, seed=7):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, T, D)).astype(np.float32)
    scores = rng.standard_normal((n, T, n * L))
    route = np.argsort(-scores, axis=-1)[..., :TOPK].astype(np.int32)  # top-k, distinct experts
    top = np.take_along_axis(scores, route, axis=-1)
    weight = (np.exp(top) / np.exp(top).sum(-1, keepdims=True)).astype(np.float32)
    return x, route, weight


def golden(x, route, weight):
    """Expert e scales by (e + 1); a token's output is its routing-weighted sum."""
    y = x[..., None, :] * (route[..., None] + 1).astype(np.float32)
    return (y * weight[..., None]).sum(axis=-2)


@pytest.mark.parametrize("n, machine", [(8, "a2a3"), (16, "two-node")])
def test_ep_dispatch_expert_combine_matches_numpy(n, machine):
    x, route, weight = inputs(n)
    out = np.zeros((n, T, D), np.float32)
    compiled = ir.compile(
        build(n), platform="a2a3sim", distributed_config=DistributedConfig(device_ids=list(range(n))), ranksim_config=ranksim.Config.preset(machine)
    )
    compiled(x, route, weight, out)
    np.testing.assert_allclose(out, golden(x, route, weight), rtol=1e-5, atol=1e-5)
    tasks = [t["name"] for t in compiled.last_report.dispatches[0]["tasks"]]
    assert tasks == ["dispatch", "expert", "combine"]
    assert compiled.last_report.device_time_us > 0


def test_ep_protocol_is_clean_under_the_checker():
    n = 8
    x, route, weight = inputs(n, seed=11)
    compiled = ir.compile(build(n), platform="a2a3sim", distributed_config=DistributedConfig(device_ids=list(range(n))))
    report = compiled.check(x, route, weight, np.zeros((n, T, D), np.float32), seeds=2)
    assert report.is_clean, str(report)
