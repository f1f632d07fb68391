"""conftest for PyPTO's distributed system tests run on ranksim (`run_system_tests.py` copies
it in as `tests/conftest.py`; PyPTO's own needs PyPTO's build). It gives what those tests
take from PyPTO's: the `--platform` and `--device` options, the `test_config` and
`device_ids` fixtures, the `platforms(...)` marker, and `--codegen-only` (always off). Each
test's simulated device time goes to the file `RANKSIM_ST_RESULTS` names, one JSON line per
test."""

import json
import os

import pytest

from ranksim.pypto import _engine
from ranksim.pypto.runtime import RunConfig

PLATFORMS = ("a2a3sim", "a2a3", "a5sim", "a5")
_calls = []


def pytest_addoption(parser):
    parser.addoption("--platform", default="a2a3sim", help="comma-separated platform ids")
    parser.addoption("--device", default="0-7", help="device ids: 0-7, 0,1,2 ...")
    parser.addoption("--codegen-only", action="store_true", default=False, help="(no effect on ranksim)")


def pytest_configure(config):
    config.addinivalue_line("markers", "platforms(*ids): restrict the test to these platform ids")
    config.addinivalue_line("markers", "slow: a slow test")


def _devices(text):
    out = []
    for tok in str(text).split(","):
        tok = tok.strip()
        if "-" in tok:
            a, b = tok.split("-", 1)
            out.extend(range(int(a), int(b) + 1))
        elif tok:
            out.append(int(tok))
    return list(dict.fromkeys(out))


def _platforms(config):
    return [p for p in config.getoption("--platform").split(",") if p in PLATFORMS] or ["a2a3sim"]


def pytest_collection_modifyitems(config, items):
    allowed = set(_platforms(config))
    keep, drop = [], []
    for item in items:
        m = next(item.iter_markers(name="platforms"), None)
        (keep if m is None or allowed & set(m.args) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture(scope="session")
def test_config(request):
    return RunConfig(platform=_platforms(request.config)[0])


@pytest.fixture(scope="session")
def device_ids(request):
    return _devices(request.config.getoption("--device"))


@pytest.fixture(autouse=True)
def _build_dir(tmp_path, monkeypatch):
    """A program's plan directory goes to the test's tmp dir, as PyPTO's conftest does."""
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "build_output"))


@pytest.fixture(autouse=True)
def _count_device_time(monkeypatch):
    """Records the device time of every program call the test makes."""
    _calls.clear()
    real = _engine.timing_line

    def recording(name, platform, cfg, report):
        _calls.append(report.device_time_us)
        return real(name, platform, cfg, report)

    monkeypatch.setattr(_engine, "timing_line", recording)
    os.environ["RANKSIM_QUIET"] = "0"
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    path = os.environ.get("RANKSIM_ST_RESULTS")
    if not path or not (rep.when == "call" or (rep.when == "setup" and rep.outcome != "passed")):
        return
    row = {"nodeid": item.nodeid, "outcome": rep.outcome, "device_us": sum(_calls), "calls": len(_calls)}
    if rep.outcome == "failed":
        crash = getattr(getattr(rep, "longrepr", None), "reprcrash", None)
        row["message"] = f"{crash.path}:{crash.lineno}: {crash.message}" if crash else str(rep.longrepr)[-1500:]
    with open(path, "a") as fh:
        fh.write(json.dumps(row) + "\n")
