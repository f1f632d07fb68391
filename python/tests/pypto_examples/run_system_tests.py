"""Runs PyPTO's distributed system tests (`tests/st/distributed/`) on ranksim, with only their
import lines changed.

    python3 python/tests/pypto_examples/run_system_tests.py GIT_DIR [OUT_DIR] [-- PYTEST_ARGS...]

GIT_DIR is a clone (or bare mirror) of hw-native-sys/pypto. The test files (and the example
modules they import) are read with `git show`, written to OUT_DIR (default: a temp dir) with
`pypto` imports rewritten to `ranksim.pypto`, and run by pytest with this directory's
`conftest_ranksim.py` as their conftest (PyPTO's own conftest needs its build: ours gives
`--platform`, `--device`, the `test_config` / `device_ids` fixtures and the `platforms`
marker) on `--platform a2a3sim --device 0-7`, with the numpy torch stand-in on the path.
Nothing of PyPTO is kept in this repository.

Prints one line per test (PASS / FAIL / SKIP, its simulated device time) and a summary;
exit status 0 when every test that ran passed, except those listed in `EXPECTED_FAIL` (each
with the reason ranksim cannot run it, also in docs/python.md)."""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
STANDIN = os.path.join(ROOT, "ranksim", "pypto", "torch_standin")  # ranksim.pypto.torch_standin.PATH
IMPORT = re.compile(r"^(\s*)(import|from)(\s+)pypto\b", re.M)
TREES = ["tests/st/distributed", "examples/runtime"]

# Tests ranksim cannot run, and why (docs/python.md lists the same).
EXPECTED_FAIL = {
    "test_l3_manual.py": "drives simpler's own L3 Worker over a PyPTO L2 build (simpler is not part of ranksim)",
    "test_codegen_emits_per_orch_subdirs": "checks PyPTO's generated kernel files (.pto), which ranksim does not generate",
    "test_identity_inherited_source": "monkeypatches simpler_setup.torch_interop, simpler's own module",
    "test_host_tensor_allgather[": "reads PyPTO's generated host_orch.py for its comm ordering tokens (code generation ranksim does not do)",
}


def port(text):
    """The file with `import pypto...` / `from pypto...` lines rewritten, nothing else."""
    return IMPORT.sub(r"\1\2\3ranksim.pypto", text)


def export(git_dir, out):
    for tree in TREES:
        files = subprocess.run(["git", "-C", git_dir, "ls-tree", "-r", "--name-only", "HEAD", tree], capture_output=True, text=True, check=True).stdout.split()
        for f in files:
            if not f.endswith(".py"):
                continue
            src = subprocess.run(["git", "-C", git_dir, "show", f"HEAD:{f}"], capture_output=True, text=True, check=True).stdout
            path = os.path.join(out, f)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as fh:
                fh.write(port(src))
    # PyPTO's top-level test conftest needs PyPTO's build; ours replaces it.
    shutil.copy(os.path.join(HERE, "conftest_ranksim.py"), os.path.join(out, "tests", "conftest.py"))
    with open(os.path.join(out, "pytest.ini"), "w") as fh:
        fh.write("[pytest]\naddopts = -p no:cacheprovider\n")


def expected_fail(nodeid):
    return next((why for key, why in EXPECTED_FAIL.items() if key in nodeid), None)


def main(argv):
    args, extra = argv[1:], []
    if "--" in args:
        k = args.index("--")
        args, extra = args[:k], args[k + 1 :]
    git_dir = args[0]
    out = args[1] if len(args) > 1 else tempfile.mkdtemp(prefix="pypto-st-")
    export(git_dir, out)
    results = os.path.join(out, "ranksim_results.jsonl")
    if os.path.exists(results):
        os.remove(results)
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([STANDIN, out, os.environ.get("PYTHONPATH", "")]),
        RANKSIM_ST_RESULTS=results,
        RANKSIM_QUIET="1",
    )
    paths = [a for a in extra if a.startswith("tests/")] or ["tests/st/distributed"]
    flags = [a for a in extra if not a.startswith("tests/")]
    cmd = [sys.executable, "-m", "pytest", "-q", *paths, "--platform", "a2a3sim", "--device", "0-7", *flags]
    subprocess.run(cmd, cwd=out, env=env)
    rows = [json.loads(line) for line in open(results)] if os.path.exists(results) else []
    unexpected = 0
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for r in rows:
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
        why = expected_fail(r["nodeid"]) if r["outcome"] == "failed" else None
        unexpected += r["outcome"] == "failed" and why is None
        t = f"{r['device_us']:.3f} us in {r['calls']} call(s)" if r.get("calls") else ""
        print(f"{r['outcome'].upper():7} {r['nodeid']} {t}{' [expected: ' + why + ']' if why else ''}")
        if r["outcome"] == "failed" and why is None:
            print("    " + r.get("message", "")[:600].replace("\n", "\n    "))
    ran = counts["passed"] + counts["failed"]
    print(f"{counts['passed']} passed, {counts['failed']} failed ({counts['failed'] - unexpected} expected), {counts['skipped']} skipped; {counts['passed']}/{ran} of the cases that ran pass")
    return 1 if unexpected or not rows else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
