"""Runs one fuzz case: writes its input files into a fresh directory, runs the real `bulksim`
CLI there in its own process group with a CPU-time limit (a wall-clock limit of several times
it as a backstop for a process that waits forever) and an address-space limit, and classifies
what happened. A hang is judged by CPU time so that a loaded machine, where a case's wall time
can be several times its CPU time, does not turn a slow clean error into a hang. A case may
run further commands (its oracle's) through the same limits; the worst outcome of any of them
is the case's."""

from __future__ import annotations

import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

#: Outcome categories, from benign to worst. Only the FAILURES fail the suite.
OK = "ok"
CLEAN_ERROR = "clean-error"
MESSY_ERROR = "messy-error"  # no traceback or panic, but not one `error:` line either
TRACEBACK = "traceback"
PANIC = "panic"
ABORT = "abort"
HANG = "hang"
WRONG = "wrong"
CATEGORIES = [OK, CLEAN_ERROR, MESSY_ERROR, TRACEBACK, PANIC, ABORT, HANG, WRONG]
FAILURES = {TRACEBACK, PANIC, ABORT, HANG, WRONG}


def bulksim_command() -> list[str]:
    """The installed CLI next to this interpreter (the `.venv` one), else `python -m bulksim.cli`."""
    script = Path(sys.executable).parent / "bulksim"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "bulksim.cli"]


FILE_SIZE_LIMIT_MB = 512
#: The error a write past RLIMIT_FSIZE gives (Python ignores SIGXFSZ): a run that would have
#: written without end, counted as a hang.
RUNAWAY = "File too large"


#: The wall-clock backstop, as a multiple of the CPU-time limit.
WALL_FACTOR = 4


@dataclass
class Limits:
    #: CPU seconds a command's process may use before it is a hang (RLIMIT_CPU).
    timeout_s: float = 20.0
    memory_mb: int = 2048


@dataclass
class Result:
    argv: list[str]
    returncode: int | None  # None: killed at the timeout
    stdout: str
    stderr: str
    seconds: float
    category: str = ""
    signature: str = ""


@dataclass
class Case:
    """One generated input: files (relative path -> bytes), the CLI arguments after `bulksim`,
    and an oracle `check(ctx)` called when the command succeeds, returning None when the run
    agrees with the independent reading of the input, else what differs (or a (category,
    message) pair when the problem is of another category, e.g. a stored traceback)."""

    kind: str
    seed: int
    index: int
    files: dict[str, bytes]
    argv: list[str]
    what: str
    check: Callable[[CaseContext], str | tuple[str, str] | None] | None = None
    #: Set when the independent reader finds the input malformed (why): accepting it is wrong.
    malformed: str | None = None
    #: Set when the documentation says the input must run (why): rejecting it is wrong.
    must_accept: str | None = None
    dirs: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.kind}-s{self.seed}-{self.index:04d}"


@dataclass
class Outcome:
    case: Case
    category: str
    signature: str
    detail: str
    results: list[Result]


class CaseContext:
    """What an oracle sees: the case directory, the primary result, and `run` for follow-ups."""

    def __init__(self, case: Case, directory: Path, limits: Limits):
        self.case = case
        self.dir = directory
        self.limits = limits
        self.results: list[Result] = []

    def run(self, argv: list[str]) -> Result:
        result = run_cli(argv, self.dir, self.limits)
        self.results.append(result)
        if result.category in FAILURES:
            raise FollowUpFailed(result)
        return result


class FollowUpFailed(Exception):
    def __init__(self, result: Result):
        super().__init__(result.signature)
        self.result = result


def _limit_resources(limits: Limits) -> Callable[[], None]:
    def apply() -> None:
        cpu = max(1, round(limits.timeout_s))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))  # SIGXCPU, then SIGKILL
        limit = limits.memory_mb << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        # A case writes kilobytes; a runaway writer stops at this size (SIGXFSZ: an abort).
        size = FILE_SIZE_LIMIT_MB << 20
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return apply


def run_cli(argv: list[str], cwd: Path, limits: Limits) -> Result:
    env = dict(os.environ, RUST_BACKTRACE="0", PYTHONDONTWRITEBYTECODE="1", COLUMNS="200")
    env.pop("PYTHONWARNINGS", None)
    start = time.monotonic()
    proc = subprocess.Popen(
        bulksim_command() + argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: a timeout kills workers too
        preexec_fn=_limit_resources(limits),
    )
    try:
        out, err = proc.communicate(timeout=limits.timeout_s * WALL_FACTOR)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        code = None
    _kill_group(proc)  # leftovers (a sweep's worker processes) must not outlive the case
    result = Result(
        argv,
        code,
        out.decode("utf-8", "replace"),
        err.decode("utf-8", "replace"),
        time.monotonic() - start,
    )
    result.category, result.signature = classify(result, limits)
    return result


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


_PANIC = re.compile(r"panicked at ([^\n]*?:\d+):\d+:\n?([^\n]*)")
_TRACE_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')
_ALLOC = re.compile(r"memory allocation of \d+ bytes failed")


def _scrub(text: str) -> str:
    """A message with numbers, quoted values and paths blurred, for grouping by signature."""
    text = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "'…'", text)
    text = re.sub(r"(/[\w.\-]+)+", "PATH", text)
    text = re.sub(r"0x[0-9a-fA-F]+|\d+", "N", text)
    return text.strip()[:160]


def classify(r: Result, limits: Limits) -> tuple[str, str]:
    """(category, signature) of one command's result."""
    err = r.stderr
    if r.returncode is None:
        return (
            HANG,
            f"no exit within {limits.timeout_s * WALL_FACTOR:g} s of wall time: "
            f"bulksim {_command_word(r.argv)}",
        )
    if r.returncode in (-signal.SIGXCPU, -signal.SIGKILL) and r.seconds >= limits.timeout_s:
        return HANG, f"more than {limits.timeout_s:g} CPU s: bulksim {_command_word(r.argv)}"
    if RUNAWAY in err:
        return (
            HANG,
            f"runaway output: a file reached {FILE_SIZE_LIMIT_MB} MiB: bulksim {_command_word(r.argv)}",
        )
    panic = _PANIC.search(err)
    if panic:
        return PANIC, f"panicked at {panic.group(1)}: {_scrub(panic.group(2))}"
    if _ALLOC.search(err) or (r.returncode < 0) or r.returncode in (134, 137, 139):
        sig = -r.returncode if r.returncode < 0 else r.returncode - 128
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        first = _ALLOC.search(err)
        return ABORT, f"{name}: {first.group(0) if first else _scrub(_last_line(err))}"
    if "Traceback (most recent call last)" in err or "Exception ignored" in err:
        frames = _TRACE_FRAME.findall(err)
        where = ""
        for path, line, fn in reversed(frames):
            if "/bulksim/" in path or "/tests/" in path:
                where = f"{Path(path).name}:{line} in {fn}"
                break
        if not where and frames:
            path, line, fn = frames[-1]
            where = f"{Path(path).name}:{line} in {fn}"
        return TRACEBACK, f"{_scrub(_exception_line(err))} at {where}"
    if r.returncode == 0:
        return OK, ""
    lines = [line for line in err.splitlines() if line.strip()]
    # One error: its first line says `error: ...` (click: `Usage: ...` then `Error: ...`);
    # further lines may show the offending TOML line, or list further problems.
    if lines and (_is_error_line(lines[0]) or lines[0].startswith("Usage: ")):
        return CLEAN_ERROR, _scrub(lines[0] if _is_error_line(lines[0]) else lines[-1])
    return MESSY_ERROR, _scrub(" | ".join(lines[:2]) or f"exit {r.returncode} with nothing on stderr")


def _is_error_line(line: str) -> bool:
    return line.startswith(("error: ", "Error: "))


_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)\b")


def _exception_line(text: str) -> str:
    """The `SomeError: message` line of a traceback (a message may span several lines)."""
    for line in reversed(text.splitlines()):
        if _EXCEPTION.match(line):
            return line
    return _last_line(text)


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _command_word(argv: list[str]) -> str:
    words = [a for a in argv if not a.startswith("-")][:2]
    return " ".join(words)


def execute(case: Case, limits: Limits, keep_dir: Path | None = None) -> Outcome:
    """Runs `case` and classifies it; with `keep_dir`, a failing case's files and a `repro.sh`
    are copied there."""
    with tempfile.TemporaryDirectory(prefix=f"bulksim-fuzz-{case.name}-") as tmp:
        directory = Path(tmp)
        for d in case.dirs:
            (directory / d).mkdir(parents=True, exist_ok=True)
        for rel, data in case.files.items():
            path = directory / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        ctx = CaseContext(case, directory, limits)
        primary = run_cli(case.argv, directory, limits)
        ctx.results.append(primary)
        category, signature, detail = primary.category, primary.signature, ""
        if category == OK:
            if case.malformed:
                category = WRONG
                signature = f"accepted malformed input: {_scrub(case.malformed)}"
                detail = case.malformed
            elif case.check is not None:
                try:
                    problem = case.check(ctx)
                except FollowUpFailed as e:
                    category, signature = e.result.category, e.result.signature
                    detail = f"follow-up `bulksim {' '.join(e.result.argv)}`"
                except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
                    # Exit 0 but no readable results (missing or broken JSON, a stat missing).
                    category = WRONG
                    signature = f"accepted, but its results are unreadable: {type(e).__name__}"
                    detail = f"{type(e).__name__}: {e}"
                else:
                    if isinstance(problem, tuple):
                        category, detail = problem
                        signature = _scrub(detail)
                    elif problem:
                        category, signature, detail = WRONG, _scrub(problem), problem
        elif category in (CLEAN_ERROR, MESSY_ERROR) and case.must_accept:
            category = WRONG
            signature = f"rejected valid input: {signature}"
            detail = f"{case.must_accept}; {_last_line(primary.stderr)[:300]}"
        outcome = Outcome(case, category, signature, detail, ctx.results)
        if keep_dir is not None and category in FAILURES:
            save_failure(outcome, directory, keep_dir)
        return outcome


def save_failure(outcome: Outcome, directory: Path, keep_dir: Path) -> Path:
    target = keep_dir / outcome.case.name
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(directory, target)
    bulksim = os.path.relpath(bulksim_command()[0], target) if len(bulksim_command()) == 1 else "bulksim"
    lines = ["#!/bin/sh", f"# {outcome.case.what}", f"# {outcome.category}: {outcome.signature}"]
    if outcome.detail:
        lines.append(f"# {outcome.detail[:500]}")
    lines += ['cd "$(dirname "$0")"']
    for r in outcome.results:
        lines.append(f"{bulksim} {' '.join(_quote(a) for a in r.argv)}")
    (target / "repro.sh").write_text("\n".join(lines) + "\n")
    (target / "repro.sh").chmod(0o755)
    last = outcome.results[-1]
    (target / "stderr.txt").write_text(last.stderr)
    return target


def _quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg)
