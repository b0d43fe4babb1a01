#!/usr/bin/env bash
# MariaDB loading a table: a private database is made with mariadb-install-db (not captured),
# then mariadbd runs under capture on a free loopback port and its own socket; the mariadb
# client (not captured) loads a generated employees table over TCP, and `mariadb-admin
# shutdown` ends the captured server. Knobs: ROWS, SEED, MAX, OUT, CAPTURE=none (README.md).
set -euo pipefail
NAME=mariadb
MAX_DEFAULT=1000000000
LIMIT_NATIVE=120
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
positive_knob ROWS 20000 "a positive number of rows"
seed_knob
workload_init
need_packages mariadb-server mariadb-client

python3 "$WORKLOADS_DIR/mariadb/make_input.py" --rows "$ROWS" --seed "$SEED" --out "$WORK/load.sql"
timeout $LIMIT_NATIVE mariadb-install-db --no-defaults --datadir="$WORK/data" --user=root \
	--auth-root-authentication-method=normal --skip-test-db >"$WORK/install.log" 2>&1 ||
	{
		tail -n 20 "$WORK/install.log" >&2
		die "mariadb-install-db failed"
	}
PORT=$(free_port)
SOCKET="$WORK/mariadbd.sock"
admin() { timeout 30 mariadb-admin --no-defaults --socket="$SOCKET" --user=root "$@"; }
# No native asynchronous I/O: io_uring and libaio are not what this workload is about, and
# Valgrind does not follow io_uring's shared rings. The buffer pool's maximum is set because
# mariadbd otherwise reserves address space for 8 TiB of it, which Valgrind cannot map.
start_measured mariadbd --no-defaults --datadir="$WORK/data" --socket="$SOCKET" --port="$PORT" \
	--bind-address=127.0.0.1 --pid-file="$WORK/mariadbd.pid" --user=root \
	--innodb-use-native-aio=0 --innodb-buffer-pool-size=64M --innodb-buffer-pool-size-max=64M
wait_until "mariadbd answering on $SOCKET" 60 admin ping
timeout $((LIMIT_NATIVE * SLOWDOWN)) mariadb --no-defaults --protocol=TCP --host=127.0.0.1 \
	--port="$PORT" --user=root <"$WORK/load.sql" || die "loading the table failed (status $?)"
rows=$(timeout 30 mariadb --no-defaults --socket="$SOCKET" --user=root --batch --skip-column-names \
	--execute="SELECT COUNT(*) FROM employees.employees")
[[ "$rows" == "$ROWS" ]] || die "expected $ROWS rows in employees.employees, found $rows"
admin shutdown
wait_for_server_exit 60
finish "{\"workload\": \"$NAME\", \"rows\": $ROWS, \"seed\": $SEED, \"max_instructions\": $MAX}"
