"""``pypto.runtime.device_runner``: PyPTO's L2 build-and-load helpers. ranksim runs programs
eagerly and builds no kernel binaries, so ``compile_and_assemble`` says so; the module exists
so that programs importing it load."""

from ..._errors import BadArgument


def compile_and_assemble(*args, **kwargs):
    raise BadArgument(
        "runtime.device_runner.compile_and_assemble builds kernel binaries for simpler's own workers; ranksim builds "
        "none. Run the program through ir.compile(...) and call it, or compiled.prepare() for a long-lived worker"
    )


__all__ = ["compile_and_assemble"]
