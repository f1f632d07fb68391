"""The kernel API's enums as typed classes shared with `ranksim.pypto`: `ranksim.NotifyOp`,
`WaitCmp`, `AtomicType` and `CmpOp` carry PyPTO's codes, `pld`'s enums are the same classes,
and an operation takes the class, the code or the older string alike."""

import numpy as np
import pytest

import ranksim
import ranksim.pypto.language.distributed as pld


def test_pld_enums_are_ranksims_classes_with_pyptos_codes():
    assert pld.NotifyOp is ranksim.NotifyOp and pld.WaitCmp is ranksim.WaitCmp and pld.AtomicType is ranksim.AtomicType
    assert (ranksim.NotifyOp.AtomicAdd, ranksim.NotifyOp.Set) == (0, 1)
    assert (ranksim.WaitCmp.Eq, ranksim.WaitCmp.Ge) == (0, 1)
    assert (ranksim.AtomicType.None_, ranksim.AtomicType.Add) == (0, 1)
    assert [int(c) for c in (ranksim.CmpOp.Eq, ranksim.CmpOp.Ne, ranksim.CmpOp.Lt, ranksim.CmpOp.Le, ranksim.CmpOp.Gt, ranksim.CmpOp.Ge)] == list(range(6))


@pytest.mark.parametrize("style", ["class", "code", "string"])
def test_an_operation_takes_the_class_its_code_or_the_string(style):
    spell = {
        "class": (ranksim.NotifyOp.Set, ranksim.WaitCmp.Eq, ranksim.AtomicType.Add, ranksim.CmpOp.Lt),
        "code": (1, 0, 1, 2),
        "string": ("set", "eq", "add", "lt"),
    }[style]
    notify_op, wait_cmp, atomic, cmp = spell
    world = ranksim.Config.preset("a2a3").with_ranks(2).world()
    dom = world.create_domain("all")
    sig = world.alloc_window(dom, "sig", "i32", [1, 8])
    acc = world.alloc_window(dom, "acc", "f32", [1, 8])
    for r in range(2):
        world.write(acc, r, np.full((1, 8), 10.0, np.float32))

    def kernel(core):
        me = core.rank()
        t = core.full([1, 8], "f32", 1.0 + me)
        mask = core.cmp(t, 1.5, cmp)  # rank 0: 1 < 1.5 holds; rank 1: 2 < 1.5 does not
        core.remote_store(core.adds(mask, 2.0), acc, 1 - me, [0, 0], atomic)
        core.fence()
        core.notify(sig, 1 - me, [0, me], 7, notify_op)
        core.wait(sig, [0, 1 - me], 7, wait_cmp)

    d = ranksim.Dispatch("enums")
    d.add(ranksim.Task("k", 1, kernel))
    world.dispatch_all(dom, d)
    world.run()
    # rank 1 got rank 0's mask (1) + 2 added to its 10; rank 0 got rank 1's (0) + 2.
    assert world.read(acc, 1).tolist() == [[13.0] * 8]
    assert world.read(acc, 0).tolist() == [[12.0] * 8]
    assert world.read(sig, 0)[0, 1] == 7 and world.read(sig, 1)[0, 0] == 7


def test_an_unknown_spelling_is_refused_by_name():
    world = ranksim.Config.preset("a2a3").with_ranks(1).world()
    dom = world.create_domain("all")
    sig = world.alloc_window(dom, "sig", "i32", [1, 8])
    d = ranksim.Dispatch("bad")
    d.add(ranksim.Task("k", 1, lambda core: core.notify(sig, 0, [0, 0], 1, 7)))
    world.dispatch_all(dom, d)
    with pytest.raises(ranksim.KernelError, match=r"unknown notify op `7`"):
        world.run()
