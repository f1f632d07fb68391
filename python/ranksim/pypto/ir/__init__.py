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
    config = RunConfig(platform=platform, distributed_config=dist, ranksim_config=ranksim_config)
    if program.entry.level == "host":
        compiled = DistributedCompiledProgram(program.entry, (), config)
        orchs = {}
    else:
        tops = program.orchestrations() or [program.entry]
        orchs = {f.__name__: f for f in tops}
        compiled = DistributedCompiledProgram(tops[0]._on_rank0(), (), config)
    compiled.program = program
    compiled.output_dir_requested = output_dir
    compiled._orchs = orchs
    if len(orchs) > 1:
        compiled._subs = {}
        for name, f in orchs.items():
            sub = DistributedCompiledProgram(f._on_rank0(), (), config)
            sub.program, sub._orchs, sub.name = program, {name: f}, name
            sub.output_dir_requested = None
            sub._parent = compiled
            compiled._subs[name] = sub
    return compiled


__all__ = ["DistributedCompiledProgram", "DistributedConfig", "compile"]
