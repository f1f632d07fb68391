"""ranksim.pypto's class form: ``@pl.program`` classes compiled with ``ir.compile``, one
program per construct (levels and roles, ``self`` calls with ``device=``, dynamic shapes,
scalars, tuple returns, ``pl.at`` scopes, manual scopes, loop-carried values, host
intermediates and sub-workers, the runtime around a launch). Each checks values."""

import numpy as np
import pytest

import ranksim
import ranksim.pypto.language as pl
import ranksim.pypto.language.distributed as pld
from ranksim.pypto import ir
from ranksim.pypto.ir.distributed_compiled_program import DistributedConfig
from ranksim.pypto.runtime import DistributedWorker, RunConfig, StackedDeviceTensor, benchmark

S = 64
NR = pl.dynamic("NR")


def compile_on(program, n, platform="a2a3sim"):
    return ir.compile(program, platform=platform, distributed_config=DistributedConfig(device_ids=list(range(n))))


# ---- the three levels, self calls with device=r, a ring of puts ---------------------------


@pl.program
class RingPut:
    @pl.function(type=pl.FunctionType.InCore)
    def step(
        self,
        inp: pl.Tensor[[1, S], pl.FP32],
        out: pl.Out[pl.Tensor[[1, S], pl.FP32]],
        src: pld.DistributedTensor[[1, S], pl.FP32],
        dst: pld.DistributedTensor[[1, S], pl.FP32],
        sig: pld.DistributedTensor[[1, 1], pl.INT32],
        peer: pl.Scalar[pl.INT32],
    ) -> pl.Tensor[[1, S], pl.FP32]:
        src = pl.store(pl.load(inp, [0, 0], [1, S]), [0, 0], src)
        pld.tensor.put(dst, peer=peer, src=src)
        pld.system.notify(target=sig, peer=peer, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
        pld.system.wait(signal=sig, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
        return pl.store(pl.load(dst, [0, 0], [1, S]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, inp, out: pl.Out[pl.Tensor[[1, S], pl.FP32]], src, dst, sig, peer: pl.Scalar[pl.INT32]):
        return self.step(inp, out, src, dst, sig, peer)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[NR, 1, S], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, S], pl.FP32]]):
        n = pld.world_size()
        src_buf = pld.alloc_window_buffer(S * pl.FP32.get_byte())
        dst_buf = pld.alloc_window_buffer(S * pl.FP32.get_byte())
        sig_buf = pld.alloc_window_buffer(pl.INT32.get_byte())
        for r in pl.range(n):
            src = pld.window(src_buf, [1, S], dtype=pl.FP32)
            dst = pld.window(dst_buf, [1, S], dtype=pl.FP32)
            sig = pld.window(sig_buf, [1, 1], dtype=pl.INT32)
            self.chip(x[r], y[r], src, dst, sig, (r + 1) % n, device=r)
        return y


@pytest.mark.parametrize("n", [2, 4])
def test_ring_put_with_dynamic_rank_count(n):
    x = np.arange(n * S, dtype=np.float32).reshape(n, 1, S)
    y = np.zeros_like(x)
    compiled = compile_on(RingPut, n)
    assert compiled(x, y) is None
    np.testing.assert_array_equal(y, np.roll(x, 1, axis=0))
    assert compiled.last_report.device_time_us > 0
    assert [d["name"] for d in compiled.last_report.dispatches] == ["chip"] * n


def test_ir_compile_entry_points_run_check_trace_benchmark(tmp_path):
    x = np.arange(2 * S, dtype=np.float32).reshape(2, 1, S)
    y = np.zeros_like(x)
    compiled = compile_on(RingPut, 2)
    report = compiled.run(x, y, trace=True)
    path = tmp_path / "ring.json"
    report.write_trace(str(path))
    assert path.stat().st_size > 0
    assert compiled.check(x, y, seeds=2).is_clean
    stats = benchmark(compiled, (x, y), rounds=2, warmup=1)
    assert stats.rounds == 2
    np.testing.assert_array_equal(y, np.roll(x, 1, axis=0))
    # ranksim is deterministic: the same call times the same.
    assert compiled.run(x, y).device_time_ps == report.device_time_ps


def test_more_devices_than_the_machine_has_is_refused_with_what_to_use():
    with pytest.raises(ranksim.ConfigError, match="`a2a3` machine has 8 chips.*two-node"):
        compile_on(RingPut, 16)
    x = np.arange(16 * S, dtype=np.float32).reshape(16, 1, S)
    y = np.zeros_like(x)
    ir.compile(RingPut, platform="a2a3sim", distributed_config=DistributedConfig(device_ids=list(range(16))), ranksim_config=ranksim.Config.preset("two-node"))(x, y)
    np.testing.assert_array_equal(y, np.roll(x, 1, axis=0))


def test_ir_compile_refuses_what_is_not_a_program():
    with pytest.raises(TypeError, match="@pl.program"):
        ir.compile(lambda x: x)
    with pytest.raises(ranksim.BadArgument, match="outside a @pl.program"):
        RingPut.cls.__dict__["step"](None)


# ---- scalars, INDEX parameters, tuple returns, a program without HOST level ----------------


@pl.program
class SumDiff:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        a: pl.Tensor[[4, S], pl.FP32],
        b: pl.Tensor[[4, S], pl.FP32],
        s: pl.Out[pl.Tensor[[4, S], pl.FP32]],
        d: pl.Out[pl.Tensor[[4, S], pl.FP32]],
        rows: pl.Scalar[pl.INDEX],
    ) -> pl.Tuple[pl.Tensor[[4, S], pl.FP32], pl.Tensor[[4, S], pl.FP32]]:
        ta = pl.load(a, [0, 0], [rows, S])
        tb = pl.load(b, [0, 0], [rows, S])
        return pl.store(pl.add(ta, tb), [0, 0], s), pl.store(pl.sub(ta, tb), [0, 0], d)

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(self, a: pl.Tensor[[4, S], pl.FP32], b: pl.Tensor[[4, S], pl.FP32], s: pl.Out[pl.Tensor[[4, S], pl.FP32]], d: pl.Out[pl.Tensor[[4, S], pl.FP32]]):
        s2, d2 = self.kernel(a, b, s, d, 3)
        return s2, d2


def test_tuple_return_index_scalar_and_single_device_program():
    a = np.full((4, S), 5.0, np.float32)
    b = np.full((4, S), 2.0, np.float32)
    s, d = np.zeros_like(a), np.zeros_like(a)
    compile_on(SumDiff, 1)(a, b, s, d)
    np.testing.assert_array_equal(s[:3], 7.0)
    np.testing.assert_array_equal(d[:3], 3.0)
    np.testing.assert_array_equal(s[3], 0.0)  # rows=3 of 4: the last row untouched


# ---- pl.at scopes in the HOST orchestrator (the tensor-level API) --------------------------


@pl.program
class Inline:
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, a: pl.Tensor[[16, S], pl.FP32], b: pl.Tensor[[16, S], pl.FP32], s: pl.Out[pl.Tensor[[16, S], pl.FP32]], d: pl.Out[pl.Tensor[[16, S], pl.FP32]]):
        with pl.at(level=pl.Level.CHIP, role=pl.Role.Orchestrator):
            with pl.at(level=pl.Level.CORE_GROUP):
                out = pl.add(a, b)
                out_s = pl.assemble(s, out, [0, 0])
        with pl.at(level=pl.Level.CHIP, role=pl.Role.Orchestrator):
            with pl.at(level=pl.Level.CORE_GROUP):
                pl.assemble(d, pl.sub(a, b), [0, 0])
        return out_s


def test_pl_at_scopes_become_dispatches_round_robin():
    a = np.arange(16 * S, dtype=np.float32).reshape(16, S)
    b = np.ones_like(a)
    s, d = np.zeros_like(a), np.zeros_like(a)
    compiled = compile_on(Inline, 2)
    compiled(a, b, s, d)
    np.testing.assert_array_equal(s, a + 1)
    np.testing.assert_array_equal(d, a - 1)
    # Comm-less dispatches go round-robin over the devices, as PyPTO assigns them.
    assert sorted(x["chip"] for x in compiled.last_report.dispatches) == [0, 1]


# ---- manual scopes: tasks ordered by deps= only --------------------------------------------

W = 8


@pl.program
class Deferred:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, inp: pl.Tensor[[1, W], pl.INT32], out: pl.Out[pl.Tensor[[4, W], pl.INT32]], payload: pl.InOut[pld.DistributedTensor[[1, W], pl.INT32]], sig: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]], peer: pl.Scalar[pl.INT32]):
        with pl.manual_scope():
            for slot in pl.range(4):
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="waiter") as tid:
                    pld.system.defer_wait(signal=sig, offsets=[0, 0], expected=pl.read(inp, [0, 0]), cmp=pld.WaitCmp.Ge)
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="consumer", deps=[tid]):
                    out = pl.store(pl.load(payload, [0, 0], [1, W]), [slot, 0], out)
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="publisher"):
                pld.tile.remote_store(pl.load(inp, [0, 0], [1, W]), target=payload, peer=peer, offsets=[0, 0])
                pld.system.notify(target=sig, peer=peer, offsets=[0, 0], value=pl.read(inp, [0, 0]), op=pld.NotifyOp.Set)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[2, 1, W], pl.INT32], y: pl.Out[pl.Tensor[[2, 4, W], pl.INT32]]):
        payload_buf = pld.alloc_window_buffer(W * 4)
        sig_buf = pld.alloc_window_buffer(4)
        for r in pl.range(2):
            self.chip(x[r], y[r], pld.window(payload_buf, [1, W], dtype=pl.INT32), pld.window(sig_buf, [1, 1], dtype=pl.INT32), 1 - r, device=r)


def test_manual_scope_orders_by_deps_and_persistent_windows_keep_epochs():
    x = np.zeros((2, 1, W), np.int32)
    x[0, 0, 1:], x[1, 0, 1:] = 10, 20
    y = np.full((2, 4, W), -1, np.int32)
    compiled = compile_on(Deferred, 2)
    with compiled.prepare(persistent=True, reset_persistent_windows=False) as rt:
        for epoch in (1, 2, 3):
            x[:, 0, 0] = epoch
            y[:] = -1
            rt(x, y)
            # Each consumer reads the peer's payload of this epoch, after its waiter.
            assert (y[0, :, 0] == epoch).all() and (y[0, :, 1:] == 20).all()
            assert (y[1, :, 0] == epoch).all() and (y[1, :, 1:] == 10).all()
            tasks = {t["name"]: t for t in rt.last_report.dispatches[0]["tasks"]}
            assert set(tasks) == {"waiter", "consumer", "publisher"}
    assert rt._w._next_alloc_id == 1, "a persistent worker allocates its comm domain once"


# ---- loops with carried values, while_ / cond, unroll, parallel, const, scalar arrays ------


@pl.program
class Loops:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[8, S], pl.FP32], y: pl.Out[pl.Tensor[[8, S], pl.FP32]], n: pl.Out[pl.Tensor[[1, 8], pl.INT32]]):
        acc = pl.load(x, [0, 0], [1, S])
        for i, (acc_i,) in pl.range(1, 8, init_values=(acc,)):
            nxt = pl.add(acc_i, pl.load(x, [i, 0], [1, S]))
            acc = pl.yield_(nxt)
        y = pl.store(acc, [0, 0], y)
        for (k,) in pl.while_(init_values=(pl.const(0, pl.INT32),)):
            pl.cond(k < 5)
            k_out = pl.yield_(k + 1)
        counts = pl.array.create(8, pl.INT32)
        for j in pl.unroll(4):
            counts[j] = j * 10
        for j in pl.parallel(4, 8):
            counts[j] = k_out
        for j in pl.range(8):
            pl.write(n, [0, j], counts[j])
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(self, x: pl.Tensor[[8, S], pl.FP32], y: pl.Out[pl.Tensor[[8, S], pl.FP32]], n: pl.Out[pl.Tensor[[1, 8], pl.INT32]]):
        return self.kernel(x, y, n)


def test_loop_carried_values_while_cond_and_scalar_arrays():
    x = np.arange(8 * S, dtype=np.float32).reshape(8, S)
    y, n = np.zeros_like(x), np.zeros((1, 8), np.int32)
    compile_on(Loops, 1)(x, y, n)
    np.testing.assert_array_equal(y[0], x.sum(axis=0))
    assert n.tolist() == [[0, 10, 20, 30, 5, 5, 5, 5]]


# ---- host intermediates, sub-workers and their overrides -----------------------------------


@pl.program
class Reduce:
    @pl.function(type=pl.FunctionType.InCore)
    def twice(self, a: pl.Tensor[[8, S], pl.FP32], f: pl.Out[pl.Tensor[[8, S], pl.FP32]]):
        return pl.store(pl.mul(pl.load(a, [0, 0], [8, S]), 2.0), [0, 0], f)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, a: pl.Tensor[[8, S], pl.FP32], f: pl.Out[pl.Tensor[[8, S], pl.FP32]]):
        return self.twice(a, f)

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def finish(tmp: pl.Tensor[[8, S], pl.FP32], f: pl.Out[pl.Tensor[[8, S], pl.FP32]]):
        f[:] = tmp + 1.0

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, a: pl.Tensor[[8, S], pl.FP32], f: pl.Out[pl.Tensor[[8, S], pl.FP32]]):
        tmp = pl.create_tensor([8, S], dtype=pl.FP32)
        out = self.chip(a, tmp)
        self.finish(out, f)
        return f


def test_host_intermediate_then_sub_worker_and_allocated_output():
    a = np.arange(8 * S, dtype=np.float32).reshape(8, S)
    compiled = compile_on(Reduce, 1)
    f = compiled(a)  # the trailing pl.Out is allocated and returned
    np.testing.assert_array_equal(f, 2 * a + 1)
    seen = []
    with compiled.prepare(sub_worker_overrides={"finish": lambda args: seen.append(np.array(args[0]))}) as rt:
        f2 = np.zeros_like(a)
        rt(a, f2)
    np.testing.assert_array_equal(seen[0], 2 * a)
    assert not f2.any(), "the override replaced `finish`"
    with pytest.raises(ValueError, match="not sub-workers"):
        compiled.prepare(sub_worker_overrides={"nope": print})


# ---- device tensors: resident, stacked and permuted, bounded submissions -------------------


@pl.program
class AddResident:
    @pl.function(type=pl.FunctionType.InCore)
    def add(self, a: pl.Tensor[[8, S], pl.FP32], b: pl.Tensor[[8, S], pl.FP32], f: pl.Out[pl.Tensor[[8, S], pl.FP32]]):
        return pl.store(pl.add(pl.load(a, [0, 0], [8, S]), pl.load(b, [0, 0], [8, S])), [0, 0], f)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, a: pl.Tensor[[8, S], pl.FP32], b: pl.Tensor[[8, S], pl.FP32], f: pl.Out[pl.Tensor[[8, S], pl.FP32]]):
        return self.add(a, b, f)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, a: pl.Tensor[[2, 8, S], pl.FP32], b: pl.Tensor[[2, 8, S], pl.FP32], f: pl.Out[pl.Tensor[[2, 8, S], pl.FP32]]):
        self.chip(a[0], b[0], f[0], device=1)
        self.chip(a[1], b[1], f[1], device=0)


def test_stacked_device_tensor_permuted_and_reused():
    compiled = compile_on(AddResident, 2)
    b = np.stack([np.full((8, S), 10.0, np.float32), np.full((8, S), 11.0, np.float32)])
    with compiled.prepare() as rt:
        w = rt.alloc_stacked_tensor(b, worker_ids=[1, 0])
        assert isinstance(w, StackedDeviceTensor)
        b[:] = 0  # resident: the host copy no longer matters
        for av in (2.0, 7.0):
            a, f = np.full((2, 8, S), av, np.float32), np.zeros((2, 8, S), np.float32)
            h = rt.submit(compiled, a, w, f)
            assert h.done and h.result() is None
            np.testing.assert_array_equal(f[0], av + 10)
            np.testing.assert_array_equal(f[1], av + 11)
        back = np.zeros((2, 8, S), np.float32)
        rt.copy_stacked_from(w, back)
        assert back[0, 0, 0] == 10 and back[1, 0, 0] == 11
    with pytest.raises(RuntimeError, match="after close"):
        rt.register(compiled)
    with pytest.raises(TypeError, match="one-shot call takes host tensors"):
        compiled(np.zeros((2, 8, S), np.float32), w, np.zeros((2, 8, S), np.float32))


def test_two_programs_share_a_worker_and_a_device_tensor():
    compiled = compile_on(AddResident, 2)
    other = compile_on(AddResident, 2)
    with pytest.raises(TypeError, match="DistributedWorker takes compiled programs"):
        DistributedWorker([compiled, AddResident])  # the @pl.program itself, not compiled
    rt = DistributedWorker([compiled, other])
    with pytest.raises(TypeError, match="ambiguous"):
        rt(np.zeros(1))
    kv = rt.alloc_tensor((8, S), np.float32, init=np.full((8, S), 4.0, np.float32), worker_id=1)
    with pytest.raises(ranksim.BadArgument, match="lives on worker 0, but this dispatch runs on device 1"):
        rt.run(other, np.zeros((2, 8, S), np.float32), rt.alloc_stacked_tensor(np.zeros((2, 8, S), np.float32)), np.zeros((2, 8, S), np.float32))
    rt.free_tensor(kv)
    rt.close()
    assert not rt._owned_tensors


# ---- slices, slice-assign and window slices inside a kernel --------------------------------


@pl.program
class Slices:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[8, S], pl.FP32], y: pl.Out[pl.Tensor[[4, S], pl.FP32]], win: pld.DistributedTensor[[8, S], pl.FP32]):
        win = pl.store(pl.load(x, [0, 0], [8, S]), [0, 0], win)
        y[0:2, 0:S] = win[6:8, 0:S]
        bottom = pl.tensor.slice(win, [2, S], [2, 0])
        pl.assemble(y, pl.load(bottom, [0, 0], [2, S]), [2, 0])
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[8, S], pl.FP32], y: pl.Out[pl.Tensor[[4, S], pl.FP32]], win: pld.DistributedTensor[[8, S], pl.FP32]):
        return self.kernel(x, y, win)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[8, S], pl.FP32], y: pl.Out[pl.Tensor[[4, S], pl.FP32]]):
        buf = pld.alloc_window_buffer(8 * S * 4)
        self.chip(x, y, pld.window(buf, [8, S], dtype=pl.FP32), device=0)


def test_slices_and_slice_assign_on_windows():
    x = np.arange(8 * S, dtype=np.float32).reshape(8, S)
    y = np.zeros((4, S), np.float32)
    compile_on(Slices, 1)(x, y)
    np.testing.assert_array_equal(y, np.concatenate([x[6:8], x[2:4]]))


# ---- plan directory and DFX outputs --------------------------------------------------------


def test_plan_and_dfx_outputs_describe_what_ran(tmp_path):
    compiled = ir.compile(RingPut, str(tmp_path / "out"), platform="a2a3sim", distributed_config=DistributedConfig(device_ids=[0, 1]))
    assert (compiled.output_dir / "next_levels" / "chip" / "kernel_config.py").is_file()
    assert "def host" in (compiled.output_dir / "orchestration" / "host.py").read_text()
    x = np.arange(2 * S, dtype=np.float32).reshape(2, 1, S)
    compiled(x, np.zeros_like(x), config=RunConfig(enable_dep_gen=True, enable_chip_swimlane=True))
    import json

    deps = json.loads((compiled.output_dir / "dfx_outputs" / "rank1" / "d0" / "deps.json").read_text())
    assert [t["name"] for t in deps["tasks"]] == ["step"]
    assert deps["tasks"][0]["end_ps"] > deps["tasks"][0]["start_ps"]
    assert (compiled.output_dir / "dfx_outputs" / "rank0" / "d0" / "chip_swimlane_records.json").is_file()


# ---- what PyPTO's parser needs that ranksim must say it lacks ------------------------------


def test_scope_and_cond_outside_a_program_say_what_to_change():
    with pytest.raises(ranksim.BadArgument, match="@pl.program"):
        with pl.at(level=pl.Level.CORE_GROUP):
            pass
    with pytest.raises(ranksim.BadArgument, match="first statement"):
        pl.cond(True)
    with pytest.raises(ranksim.BadArgument, match="C\\+\\+ kernel"):
        pl.function(external_source="k.cpp")
    with pytest.raises(ranksim.BadArgument, match="yield_ gives 2"):
        for _i, (_a,) in pl.range(2, init_values=(0,)):
            pl.yield_(1, 2)


# ---- an operation's error names the kernel's line -----------------------------------------


def op_error_program(body):
    @pl.program
    class OpError:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[1, S], pl.FP32], y: pl.Out[pl.Tensor[[1, S], pl.FP32]], win: pld.DistributedTensor[[1, S], pl.FP32]):
            body(x, y, win)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def o(self, x: pl.Tensor[[1, S], pl.FP32], y: pl.Out[pl.Tensor[[1, S], pl.FP32]], win: pld.DistributedTensor[[1, S], pl.FP32]):
            return self.k(x, y, win)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def h(self, x: pl.Tensor[[2, 1, S], pl.FP32], y: pl.Out[pl.Tensor[[2, 1, S], pl.FP32]]):
            buf = pld.alloc_window_buffer(S * 4)
            for r in pl.range(2):
                self.o(x[r], y[r], pld.window(buf, [1, S], dtype=pl.FP32), device=r)

    return OpError


def _oob_load(x, y, win):
    pl.load(x, [0, 32], [1, S])  # LINE: oob_load


def _bad_peer(x, y, win):
    pld.tile.remote_store(pl.load(x, [0, 0], [1, S]), target=win, peer=5, offsets=[0, 0])  # LINE: bad_peer


def _oob_remote_store(x, y, win):
    pld.tile.remote_store(pl.load(x, [0, 0], [1, S]), target=win, peer=0, offsets=[0, 8])  # LINE: oob_remote_store


def _shape_mismatch(x, y, win):
    pl.add(pl.load(x, [0, 0], [1, S]), pl.load(x, [0, 0], [1, S // 2]))  # LINE: shape_mismatch


def _ub_overflow(x, y, win):
    pl.full([256, 256], pl.FP32, 1.0)  # LINE: ub_overflow


def _line(tag):
    src = open(__file__).read().splitlines()
    return next(i + 1 for i, text in enumerate(src) if text.endswith(f"# LINE: {tag}"))


@pytest.mark.parametrize(
    "body, tag, words",
    [
        (_oob_load, "oob_load", "outside `x`"),
        (_bad_peer, "bad_peer", "peer 5"),
        (_oob_remote_store, "oob_remote_store", "outside"),
        (_shape_mismatch, "shape_mismatch", "shape"),
        (_ub_overflow, "ub_overflow", "UB"),
    ],
)
def test_an_operations_error_names_the_kernels_line(body, tag, words):
    x = np.zeros((2, 1, S), np.float32)
    with pytest.raises(ranksim.SimError) as e:
        compile_on(op_error_program(body), 2)(x, np.zeros_like(x))
    msg = str(e.value)
    assert words in msg, msg
    assert f"test_pypto_class_form.py:{_line(tag)} in {body.__name__}" in msg, msg


def test_negative_offsets_name_the_argument():
    def body(x, y, win):
        pl.load(x, [0, -1], [1, S])

    x = np.zeros((2, 1, S), np.float32)
    with pytest.raises(ranksim.SimError, match=r"pl.load offsets: entry 1 is -1; .* none may be negative"):
        compile_on(op_error_program(body), 2)(x, np.zeros_like(x))


def test_breakdown_splits_each_ranks_device_time(capsys):
    x = np.arange(2 * S, dtype=np.float32).reshape(2, 1, S)
    compiled = compile_on(RingPut, 2)
    compiled(x, np.zeros_like(x), breakdown=True)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("[ranksim] host") and out[1].split()[:3] == ["rank", "device", "local"]
    rows = ranksim.breakdown(compiled.last_report)
    for rank in (0, 1):
        r = rows[rank]
        # load + store twice, the put, the notify and the wait (see the kernel), the rest launch.
        assert r["local copies"] > 0 and r["remote traffic"] > 0 and r["signals and waits"] > 0
        ops = r["local copies"] + r["remote traffic"] + r["signals and waits"] + r["compute"]
        assert abs(ops + r["launch and idle"] - r["device"]) < 1e-6, "one core: ops and gaps fill the wall"
    with pytest.raises(ValueError, match="traced run"):
        ranksim.breakdown(compiled.run(x, np.zeros_like(x)))


@pl.program
class SpinsForever:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, sig: pld.DistributedTensor[[1, 1], pl.INT32], y: pl.Out[pl.Tensor[[1, 8], pl.INT32]]):
        while pl.read(sig, [0, 0]) == 0:  # nobody ever writes it
            pass
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def o(self, sig: pld.DistributedTensor[[1, 1], pl.INT32], y: pl.Out[pl.Tensor[[1, 8], pl.INT32]]):
        return self.k(sig, y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def h(self, y: pl.Out[pl.Tensor[[2, 1, 8], pl.INT32]]):
        buf = pld.alloc_window_buffer(4)
        for r in pl.range(2):
            self.o(pld.window(buf, [1, 1], dtype=pl.INT32), y[r], device=r)


def test_a_spinning_program_ends_with_a_livelock_or_its_budget():
    y = np.zeros((2, 1, 8), np.int32)
    compiled = compile_on(SpinsForever, 2)
    with pytest.raises(ranksim.LivelockError):
        compiled(y)
    spin = RunConfig(livelock_polls=0, max_events=20_000)
    with pytest.raises(ranksim.BudgetError, match="event"):
        compiled(y, config=spin)


def test_a_long_run_shows_a_progress_line_on_request():
    import subprocess
    import sys

    script = (
        "import numpy as np, ranksim, test_pypto_class_form as m\n"
        "from ranksim.pypto.runtime import RunConfig\n"
        "try:\n"
        "    m.compile_on(m.SpinsForever, 2)(np.zeros((2, 1, 8), np.int32), config=RunConfig(livelock_polls=0, max_events=40_000))\n"
        "except ranksim.BudgetError:\n"
        "    print('budget')\n"
    )
    here = __import__("os").path.dirname(__file__)
    env = dict(__import__("os").environ, RANKSIM_PROGRESS="0.02", RANKSIM_QUIET="1")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=here, env=env, timeout=300)
    assert r.stdout.strip() == "budget", r.stdout + r.stderr
    assert "[ranksim] running" in r.stderr and " events, simulated " in r.stderr, r.stderr
    assert r.stderr.endswith("\x1b[2K"), "the line is cleared when the run ends"
    quiet = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=here, env=dict(env, RANKSIM_PROGRESS="0"), timeout=300)
    assert "[ranksim] running" not in quiet.stderr


# ---- item 4's operations in a class-form program, against numpy ---------------------------

M, K, N = 16, 32, 16


@pl.program
class Ops:
    @pl.function(type=pl.FunctionType.InCore)
    def vector(self, x: pl.Tensor[[4, S], pl.FP32], y: pl.Tensor[[4, S], pl.FP32], out: pl.Out[pl.Tensor[[8, S], pl.FP32]], ragged: pl.Tensor[[1, 17], pl.FP32], rsum: pl.Out[pl.Tensor[[1, 4], pl.FP32]]):
        a, b = pl.load(x, [0, 0], [4, S]), pl.load(y, [0, 0], [4, S])
        e = pl.exp(pl.mul(a, 0.01))
        out = pl.store(pl.div(e, b), [0, 0], out)
        mask = pl.cmp(a, b, "lt")
        picked = pl.sel(mask, pl.sqrt(b), pl.log(b))
        out = pl.store(pl.add(picked, pl.recip(b)), [4, 0], out)
        r = pl.load(ragged, [0, 0], [1, 32], valid_shapes=[1, 17])  # a padded tile at a ragged end
        row = pl.full([4, 8], pl.FP32, 2.0)
        s = pl.row_sum(row)
        rsum = pl.store(pl.reshape(s, [1, 4]), [0, 0], rsum)
        out = pl.store(pl.mul(r, 2.0), [7, 0], out)  # only the 17 valid elements land
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def gemm(self, a: pl.Tensor[[M, K], pl.FP16], b: pl.Tensor[[K, N], pl.FP16], c: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
        la = pl.move(pl.load(a, [0, 0], [M, K], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Left)
        lb = pl.move(pl.load(b, [0, 0], [K, N], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Right)
        return pl.store(pl.matmul(la, lb), [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(self, x: pl.Tensor[[4, S], pl.FP32], y: pl.Tensor[[4, S], pl.FP32], out: pl.Out[pl.Tensor[[8, S], pl.FP32]], ragged: pl.Tensor[[1, 17], pl.FP32], rsum: pl.Out[pl.Tensor[[1, 4], pl.FP32]], a: pl.Tensor[[M, K], pl.FP16], b: pl.Tensor[[K, N], pl.FP16], c: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
        self.vector(x, y, out, ragged, rsum)
        return self.gemm(a, b, c)


def test_vector_ops_and_a_cube_matmul_in_a_class_form_program():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, S)).astype(np.float32)
    y = (rng.random((4, S)) + 0.5).astype(np.float32)
    out, rsum = np.zeros((8, S), np.float32), np.zeros((1, 4), np.float32)
    ragged = np.arange(17, dtype=np.float32).reshape(1, 17)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    compiled = compile_on(Ops, 1)
    compiled(x, y, out, ragged, rsum, a, b, c)
    np.testing.assert_allclose(out[:4], np.exp(x * 0.01) / y, rtol=1e-6)
    np.testing.assert_allclose(out[4:7], (np.where(x < y, np.sqrt(y), np.log(y)) + 1 / y)[:3], rtol=1e-6)
    np.testing.assert_array_equal(out[7, :17], 2 * ragged[0])
    np.testing.assert_allclose(out[7, 17:], (np.where(x < y, np.sqrt(y), np.log(y)) + 1 / y)[3, 17:], rtol=1e-6)
    assert rsum.tolist() == [[16.0] * 4]
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)
    tasks = {t["name"] for t in compiled.last_report.dispatches[0]["tasks"]}
    assert tasks == {"vector", "gemm"}


def test_a_traced_runs_operation_spans_name_their_python_lines():
    import json

    x = np.arange(2 * S, dtype=np.float32).reshape(2, 1, S)
    report = compile_on(RingPut, 2).run(x, np.zeros_like(x), trace=True)
    events = json.loads(report.chrome_trace())
    events = events["traceEvents"] if isinstance(events, dict) else events
    ops = [e for e in events if e.get("cat") == "op"]
    src = open(__file__).read().splitlines()
    put_line = next(i + 1 for i, t in enumerate(src) if "pld.tensor.put(dst, peer=peer, src=src)" in t)
    puts = [e for e in ops if e["name"] == "put"]
    assert len(puts) == 2 and all(e["args"]["line"].endswith(f"test_pypto_class_form.py:{put_line} in step") for e in puts), puts
    assert all("line" in e["args"] for e in ops), [e for e in ops if "line" not in e["args"]]
