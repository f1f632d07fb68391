"""``ranksim.pypto.ir``: the parts of ``pypto.ir`` a distributed program imports, and
``ir.compile`` for ``@pl.program`` classes."""

from .distributed_compiled_program import DistributedCompiledProgram, DistributedConfig


def compile(program, output_dir=None, *args, platform=None, distributed_config=None, **options):  # noqa: A001
    """``ir.compile(Program, platform=..., distributed_config=DistributedConfig(...))``: the
    program bound to a platform's ranksim preset and its devices, as a
    :class:`DistributedCompiledProgram` (call it with host tensors; ``.run`` / ``.check`` /
    ``.prepare`` and ``runtime.benchmark`` as for ``@pl.jit`` programs). ranksim compiles
    nothing: PyPTO's pass and code-generation options are accepted and have no effect. A
    program without a HOST orchestrator runs its chip-level entry on device ``device_ids[0]``
    (rank 0)."""
    from .._program import Program
    from ..runtime import RunConfig

    if not isinstance(program, Program):
        raise TypeError(
            f"ir.compile: expected a @pl.program class, got {program!r}; decorate the class with @pl.program "
            f"(a @pl.jit function compiles with `fn.compile(*args, config=RunConfig(...))`)"
        )
    if platform is None:
        platform = "a2a3sim"
    dist = distributed_config or DistributedConfig()
    config = RunConfig(platform=platform, distributed_config=dist)
    entry = program.entry if program.entry.level == "host" else program.entry._on_rank0()
    compiled = DistributedCompiledProgram(entry, (), config)
    compiled.program = program
    compiled.output_dir_requested = output_dir
    return compiled


__all__ = ["DistributedCompiledProgram", "DistributedConfig", "compile"]
