"""ranksim.pypto.runtime.benchmark: PyPTO's call shape over a ranksim.pypto program, its
BenchmarkStats (fields, aggregates, views, renderings) and the [STRACE] log behind them."""

import re
import statistics

import numpy as np
import pytest

import ranksim.pypto.language as pl
import ranksim.pypto.language.distributed as pld
from ranksim.pypto.ir.distributed_compiled_program import DistributedConfig
from ranksim.pypto.runtime import BenchmarkStats, RunConfig, benchmark

N, S = 4, 256
STRACE = re.compile(
    r"\[STRACE\]\s+v=(\d+)\s+pid=(\d+)\s+tid=(\d+)\s+inv=(\d+)\s+hid=([0-9a-fA-F]+)\s+depth=(\d+)\s+name=(\S+)\s+ts=(\d+)\s+dur=(\d+)"
)


@pl.jit.incore
def publish(x: pl.Tensor[[1, S], pl.FP32], data: pld.DistributedTensor[[1, S], pl.FP32]):
    pl.store(pl.load(x, [0, 0], [1, S]), [0, 0], data)


@pl.jit.incore
def consume(y: pl.Out[pl.Tensor[[1, S], pl.FP32]], data: pld.DistributedTensor[[1, S], pl.FP32]):
    return pl.store(pl.load(data, [0, 0], [1, S]), [0, 0], y)


@pl.jit.host
def allreduce_prog(x: pl.Tensor[[N, 1, S], pl.FP32], y: pl.Out[pl.Tensor[[N, 1, S], pl.FP32]]):
    data_buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([N], dtype=pl.INT32)
    views = [pld.window(data_buf, [1, S], dtype=pl.FP32) for _ in pl.range(pld.world_size())]
    for r in pl.range(pld.world_size()):
        publish(x[r], views[r], device=r)
    pld.tensor.allreduce(views[0], pld.window(signal_buf, [N], dtype=pl.INT32))
    for r in pl.range(pld.world_size()):
        consume(y[r], views[r], device=r)


@pytest.fixture(scope="module")
def bench():
    x = np.arange(N * S, dtype=np.float32).reshape(N, 1, S)
    y = np.zeros_like(x)
    cfg = RunConfig(platform="a2a3sim", distributed_config=DistributedConfig(device_ids=list(range(N))))
    compiled = allreduce_prog.compile(x, y, config=cfg)
    stats = benchmark(compiled, [x, y], rounds=3, warmup=2)
    np.testing.assert_allclose(y[2], x.sum(axis=0))
    return compiled, stats


def test_benchmark_stats_fields_and_aggregates(bench):
    compiled, st = bench
    assert isinstance(st, BenchmarkStats)
    assert (st.rounds, st.warmup) == (3, 2)
    assert not st.fallback_flattened and not st.unstable_dispatch_slots
    assert len(st.device_wall_us) == 3 and len(st.host_wall_us) == 3
    # ranksim is deterministic: every round times the same.
    assert len(set(st.device_wall_us)) == 1 and st.device_us_stdev == 0.0
    assert st.device_us_min == st.device_us_max == st.device_us_median == st.device_us_mean == st.device_wall_us[0]
    assert st.samples == st.device_wall_us and st.device_wall_us_mean == st.device_us_mean
    assert not st.all_zero_device
    # The headline: per round, the max over ranks of the rank's summed dispatch device walls.
    rep = compiled.last_report
    per_rank = {}
    for d in rep.dispatches:
        per_rank[d["chip"]] = per_rank.get(d["chip"], 0) + d["device_wall_ps"] / 1e6
    assert st.device_wall_us[0] == pytest.approx(max(per_rank.values()), abs=0.01)
    assert all(h > d for h, d in zip(st.host_wall_us, st.device_wall_us)), "chip.run includes the host's bind and finalize"
    assert sorted(st.per_rank()) == [41000 + r for r in range(N)]
    assert st.per_round("device") == st.device_wall_us
    assert len(st.per_round("union")) == 3 and all(u >= d for u, d in zip(st.per_round("union"), st.device_wall_us))
    # Three dispatches per rank: publish, the HOST builtin, consume.
    tasks = st.dispatch_tasks()
    assert [tasks[(41000, s)] for s in range(3)] == ["publish", "builtin.tensor.allreduce__sum__fp32", "consume"]
    assert all(len(v) == 3 for v in st.per_dispatch("device").values())
    assert len(st.invocations) == 3 * 3 * N
    with pytest.raises(ValueError, match="metric must be one of"):
        st.per_dispatch("wall")


def test_benchmark_renderings(bench):
    _, st = bench
    text = str(st)
    head = (
        f"BenchmarkStats(rounds=3, warmup=2): device_wall_us min={st.device_us_min:.1f} median={st.device_us_median:.1f} "
        f"mean={st.device_us_mean:.1f} max={st.device_us_max:.1f} stdev=0.0 [L3: {N} ranks, per-round max across ranks; host-union mean="
    )
    assert text.startswith(head), text
    assert "per-dispatch device mean us: (pid=41000,slot=0,task=publish)=" in text
    tree = st.format_tree(0)
    assert tree.splitlines()[0].startswith("launch[0] (pid=41000 inv=7 hid=")
    assert "round=0 slot=0 task=publish" in tree.splitlines()[0]
    assert "`- device_wall [dev]" in tree
    mean = st.format_mean_tree(pid=41001, slot=1)
    assert mean.startswith("dispatch pid=41001 slot=1 task=builtin.tensor.allreduce__sum__fp32 — mean of 3 launches (warmup 2 excluded)")
    with pytest.raises(IndexError):
        st.format_tree(10_000)


def test_strace_log_is_what_pyptos_parser_reads(bench):
    _, st = bench
    spans = [m.groups() for m in STRACE.finditer(st.strace)]
    roots = [s for s in spans if s[6] == "chip.run" and s[5] == "0"]
    assert len(roots) == (3 + 2) * 3 * N
    for pid in range(41000, 41000 + N):
        invs = [int(s[3]) for s in roots if int(s[1]) == pid]
        assert invs == list(range(1, 16))
    dev = [s for s in spans if s[6] == "chip.run.runner_run.device_wall"]
    assert len(dev) == len(roots) and all(int(s[8]) > 0 for s in dev)
    assert st.strace.count("[CLOCK_ANCHOR] v=1") == N


def test_benchmark_argument_checks(bench):
    compiled, _ = bench
    x = np.zeros((N, 1, S), np.float32)
    for kw, msg in [({"rounds": 0}, "rounds"), ({"warmup": -1}, "warmup"), ({"platform": "a5"}, "L2"), ({"reset_persistent_windows": True}, "requires persistent=True"), ({"seed": -1}, "seed")]:
        with pytest.raises(ValueError, match=msg):
            benchmark(compiled, [x, x.copy()], **kw)


def test_statistics_match_pythons(bench):
    _, st = bench
    assert st.device_us_mean == statistics.fmean(st.device_wall_us)


def test_strace_to_stderr_on_request(bench, monkeypatch, capfd):
    compiled, st = bench
    x = np.arange(N * S, dtype=np.float32).reshape(N, 1, S)
    monkeypatch.setenv("RANKSIM_STRACE", "1")
    again = benchmark(compiled, [x, np.zeros_like(x)], rounds=3, warmup=2)
    err = capfd.readouterr().err
    assert err == again.strace == st.strace


def test_benchmark_simulates_once_unless_jittered_or_persistent(bench):
    compiled, st = bench
    x = np.arange(N * S, dtype=np.float32).reshape(N, 1, S)
    assert st.simulations == 1, "deterministic launches are simulated once"
    jittered = benchmark(compiled, [x, np.zeros_like(x)], rounds=4, warmup=1, seed=7)
    assert jittered.simulations == 5
    assert jittered.device_us_stdev > 0, "seeded jitter moves the rounds"
    again = benchmark(compiled, [x, np.zeros_like(x)], rounds=4, warmup=1, seed=7)
    assert again.device_wall_us == jittered.device_wall_us, "the same seed times the same"
    kept = benchmark(compiled, [x, np.zeros_like(x)], rounds=2, warmup=0, persistent=True)
    assert kept.simulations == 2


def test_timing_only_pypto_run_gives_the_same_times_without_values(bench):
    compiled, _ = bench
    x = np.arange(N * S, dtype=np.float32).reshape(N, 1, S)
    y = np.zeros_like(x)
    with_values = compiled.run(x, y)
    assert y.any()
    y2 = np.zeros_like(x)
    without = compiled.run(x, y2, config=RunConfig(timing_only=True))
    assert without.device_time_ps == with_values.device_time_ps
    assert not y2.any(), "a timing-only run writes nothing back"
