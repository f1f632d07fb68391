"""PyPTO's per-dispatch diagnostics (``RunConfig(enable_dep_gen=True, enable_scope_stats=True,
enable_chip_swimlane=...)``), written by ranksim from what its run really did, under
``<output_dir>/dfx_outputs/rank{r}/d{k}/`` (dispatch k of rank r in the call):

- ``deps.json``: the dispatch's tasks, each with the tasks it waits for (``deps``), the
  tensors it reads and writes (what its dependencies come from) and its simulated start / end;
- ``scope_stats/scope_stats.jsonl``: one line for the dispatch's scope: its task count, the
  most tasks in flight at once and its simulated device time (ranksim has no runtime ring
  buffers to report the fill of);
- ``chip_swimlane_records.json`` (with ``enable_chip_swimlane``): one record per task with its
  block count and simulated start / end, in picoseconds.
"""

from __future__ import annotations

import json


def wanted(config):
    """The DFX outputs a RunConfig asks for: a set of "deps", "scope_stats", "swimlane"."""
    opts = dict(getattr(config, "options", {}) or {})
    out = set()
    if opts.get("enable_chip_swimlane") or opts.get("enable_l2_swimlane"):
        out |= {"swimlane", "deps"}
    if opts.get("enable_dep_gen"):
        out.add("deps")
    if opts.get("enable_scope_stats"):
        out.add("scope_stats")
    return out


def _in_flight(tasks):
    edges = sorted([(t["start_ps"], 1) for t in tasks] + [(t["end_ps"], -1) for t in tasks], key=lambda e: (e[0], e[1]))
    peak = cur = 0
    for _, d in edges:
        cur += d
        peak = max(peak, cur)
    return peak


def write(base, graphs, reports, what):
    """Writes the outputs `what` asks for, for the dispatches `graphs` (from the executor, in
    queue order) timed by `reports` (the call's runs, in order), under `base`."""
    timed = {}
    for report in reports:
        for d in sorted(report.dispatches, key=lambda d: (d["chip"], d["index"])):
            timed.setdefault(d["chip"], []).append(d)
    seen = {}
    for rank, name, tasks in graphs:
        k = seen.get(rank, 0)
        seen[rank] = k + 1
        rows = timed.get(rank, [])
        times = rows[k] if k < len(rows) else None
        d = base / f"rank{rank}" / f"d{k}"
        d.mkdir(parents=True, exist_ok=True)
        ttimes = times["tasks"] if times else []
        merged = [dict(t, **({"start_ps": tt["start_ps"], "end_ps": tt["end_ps"], "blocks": tt["blocks"]} if tt else {})) for t, tt in zip(tasks, ttimes + [None] * len(tasks))]
        if "deps" in what:
            (d / "deps.json").write_text(json.dumps({"dispatch": name, "rank": rank, "tasks": [dict(m, id=i) for i, m in enumerate(merged)]}, indent=1))
        if "scope_stats" in what:
            (d / "scope_stats").mkdir(exist_ok=True)
            line = {
                "dispatch": name,
                "tasks": len(tasks),
                "max_tasks_in_flight": _in_flight(ttimes) if ttimes else 0,
                "device_wall_ps": times["device_wall_ps"] if times else None,
            }
            (d / "scope_stats" / "scope_stats.jsonl").write_text(json.dumps(line) + "\n")
        if "swimlane" in what:
            recs = [{"task": m["name"], "id": i, "blocks": m.get("blocks"), "start_ps": m.get("start_ps"), "end_ps": m.get("end_ps")} for i, m in enumerate(merged)]
            (d / "chip_swimlane_records.json").write_text(json.dumps({"dispatch": name, "rank": rank, "records": recs}, indent=1))
