"""``python -m ranksim sweep | bench | check MODULE:OBJECT [FLAGS]``: ranksim's command line for
a collective written in Python, with the flags, tables, output files and exit codes of
``ranksim sweep`` / ``bench`` / ``check`` (0 ok; 1 a wrong element, a checker finding, a
FAILED row or an average busbw below ``--min-busbw``; 2 a usage error). ``sweep`` and
``bench`` are ranksim's own commands (every flag); ``check`` runs the checker through the
Python API (``-b --seeds --calls -n --config --json``) so that findings name Python lines.

OBJECT, found in MODULE (an importable module, or a path to a ``.py`` file), is a
``ranksim.pypto.Collective`` (a PyPTO program with its arguments and golden), an object with
the collective methods (``setup``, ``stage``, ``call``, ``wrong``; see docs/python.md), or a
function or class taking no arguments that returns one. ``python -m ranksim sweep
MODULE:OBJECT --help`` lists every flag."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys

USAGE = "usage: python -m ranksim {sweep,bench,check} MODULE:OBJECT [FLAGS]  (python -m ranksim sweep MODULE:OBJECT --help for the flags)"


def load(spec):
    """The collective `spec` names (``module:object`` or ``path/to/file.py:object``)."""
    if ":" not in spec:
        raise ValueError(f"{spec!r}: give MODULE:OBJECT, e.g. my_collectives:ring")
    mod_name, obj_name = spec.rsplit(":", 1)
    if mod_name.endswith(".py") or os.sep in mod_name:
        path = os.path.abspath(mod_name)
        if not os.path.isfile(path):
            raise ValueError(f"{mod_name}: no such file")
        sys.path.insert(0, os.path.dirname(path))
        s = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
        module = importlib.util.module_from_spec(s)
        sys.modules[s.name] = module
        s.loader.exec_module(module)
    else:
        sys.path.insert(0, os.getcwd())
        module = importlib.import_module(mod_name)
    obj = module
    for part in obj_name.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"{mod_name} has no `{obj_name}`")
        obj = getattr(obj, part)
    if not hasattr(obj, "setup") or isinstance(obj, type):
        obj = obj()
    for m in ("setup", "stage", "call", "wrong"):
        if not hasattr(obj, m):
            raise ValueError(f"{spec} is not a collective: it has no `{m}` method (make it a ranksim.pypto.Collective)")
    return obj


def _size(text):
    """`64K`, `1M`, `2G` or bytes."""
    t = str(text).strip().upper()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(t[-1:], 1)
    return int(t[:-1] if mult > 1 else t) * mult


def _config(name):
    from . import Config

    if name is None:
        return Config.preset("a2a3")
    return Config.load(name) if os.path.exists(name) else Config.preset(name)


def check(spec, collective, flags):
    """``check``: the checker through the Python API, so that findings name Python lines."""
    import argparse
    import json

    from . import check as run_check

    p = argparse.ArgumentParser(prog=f"python -m ranksim check {spec}", description="run the collective under ranksim's protocol checker; exit 1 on a finding")
    p.add_argument("-b", "--size", default="64K", help="message size per rank (bytes, or 64K / 1M / 1G; default 64K)")
    p.add_argument("--seeds", type=int, default=0, help="jittered runs after the unperturbed one")
    p.add_argument("--calls", type=int, default=2, help="back-to-back calls per run (default 2)")
    p.add_argument("-n", "--ranks", type=int, default=None, help="ranks (default: every chip of the machine)")
    p.add_argument("--config", default=None, help="a preset name or a TOML file (default a2a3)")
    p.add_argument("--json", default=None, help="write the findings as JSON to this file")
    a = p.parse_args(flags)
    report = run_check(_config(a.config), collective, _size(a.size), ranks=a.ranks, calls=a.calls, seeds=a.seeds)
    print(report.text if report.findings else f"clean {collective.name}: {report.runs} run(s), 0 finding(s)")
    if a.json:
        rows = [{"kind": f.kind, "rank": f.rank, "seed": f.seed, "time_ps": f.time_ps, "count": f.count, "message": f.message, "sites": f.sites} for f in report.findings]
        with open(a.json, "w") as fh:
            json.dump(rows, fh, indent=1, default=str)
    return 0 if report.is_clean else 1


def main(argv=None):
    from . import _native

    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) < 2 or argv[0] not in ("sweep", "bench", "check"):
        print(USAGE, file=sys.stderr)
        return 2
    command, spec, flags = argv[0], argv[1], argv[2:]
    try:
        collective = load(spec)
    except Exception as e:  # an import error of the user's module is a usage error here
        print(f"error: {spec}: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    sys.stdout.flush()
    if command == "check":
        try:
            return check(spec, collective, flags)
        except SystemExit as e:  # argparse: --help exits 0, a usage error 2
            return int(e.code or 0)
        except Exception as e:
            print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
            return 2
    return _native.cli(collective, [f"python -m ranksim {spec}", command, *flags])


if __name__ == "__main__":
    raise SystemExit(main())
