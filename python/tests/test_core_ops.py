"""The vector operations PyPTO programs use (exp, log, sqrt, recip, div, cmp, select, full,
partial loads, ...) through `ranksim.Core`: values against numpy in f32, f16 and bf16, their
closed-form cost on the a2a3 preset, and the errors they raise."""

import math

import numpy as np
import pytest

import ranksim
import ranksim.pypto.language as pl
import ranksim.pypto.language.distributed as pld
from ranksim.pypto.ir.distributed_compiled_program import DistributedConfig
from ranksim.pypto.runtime import RunConfig

FLOATS = ["f32", "f16", "bf16"]
NP = {"f32": np.float32, "f16": np.float16, "bf16": np.float32, "i32": np.int32, "i16": np.int16, "i8": np.int8}


def to_dtype(x, dt):
    """float64 values rounded once, to nearest even, to `dt` (as float64)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore"):
        if dt == "f32":
            return x.astype(np.float32).astype(np.float64)
        if dt == "f16":
            return x.astype(np.float16).astype(np.float64)
    if dt == "bf16":  # 8 significant bits, round half to even (np.rint); normal range only
        m, e = np.frexp(x)
        r = np.where(np.isfinite(x), np.ldexp(np.rint(m * 2.0**8), e - 8), x)
        return np.where(np.abs(r) > 3.3895313892515355e38, np.copysign(np.inf, r), r)
    raise ValueError(dt)


def run(kernel, tensors, outs, ranks=1):
    """Runs `kernel(core, t)` on one core of rank 0 of the a2a3 preset, `t` the GM tensors
    `{name: (dtype, array)}` staged on rank 0 and `outs` `{name: (dtype, shape)}` zeroed;
    returns `{name: array}` of the outputs read back, and the report."""
    world = ranksim.Config.preset("a2a3").with_ranks(ranks).world()
    dom = world.create_domain("all")
    t = {}
    for name, (dt, arr) in tensors.items():
        arr = np.asarray(arr)
        t[name] = world.alloc_tensor(name, dt, list(arr.shape))
        world.write(t[name], 0, arr)
    for name, (dt, shape) in outs.items():
        t[name] = world.alloc_tensor(name, dt, list(shape))
    d = ranksim.Dispatch("ops")
    d.add(ranksim.Task("ops", 1, lambda core: kernel(core, t) if core.rank() == 0 else None))
    world.dispatch_all(dom, d)
    report = world.run()
    return {name: world.read(t[name], 0).astype(np.float64) for name in outs}, report


X = np.array([[0.5, 1.0, 2.0, 3.0, 0.25, 8.0, 10.0, 100.0], [-0.5, -1.0, -2.0, 5.0, 0.75, -8.0, 1.5, -100.0]])
Y = np.array([[2.0, -1.0, 4.0, 3.0, 0.5, -2.0, 7.0, 0.125], [3.0, 1.0, 2.0, -6.0, 0.75, 16.0, -1.5, 10.0]])

UNARY = {
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "recip": lambda x: 1.0 / x,
    "abs": np.abs,
    "neg": np.negative,
    "relu": lambda x: np.maximum(x, 0.0),
}
EXACT = {"sqrt", "recip", "abs", "neg", "relu"}  # correctly rounded: equal to numpy's rounding


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_ops_match_numpy(dt, op):
    x = np.abs(X) if op in ("log", "sqrt", "rsqrt") else X / 8 if op == "exp" else X
    x = to_dtype(x, dt)

    def kernel(core, t):
        a = core.load(t["x"], [0, 0], [2, 8])
        core.store(getattr(core, op)(a), t["out"], [0, 0])

    got, _ = run(kernel, {"x": (dt, x.astype(NP[dt]))}, {"out": (dt, (2, 8))})
    with np.errstate(divide="ignore", invalid="ignore"):
        want = to_dtype(UNARY[op](x), dt)
    if op in EXACT:
        np.testing.assert_array_equal(got["out"], want)
    else:  # one rounding of a libm value: within one ulp of numpy's
        ulp = {"f32": 2.0**-23, "f16": 2.0**-10, "bf16": 2.0**-7}[dt]
        np.testing.assert_allclose(got["out"], want, rtol=ulp, atol=0)


BINARY = {
    "sub": lambda x, y: x - y,
    "div": lambda x, y: x / y,
    "add": lambda x, y: x + y,
    "mul": lambda x, y: x * y,
    "max": np.maximum,
    "min": np.minimum,
}
SCALAR = {"subs": lambda x, s: x - s, "divs": lambda x, s: x / s, "maxs": np.maximum, "mins": np.minimum}


@pytest.mark.parametrize("dt", FLOATS)
def test_binary_and_scalar_ops_match_numpy(dt):
    x, y = to_dtype(X, dt), to_dtype(Y, dt)
    outs = {f"o_{n}": (dt, (2, 8)) for n in list(BINARY) + list(SCALAR)}

    def kernel(core, t):
        a = core.load(t["x"], [0, 0], [2, 8])
        b = core.load(t["y"], [0, 0], [2, 8])
        for n in BINARY:
            core.store(getattr(core, n)(a, b), t[f"o_{n}"], [0, 0])
        for n in SCALAR:
            core.store(getattr(core, n)(a, 3.0), t[f"o_{n}"], [0, 0])

    got, _ = run(kernel, {"x": (dt, x.astype(NP[dt])), "y": (dt, y.astype(NP[dt]))}, outs)
    for n, f in BINARY.items():
        np.testing.assert_array_equal(got[f"o_{n}"], to_dtype(f(x, y), dt), err_msg=n)
    for n, f in SCALAR.items():
        np.testing.assert_array_equal(got[f"o_{n}"], to_dtype(f(x, 3.0), dt), err_msg=n)


def test_integer_tiles_wrap_and_divide_toward_zero():
    x = np.array([[7, -7, -128, 127, 0, 5, -1, 100]], dtype=np.int8)

    def kernel(core, t):
        a = core.load(t["x"], [0, 0], [1, 8])
        core.store(core.divs(a, 2.0), t["d"], [0, 0])
        core.store(core.abs(a), t["a"], [0, 0])
        core.store(core.neg(a), t["n"], [0, 0])
        core.store(core.subs(a, 1.0), t["s"], [0, 0])

    got, _ = run(kernel, {"x": ("i8", x)}, {k: ("i8", (1, 8)) for k in "dans"})
    assert got["d"].tolist() == [[3, -3, -64, 63, 0, 2, 0, 50]]
    assert got["a"].tolist() == [[7, 7, -128, 127, 0, 5, 1, 100]]
    assert got["n"].tolist() == [[-7, 7, -128, -127, 0, -5, 1, -100]]
    assert got["s"].tolist() == [[6, -8, 127, 126, -1, 4, -2, 99]]


CMPS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}


@pytest.mark.parametrize("dt", FLOATS + ["i32"])
def test_cmp_gives_zero_one_tiles_and_select_takes_them(dt):
    x = to_dtype(X, dt) if dt != "i32" else np.trunc(X)
    y = to_dtype(np.where(np.arange(16).reshape(2, 8) % 3 == 0, X, Y), dt) if dt != "i32" else np.trunc(Y)
    names = list(CMPS)
    outs = {f"t_{c}": (dt, (2, 8)) for c in names}
    outs.update({f"s_{c}": (dt, (2, 8)) for c in names})
    outs.update({"code": (dt, (2, 8)), "sel": (dt, (2, 8)), "sels": (dt, (2, 8)), "relu": (dt, (2, 8))})

    def kernel(core, t):
        a = core.load(t["x"], [0, 0], [2, 8])
        b = core.load(t["y"], [0, 0], [2, 8])
        for c in names:
            core.store(core.cmp(a, b, c), t[f"t_{c}"], [0, 0])
            core.store(core.cmp(a, 2.0, c), t[f"s_{c}"], [0, 0])
        core.store(core.cmp(a, b, 2), t["code"], [0, 0])  # PyPTO's cmp_type 2 = LT
        m = core.cmp(a, b, "gt")
        core.store(core.select(m, a, b), t["sel"], [0, 0])
        core.store(core.select(core.cmp(a, 0, "ge"), a, 0.0), t["sels"], [0, 0])
        core.store(core.relu(a), t["relu"], [0, 0])

    got, _ = run(kernel, {"x": (dt, x.astype(NP[dt])), "y": (dt, y.astype(NP[dt]))}, outs)
    for c, f in CMPS.items():
        np.testing.assert_array_equal(got[f"t_{c}"], f(x, y).astype(np.float64), err_msg=c)
        np.testing.assert_array_equal(got[f"s_{c}"], f(x, 2.0).astype(np.float64), err_msg=c + "s")
    np.testing.assert_array_equal(got["code"], (x < y).astype(np.float64))
    np.testing.assert_array_equal(got["sel"], np.where(x > y, x, y))
    np.testing.assert_array_equal(got["sels"], got["relu"])


@pytest.mark.parametrize("dt", FLOATS + ["i16"])
def test_full_expands_and_row_col_broadcasts(dt):
    x = to_dtype(X, dt) if dt != "i16" else np.trunc(X)

    def kernel(core, t):
        core.store(core.full([2, 8], dt, 0.1), t["full"], [0, 0])
        core.store(core.full([8], getattr(ranksim.dtype, dt, dt), -3), t["row"], [0, 0])
        a = core.load(t["x"], [0, 0], [2, 8])
        core.store(core.expands(a, 7.0), t["exp"], [0, 0])
        core.store(core.row_expand(a, core.row_max(a)), t["rexp"], [0, 0])
        core.store(core.col_expand(a, core.col_min(a)), t["cexp"], [0, 0])
        core.store(core.row_min(a), t["rmin"], [0, 0])

    outs = {"full": (dt, (2, 8)), "row": (dt, (1, 8)), "exp": (dt, (2, 8)), "rexp": (dt, (2, 8))}
    outs.update({"cexp": (dt, (2, 8)), "rmin": (dt, (2, 1))})
    got, _ = run(kernel, {"x": (dt, x.astype(NP[dt]))}, outs)
    tenth = to_dtype(0.1, dt) if dt != "i16" else 0.0
    np.testing.assert_array_equal(got["full"], np.full((2, 8), tenth))
    np.testing.assert_array_equal(got["row"], np.full((1, 8), -3.0))
    np.testing.assert_array_equal(got["exp"], np.full((2, 8), 7.0))
    np.testing.assert_array_equal(got["rexp"], np.repeat(x.max(axis=1, keepdims=True), 8, axis=1))
    np.testing.assert_array_equal(got["cexp"], np.repeat(x.min(axis=0, keepdims=True), 2, axis=0))
    np.testing.assert_array_equal(got["rmin"], x.min(axis=1, keepdims=True))


def test_reshape_takes_a_shape_list_or_rows_and_cols():
    x = np.arange(16, dtype=np.float32).reshape(2, 8)

    def kernel(core, t):
        a = core.load(t["x"], [0, 0], [2, 8])
        core.store(core.reshape(a, [4, 4]), t["a"], [0, 0])
        core.store(core.reshape(a, 8, 2), t["b"], [0, 0])
        core.store(core.reshape(a, [16]), t["c"], [0, 0])
        core.store(core.reshape(a, [2, 2, 4]), t["d"], [0, 0])

    outs = {"a": ("f32", (4, 4)), "b": ("f32", (8, 2)), "c": ("f32", (1, 16)), "d": ("f32", (4, 4))}
    got, _ = run(kernel, {"x": ("f32", x)}, outs)
    for k in outs:
        assert got[k].ravel().tolist() == list(range(16)), k


@pytest.mark.parametrize("dt", FLOATS)
def test_a_partial_valid_load_reads_only_the_valid_region(dt):
    x = to_dtype(np.arange(8 * 16).reshape(8, 16) / 4.0, dt)
    seen = {}

    def kernel(core, t):
        tile = core.load(t["x"], [2, 0], [4, 16], valid_shape=[3, 5])
        same = core.load_valid(t["x"], [2, 0], [4, 16], [3, 5])
        assert same.valid_shape == tile.valid_shape and (same.numpy() == tile.numpy()).all()
        seen["shape"], seen["valid"], seen["values"] = tile.shape, tile.valid_shape, tile.numpy()
        core.store(core.adds(tile, 1.0), t["out"], [2, 0])

    got, _ = run(kernel, {"x": (dt, x.astype(NP[dt]))}, {"out": (dt, (8, 16))})
    assert seen["shape"] == (4, 16) and seen["valid"] == (3, 5)
    want = np.zeros((4, 16))
    want[:3, :5] = x[2:5, :5]
    np.testing.assert_array_equal(seen["values"], want)
    out = np.zeros((8, 16))
    out[2:5, :5] = to_dtype(x[2:5, :5] + 1.0, dt)
    np.testing.assert_array_equal(got["out"], out)


def test_remote_load_takes_a_valid_shape():
    world = ranksim.Config.preset("a2a3").with_ranks(2).world()
    dom = world.create_domain("all")
    win = world.alloc_window(dom, "win", "bf16", [4, 16])
    out = world.alloc_tensor("out", "bf16", [4, 16])
    world.write(win, 1, np.arange(64, dtype=np.float32).reshape(4, 16))
    seen = {}

    def kernel(core):
        if core.rank() == 0:
            t = core.remote_load(win, 1, [0, 0], [4, 16], valid_shape=[2, 3])
            seen["valid"] = t.valid_shape
            core.store(t, out, [0, 0])

    world.dispatch_all(dom, ranksim.Dispatch.kernel("pull", 1, kernel))
    world.run()
    assert seen["valid"] == (2, 3)
    want = np.zeros((4, 16), dtype=np.float32)
    want[:2, :3] = np.arange(64).reshape(4, 16)[:2, :3]
    np.testing.assert_array_equal(world.read(out, 0), want)


def ps(cycles):
    """Cycles of the a2a3 preset's 1.85 GHz clock in picoseconds, rounded up."""
    return -(-cycles * 10**12 // 1_850_000_000)


# Each op's [chip.vector.ops] entry in configs/a2a3.toml, for a 16 x 256 tile (4096 elements,
# 64 f32 or 128 f16 lanes per repeat).
COSTS = {
    "exp": lambda n, lanes: 31 + n // 32,
    "log": lambda n, lanes: 33 + n // 32,
    "sqrt": lambda n, lanes: 31 + n // 32,
    "rsqrt": lambda n, lanes: 24 + n // lanes,
    "recip": lambda n, lanes: 45 + math.ceil(n / 13),
    "abs": lambda n, lanes: 33 + n // lanes,
    "relu": lambda n, lanes: 23 + n // lanes,
    "neg": lambda n, lanes: 33 + n // lanes,  # muls by -1: add's class
}


@pytest.mark.parametrize("dt,lanes", [("f32", 64), ("bf16", 128)])
def test_each_op_costs_its_closed_form_on_a2a3(dt, lanes):
    n = 16 * 256
    spent = {}

    def kernel(core, t):
        a = core.full([16, 256], dt, 1.5)
        b = core.full([16, 256], dt, 0.5)

        def timed(name, f):
            start = core.now()
            f()
            spent[name] = core.now() - start

        for op in COSTS:
            timed(op, lambda: getattr(core, op)(a))
        timed("div", lambda: core.div(a, b))
        timed("divs", lambda: core.divs(a, 3.0))
        timed("sub", lambda: core.sub(a, b))
        timed("cmp", lambda: core.cmp(a, b, "lt"))
        timed("cmps", lambda: core.cmp(a, 1.0, "lt"))
        timed("select", lambda: core.select(a, a, b))
        timed("full", lambda: core.full([16, 256], dt, 0.0))
        col = core.full([16, 1], dt, 2.0)
        timed("row_expand", lambda: core.row_expand(a, col))
        timed("add", lambda: core.add(a, b))

    run(kernel, {}, {})
    want = {op: f(n, lanes) for op, f in COSTS.items()}
    want.update(div=31 + n // 16, divs=45 + math.ceil(n / 13), sub=33 + n // lanes, add=33 + n // lanes)
    want.update(cmp=36 + 2 * (n // lanes), cmps=36 + 2 * (n // lanes), full=24 + n // lanes)
    want["select"] = 25 + 2 * (n // lanes) + 30 * 16
    want["row_expand"] = 37 + n // lanes + 13 * 16
    assert spent == {op: ps(c) for op, c in want.items()}


def test_errors_name_the_argument_and_what_to_change():
    def expect(kernel, *words):
        with pytest.raises(ranksim.SimError) as e:
            run(kernel, {}, {})
        for w in words:
            assert w in str(e.value), str(e.value)
        assert "DType::" not in str(e.value)

    expect(lambda core, t: core.exp(core.full([1, 8], "i32", 1)), "exp", "float tiles", "cast")
    expect(lambda core, t: core.cmp(core.full([1, 8], "f32", 1), 1.0, "less"), "cmp", "unknown comparison", "lt")
    expect(lambda core, t: core.select(core.full([1, 8], "f32", 1), core.full([1, 8], "f32", 1), "x"), "select", "`b`", "tile or a number")
    expect(lambda core, t: core.full("big", "f32", 1), "full", "shape", "[rows, cols]")
    expect(lambda core, t: core.full([0, 8], "f32", 1), "full", "0x8")
    expect(lambda core, t: core.div(core.full([1, 8], "f32", 1), core.full([1, 4], "f32", 1)), "div", "same dtype, shape")


def test_a_cube_task_multiplies_and_an_aiv_task_after_it_reads_the_result():
    """`Task.on_cube()`: load_l1, to_l0a / to_l0b, matmul / matmul_acc, store_acc on an AIC core
    (values exact for small integers: each product exact, summed in f32), then vector work on
    the result in an AIV task ordered after it; the matmul costs `14 + ceil(M/16) ceil(K/16)
    ceil(N/16)` cycles on a2a3 and each L0 move `ceil(bytes / rate)` cycles."""
    world = ranksim.Config.preset("a2a3").with_ranks(1).world()
    dom = world.create_domain("all")
    a = (np.arange(32 * 32) % 7 - 3).reshape(32, 32)
    b = (np.arange(32 * 16) % 5 - 2).reshape(32, 16)
    ta = world.alloc_tensor("a", "f16", [32, 32])
    tc, out = world.alloc_tensor("c", "f32", [32, 16]), world.alloc_tensor("out", "f32", [32, 16])
    tb16 = world.alloc_tensor("b16", "f16", [32, 16])
    world.write(ta, 0, a)
    world.write(tb16, 0, b)
    spent = {}

    def cube(core):
        l1a, l1b = core.load_l1(ta, [0, 0], [32, 32]), core.load_l1(tb16, [0, 0], [32, 16])
        assert (l1a.buf, l1a.shape, l1a.dtype) == ("L1", (32, 32), "f16")
        t0 = core.now()
        la = core.to_l0a(l1a)
        t1 = core.now()
        lb = core.to_l0b(l1b)
        t2 = core.now()
        acc = core.matmul(la, lb)
        t3 = core.now()
        acc = core.matmul_acc(acc, la, lb)
        spent.update(l0a=t1 - t0, l0b=t2 - t1, matmul=t3 - t2, acc=acc.buf)
        core.store_acc(acc, tc, [0, 0])

    def vector(core):
        t = core.load(tc, [0, 0], [32, 16])
        core.store(core.muls(t, 0.5), out, [0, 0])

    d = ranksim.Dispatch("mixed")
    mm = d.add(ranksim.Task("mm", 1, cube).on_cube().input(ta).input(tb16).output(tc))
    d.add(ranksim.Task("half", 1, vector).after(mm).input(tc).output(out))
    world.dispatch(0, d)
    world.run()
    np.testing.assert_array_equal(world.read(out, 0), (a @ b).astype(np.float32))
    # 2 KiB f16 into L0A at 256 B per cycle, 1 KiB into L0B at 128; 2 x 2 x 1 blocks of 16^3.
    assert spent == {"l0a": ps(8), "l0b": ps(8), "matmul": ps(14 + 4), "acc": "L0C"}

    def vector_on_cube(core):
        core.load(tc, [0, 0], [32, 16])

    bad = ranksim.Dispatch("bad")
    bad.add(ranksim.Task("v", 1, vector_on_cube).on_cube())
    world.dispatch(0, bad)
    with pytest.raises(ranksim.BadArgument, match="AIC"):
        world.run()


# ---- rem / rems (TREM / TREMS): declared once, in sim-core's list of tile operations ---------


def test_rem_and_rems_take_the_divisors_sign_and_cost_a_division():
    """`rem` / `rems` equal numpy's `remainder` (the sign of the divisor) on float and integer
    tiles and cost what `div` / `divs` cost; an integer divisor of 0 is refused."""
    x, y = to_dtype(X, "f32"), to_dtype(Y, "f32")
    xi = np.array([[7, -7, 7, -7, 0, 100, -100, 2**31 - 1]], dtype=np.int32)
    yi = np.array([[3, 3, -3, -3, 5, 7, 7, 2]], dtype=np.int32)
    spent = {}

    def kernel(core, t):
        a, b = core.load(t["x"], [0, 0], [2, 8]), core.load(t["y"], [0, 0], [2, 8])
        ops = {"rem": lambda: core.rem(a, b), "div": lambda: core.div(a, b)}
        ops.update(rems=lambda: core.rems(a, -3.0), divs=lambda: core.divs(a, -3.0))
        for name, f in ops.items():
            start = core.now()
            r = f()
            spent[name] = core.now() - start
            core.store(r, t[name], [0, 0])
        ai, bi = core.load(t["xi"], [0, 0], [1, 8]), core.load(t["yi"], [0, 0], [1, 8])
        core.store(core.rem(ai, bi), t["remi"], [0, 0])
        core.store(core.rems(ai, 4.0), t["remsi"], [0, 0])

    tensors = {"x": ("f32", x.astype(np.float32)), "y": ("f32", y.astype(np.float32)), "xi": ("i32", xi), "yi": ("i32", yi)}
    outs = {n: ("f32", (2, 8)) for n in ("rem", "div", "rems", "divs")} | {"remi": ("i32", (1, 8)), "remsi": ("i32", (1, 8))}
    got, _ = run(kernel, tensors, outs)
    np.testing.assert_array_equal(got["rem"], to_dtype(np.remainder(x, y), "f32"))
    np.testing.assert_array_equal(got["rems"], to_dtype(np.remainder(x, -3.0), "f32"))
    assert got["remi"].tolist() == np.remainder(xi, yi).tolist() == [[1, 2, -2, -1, 0, 2, 5, 1]]
    assert got["remsi"].tolist() == np.remainder(xi, 4).tolist()
    assert spent["rem"] == spent["div"] > 0 and spent["rems"] == spent["divs"] > 0

    def by_zero(core, t):
        core.rem(core.full([1, 8], "i32", 7), core.full([1, 8], "i32", 0))

    with pytest.raises(ranksim.SimError, match=r"rem of a i32 tile by a tile holding 0"):
        run(by_zero, {}, {})


@pl.jit.incore
def rem_kernel(x: pl.Tensor[[2, 16], pl.FP32], d: pl.Tensor[[2, 16], pl.FP32], y: pl.Out[pl.Tensor[[6, 16], pl.FP32]]):
    t = pl.load(x, [0, 0], [2, 16])
    y = pl.store(pl.rem(t, d), [0, 0], y)  # a tensor operand is loaded whole
    y = pl.store(pl.rem(t, 3.0), [2, 0], y)
    y = pl.store(pl.rems(t, -2.5), [4, 0], y)
    return y


@pl.jit
def rem_orch(x: pl.Tensor[[2, 16], pl.FP32], d: pl.Tensor[[2, 16], pl.FP32], y: pl.Out[pl.Tensor[[6, 16], pl.FP32]]):
    return rem_kernel(x, d, y)


@pl.jit.host
def rem_host(x: pl.Tensor[[1, 2, 16], pl.FP32], d: pl.Tensor[[1, 2, 16], pl.FP32], y: pl.Out[pl.Tensor[[1, 6, 16], pl.FP32]]):
    for r in pl.range(pld.world_size()):
        rem_orch(x[r], d[r], y[r], device=r)


def test_pl_rem_is_made_from_the_op_table():
    """`pl.rem` (a tile and a tile, a tensor or a number) and `pl.rems` have no Python of their
    own: `ranksim.pypto` makes them from the core's op table."""
    x = (np.arange(2 * 16, dtype=np.float32).reshape(1, 2, 16) - 10.0) / 2
    d = np.flip(x, axis=2) + 0.75
    y = np.zeros((1, 6, 16), np.float32)
    cfg = RunConfig(platform="a2a3sim", distributed_config=DistributedConfig(device_ids=[0]))
    rem_host.compile(x, d, y, config=cfg).run(x, d, y)
    np.testing.assert_array_equal(y[0, :2], np.remainder(x[0], d[0]))
    np.testing.assert_array_equal(y[0, 2:4], np.remainder(x[0], 3.0))
    np.testing.assert_array_equal(y[0, 4:], np.remainder(x[0], -2.5))
    assert pl.rem.__doc__.startswith("`a mod b` element-wise with the sign of `b` (TREM)")
