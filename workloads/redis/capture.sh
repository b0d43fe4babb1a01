#!/usr/bin/env bash
# redis with a background save under load: redis-server runs under capture on a free loopback
# port; a client (not captured) loads KEYS keys, then rewrites half of them with BGSAVE in the
# middle of the stream, so the server forks (the child writes the snapshot from a copy-on-write
# view) while the parent keeps applying writes. Then SHUTDOWN NOSAVE ends the captured server.
# Knobs: KEYS, VALUE_BYTES, SEED, MAX, OUT, CAPTURE=none (README.md).
set -euo pipefail
NAME=redis
MAX_DEFAULT=1000000000
LIMIT_NATIVE=60
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
positive_knob KEYS 40000
positive_knob VALUE_BYTES 100
seed_knob
workload_init
need_packages redis-server redis-tools

python3 "$WORKLOADS_DIR/redis/make_input.py" --keys "$KEYS" --value-bytes "$VALUE_BYTES" --seed "$SEED" --dir "$WORK"
PORT=$(free_port)
cli() { timeout 10 redis-cli -h 127.0.0.1 -p "$PORT" "$@"; }
answers_ping() { [[ "$(cli PING)" == PONG ]]; }
save_done() {
	local info
	info=$(cli INFO persistence | tr -d '\r')
	grep -q '^rdb_bgsave_in_progress:0$' <<<"$info" && grep -q '^rdb_last_bgsave_status:ok$' <<<"$info"
}
# Sends a RESP file through one connection; fails on any error reply.
pipe() {
	local report
	report=$(timeout $((LIMIT_NATIVE * SLOWDOWN)) redis-cli -h 127.0.0.1 -p "$PORT" --pipe <"$1" 2>&1) ||
		die "redis-cli --pipe <$1 failed: $report"
	grep -q 'errors: 0,' <<<"$report" || die "redis-cli --pipe <$1 got error replies: $report"
}

start_measured redis-server --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no \
	--dir "$WORK" --dbfilename dump.rdb --daemonize no --logfile "" --protected-mode yes
wait_until "redis-server answering PING on port $PORT" 30 answers_ping
pipe "$WORK/load.resp"
pipe "$WORK/update.resp"
wait_until "the background save to finish" 60 save_done
[[ -s "$WORK/dump.rdb" ]] || die "the background save wrote no $WORK/dump.rdb"
keys=$(cli DBSIZE)
[[ "$keys" == "$KEYS" ]] || die "expected $KEYS keys in the server, found $keys"
cli SHUTDOWN NOSAVE >/dev/null 2>&1 || true # the connection closes as the server exits
wait_for_server_exit 30
# Redis reports how much the parent's writes copied during the save: the copy-on-write at work.
cow=$(grep -o 'Fork CoW for RDB: .*' "$WORK/server.log" | tail -n 1 || true)
log "${cow:-redis logged no copy-on-write report for the save}"
finish "{\"workload\": \"$NAME\", \"keys\": $KEYS, \"value_bytes\": $VALUE_BYTES, \"seed\": $SEED, \"max_instructions\": $MAX}"
