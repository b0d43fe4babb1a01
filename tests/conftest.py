"""Shared fixtures: generated traces and a helper that runs a config with a command log and
returns (stats, spec, log path). Also the grouping that keeps pytest-xdist (`make test` runs
pytest on every core) from building a module-scoped fixture once per worker."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import bulksim  # noqa: E402


@pytest.fixture
def make_trace(tmp_path):
    def make(pattern: str = "random", requests: int = 2000, **kwargs) -> Path:
        name = f"{pattern}-{requests}-{abs(hash(tuple(sorted(kwargs.items()))))}.trace"
        return bulksim.generate_trace(tmp_path / name, pattern, requests, **kwargs)

    return make


@pytest.fixture
def run_logged(tmp_path):
    def run(trace: Path, preset: str, overrides=()):
        log = tmp_path / f"cmd-{abs(hash((str(trace), preset, tuple(overrides))))}.csv"
        stats = bulksim.run(trace=trace, preset=preset, overrides=overrides, command_log=log)
        spec = bulksim.spec(preset, overrides=overrides)
        return stats, spec, log

    return run


@pytest.fixture(scope="session")
def synth_mcf(tmp_path_factory) -> Path:
    """A small `synth-mcf` stand-in (5,000 dependent reads per thread) made by `bulksim synth`,
    for runs on the Table II system."""
    import subprocess

    out = tmp_path_factory.mktemp("synth") / "mcf"
    r = subprocess.run(
        [sys.executable, "-m", "bulksim.cli", "synth", "synth-mcf", "--out", out, "--accesses", "5000"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    return out


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist with `--dist loadgroup` (`make test`): tests that share an instance of
    a module-scoped fixture (often a whole reduced reproduction) go to one worker, so that the
    fixture is built once; every other test goes to whichever worker is free. Without xdist the
    marks do nothing."""
    for item in items:
        fixture_defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
        shared = sorted(name for name, defs in fixture_defs.items() if defs and defs[-1].scope == "module")
        if not shared:
            continue
        # A parametrized module fixture has one instance per parameter: those may run apart.
        params = getattr(getattr(item, "callspec", None), "params", {})
        group = item.nodeid.split("::")[0] + "".join(
            f"[{name}={params[name]}]" for name in shared if name in params
        )
        item.add_marker(pytest.mark.xdist_group(group))
