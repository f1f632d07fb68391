"""What ``compiled.output_dir`` holds on ranksim: not kernel binaries (ranksim builds none) but
a plan of what a call runs, in the layout PyPTO's build uses, so tools and tests that look for
a program's parts find them:

- ``README.txt`` says what the directory is;
- ``orchestration/<host>.py`` is the HOST orchestrator's source, as written;
- ``next_levels/<callable>/kernel_config.py`` for every chip-level callable a call dispatches:
  the program's orchestration functions and ``pl.at`` chip scopes, and one
  ``builtin.tensor.<collective>__<variant>__<dtype>`` per HOST collective variant (PyPTO's
  names), each a Python module whose ``RANKSIM`` dict says what ranksim runs for it.

The plan comes from recording the host orchestrator once with zeroed arguments of the
annotated shapes (a dynamic dimension taken as the world size); when that fails, the plan
holds the README and the orchestrator's source only."""

from __future__ import annotations

import inspect
import os
import pprint
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

from .. import _engine as E
from .. import _types as T

_DTYPE_WORD = {"FP32": "fp32", "FP16": "fp16", "BF16": "bf16", "INT32": "int32", "INT16": "int16", "INT8": "int8"}


def directory(name, requested):
    """Where the plan goes: `requested`, else ``$PYPTO_PROG_BUILD_DIR/<name>_<time>``, else a
    new temporary directory (ranksim writes nothing under the working directory unasked)."""
    if requested:
        return Path(requested)
    base = os.environ.get("PYPTO_PROG_BUILD_DIR")
    if base:
        return Path(base) / f"{name}_{time.strftime('%Y%m%d_%H%M%S')}"
    return Path(tempfile.mkdtemp(prefix=f"ranksim-{name}-"))


def variant(kind, operands, kw):
    """PyPTO's name of a HOST collective's chip callable."""
    data = [o for o in operands if o.dtype is not T.INT32] if kind != "all_to_all_v" else operands[:1]
    dt = _DTYPE_WORD.get(data[0].dtype.name, data[0].dtype.name.lower()) if data else "fp32"
    if kind == "allreduce":
        if kw.get("mode") == "ring":
            return f"builtin.tensor.allreduce_ring__{kw.get('op', 'sum')}__{dt}"
        return f"builtin.tensor.allreduce__{kw.get('op', 'sum')}__{dt}"
    if kind == "reduce_scatter":
        return f"builtin.tensor.reduce_scatter__{kw.get('op', 'sum')}__{dt}"
    if kind == "broadcast":
        return f"builtin.tensor.broadcast__root{kw.get('root', 0)}__{dt}"
    return f"builtin.tensor.{kind}__{dt}"


class _Guess(dict):
    """Dynamic dimensions for placeholder arguments: each one the world size (the usual
    ``NR``), since no call has bound them yet."""

    def __init__(self, n):
        super().__init__()
        self.n = n

    def __missing__(self, key):
        return self.n


def _placeholders(fn, world):
    args = []
    guess = _Guess(world)
    for p, ann in zip(fn._params, fn._anns):
        if isinstance(ann, T.TensorAnn):
            shape = ann.concrete(guess)
            if shape is None:
                return None
            args.append(np.zeros(shape, dtype=np.float32 if ann.dtype is T.BF16 else ann.dtype.np))
        elif isinstance(ann, T.ScalarAnn):
            args.append(0)
        else:
            return None
    return args


def record(compiled, args=None):
    """The host orchestrator's recorded operations for `args` (default: zeroed placeholders),
    or None when they cannot be made."""
    if args is None:
        args = _placeholders(compiled.fn, compiled.world_size)
        if args is None:
            return None
    try:
        hargs, dyn = compiled._prepare(args)
        T.bind(dyn)
        run = E.Run(compiled, E.PlanSession(compiled.cfg), hargs, dyn)
        run.record()
    except Exception:
        return None
    return run.h


def write(compiled, path, host):
    """Writes the plan of `compiled` (its recorded `host` operations, if any) under `path`."""
    path.mkdir(parents=True, exist_ok=True)
    fn = compiled.fn
    (path / "README.txt").write_text(
        f"ranksim: {fn.__name__} runs eagerly on ranksim's simulator; no kernel was compiled.\n"
        f"This directory is the plan of a call: orchestration/ holds the HOST orchestrator's source,\n"
        f"next_levels/<callable>/kernel_config.py what ranksim runs for each chip-level callable.\n"
    )
    orch = path / "orchestration"
    orch.mkdir(exist_ok=True)
    try:
        src = textwrap.dedent(inspect.getsource(fn.__wrapped__))
    except (OSError, TypeError):
        src = f"# the source of {fn.__name__} is not available\n"
    (orch / f"{fn.__name__}.py").write_text(src)
    if host is None:
        return
    seen = {}
    for op in host.ops:
        if op[0] == "dispatch":
            _, f, _args, rank, _line = op
            entry = seen.setdefault(f.__name__, {"kind": "chip orchestration" if f.level == "orch" else "InCore kernel", "ranks": []})
        elif op[0] == "collective":
            _, kind, operands, kw, _line = op
            name = variant(kind, operands, kw)
            entry = seen.setdefault(name, {"kind": "HOST collective", "collective": kind, "ranksim": f"pld.tensor.{kind} {kw}", "ranks": []})
            rank = None
        else:
            continue
        if rank is not None and rank not in entry["ranks"]:
            entry["ranks"].append(rank)
    for name, entry in seen.items():
        d = path / "next_levels" / name
        d.mkdir(parents=True, exist_ok=True)
        (d / "kernel_config.py").write_text(
            f'"""ranksim plan of `{name}`: no kernel was compiled; ranksim runs it eagerly."""\n\nRANKSIM = {pprint.pformat(entry)}\n'
        )
