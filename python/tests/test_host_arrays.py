"""Host arrays in and out of a world without copies: World.write / read / read_into take numpy
buffers directly, World.lend makes a host array the GM copy itself, and a PyPTO program's
plain run lends its arguments, with the semantics of separate device copies."""

import numpy as np
import pytest

import ranksim
import ranksim.pypto.language as pl
from ranksim.pypto.ir.distributed_compiled_program import DistributedConfig
from ranksim.pypto.runtime import RunConfig


def two_ranks():
    world = ranksim.Config.preset("a2a3").with_ranks(2).world()
    return world, world.create_domain("d")


def copy_kernel(src, dst, n):
    def kernel(core):
        core.store(core.adds(core.load(src, [0, 0], [1, n]), 1.0), dst, [0, 0])

    return kernel


def test_write_and_read_take_numpy_buffers_in_any_layout():
    world, _ = two_ranks()
    t = world.alloc_tensor("t", "i16", [2, 3])
    strided = np.arange(12, dtype=np.int64).reshape(2, 6)[:, ::2]  # not contiguous, not i16
    world.write(t, 1, strided)
    np.testing.assert_array_equal(world.read(t, 1), strided)
    out = np.full((6,), 7, np.int16)
    assert world.read_into(t, 1, out)
    np.testing.assert_array_equal(out, strided.reshape(-1))
    # An array that cannot take the bytes as they are is left alone.
    for bad in (np.zeros(6, np.int32), np.zeros(5, np.int16), np.zeros((2, 6), np.int16)[:, ::2], [0] * 6):
        before = np.array(bad, copy=True)
        assert not world.read_into(t, 1, bad)
        np.testing.assert_array_equal(np.asarray(bad), before)


def test_a_lent_input_is_read_in_place_and_a_lent_output_written_in_place():
    world, dom = two_ranks()
    n = 64
    src = world.alloc_tensor("src", "f32", [1, n])
    dst = world.alloc_tensor("dst", "f32", [1, n])
    x = np.arange(2 * n, dtype=np.float32).reshape(2, 1, n)
    y = np.zeros((2, 1, n), np.float32)
    for r in range(2):
        assert world.lend(src, r, x[r])
        assert world.lend(dst, r, y[r], writable=True)
    x[1, 0, 0] = 100.0  # the host's array is the copy: a change before the run is seen
    world.dispatch_all(dom, ranksim.Dispatch.kernel("inc", 1, copy_kernel(src, dst, n)))
    world.run()
    want = np.arange(2 * n, dtype=np.float32).reshape(2, 1, n) + 1
    want[1, 0, 0] = 101.0
    np.testing.assert_array_equal(y, want)  # written in place, nothing read back
    np.testing.assert_array_equal(world.read(dst, 0), want[0])
    world.end_loans()
    np.testing.assert_array_equal(world.read(dst, 0), np.zeros((1, n)))  # the loan ended: zeros
    np.testing.assert_array_equal(y, want)  # the host keeps its results


def test_a_kernel_writing_a_read_only_loan_gets_a_copy_of_its_own():
    world, dom = two_ranks()
    n = 64
    t = world.alloc_tensor("t", "f32", [1, n])
    x = np.ones((2, 1, n), np.float32)
    for r in range(2):
        assert world.lend(t, r, x[r])
    world.dispatch_all(dom, ranksim.Dispatch.kernel("inc", 1, copy_kernel(t, t, n)))
    world.run()
    np.testing.assert_array_equal(x, np.ones((2, 1, n)))  # the host's input is as it was
    np.testing.assert_array_equal(world.read(t, 1), np.full((1, n), 2.0))
    world.end_loans()


def test_what_cannot_be_lent_is_refused_or_raises():
    world, dom = two_ranks()
    t = world.alloc_tensor("t", "f32", [1, 8])
    assert not world.lend(t, 0, np.zeros((1, 8), np.float64))  # another dtype
    assert not world.lend(t, 0, np.zeros((1, 16), np.float32)[:, ::2])  # not contiguous
    ro = np.zeros((1, 8), np.float32)
    ro.flags.writeable = False
    assert not world.lend(t, 0, ro, writable=True)
    assert world.lend(t, 0, ro)  # read-only is fine for an input
    with pytest.raises(ranksim.BadArgument, match="whole GM buffer"):
        world.lend(t.slice([0, 0], [1, 4]), 0, np.zeros((1, 4), np.float32))
    with pytest.raises(ranksim.BadArgument):
        world.lend(t, 5, np.zeros((1, 8), np.float32))
    world.end_loans()
    timing = ranksim.Config.preset("a2a3").with_ranks(2).world()
    timing.set_timing_only()
    tt = timing.alloc_tensor("t", "f32", [1, 8])
    assert not timing.lend(tt, 0, np.zeros((1, 8), np.float32))  # keeps no values: nothing to lend


@pl.jit.incore
def bump(x: pl.Tensor[[1, 64], pl.FP32], y: pl.Out[pl.Tensor[[1, 64], pl.FP32]]):
    t = pl.load(x, [0, 0], [1, 64])
    pl.store(pl.add(t, 1.0), [0, 0], x)  # writes its input: the host's x must not change
    return pl.store(pl.add(t, 2.0), [0, 0], y)


@pl.jit.host
def bump_all(x: pl.Tensor[[2, 1, 64], pl.FP32], y: pl.Out[pl.Tensor[[2, 1, 64], pl.FP32]]):
    for r in pl.range(2):
        bump(x[r], y[r], device=r)


def test_a_pypto_run_lends_its_arrays_with_the_semantics_of_device_copies():
    x = np.arange(128, dtype=np.float32).reshape(2, 1, 64)
    y = np.zeros_like(x)
    cfg = RunConfig(platform="a2a3sim", distributed_config=DistributedConfig(device_ids=[0, 1]))
    compiled = bump_all.compile(x, y, config=cfg)
    for _ in range(2):  # a second call on the same program lends again
        y[:] = 0
        compiled.run(x, y)
        np.testing.assert_array_equal(x, np.arange(128, dtype=np.float32).reshape(2, 1, 64))
        np.testing.assert_array_equal(y, x + 2)
    # In place: the same array as input and output copies (separate device copies).
    z = np.arange(128, dtype=np.float32).reshape(2, 1, 64)
    compiled.run(z, z)
    np.testing.assert_array_equal(z, np.arange(128, dtype=np.float32).reshape(2, 1, 64) + 2)
