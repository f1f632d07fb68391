"""``ranksim.pypto.ir``: the parts of ``pypto.ir`` a distributed program imports."""

from .distributed_compiled_program import DistributedCompiledProgram, DistributedConfig

__all__ = ["DistributedCompiledProgram", "DistributedConfig"]
