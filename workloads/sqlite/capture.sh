#!/usr/bin/env bash
# sqlite3 bulk insert: the sqlite3 shell runs a generated SQL script (CREATE TABLE, one
# transaction of ROWS inserts, CREATE INDEX) into a new database file. Only sqlite3 is captured;
# the input is generated before. Knobs: ROWS, SEED, MAX, OUT, CAPTURE=none (README.md).
set -euo pipefail
NAME=sqlite
MAX_DEFAULT=1000000000
LIMIT_NATIVE=60
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
positive_knob ROWS 20000 "a positive number of rows"
seed_knob
workload_init
need_packages sqlite3

python3 "$WORKLOADS_DIR/sqlite/make_input.py" --rows "$ROWS" --seed "$SEED" --out "$WORK/input.sql"
run_measured sqlite3 -batch -bail "$WORK/orders.db" ".read $WORK/input.sql"

# The load must have happened in full: every row and the index.
count=$(sqlite3 "$WORK/orders.db" "SELECT count(*) FROM orders; SELECT count(*) FROM sqlite_master WHERE type = 'index';" | tr '\n' ' ')
[[ "$count" == "$ROWS 1 " ]] || die "expected $ROWS rows and 1 index, found (rows index): $count"
finish "{\"workload\": \"$NAME\", \"rows\": $ROWS, \"seed\": $SEED, \"max_instructions\": $MAX}"
