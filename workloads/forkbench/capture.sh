#!/bin/bash
# Builds forkbench (RowClone section 7.2) and captures it as a bulksim workload.
#   workloads/forkbench/capture.sh [OUT] [S] [N] [seed]
# Defaults: OUT = workloads/captures/forkbench (what `bulksim reproduce rowclone-apps` reads),
# the paper's S = 64 MiB and N = 1024. The committed test capture
# (tests/data/captures/forkbench-small) is
#   workloads/forkbench/capture.sh tests/data/captures/forkbench-small 1048576 64 1
# CAPTURE=none runs the program natively instead (a check that it builds and runs).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-${OUT:-$repo/workloads/captures/forkbench}}
size=${2:-$((64 << 20))}
pages=${3:-1024}
seed=${4:-1}
build="$repo/build/forkbench"
mkdir -p "$build"
cc -O2 -o "$build/forkbench" "$here/forkbench.c"
if [ "${CAPTURE:-}" = none ]; then
    exec "$build/forkbench" "$size" "$pages" "$seed"
fi
bulksim=${BULKSIM:-"$repo/.venv/bin/bulksim"}
# A previous capture there is replaced; anything else is left for `bulksim capture` to refuse.
if [ -f "$out/capture.json" ]; then rm -rf "$out"; fi
mkdir -p "$(dirname "$out")"
exec "$bulksim" capture --out "$out" -- "$build/forkbench" "$size" "$pages" "$seed"
