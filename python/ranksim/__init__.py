"""ranksim from Python: a deterministic cycle-approximate multi-chip simulator.

    import ranksim
    world = ranksim.Config.preset("a2a3").world()

See docs/python.md in the ranksim repository.
"""

from enum import Enum

from ._errors import (
    BadArgument,
    BudgetError,
    ConfigError,
    DeadlockError,
    KernelError,
    LivelockError,
    MemoryLimitError,
    SimError,
)
from ._native import (
    AtomicType,
    CheckReport,
    CmpOp,
    Config,
    Core,
    CubeTile,
    Dispatch,
    Domain,
    Finding,
    NotifyOp,
    RunReport,
    SdmaHandle,
    Task,
    Tensor,
    Tile,
    WaitCmp,
    World,
    bench,
    check,
    point,
    sweep,
)


class dtype(str, Enum):
    """Element types; every API that takes a dtype also takes its string ("f32", ...)."""

    f32 = "f32"
    f16 = "f16"
    bf16 = "bf16"
    i32 = "i32"
    i16 = "i16"
    i8 = "i8"

    def __str__(self):
        return self.value


from .breakdown import breakdown, format_breakdown  # noqa: E402

__all__ = [
    "AtomicType",
    "BadArgument",
    "BudgetError",
    "MemoryLimitError",
    "CheckReport",
    "CmpOp",
    "Config",
    "ConfigError",
    "Core",
    "CubeTile",
    "DeadlockError",
    "Dispatch",
    "Domain",
    "Finding",
    "KernelError",
    "LivelockError",
    "NotifyOp",
    "RunReport",
    "SdmaHandle",
    "SimError",
    "Task",
    "Tensor",
    "Tile",
    "WaitCmp",
    "World",
    "bench",
    "breakdown",
    "format_breakdown",
    "check",
    "dtype",
    "point",
    "sweep",
]
