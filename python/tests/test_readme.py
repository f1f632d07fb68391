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
