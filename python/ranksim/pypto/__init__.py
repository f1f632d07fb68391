"""``ranksim.pypto``: PyPTO's distributed language, executed eagerly on ranksim.

Port a PyPTO program by one textual rewrite, ``pypto.`` -> ``ranksim.pypto.``::

    import ranksim.pypto.language as pl
    import ranksim.pypto.language.distributed as pld
    from ranksim.pypto.ir.distributed_compiled_program import DistributedConfig
    from ranksim.pypto.runtime import RunConfig

See docs/python.md ("PyPTO programs on ranksim") for what runs and what cannot run eagerly.
"""

from . import ir, language, runtime
from ._collective import Collective

__all__ = ["Collective", "ir", "language", "runtime"]
