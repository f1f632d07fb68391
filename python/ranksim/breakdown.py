"""Where a rank's device time went, from a traced run: each rank's dispatch time split into
the core time of its operations by kind (local copies, remote traffic, signals and waits,
compute) and what no operation covers (launch, the gaps between tasks, idle cores).

``breakdown(report)`` needs a traced run (``world.trace = True``, ``compiled.run(...,
trace=True)``); ``format_breakdown`` prints it as a small table, one row per rank."""

from __future__ import annotations

import json

KINDS = {
    "local copies": {"load", "store", "load_valid", "load_async", "load_l1", "to_l0a", "to_l0b", "store_acc", "read_scalar", "write_scalar"},
    "remote traffic": {"remote_load", "remote_store", "put", "get", "put_async", "get_async", "remote_load_valid"},
    "signals and waits": {"notify", "wait", "wait_all", "defer_wait", "test_signal", "fence", "wait_async", "test_async", "wait_flag", "pipe_barrier", "barrier"},
}
ORDER = ["local copies", "remote traffic", "signals and waits", "compute", "launch and idle"]


def _kind(name):
    for kind, names in KINDS.items():
        if name in names:
            return kind
    return "compute"


def breakdown(report):
    """``{rank: {kind: us, ..., "device": us}}``: per rank, the core time of its operations by
    kind (summed over its cores, so a kind can exceed the wall with several cores busy),
    its dispatches' device wall, and "launch and idle": the wall minus the time at least one
    of its operations ran."""
    text = report.chrome_trace()
    if text is None:
        raise ValueError("breakdown needs a traced run: set world.trace = True (compiled.run(..., trace=True)) before running")
    events = json.loads(text)
    events = events["traceEvents"] if isinstance(events, dict) else events
    out = {}
    busy = {}
    for e in events:
        if e.get("ph") != "X":
            continue
        rank = e.get("pid")
        row = out.setdefault(rank, {k: 0.0 for k in ORDER} | {"device": 0.0})
        if e.get("cat") == "dispatch":
            row["device"] += float(e["dur"])
        elif e.get("cat") == "op":
            row[_kind(e["name"])] += float(e["dur"])
            busy.setdefault(rank, []).append((float(e["ts"]), float(e["ts"]) + float(e["dur"])))
    for rank, row in out.items():
        covered, end = 0.0, float("-inf")
        for a, b in sorted(busy.get(rank, [])):
            if b > end:
                covered += b - max(a, end)
                end = b
        row["launch and idle"] = max(0.0, row["device"] - covered)
    return dict(sorted(out.items()))


def format_breakdown(report):
    """The breakdown as text: one row per rank, microseconds."""
    rows = breakdown(report)
    head = f"{'rank':>5} {'device':>10} " + " ".join(f"{k:>18}" for k in ORDER)
    lines = [head]
    for rank, row in rows.items():
        lines.append(f"{rank:>5} {row['device']:>10.3f} " + " ".join(f"{row[k]:>18.3f}" for k in ORDER))
    return "\n".join(lines)


__all__ = ["breakdown", "format_breakdown"]
