"""``pypto.runtime.runner``: ``RunConfig`` and the one-shot ``execute_compiled``."""

from . import RunConfig


def execute_compiled(compiled, *args, config=None):
    """Runs one call of a compiled program on ranksim."""
    return compiled(*args, config=config)


__all__ = ["RunConfig", "execute_compiled"]
