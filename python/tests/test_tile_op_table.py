"""The tile operations declared once: sim-core's list (`for_each_tile_op!`) reaches Python as
`ranksim._native.TILE_OPS`, as the methods of `ranksim.Core` and as `pl` functions. Checks the
three agree, and that the `pl` functions made from the table compute what the core does."""

import numpy as np

import ranksim
import ranksim.pypto.language as pl
import ranksim.pypto.language.distributed as pld
from ranksim._native import TILE_OPS
from ranksim.pypto.ir.distributed_compiled_program import DistributedConfig
from ranksim.pypto.runtime import RunConfig

R, C = 4, 16


def test_every_bound_entry_is_a_core_method_with_the_lists_doc():
    bound = [(name, doc) for name, b, _kinds, _ret, doc in TILE_OPS if b]
    assert len(bound) >= 30
    for name, doc in bound:
        assert name in ranksim.Core.__dict__, name
        assert ranksim.Core.__dict__[name].__doc__.startswith(doc.split(" ")[0]), name
    # A Rust-only entry (an enum argument) is not generated; Python writes its own or none.
    rust_only = {name for name, b, *_ in TILE_OPS if not b}
    assert {"reduce", "unary", "binary", "cmp", "cast"} <= rust_only
    assert not rust_only & set(ranksim.Core.__dict__)
    assert {"cmp", "cast", "full", "reshape", "select"} <= set(ranksim.Core.__base__.__dict__)
    assert ranksim.Core.__base__.__name__ == "CoreBase"


def test_pl_has_every_bound_tile_operation_of_one_or_two_operands():
    shapes = {("Tile",), ("Tile", "Tile"), ("Tile", "f64")}
    for name, b, kinds, ret, _doc in TILE_OPS:
        if b and ret == "Tile" and tuple(kinds) in shapes:
            assert callable(getattr(pl, name)), name
            assert getattr(pl.tile, name) is getattr(pl, name), name
            assert name in pl.__all__, name


@pl.jit.incore
def table_ops(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[4 * R, C], pl.FP32]]):
    t = pl.load(x, [0, 0], [R, C])
    y = pl.store(pl.subs(pl.adds(t, 3.0), 1.0), [0, 0], y)
    y = pl.store(pl.maxs(pl.muls(t, -1.0), -20.0), [R, 0], y)
    y = pl.store(pl.row_expand(t, pl.row_max(t)), [2 * R, 0], y)
    y = pl.store(pl.sqrt(x), [3 * R, 0], y)  # a tensor operand is loaded whole
    return y


@pl.jit
def table_ops_orch(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[4 * R, C], pl.FP32]]):
    return table_ops(x, y)


@pl.jit.host
def table_ops_host(x: pl.Tensor[[1, R, C], pl.FP32], y: pl.Out[pl.Tensor[[1, 4 * R, C], pl.FP32]]):
    for r in pl.range(pld.world_size()):
        table_ops_orch(x[r], y[r], device=r)


def test_pl_functions_made_from_the_table_compute_the_cores_operations():
    x = np.arange(R * C, dtype=np.float32).reshape(1, R, C)
    y = np.zeros((1, 4 * R, C), np.float32)
    cfg = RunConfig(platform="a2a3sim", distributed_config=DistributedConfig(device_ids=[0]))
    table_ops_host.compile(x, y, config=cfg).run(x, y)
    t = x[0]
    np.testing.assert_array_equal(y[0, :R], t + 2.0)
    np.testing.assert_array_equal(y[0, R : 2 * R], np.maximum(-t, -20.0))
    np.testing.assert_array_equal(y[0, 2 * R : 3 * R], np.repeat(t.max(axis=1, keepdims=True), C, axis=1))
    np.testing.assert_allclose(y[0, 3 * R :], np.sqrt(t), rtol=1e-7)
