#!/usr/bin/env bash
# memcached inserting many key-value pairs: memcached runs under capture on a free loopback
# port; a Python client (client.py, not captured) stores KEYS seeded items of VALUE_BYTES bytes,
# reads a sample back, and sends `shutdown`, on which the captured server exits by itself.
# Knobs: KEYS, VALUE_BYTES, THREADS, SEED, MAX, OUT, CAPTURE=none (README.md).
set -euo pipefail
NAME=memcached
MAX_DEFAULT=1000000000
LIMIT_NATIVE=60
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
positive_knob KEYS 200000
positive_knob VALUE_BYTES 200
positive_knob THREADS 4
seed_knob
workload_init
need_packages memcached

PORT=$(free_port)
listening() { python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)' "$PORT"; }
# -A: the `shutdown` command ends the server; -U 0: no UDP; -u root: memcached refuses to run
# as root without naming the user; -m: memory for items (MB), sized to hold every item.
# -c: memcached sets both open-file limits to its connection limit, and under Valgrind that
# must equal the hard limit Valgrind shows the program, which is its own hard limit less the 12
# descriptors it keeps for itself (any other value is refused): hence a hard limit of 1024 here
# and -c 1012 (also fine natively, where lowering the limit is allowed).
ulimit -n 1024 || die "cannot set the open-file limit to 1024 (ulimit -n 1024)"
memory_mb=$((KEYS * (VALUE_BYTES + 100) / 1048576 + 64))
start_measured memcached -A -l 127.0.0.1 -p "$PORT" -U 0 -t "$THREADS" -m "$memory_mb" -u root -c 1012
wait_until "memcached listening on port $PORT" 30 listening
timeout $((LIMIT_NATIVE * SLOWDOWN)) python3 "$WORKLOADS_DIR/memcached/client.py" --port "$PORT" \
	--keys "$KEYS" --value-bytes "$VALUE_BYTES" --seed "$SEED" --timeout $((10 * SLOWDOWN)) ||
	die "the client failed (status $?)"
wait_for_server_exit 30
finish "{\"workload\": \"$NAME\", \"keys\": $KEYS, \"value_bytes\": $VALUE_BYTES, \"threads\": $THREADS, \"seed\": $SEED, \"max_instructions\": $MAX}"
