"""ranksim's exceptions. Every message is the Rust API's message, unchanged."""


class SimError(Exception):
    """Anything the simulator refused or a run that failed."""


class BadArgument(SimError, ValueError):
    """An invalid argument: a wrong dtype, shape, rank, peer, region or name."""


class ConfigError(SimError, ValueError):
    """A config that cannot be parsed or used (the message names the key)."""


class DeadlockError(SimError):
    """A run in which every live core blocked: the message is the deadlock report, each blocked
    wait "called at" its kernel's Python line; ``python_waits`` lists those lines."""

    python_waits: list = []


class KernelError(SimError):
    """A kernel that raised (or panicked): the message names the task, rank and block and the
    Python exception; ``__cause__`` is that exception when it is known."""
