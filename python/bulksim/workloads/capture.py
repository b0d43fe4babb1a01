"""Capture of real programs as bulksim workloads: runs a command under the bulkcap Valgrind tool
(``capture/valgrind``, GPL-2, built by ``make capture-tool``), which writes one raw stream per
thread of every process, then turns those into ``thread-<id>.btrace`` files (gzip of the
documented binary format) and a ``capture.json`` describing the run. This module owns finding
the tool, running it, finishing streams a process left open, and the summary; what is recorded
and how is in docs/capture.md."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from bulksim.paths import REPO

#: The tool's name as Valgrind knows it (``valgrind --tool=bulkcap``).
TOOL = "bulkcap"
TOOL_BINARY = f"{TOOL}-amd64-linux"
#: Environment variable naming the directory that holds the built tool (VALGRIND_LIB layout).
TOOL_DIR_ENV = "BULKSIM_CAPTURE_TOOL_DIR"
#: The tool's exit status when it cannot go on (it prints the reason first).
TOOL_FAILURE_STATUS = 97
#: Event letters in the order the summary lists them, with what each counts.
EVENT_KINDS = {
    "C": "non-memory instruction runs",
    "L": "loads (one line)",
    "l": "loads (ranges)",
    "S": "stores (one line)",
    "s": "stores (ranges)",
    "M": "memcpy",
    "I": "meminit (memset)",
    "K": "kernel copies in (into user memory, or a file copy's destination)",
    "G": "kernel copies out (of user memory, or a file copy's source)",
    "A": "maps (mmap, brk)",
    "N": "resident maps",
    "U": "unmaps",
    "E": "execs",
    "F": "forks",
    "T": "thread spawns",
    "Y": "thread switches (the recorded schedule)",
    "W": "waits",
    "X": "exits",
}
TRACEFS = Path("/sys/kernel/tracing")


class CaptureError(ValueError):
    """A capture that cannot be made or did not complete: one line saying why."""


def repo_root() -> Path:
    return REPO


def tool_dir() -> Path:
    """The directory Valgrind loads the tool from: $BULKSIM_CAPTURE_TOOL_DIR, else the
    repository's build/capture/lib."""
    configured = os.environ.get(TOOL_DIR_ENV)
    path = Path(configured) if configured else repo_root() / "build" / "capture" / "lib"
    if not (path / TOOL_BINARY).is_file():
        where = f"${TOOL_DIR_ENV}={configured}" if configured else str(path)
        raise CaptureError(
            f"the capture tool is not built ({where} has no {TOOL_BINARY}): run `make capture-tool`"
        )
    return path


def valgrind() -> str:
    found = shutil.which("valgrind")
    if found is None:
        raise CaptureError("valgrind is not installed: run `apt-get install valgrind libc6-dbg`")
    return found


def resolve_program(name: str) -> str:
    """The executable a command names, as the shell would find it; an error if there is none."""
    if "/" in name:
        path = Path(name)
        if not path.is_file() or not os.access(path, os.X_OK):
            raise CaptureError(f"{name}: program not found (no executable file there)")
        return name
    found = shutil.which(name)
    if found is None:
        raise CaptureError(f"{name}: program not found on PATH")
    return found


def tracepoints_status() -> str:
    """Whether kernel page-fault tracepoints could be read here (the capture does not read
    them yet; the answer says what a future version could use)."""
    events = TRACEFS / "events" / "exceptions" / "page_fault_user"
    if not events.exists():
        return (
            f"not available ({TRACEFS} has no exceptions/page_fault_user: "
            "tracefs not mounted, or no permission)"
        )
    if not os.access(TRACEFS / "trace_pipe", os.R_OK):
        return "not available (no permission to read the trace pipe)"
    return "available but not recorded by this version"


@dataclass
class ThreadInfo:
    id: int
    kind: str
    parent: int
    pid: int
    ended: bool = False
    execs: int = 0
    counts: Counter = field(default_factory=Counter)


@dataclass
class CaptureResult:
    out: Path
    command: list[str]
    exit_status: int
    #: The whole capture: the program under Valgrind, then writing the compressed streams.
    wall_seconds: float
    #: The program's run under Valgrind (the tool writes the raw streams meanwhile).
    program_seconds: float
    #: Compressing the raw streams into thread-<id>.btrace after the program ended.
    compress_seconds: float
    threads: list[ThreadInfo]
    stopped_at_limit: bool
    raw_bytes: int
    compressed_bytes: int

    @property
    def instructions(self) -> int:
        return sum(t.counts["instructions"] for t in self.threads)

    @property
    def processes(self) -> int:
        """Processes: the program's, each forked one (an exec keeps its process), and each
        child of a fork that failed after its F was written."""
        return sum(t.kind != "spawn" for t in self.threads)

    def totals(self) -> Counter:
        total: Counter = Counter()
        for t in self.threads:
            total.update(t.counts)
        return total

    def to_json(self) -> dict:
        totals = self.totals()
        return {
            "command": self.command,
            "exit_status": self.exit_status,
            "wall_seconds": round(self.wall_seconds, 3),
            "program_seconds": round(self.program_seconds, 3),
            "compress_seconds": round(self.compress_seconds, 3),
            "processes": self.processes,
            # Guest instructions executed, including those inside memcpy-family calls and rep
            # instructions, which the streams carry as single bulk events.
            "instructions": self.instructions,
            "stopped_at_max_instructions": self.stopped_at_limit,
            "events": {k: totals[k] for k in EVENT_KINDS},
            "bytes": {k: totals[f"{k}_bytes"] for k in "lsMIKGANU" if totals[f"{k}_bytes"]},
            "non_memory_instructions": totals["C_bytes"],
            # Copies the kernel made between files (copy_file_range, sendfile, splice), also
            # in the G and K counts above: calls and bytes.
            "file_copies": totals["file_copies"],
            "file_copy_bytes": totals["file_copy_bytes"],
            "threads": [
                {"id": t.id, "kind": t.kind, "parent": t.parent, "pid": t.pid, "execs": t.execs}
                for t in self.threads
            ],
            "raw_bytes": self.raw_bytes,
            "compressed_bytes": self.compressed_bytes,
            "page_faults": {
                "source": "derived by bulksim's OS model (first touch and copy-on-write), not recorded",
                "kernel_tracepoints": tracepoints_status(),
            },
        }

    def summary(self) -> str:
        totals = self.totals()
        lines = [
            f"captured {' '.join(self.command)}",
            f"  exit status {self.exit_status}"
            + (", stopped at --max-instructions" if self.stopped_at_limit else ""),
            f"  {self.wall_seconds:.2f} s in all: the program ran {self.program_seconds:.2f} s under "
            f"Valgrind, compressing the streams took {self.compress_seconds:.2f} s",
            f"  {len(self.threads)} threads in {self.processes} processes, "
            f"{self.instructions:,} instructions executed; the streams carry "
            f"{totals['C_bytes']:,} non-memory instructions and "
            f"{sum(totals[k] for k in EVENT_KINDS if k not in 'CWXY'):,} events (instructions inside "
            "memcpy-family calls and rep instructions are recorded as their bulk events)",
            f"  {self.raw_bytes / 1e6:.2f} MB raw, {self.compressed_bytes / 1e6:.3f} MB compressed "
            f"({self.compressed_bytes / max(self.instructions, 1):.3f} MB per million instructions)",
        ]
        for kind, what in EVENT_KINDS.items():
            if totals[kind]:
                size = totals[f"{kind}_bytes"]
                extra = f", {size:,} bytes" if size and kind != "C" else ""
                lines.append(f"    {kind} {totals[kind]:>12,}  {what}{extra}")
        if totals["file_copies"]:
            lines.append(
                f"  of the kernel copies, {totals['file_copies']:,} between files (copy_file_range, "
                f"sendfile, splice): {totals['file_copy_bytes']:,} bytes copied"
            )
        lines.append("  page faults: derived by bulksim's OS model when simulated")
        lines.append(f"simulate it: bulksim run --workload {self.out}")
        return "\n".join(lines) + "\n"


def _read_index(raw: Path) -> dict[int, ThreadInfo]:
    threads: dict[int, ThreadInfo] = {}
    index = raw / "index"
    if not index.exists():
        return threads
    for line in index.read_text().splitlines():
        fields = line.split()
        if not fields:
            continue
        if fields[0] == "thread":
            tid = int(fields[1])
            threads[tid] = ThreadInfo(tid, fields[2], int(fields[3]), int(fields[4]))
        elif fields[0] == "counts":
            info = threads[int(fields[1])]
            for pair in fields[2:]:
                key, value = pair.split("=")
                info.counts[key] += int(value)
        elif fields[0] == "end":
            threads[int(fields[1])].ended = True
        elif fields[0] == "exec":
            threads[int(fields[1])].execs += 1
    return threads


def _finish(raw: Path, out: Path, threads: dict[int, ThreadInfo]) -> tuple[int, int]:
    """Writes thread-<id>.btrace for every raw stream; a stream whose process ended without
    the tool writing its exit (killed, or its other threads gone with an exec) gets one.
    Returns the raw and compressed sizes."""
    ids = sorted(threads)
    if ids != list(range(len(ids))):
        raise CaptureError(f"{raw}: thread ids {ids} have gaps; the capture tool lost a thread")
    raw_bytes = compressed = 0
    for tid in ids:
        stream = raw / f"stream-{tid}.raw"
        target = out / f"thread-{tid}.btrace"
        with open(stream, "rb") as src, gzip.open(target, "wb", compresslevel=6) as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
            if not threads[tid].ended:
                dst.write(b"X")
                threads[tid].counts["X"] += 1
        raw_bytes += stream.stat().st_size
        compressed += target.stat().st_size
    return raw_bytes, compressed


def capture(
    command: list[str],
    out: str | Path | None = None,
    max_instructions: int | None = None,
    keep_raw: bool = False,
) -> CaptureResult:
    """Runs ``command`` under the tool and writes the workload into ``out`` (default
    ``capture-<program>``). A non-zero exit status of the program still writes the capture,
    then raises CaptureError saying so."""
    if not command:
        raise CaptureError(
            "no command to capture: give it after `--`, as in `bulksim capture -- ./prog args`"
        )
    vg = valgrind()
    lib = tool_dir()
    resolve_program(command[0])
    out = Path(out) if out is not None else Path(f"capture-{Path(command[0]).name}")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CaptureError(f"{out}: exists and is not an empty directory; give --out a new directory")
    raw = out / "raw"
    (raw / "ids").mkdir(parents=True)
    args = [vg, "-q", f"--tool={TOOL}", "--trace-children=yes", f"--capture-out={raw.resolve()}"]
    if max_instructions:
        args.append(f"--capture-max-instructions={max_instructions}")
    env = dict(os.environ, VALGRIND_LIB=str(lib))
    start = time.monotonic()
    status = subprocess.run([*args, *command], env=env).returncode
    program_end = time.monotonic()
    threads = _read_index(raw)
    if 0 not in threads or not (raw / "stream-0.raw").exists():
        raise CaptureError(
            f"valgrind failed before {command[0]} started (exit status {status}; its message is above)"
        )
    if status == TOOL_FAILURE_STATUS and not all(t.ended for t in threads.values()):
        raise CaptureError(f"the capture tool failed (its message is above); the raw streams are in {raw}")
    raw_bytes, compressed = _finish(raw, out, threads)
    stopped_at_limit = (raw / "limit").exists()
    if not keep_raw:
        shutil.rmtree(raw)
    end = time.monotonic()
    result = CaptureResult(
        out=out,
        command=list(command),
        exit_status=status,
        wall_seconds=end - start,
        program_seconds=program_end - start,
        compress_seconds=end - program_end,
        threads=[threads[t] for t in sorted(threads)],
        stopped_at_limit=stopped_at_limit,
        raw_bytes=raw_bytes,
        compressed_bytes=compressed,
    )
    (out / "capture.json").write_text(json.dumps(result.to_json(), indent=2) + "\n")
    if status != 0 and not result.stopped_at_limit:
        raise CaptureError(
            f"{command[0]} exited with status {status}; the capture up to its exit is in {out} "
            f"(simulate it with `bulksim run --workload {out}`)"
        )
    return result
