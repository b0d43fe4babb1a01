#!/bin/sh
# Builds forkbench and captures it as a bulksim workload.
#   workloads/forkbench/capture.sh OUT [S] [N] [seed]     (defaults: S = 1 MiB, N = 64)
# The committed test capture (tests/data/captures/forkbench-small) is
#   workloads/forkbench/capture.sh tests/data/captures/forkbench-small 1048576 64 1
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:?usage: capture.sh OUT [S] [N] [seed]}
size=${2:-1048576}
pages=${3:-64}
seed=${4:-1}
build="$repo/build/forkbench"
mkdir -p "$build"
cc -O2 -o "$build/forkbench" "$here/forkbench.c"
bulksim=${BULKSIM:-"$repo/.venv/bin/bulksim"}
cd "$repo"
exec "$bulksim" capture --out "$out" -- build/forkbench/forkbench "$size" "$pages" "$seed"
