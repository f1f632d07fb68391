"""Runs PyPTO's own distributed examples on ranksim with only their import lines changed.

    python3 python/tests/pypto_examples/run_examples.py GIT_DIR [OUT_DIR]

GIT_DIR is a clone (or bare mirror) of hw-native-sys/pypto; the seven
`examples/distributed/0*.py` are read with `git show`, written to OUT_DIR (default a temp dir)
with `pypto.` imports rewritten to `ranksim.pypto.`, and run in every mode they have, with the
numpy torch stand-in (`ranksim.pypto.torch_standin`) on the path. Nothing of PyPTO is kept in this repository.
Exit status 0 when every run prints OK."""

import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = [
    "01_hello_rank", "02_programming_model", "03_window_buffer", "04_barrier",
    "05_remote_load_store", "06_put_get", "07_dynamic_rank_count",
]
MODES = {
    "04_barrier": [[], ["--use-builtin"]],
    "05_remote_load_store": [["--mode", "load"], ["--mode", "store"]],
    "06_put_get": [["--mode", "put"], ["--mode", "get"]],
    "07_dynamic_rank_count": [[*m, "-d", d] for m in (["--mode", "put"], ["--mode", "get"]) for d in ("0,1", "0,1,2", "0,1,2,3")],
}
IMPORT = re.compile(r"^(\s*)(import|from)(\s+)pypto\.", re.M)


def port(text):
    """The example with `import pypto.x` / `from pypto.x` lines rewritten, nothing else."""
    return IMPORT.sub(r"\1\2\3ranksim.pypto.", text)


def main(argv):
    git_dir = argv[1]
    out = argv[2] if len(argv) > 2 else tempfile.mkdtemp(prefix="pypto-examples-")
    os.makedirs(out, exist_ok=True)
    from ranksim.pypto.torch_standin import PATH as standin

    env = dict(os.environ, PYTHONPATH=os.pathsep.join([standin, os.environ.get("PYTHONPATH", "")]))
    failed = 0
    for name in NAMES:
        src = subprocess.run(["git", "-C", git_dir, "show", f"HEAD:examples/distributed/{name}.py"], capture_output=True, text=True, check=True).stdout
        path = os.path.join(out, f"{name}.py")
        with open(path, "w") as f:
            f.write(port(src))
        for mode in MODES.get(name, [[]]):
            for platform in ("a2a3sim", "a5sim"):
                args = [*mode, "-p", platform]
                r = subprocess.run([sys.executable, path, *args], capture_output=True, text=True, env=env)
                ok = r.returncode == 0 and r.stdout.strip().splitlines()[-1:] == ["OK"]
                failed += not ok
                timing = [l for l in r.stdout.splitlines() if l.startswith("[ranksim]")]
                print(f"{'PASS' if ok else 'FAIL'} {name} {' '.join(args)}: {timing[-1] if timing else ''}")
                if not ok:
                    print(r.stdout[-2000:], r.stderr[-4000:], sep="\n")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
