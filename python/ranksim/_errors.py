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


class LivelockError(DeadlockError):
    """A run in which every running core polled (``test_signal``, ``read_scalar``) cells that
    nothing in flight could change: the message is the livelock report, each poll "called at"
    its kernel's Python line; ``python_polls`` lists those lines."""

    python_polls: list = []


class BudgetError(SimError):
    """A run that reached its simulated-time or event budget (``max_sim_time_us``,
    ``max_events``): the message names the limit, the time reached and what each core was
    doing, and how to raise the limit."""


class MemoryLimitError(BudgetError):
    """A run refused before it started: its memory estimate exceeds ``max_memory`` (by default
    what the host has available). The message gives the estimate, its largest part and what to
    change (timing-only, fewer blocks, fewer ranks, another algorithm)."""


class KernelError(SimError):
    """A kernel that raised (or panicked): the message names the task, rank and block and the
    Python exception; ``__cause__`` is that exception when it is known."""
