"""``ranksim.pypto.jit`` (``from pypto.jit import jit``)."""

from ._jit import JITFunction, jit

__all__ = ["JITFunction", "jit"]
