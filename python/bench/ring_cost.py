"""Host time and memory of an 8-rank ring allreduce written in PyPTO's language.

    python3 python/bench/ring_cost.py [SIZES_MIB ...]     # default: 1 16 64

Runs python/tests/pypto_ring.py's `ring_chunked` (class form, compiled with `ir.compile`) on 8
ranks of a2a3 at each size per rank (float32), once with data and once timing-only, each in a
fresh process so that its peak memory is its own. Prints, per run: the seconds inside
`compiled.run` (wall and CPU of the process), the process's peak resident memory, the
part of it the caller's own arrays take (x and y: 2 x 8 x size), and what the run added on
top of what the process held before it (peak after the run minus resident before it). The
with-data run also checks every rank's output against numpy's sum.
"""

import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RANKS = 8


def kib(field):
    """A `/proc/self/status` field (VmRSS, VmHWM) in KiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def one(mib, timing_only):
    """One run in this process; prints one line of `key=value` pairs."""
    import numpy as np

    sys.path.insert(0, os.path.join(HERE, "..", "tests"))
    import pypto_ring
    from ranksim.pypto import ir
    from ranksim.pypto.ir.distributed_compiled_program import DistributedConfig
    from ranksim.pypto.runtime import RunConfig

    count = (mib << 20) // 4
    x, y = pypto_ring.ring_args(count, RANKS, timing_only=timing_only)
    dist = DistributedConfig(device_ids=list(range(RANKS)))
    compiled = ir.compile(pypto_ring.ring_chunked(), platform="a2a3sim", distributed_config=dist)
    cfg = RunConfig(platform="a2a3sim", distributed_config=dist, timing_only=timing_only)
    rss, c0, t0 = kib("VmRSS"), cpu(), time.perf_counter()
    rep = compiled.run(x, y, config=cfg)
    wall, used = time.perf_counter() - t0, cpu() - c0
    peak = kib("VmHWM")
    ok = True
    if not timing_only:
        want = x.sum(axis=0)
        ok = all(np.array_equal(y[r], want) for r in range(RANKS))
    arrays = 0 if timing_only else (x.nbytes + y.nbytes) >> 10
    print(f"wall={wall:.3f} cpu={used:.3f} peak={peak} arrays={arrays} added={max(0, peak - rss)} device_us={rep.device_time_us:.2f} ok={ok}")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--one":
        return one(int(sys.argv[2]), sys.argv[3] == "timing")
    sizes = [int(s) for s in sys.argv[1:]] or [1, 16, 64]
    print(f"8-rank PyPTO ring allreduce (pypto_ring.ring_chunked, f32, a2a3): seconds in compiled.run, memory in MB")
    print(f"{'per rank':>9} {'mode':>11} {'run wall':>9} {'run cpu':>8} {'peak':>7} {'arrays':>7} {'run adds':>9} {'device us':>10}  ok")
    for mib in sizes:
        for mode in ("data", "timing"):
            out = subprocess.run([sys.executable, __file__, "--one", str(mib), mode], capture_output=True, text=True)
            if out.returncode != 0:
                print(f"{mib:>6} MiB {mode:>11} failed:\n{out.stderr}")
                continue
            v = dict(kv.split("=") for kv in out.stdout.split())
            mb = lambda k: int(v[k]) * 1024 / 1e6  # noqa: E731
            print(
                f"{mib:>6} MiB {'with data' if mode == 'data' else 'timing-only':>11} {float(v['wall']):>8.2f}s {float(v['cpu']):>7.2f}s "
                f"{mb('peak'):>7.0f} {mb('arrays'):>7.0f} {mb('added'):>9.0f} {float(v['device_us']):>10.1f}  {v['ok']}"
            )


if __name__ == "__main__":
    main()
