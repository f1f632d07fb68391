"""The README's Python example runs and prints what its comment says."""

import contextlib
import io
import os
import re

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")


def test_readme_python_example():
    text = open(README).read()
    section = text[text.index("## Python") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    time_us, value = out.getvalue().split(" us ")
    assert float(time_us) > 0
    assert value.strip() == "8.0"


def test_readme_pypto_example():
    text = open(README).read()
    section = text[text.index("PyPTO's distributed programs run as they are") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    out = io.StringIO()
    scope = {}
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), scope)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("[ranksim] prog on a2a3sim (a2a3, 2 ranks): device time ")
    assert lines[1].startswith("BenchmarkStats(rounds=5, warmup=1): device_wall_us min=")
    assert lines[2] == "True"
    x, y = scope["x"], scope["y"]
    assert (y[0] == x[1]).all() and (y[1] == x[0]).all()


def test_readme_pypto_class_form_example():
    text = open(README).read()
    section = text[text.index("Most PyPTO code, and all of PyPTO's distributed system tests") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    out = io.StringIO()
    scope = {}
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), scope)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("[ranksim] host on a2a3sim (a2a3, 2 ranks): device time ")
    assert lines[1] == "True"
    x, y = scope["x"], scope["y"]
    assert (y[0] == x[1]).all() and (y[1] == x[0]).all()
