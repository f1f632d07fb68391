"""``ranksim.pypto.ir``: the parts of ``pypto.ir`` a distributed program imports, and
``ir.compile`` for ``@pl.program`` classes."""

from .distributed_compiled_program import DistributedCompiledProgram, DistributedConfig


def compile(program, output_dir=None, *args, platform=None, distributed_config=None, ranksim_config=None, **options):  # noqa: A001
    """``ir.compile(Program, platform=..., distributed_config=DistributedConfig(...))``: the
    program bound to a platform's ranksim preset and its devices, as a
    :class:`DistributedCompiledProgram` (call it with host tensors; ``.run`` / ``.check`` /
    ``.prepare`` and ``runtime.benchmark`` as for ``@pl.jit`` programs). ranksim compiles
    nothing: PyPTO's pass and code-generation options are accepted and have no effect. A
    program without a HOST orchestrator runs its chip-level entry on device ``device_ids[0]``
    (rank 0). ``ranksim_config`` (a ``ranksim.Config``) runs it on that machine instead of the
    platform's preset."""
    from ..runtime import RunConfig

    compiled_for = getattr(type(program), "_compiled_for", None)
    if compiled_for is None:
        raise TypeError(
            f"ir.compile: expected a @pl.program class, got {program!r}; decorate the class with @pl.program "
            f"(a @pl.jit function compiles with `fn.compile(*args, config=RunConfig(...))`)"
        )
    if platform is None:
        platform = "a2a3sim"
    dist = distributed_config or DistributedConfig()
    config = RunConfig(platform=platform, distributed_config=dist, ranksim_config=ranksim_config)
    return compiled_for(program, config, output_dir)


__all__ = ["DistributedCompiledProgram", "DistributedConfig", "compile"]
