# Shared by every workload's capture.sh (sourced, never run): the set-up every script repeats
# and must get right the same way. It owns the knobs common to all workloads (CAPTURE, OUT, MAX,
# TIME_LIMIT, BULKSIM), installing Debian packages, picking a free loopback port, running the
# measured program under `bulksim capture` (or natively with CAPTURE=none), waits that always end
# (every wait has a deadline), and cleaning up temporary files and background processes on exit.
# A capture is written to "$OUT.partial" and moved to "$OUT" only when it succeeded, because
# `bulksim reproduce rowclone-apps` takes any existing capture directory as a finished capture.

# Every script sets NAME, MAX_DEFAULT (instructions) and LIMIT_NATIVE (seconds a native run may
# take, with a wide margin) before calling workload_init.

WORKLOADS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(cd "$WORKLOADS_DIR/.." && pwd)"
# Capture slows a program down about 40-70x (docs/capture.md); waits and limits under capture
# allow this much more time than native runs.
CAPTURE_SLOWDOWN_ALLOWANCE=100

log() { printf '%s: %s\n' "$NAME" "$*" >&2; }
die() {
	log "error: $*"
	exit 1
}

# Temporary directory and the process groups started in the background, removed/ended on exit.
BACKGROUND_GROUPS=()
cleanup() {
	local status=$?
	local group
	for group in "${BACKGROUND_GROUPS[@]}"; do
		if kill -0 -- "-$group" 2>/dev/null; then
			kill -TERM -- "-$group" 2>/dev/null || true
			wait_for_group_exit "$group" 10 || kill -KILL -- "-$group" 2>/dev/null || true
		fi
	done
	[[ -n "${WORK:-}" && -d "$WORK" ]] && rm -rf -- "$WORK"
	[[ -n "${PARTIAL:-}" && -d "$PARTIAL" ]] && rm -rf -- "$PARTIAL"
	exit "$status"
}

# positive_knob NAME DEFAULT [WHAT]: NAME from the environment (DEFAULT when unset), a positive
# integer, else one error naming it ("expected WHAT", default "a positive integer").
positive_knob() {
	local name=$1
	printf -v "$name" '%s' "${!name:-$2}"
	[[ "${!name}" =~ ^[1-9][0-9]*$ ]] || die "$name=${!name}: expected ${3:-a positive integer}"
}

# seed_knob: SEED from the environment (1 when unset), a non-negative integer.
seed_knob() {
	SEED="${SEED:-1}"
	[[ "$SEED" =~ ^[0-9]+$ ]] || die "SEED=$SEED: expected a non-negative integer"
}

workload_init() {
	CAPTURE="${CAPTURE:-bulksim}"
	case "$CAPTURE" in
	bulksim | none) ;;
	*) die "CAPTURE=$CAPTURE: expected 'bulksim' (capture the program, the default) or 'none' (run it natively)" ;;
	esac
	OUT="${OUT:-$WORKLOADS_DIR/captures/$NAME}"
	positive_knob MAX "$MAX_DEFAULT" "a positive number of instructions"
	if [[ "$CAPTURE" == none ]]; then
		SLOWDOWN=1
	else
		SLOWDOWN=$CAPTURE_SLOWDOWN_ALLOWANCE
	fi
	positive_knob TIME_LIMIT "$((LIMIT_NATIVE * SLOWDOWN))" "a positive number of seconds"
	for tool in timeout setsid python3; do
		command -v "$tool" >/dev/null || die "$tool not found (needed by every workload script)"
	done
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	WORK="$(mktemp -d "${TMPDIR:-/tmp}/bulksim-$NAME.XXXXXX")"
	if [[ "$CAPTURE" != none ]]; then
		find_bulksim
		mkdir -p "$(dirname "$OUT")"
		PARTIAL="$OUT.partial"
		rm -rf -- "$PARTIAL"
	fi
}

# The bulksim command: $BULKSIM, else `bulksim` on PATH, else the repository's .venv.
find_bulksim() {
	if [[ -z "${BULKSIM:-}" ]]; then
		if command -v bulksim >/dev/null; then
			BULKSIM=bulksim
		elif [[ -x "$REPO_DIR/.venv/bin/bulksim" ]]; then
			BULKSIM="$REPO_DIR/.venv/bin/bulksim"
		else
			die "bulksim not found: run \`make build\` in $REPO_DIR, set BULKSIM=/path/to/bulksim, or run natively with CAPTURE=none"
		fi
	fi
	"$BULKSIM" capture --help >/dev/null 2>&1 ||
		die "'$BULKSIM capture' is not available (build it with \`make build\`, or run natively with CAPTURE=none)"
}

# Installs the Debian packages given (names) that are missing: with apt-get when root, else one
# message with the command to run. Services the packages ship are not started (policy-rc.d).
need_packages() {
	local missing=() pkg
	for pkg in "$@"; do
		dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
	done
	((${#missing[@]} == 0)) && return 0
	local command="apt-get install -y --no-install-recommends ${missing[*]}"
	if [[ $(id -u) -ne 0 ]]; then
		log "missing Debian packages: ${missing[*]}; run as root:"
		printf '  apt-get update && %s\n' "$command" >&2
		exit 1
	fi
	log "installing ${missing[*]}"
	local policy=/usr/sbin/policy-rc.d made_policy=0
	if [[ ! -e "$policy" ]]; then
		# Installing a server package would otherwise start its system service on the
		# default port and leave it running.
		printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && made_policy=1
	fi
	local status=0
	{ DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
		DEBIAN_FRONTEND=noninteractive $command -qq >/dev/null; } || status=$?
	((made_policy)) && rm -f "$policy"
	((status == 0)) || die "'$command' failed (status $status)"
	# Time spent installing is not the workload's.
	SECONDS=0
}

# A TCP port on 127.0.0.1 free right now.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The measured program's command line: under `bulksim capture`, or as is with CAPTURE=none.
measured() {
	if [[ "$CAPTURE" == none ]]; then
		printf '%s\0' "$@"
	else
		printf '%s\0' "$BULKSIM" capture --out "$PARTIAL" --max-instructions "$MAX" -- "$@"
	fi
}

# Runs the measured program in the foreground, within TIME_LIMIT.
run_measured() {
	local command=()
	mapfile -d '' command < <(measured "$@")
	local status=0
	timeout --kill-after=10 "$TIME_LIMIT" "${command[@]}" || status=$?
	((status == 124)) && die "'$*' did not finish within TIME_LIMIT=${TIME_LIMIT}s"
	((status == 0)) || die "'$*' failed (status $status)"
}

# Starts the measured program in the background in its own process group; sets SERVER_PID.
# Its output goes to $WORK/server.log.
start_measured() {
	local command=()
	mapfile -d '' command < <(measured "$@")
	setsid timeout --kill-after=10 "$TIME_LIMIT" "${command[@]}" >"$WORK/server.log" 2>&1 &
	SERVER_PID=$!
	BACKGROUND_GROUPS+=("$SERVER_PID")
}

# Polls `command...` every 0.2 s until it succeeds; fails after `seconds` (scaled by SLOWDOWN
# under capture) or as soon as the server has exited.
wait_until() {
	local what=$1 seconds=$2
	shift 2
	local deadline=$((SECONDS + seconds * SLOWDOWN))
	until "$@" >/dev/null 2>&1; do
		if [[ -n "${SERVER_PID:-}" ]] && ! kill -0 "$SERVER_PID" 2>/dev/null; then
			tail -n 20 "$WORK/server.log" >&2 || true
			die "the server exited while waiting for: $what"
		fi
		((SECONDS < deadline)) || die "timed out after $((seconds * SLOWDOWN)) s waiting for: $what"
		sleep 0.2
	done
}

wait_for_group_exit() {
	local group=$1 deadline=$((SECONDS + $2))
	while kill -0 -- "-$group" 2>/dev/null; do
		((SECONDS < deadline)) || return 1
		sleep 0.2
	done
}

# Waits (at most `seconds`, scaled under capture) for the background server to exit by itself,
# and fails unless it exited with status 0.
wait_for_server_exit() {
	local seconds=$1
	local deadline=$((SECONDS + seconds * SLOWDOWN))
	while kill -0 "$SERVER_PID" 2>/dev/null; do
		((SECONDS < deadline)) || die "the server did not exit within $((seconds * SLOWDOWN)) s of its shutdown"
		sleep 0.2
	done
	local status=0
	wait "$SERVER_PID" || status=$?
	if ((status != 0)); then
		tail -n 20 "$WORK/server.log" >&2 || true
		die "the server exited with status $status"
	fi
}

# Publishes the capture: writes input.json (what was run, for the record) beside the capture's
# own files and moves "$OUT.partial" to "$OUT". A native run only reports its time.
finish() {
	local input_json=$1
	if [[ "$CAPTURE" == none ]]; then
		log "native run done in ${SECONDS}s (CAPTURE=none: nothing captured)"
		return 0
	fi
	[[ -f "$PARTIAL/capture.json" ]] || die "the capture wrote no $PARTIAL/capture.json"
	printf '%s\n' "$input_json" >"$PARTIAL/input.json"
	if [[ -e "$OUT" ]]; then
		# Replace only what is recognisably an earlier capture, never an arbitrary directory.
		if [[ ! -f "$OUT/capture.json" ]]; then
			local kept=$PARTIAL
			PARTIAL=
			die "$OUT exists and is no capture (no capture.json): not replacing it; the new capture is in $kept"
		fi
		rm -rf -- "$OUT"
	fi
	mv -- "$PARTIAL" "$OUT"
	log "captured into $OUT in ${SECONDS}s"
}
