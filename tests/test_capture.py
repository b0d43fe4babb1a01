"""`bulksim capture`: the committed forkbench capture through the full system under every bulk
mechanism, live captures of small C programs with exactly known events (skipped without
valgrind, the built tool or a C compiler), and the one-line errors."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

import bulksim
from bulksim.workloads import capture as cap

REPO = Path(__file__).resolve().parents[1]
FORKBENCH = REPO / "tests" / "data" / "captures" / "forkbench-small"
# The committed capture is `workloads/forkbench/capture.sh OUT 1048576 64 1`.
ARRAY_BYTES = 1 << 20
PAGES_UPDATED = 64
PAGE = 4096
MECHANISMS = ("cpu", "mc_dma", "rowclone", "rowclone_zi")
OPERANDS = {"C": 1, "L": 1, "S": 1, "l": 2, "s": 2, "M": 3, "I": 3, "A": 2, "P": 2, "N": 2, "U": 2}
OPERANDS |= {"K": 2, "G": 2, "F": 1, "T": 1, "Y": 1, "E": 0, "W": 0, "X": 0, "R": 1, "B": 1}


def events(path: Path) -> list[tuple[str, list[int]]]:
    """Decodes a .btrace independently of the engine: header, then opcode + LEB128 operands."""
    data = gzip.decompress(path.read_bytes())
    assert data[:5] == b"BSWL\x02", path
    out, i = [], 6
    while i < len(data):
        op = chr(data[i])
        i += 1
        values = []
        for _ in range(OPERANDS[op]):
            value = shift = 0
            while True:
                byte = data[i]
                i += 1
                value |= (byte & 0x7F) << shift
                shift += 7
                if byte < 0x80:
                    break
            values.append(value)
        out.append((op, values))
    return out


def child_flag(path: Path) -> int:
    return gzip.decompress(path.read_bytes())[5]


def bulksim_cli(*args: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bulksim.cli", *args], capture_output=True, text=True, env=env, cwd=REPO
    )


# ---- the committed capture ---------------------------------------------------------------


def test_committed_forkbench_capture_is_a_fork_of_two_threads():
    files = sorted(p.name for p in FORKBENCH.glob("thread-*.btrace"))
    assert files == ["thread-0.btrace", "thread-1.btrace"]
    parent, child = events(FORKBENCH / "thread-0.btrace"), events(FORKBENCH / "thread-1.btrace")
    assert child_flag(FORKBENCH / "thread-0.btrace") == 0 and child_flag(FORKBENCH / "thread-1.btrace") == 1
    assert [e for e in parent if e[0] in "FW"] == [("F", [1]), ("W", [])]
    assert parent[-1] == ("X", []) and child[-1] == ("X", [])
    # The parent's memset(array, 0x5a, S) is one meminit of S bytes (glibc's
    # __memset_avx2_unaligned_erms or similar, recognised by name).
    inits = [v for op, v in parent if op == "I" and v[1] == ARRAY_BYTES]
    assert len(inits) == 1 and inits[0][2] == 0x5A
    array = inits[0][0]
    # The child writes one line (eight 8-byte stores) in each of N distinct pages of the array.
    stores = {v[0] for op, v in child if op == "S" and array <= v[0] < array + ARRAY_BYTES}
    assert len(stores) == PAGES_UPDATED * 8
    assert len({a // PAGE for a in stores}) == PAGES_UPDATED
    meta = json.loads((FORKBENCH / "capture.json").read_text())
    assert meta["exit_status"] == 0 and meta["events"]["F"] == 1 and meta["events"]["X"] == 2


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_committed_forkbench_capture_runs_under_every_mechanism(mechanism):
    stats = bulksim.run_workload(workload=FORKBENCH, overrides=[f"system.bulk_mechanism={mechanism}"])
    os_stats = stats["os"]
    assert os_stats["forks"] == 1 and os_stats["processes"] == 2
    # Each of the N pages the child writes is shared copy-on-write, so each is copied once;
    # the child's stack and libc data pages written after the fork are copied too, hence >=.
    assert os_stats["cow_copies"] >= PAGES_UPDATED
    # Every copy-on-write copy is a memcpy operation; the program's own calls add more.
    assert stats["memcpy_ops"] > os_stats["cow_copies"]
    # The S-byte memset (and the zero fills) are meminit operations.
    assert stats["traffic"]["init_bytes"] >= ARRAY_BYTES or mechanism in ("rowclone", "rowclone_zi")
    assert stats["meminit_ops"] >= 1


def test_rowclone_moves_less_copy_data_over_the_channel_than_cpu():
    copy, stats = {}, {}
    for mechanism in ("cpu", "rowclone"):
        stats[mechanism] = bulksim.run_workload(
            workload=FORKBENCH, overrides=[f"system.bulk_mechanism={mechanism}"]
        )
        copy[mechanism] = stats[mechanism]["traffic"]["copy_bytes"]
    # RowClone executes every copy-on-write page copy (at least N pages of 4 KiB) as a bulk
    # copy inside DRAM, so less copy data crosses the channel than when the CPU copies.
    assert stats["rowclone"]["memory"]["bulk"]["bytes_copied"] >= PAGE * PAGES_UPDATED
    assert stats["cpu"]["memory"]["bulk"]["bytes_copied"] == 0
    assert copy["rowclone"] < copy["cpu"]


# ---- live captures -----------------------------------------------------------------------


def _capture_ready() -> str | None:
    """Why a live capture cannot run here, or None."""
    if shutil.which("valgrind") is None:
        return "valgrind is not installed (make capture-tool installs it)"
    if shutil.which("cc") is None:
        return "no C compiler"
    try:
        cap.tool_dir()
    except cap.CaptureError as e:
        return str(e)
    return None


needs_capture = pytest.mark.skipif(_capture_ready() is not None, reason=f"live capture: {_capture_ready()}")

PROGRAM = r"""
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
static char src[65536], dst[65536], buf[4096];
static char thread_area[8192], rep_area[20000];
volatile size_t thread_bytes = 8192; /* a size known only at run time: memset is a call */
static void* worker(void* arg) { memset(arg, 0x11, thread_bytes); return NULL; }
int main(int argc, char** argv) {
   memset(src, 0x2a, sizeof src);
   memcpy(dst, src, sizeof dst);
   memmove(src + 1, src, 1000);
   /* rep-prefixed string instructions: each one bulk event, not an access per iteration */
   void* d = rep_area; size_t c = 5000;
   __asm__ volatile("rep stosb" : "+D"(d), "+c"(c) : "a"(0x33) : "memory");
   const void* s = dst; d = rep_area + 8000; c = 1000;
   __asm__ volatile("rep movsq" : "+D"(d), "+S"(s), "+c"(c) : : "memory");
   int fd = open(argv[1], O_RDONLY);
   ssize_t n = read(fd, buf, sizeof buf);
   close(fd);
   int out = open("/dev/null", O_WRONLY);
   write(out, buf, (size_t)n);
   close(out);
   pid_t child = fork();
   if (child == 0) { dst[0] = 1; _exit(0); }
   pthread_t t;
   pthread_create(&t, NULL, worker, thread_area);
   pthread_join(t, NULL);
   waitpid(child, NULL, 0);
   printf("%lu %lu %lu %lu %zd %lu\n", (unsigned long)src, (unsigned long)dst, (unsigned long)buf,
          (unsigned long)thread_area, n, (unsigned long)rep_area);
   return 0;
}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    where = tmp_path_factory.mktemp("prog")
    (where / "prog.c").write_text(PROGRAM)
    subprocess.run(["cc", "-O1", "-pthread", "-o", where / "prog", where / "prog.c"], check=True)
    data = where / "input.bin"
    data.write_bytes(bytes(range(256)) * 5 + b"xyz")  # 1283 bytes
    return where / "prog", data


@needs_capture
def test_live_capture_records_exact_bulk_kernel_and_thread_events(program, tmp_path, capfd):
    prog, data = program
    out = tmp_path / "cap"
    result = cap.capture([str(prog), str(data)], out)
    src, dst, buf, area, n, rep = map(int, capfd.readouterr().out.split())
    assert n == data.stat().st_size == 1283
    assert result.exit_status == 0
    # Ids follow creation order: the fork comes before the thread.
    assert [t.kind for t in result.threads] == ["main", "fork", "spawn"]
    main = events(out / "thread-0.btrace")
    assert ("I", [src, 65536, 0x2A]) in main
    assert ("M", [src, dst, 65536]) in main
    # memmove of overlapping ranges: a load and a store of the ranges, not a memcpy.
    assert ("l", [src, 1000]) in main and ("s", [src + 1, 1000]) in main
    assert main.count(("I", [rep, 5000, 0x33])) == 1  # rep stosb
    assert main.count(("M", [dst, rep + 8000, 8000])) == 1  # rep movsq of 1000 quadwords
    assert not any(op in "SsLl" and rep <= v[0] < rep + 20000 for op, v in main)
    assert ("K", [buf, n]) in main  # read(): the kernel copies the file into buf
    assert ("G", [buf, n]) in main  # write(): the kernel copies buf out
    by_kind = {t.kind: t.id for t in result.threads}
    assert ("F", [by_kind["fork"]]) in main and ("T", [by_kind["spawn"]]) in main
    assert ("W", []) in main and main[-1] == ("X", [])
    worker = events(out / f"thread-{by_kind['spawn']}.btrace")
    assert ("I", [area, 8192, 0x11]) in worker
    # pthread_join blocks the main thread: Valgrind runs the worker, and the main thread's
    # stream records the switch after the spawn, so the simulator replays that order.
    spawn = main.index(("T", [by_kind["spawn"]]))
    assert ("Y", [by_kind["spawn"]]) in main[spawn:]
    forked = events(out / f"thread-{by_kind['fork']}.btrace")
    assert ("S", [dst]) in forked and forked[-1] == ("X", [])
    # The initial mappings come before any access: the simulator runs it under every mechanism.
    assert main[0][0] == "N"
    for mechanism in MECHANISMS:
        stats = bulksim.run_workload(workload=out, overrides=[f"system.bulk_mechanism={mechanism}"])
        assert stats["os"]["forks"] == 1 and stats["os"]["spawns"] == 1
        assert stats["cores"][0]["yields"] >= 1 and stats["os"]["unordered_touches"] == 0
    meta = json.loads((out / "capture.json").read_text())
    assert meta["events"]["F"] == 1 and meta["events"]["T"] == 1 and meta["events"]["X"] == 3
    assert "derived by bulksim's OS model" in meta["page_faults"]["source"]
    assert not (out / "raw").exists()


@needs_capture
def test_live_capture_of_an_exec_continues_the_stream(tmp_path):
    out = tmp_path / "cap"
    result = cap.capture(["sh", "-c", "exec true"], out)
    assert result.exit_status == 0 and len(result.threads) == 1
    main = events(out / "thread-0.btrace")
    execs = [i for i, e in enumerate(main) if e[0] == "E"]
    assert len(execs) == 1
    # After the exec the new image is mapped (N) before anything touches it.
    assert main[execs[0] + 1][0] == "N"
    stats = bulksim.run_workload(workload=out)
    assert stats["os"]["execs"] == 1


@needs_capture
def test_capture_json_counts_what_the_streams_hold_across_fork_and_exec(tmp_path):
    # sh forks once to run the first command, then both processes exec: an exec ends the tool's
    # instance in that process, and what it had counted must still be in capture.json.
    out = tmp_path / "cap"
    result = cap.capture(["sh", "-c", "/bin/true; exec /bin/true"], out)
    assert [t.kind for t in result.threads] == ["main", "fork"]
    meta = json.loads((out / "capture.json").read_text())
    assert meta["processes"] == result.processes == 2
    streams = [events(out / f"thread-{t.id}.btrace") for t in result.threads]
    held = Counter(op for stream in streams for op, _ in stream)
    assert (held["F"], held["E"], held["X"]) == (1, 2, 2) and held["W"] >= 1
    assert meta["events"] == {kind: held[kind] for kind in cap.EVENT_KINDS}
    # Every byte count, and the non-memory instructions (the C operands), as the streams hold.
    size_operand = {"l": 1, "s": 1, "M": 2, "I": 1, "K": 1, "G": 1, "A": 1, "N": 1, "U": 1}
    held_bytes = Counter()
    for stream in streams:
        for op, values in stream:
            if op in size_operand:
                held_bytes[op] += values[size_operand[op]]
    assert meta["bytes"] == {kind: n for kind, n in held_bytes.items() if n}
    assert meta["non_memory_instructions"] == sum(v[0] for stream in streams for op, v in stream if op == "C")
    stats = bulksim.run_workload(workload=out)
    assert (stats["os"]["forks"], stats["os"]["execs"], stats["os"]["processes"]) == (1, 2, 2)


SPIN = r"""
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static unsigned long x;
int main(int argc, char** argv) {
   if (argc > 1) {
      /* 2 instructions per round (an add to memory, a loop), then the program again, spinning */
      unsigned long n = strtoul(argv[1], NULL, 10);
      __asm__ volatile("1: addq $1, %0\n\tloop 1b" : "+m"(x), "+c"(n));
      printf("%lu\n", (unsigned long)&x);
      fflush(stdout);
      execl(argv[0], argv[0], (char*)NULL);
      return 1;
   }
   for (;;) __asm__ volatile("addq $1, %0" : "+m"(x));
}
"""


@needs_capture
def test_max_instructions_counts_the_instructions_before_an_exec(tmp_path, capfd):
    (tmp_path / "spin.c").write_text(SPIN)
    subprocess.run(["cc", "-O1", "-no-pie", "-o", tmp_path / "spin", tmp_path / "spin.c"], check=True)
    rounds, limit = 300_000, 1_500_000
    out = tmp_path / "cap"
    result = cap.capture([str(tmp_path / "spin"), str(rounds)], out, max_instructions=limit)
    x = int(capfd.readouterr().out)
    assert result.stopped_at_limit and len(result.threads) == 1
    assert limit <= result.instructions < limit + (1 << 16) + 64
    # The budget goes on across the exec: the program spinning after it had what the 2 x
    # rounds instructions before it left, not a fresh limit.
    stream = events(out / "thread-0.btrace")
    after_exec = stream[[op for op, _ in stream].index("E") :]
    spins = after_exec.count(("S", [x]))
    assert 0 < 2 * spins <= limit - 2 * rounds + (1 << 16) + 64


@needs_capture
def test_wall_time_covers_the_whole_capture(tmp_path, monkeypatch):
    finish = cap._finish

    def slow_finish(*args):
        time.sleep(0.5)  # as compressing a large capture's streams takes time
        return finish(*args)

    monkeypatch.setattr(cap, "_finish", slow_finish)
    out = tmp_path / "cap"
    result = cap.capture(["true"], out)
    meta = json.loads((out / "capture.json").read_text())
    assert meta["compress_seconds"] >= 0.5 and meta["program_seconds"] > 0
    parts = meta["program_seconds"] + meta["compress_seconds"]
    assert meta["wall_seconds"] == pytest.approx(parts, abs=0.002)
    said = f"{result.wall_seconds:.2f} s in all: the program ran {result.program_seconds:.2f} s under"
    assert said in result.summary()


#: Bytes the file-copy program moves with each call.
BY_COPY_FILE_RANGE, BY_SENDFILE, BY_SPLICE = 300_000, 70_000, 4096

FILE_COPIES = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/sendfile.h>
#include <unistd.h>
/* argv[1]: a file of at least 300,000 bytes; argv[2..4]: the files to write. */
int main(int argc, char** argv) {
   int in = open(argv[1], O_RDONLY);
   int a = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
   long copied = 0, sent = 0, n;
   while (copied < 300000 && (n = copy_file_range(in, NULL, a, NULL, 300000 - copied, 0)) > 0)
      copied += n;
   int b = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0600);
   off_t at = 0;
   while (sent < 70000 && (n = sendfile(b, in, &at, 70000 - sent)) > 0)
      sent += n;
   int pipe_ends[2];
   pipe(pipe_ends);
   int c = open(argv[4], O_WRONLY | O_CREAT | O_TRUNC, 0600);
   loff_t from = 0;
   long into_pipe = splice(in, &from, pipe_ends[1], NULL, 4096, 0);
   long out_of_pipe = splice(pipe_ends[0], NULL, c, NULL, 4096, 0);
   printf("%ld %ld %ld %ld\n", copied, sent, into_pipe, out_of_pipe);
   return 0;
}
"""

#: Where the tool puts the kernel's buffers of a copy between files (above user space).
KERNEL_BUFFERS = 1 << 47


def kernel_buffer_copies(stream: list[tuple[str, list[int]]]) -> tuple[int, int]:
    """Bytes the kernel copied out of (G) and into (K) its own buffers, checking that each
    buffer is resident (N) while it is used and unmapped (U) after."""
    resident: set[int] = set()
    out = into = 0
    for op, v in stream:
        if not v or v[0] < KERNEL_BUFFERS:
            continue
        if op == "N":
            resident.add(v[0])
        elif op == "U":
            resident.discard(v[0])
        else:
            assert op in "GK" and v[0] in resident, (op, v)
            out += v[1] if op == "G" else 0
            into += v[1] if op == "K" else 0
    assert not resident
    return out, into


@needs_capture
def test_copies_between_files_are_kernel_copies_of_the_bytes_moved(tmp_path, capfd):
    (tmp_path / "copies.c").write_text(FILE_COPIES)
    subprocess.run(["cc", "-O1", "-o", tmp_path / "copies", tmp_path / "copies.c"], check=True)
    data = tmp_path / "input.bin"
    data.write_bytes(os.urandom(BY_COPY_FILE_RANGE))
    targets = [tmp_path / name for name in ("a", "b", "c")]
    out = tmp_path / "cap"
    cap.capture([str(tmp_path / "copies"), str(data), *map(str, targets)], out)
    moved = [int(n) for n in capfd.readouterr().out.split()]
    assert moved == [BY_COPY_FILE_RANGE, BY_SENDFILE, BY_SPLICE, BY_SPLICE]
    source = data.read_bytes()
    assert [t.read_bytes() for t in targets] == [source, source[:BY_SENDFILE], source[:BY_SPLICE]]
    # Into a pipe the kernel moves page references, not bytes: the first splice is no copy.
    copied = BY_COPY_FILE_RANGE + BY_SENDFILE + BY_SPLICE
    assert kernel_buffer_copies(events(out / "thread-0.btrace")) == (copied, copied)
    meta = json.loads((out / "capture.json").read_text())
    # One call each, unless the kernel returned a part and the program called again.
    assert meta["file_copies"] >= 3 and meta["file_copy_bytes"] == copied
    stats = bulksim.run_workload(workload=out)
    assert stats["threads"][0]["kernel_copy_bytes"] >= 2 * copied


@needs_capture
def test_cp_of_a_file_is_one_kernel_copy_of_its_size(tmp_path):
    # GNU cp copies a file with copy_file_range, so the bytes never pass through its memory.
    data = tmp_path / "input.bin"
    data.write_bytes(os.urandom(200_000))
    out = tmp_path / "cap"
    cap.capture(["cp", str(data), str(tmp_path / "copy.bin")], out)
    assert (tmp_path / "copy.bin").read_bytes() == data.read_bytes()
    assert kernel_buffer_copies(events(out / "thread-0.btrace")) == (200_000, 200_000)
    meta = json.loads((out / "capture.json").read_text())
    assert (meta["file_copies"], meta["file_copy_bytes"]) == (1, 200_000)
    bulksim.run_workload(workload=out)


@needs_capture
def test_max_instructions_stops_every_thread_with_an_exit(tmp_path):
    loop = tmp_path / "loop.c"
    loop.write_text("int main(void){ volatile unsigned long x = 0; for (;;) x++; }\n")
    subprocess.run(["cc", "-O1", "-o", tmp_path / "loop", loop], check=True)
    out = tmp_path / "cap"
    limit = 300_000
    result = cap.capture([str(tmp_path / "loop")], out, max_instructions=limit)
    assert result.stopped_at_limit
    # The tool looks at the shared budget every 2^16 instructions of a thread.
    assert limit <= result.instructions < limit + (1 << 16) + 64
    assert events(out / "thread-0.btrace")[-1] == ("X", [])
    bulksim.run_workload(workload=out)


# ---- errors --------------------------------------------------------------------------------


def test_tool_missing_is_one_line(tmp_path):
    env = dict(os.environ, BULKSIM_CAPTURE_TOOL_DIR=str(tmp_path / "nowhere"))
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind missing: that error comes first")
    done = bulksim_cli("capture", "--out", str(tmp_path / "o"), "--", "true", env=env)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"error: the capture tool is not built (${cap.TOOL_DIR_ENV}={tmp_path / 'nowhere'} has no "
        f"{cap.TOOL_BINARY}): run `make capture-tool`"
    ]


@needs_capture
def test_program_not_found_is_one_line(tmp_path):
    done = bulksim_cli("capture", "--out", str(tmp_path / "o"), "--", "no-such-program-xyz")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == ["error: no-such-program-xyz: program not found on PATH"]
    assert not (tmp_path / "o").exists()


@needs_capture
def test_nonzero_exit_keeps_the_capture_and_says_so(tmp_path):
    out = tmp_path / "o"
    done = bulksim_cli("capture", "--out", str(out), "--", "sh", "-c", "exit 3")
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: sh exited with status 3;")
    assert json.loads((out / "capture.json").read_text())["exit_status"] == 3
    bulksim.run_workload(workload=out)


@needs_capture
def test_existing_output_directory_is_refused(tmp_path):
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "keep").write_text("x")
    with pytest.raises(cap.CaptureError, match="exists and is not an empty directory"):
        cap.capture(["true"], tmp_path / "o")
