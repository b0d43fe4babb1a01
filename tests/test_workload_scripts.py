"""The workload suite's scripts (workloads/*/capture.sh and their shared lib.sh): static checks
and quick behaviour checks that run in CI without installing or capturing anything (a stand-in
`bulksim` records how it is called and runs the command natively), plus native runs of the
sqlite and shell scripts end to end at reduced sizes (`CAPTURE=none`; each script checks its
own output: every row and the index, every directory listed)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

import pytest

from bulksim.reproduce.apps import APPS

REPO = Path(__file__).resolve().parents[1]
WORKLOADS = REPO / "workloads"
#: The scripts of this suite; forkbench's comes with the capture tool.
SCRIPTS = ["bootup", "gcc", "mariadb", "memcached", "redis", "shell", "sqlite"]
#: Exit status of a script whose workload is not practical on this machine (bootup).
NOT_PRACTICAL = 3


def script(name: str) -> Path:
    return WORKLOADS / name / "capture.sh"


def run(name: str, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(script(name))],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def fake_bulksim(tmp_path: Path, body: str) -> Path:
    """A stand-in for `bulksim`: answers `capture --help`, records its arguments in calls.txt
    and runs `body` for `capture --out DIR --max-instructions N -- COMMAND...`."""
    path = tmp_path / "fake-bulksim"
    path.write_text(
        "#!/bin/bash\n"
        '[[ "$1 ${2:-}" == "capture --help" ]] && exit 0\n'
        f'printf "%s\\n" "$@" > "{tmp_path}/calls.txt"\n'
        'out=$3\nshift 6\nmkdir -p "$out"\n' + body
    )
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("app", APPS, ids=[a.capture for a in APPS])
def test_every_workload_reproduce_names_has_its_script(app):
    path = REPO / app.script
    if app.capture == "forkbench" and not path.exists():
        pytest.skip("workloads/forkbench/capture.sh comes with the capture tool (another branch)")
    assert path.is_file(), f"bulksim reproduce rowclone-apps names {app.script}, which is missing"


@pytest.mark.parametrize("name", SCRIPTS)
def test_script_is_executable_strict_bash_that_parses(name):
    path = script(name)
    assert path.stat().st_mode & stat.S_IXUSR, f"{path} is not executable"
    lines = path.read_text().splitlines()
    assert lines[0] == "#!/usr/bin/env bash"
    code = [line for line in lines if line.strip() and not line.startswith("#")]
    assert code[0] == "set -euo pipefail", f"{path}: the first command must be set -euo pipefail"
    subprocess.run(["bash", "-n", str(path)], check=True)


def test_library_and_runner_parse():
    for path in (WORKLOADS / "lib.sh", WORKLOADS / "run-all.sh"):
        subprocess.run(["bash", "-n", str(path)], check=True)


@pytest.mark.parametrize("name", [n for n in SCRIPTS if n != "bootup"])
def test_script_rejects_an_unknown_capture_mode_before_doing_anything(name, tmp_path):
    # workload_init checks the knobs before installing packages or starting a program.
    result = run(name, {"CAPTURE": "valgrind", "OUT": str(tmp_path / "out")})
    assert result.returncode == 1
    message = (
        f"{name}: error: CAPTURE=valgrind: expected 'bulksim' (capture the program, the default)"
        " or 'none' (run it natively)\n"
    )
    assert result.stderr == message
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", [n for n in SCRIPTS if n != "bootup"])
def test_script_says_how_to_build_bulksim_when_capture_is_unavailable(name, tmp_path):
    missing = fake_bulksim(tmp_path, "exit 0\n")
    missing.write_text("#!/bin/bash\nexit 2\n")  # no `capture` command
    result = run(name, {"BULKSIM": str(missing), "OUT": str(tmp_path / "out")})
    assert result.returncode == 1
    assert f"'{missing} capture' is not available" in result.stderr
    assert "CAPTURE=none" in result.stderr


def test_bootup_explains_why_it_is_not_captured():
    result = run("bootup", {})
    assert result.returncode == NOT_PRACTICAL
    assert "record the emulator's accesses, not the guest kernel's" in result.stderr.replace("\n", " ")


def test_capture_runs_the_program_under_bulksim_capture_and_publishes_out(tmp_path):
    bulksim = fake_bulksim(tmp_path, '"$@"\nstatus=$?\necho "{}" > "$out/capture.json"\nexit $status\n')
    out = tmp_path / "captures" / "shell"
    result = run(
        "shell", {"BULKSIM": str(bulksim), "OUT": str(out), "MAX": "12345", "DIRS": "7", "FILES": "20"}
    )
    assert result.returncode == 0, result.stderr
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    # The whole measured command follows `--`: sh running find_ls.sh on the tree.
    assert calls[:6] == ["capture", "--out", f"{out}.partial", "--max-instructions", "12345", "--"]
    assert calls[6:8] == ["sh", "-c"] and calls[9] == str(WORKLOADS / "shell" / "find_ls.sh")
    assert json.loads((out / "input.json").read_text()) == {
        "workload": "shell",
        "dirs": 7,
        "files": 20,
        "seed": 1,
        "max_instructions": 12345,
    }
    assert (out / "capture.json").is_file()
    assert not Path(f"{out}.partial").exists()
    # Temporary files (the tree, the listing) are gone.
    tree = Path(calls[10])
    assert tree.name == "tree" and not tree.parent.exists()


def test_a_failed_capture_leaves_no_capture_directory(tmp_path):
    bulksim = fake_bulksim(tmp_path, 'echo "{}" > "$out/capture.json"\nexit 7\n')
    out = tmp_path / "shell"
    result = run("shell", {"BULKSIM": str(bulksim), "OUT": str(out), "DIRS": "3", "FILES": "3"})
    assert result.returncode == 1
    assert "failed (status 7)" in result.stderr
    assert not out.exists() and not Path(f"{out}.partial").exists()


def test_an_existing_directory_that_is_no_capture_is_not_replaced(tmp_path):
    bulksim = fake_bulksim(tmp_path, '"$@"\necho "{}" > "$out/capture.json"\n')
    out = tmp_path / "precious"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    result = run("shell", {"BULKSIM": str(bulksim), "OUT": str(out), "DIRS": "3", "FILES": "3"})
    assert result.returncode == 1
    assert f"{out} exists and is no capture (no capture.json): not replacing it" in result.stderr
    assert (out / "notes.txt").read_text() == "keep me"
    # The new capture is kept beside it rather than deleted.
    assert (Path(f"{out}.partial") / "capture.json").is_file()


def test_a_measured_run_past_its_time_limit_is_stopped(tmp_path):
    bulksim = fake_bulksim(tmp_path, "sleep 60\n")
    start = time.monotonic()
    result = run(
        "shell",
        {"BULKSIM": str(bulksim), "OUT": str(tmp_path / "o"), "TIME_LIMIT": "1", "DIRS": "2", "FILES": "1"},
    )
    assert result.returncode == 1
    assert "did not finish within TIME_LIMIT=1s" in result.stderr
    assert time.monotonic() - start < 20


def test_missing_packages_without_root_print_the_command_to_run(tmp_path):
    # A stand-in `id` makes the library believe it is not root, so nothing is installed.
    (tmp_path / "id").write_text("#!/bin/sh\necho 1000\n")
    (tmp_path / "id").chmod(0o755)
    result = subprocess.run(
        ["bash", "-c", f'NAME=test; source "{WORKLOADS}/lib.sh"; need_packages bulksim-no-such-package'],
        env={**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr == (
        "test: missing Debian packages: bulksim-no-such-package; run as root:\n"
        "  apt-get update && apt-get install -y --no-install-recommends bulksim-no-such-package\n"
    )


@pytest.mark.parametrize("knob", ["ROWS=0", "ROWS=ten", "SEED=-1", "MAX=0"])
def test_bad_size_knobs_are_named(knob, tmp_path):
    key, value = knob.split("=")
    result = run("sqlite", {key: value, "CAPTURE": "none"})
    assert result.returncode == 1
    assert result.stderr.startswith(f"sqlite: error: {key}={value}: expected ")


def test_sqlite_input_is_fixed_by_its_seed(tmp_path):
    def make(seed: int, name: str) -> bytes:
        out = tmp_path / name
        subprocess.run(
            [
                "python3",
                str(WORKLOADS / "sqlite" / "make_input.py"),
                "--rows",
                "50",
                "--seed",
                str(seed),
                "--out",
                str(out),
            ],
            check=True,
        )
        return out.read_bytes()

    first, again, other = make(1, "a.sql"), make(1, "b.sql"), make(2, "c.sql")
    assert first == again and first != other
    assert first.count(b"INSERT INTO orders VALUES") == 50


def test_shell_tree_has_the_requested_directories_and_files(tmp_path):
    root = tmp_path / "tree"
    subprocess.run(
        [
            "python3",
            str(WORKLOADS / "shell" / "make_tree.py"),
            "--dirs",
            "30",
            "--files",
            "80",
            "--seed",
            "4",
            "--root",
            str(root),
        ],
        check=True,
    )
    dirs = [p for p in root.rglob("*") if p.is_dir()]
    files = [p for p in root.rglob("*") if p.is_file()]
    assert len(dirs) + 1 == 30 and len(files) == 80


def installed(package: str) -> bool:
    """Whether a Debian package is installed, as the scripts' need_packages asks."""
    done = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True)
    return done.returncode == 0 and "install ok installed" in done.stdout


#: Each script's knobs for a run of a second or two (the defaults take 2-5 s natively).
REDUCED = {"sqlite": {"ROWS": "2000"}, "shell": {"DIRS": "20", "FILES": "100"}}
#: The Debian packages each script needs (its need_packages line).
PACKAGES = {"sqlite": ["sqlite3"], "shell": ["findutils", "coreutils", "dash"]}


@pytest.mark.parametrize("name", ["sqlite", "shell"])
def test_native_run_at_a_reduced_size(name):
    # The tests never install packages: without the program the run is skipped, visibly.
    missing = [p for p in PACKAGES[name] if shutil.which("dpkg-query") is None or not installed(p)]
    if missing:
        pytest.skip(f"{name}: Debian packages {', '.join(missing)} are not installed")
    result = run(name, {"CAPTURE": "none", **REDUCED[name]}, timeout=120)
    assert result.returncode == 0, result.stderr
    assert f"{name}: native run done in" in result.stderr
