#!/usr/bin/env bash
# The find/ls shell script: a seeded directory tree is made first (not captured), then
# find_ls.sh (sh -> find -> one ls per directory) runs under capture, which follows every child.
# Knobs: DIRS, FILES, SEED, MAX, OUT, CAPTURE=none (README.md).
set -euo pipefail
NAME=shell
MAX_DEFAULT=1000000000
LIMIT_NATIVE=60
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
positive_knob DIRS 100
positive_knob FILES 1000
seed_knob
workload_init
need_packages findutils coreutils dash

python3 "$WORKLOADS_DIR/shell/make_tree.py" --dirs "$DIRS" --files "$FILES" --seed "$SEED" --root "$WORK/tree"
run_measured sh -c '"$0" "$1" >"$2"' "$WORKLOADS_DIR/shell/find_ls.sh" "$WORK/tree" "$WORK/listing.txt"

# Every directory was listed: ls -l prints one "total" line per directory.
listed=$(grep -c '^total ' "$WORK/listing.txt" || true)
[[ "$listed" == "$DIRS" ]] || die "expected $DIRS directory listings, found $listed"
finish "{\"workload\": \"$NAME\", \"dirs\": $DIRS, \"files\": $FILES, \"seed\": $SEED, \"max_instructions\": $MAX}"
