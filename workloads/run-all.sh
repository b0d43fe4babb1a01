#!/usr/bin/env bash
# `make workloads`: runs every workload's capture.sh in turn (the environment's CAPTURE, OUT-less
# defaults, MAX etc. pass through), keeps going when one fails, and ends with one line per
# workload: captured, failed (with its log), or skipped (status 3: not practical here). Exits
# non-zero if any failed.
set -uo pipefail
WORKLOADS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# The paper's programs first (forkbench, shell, compile, mcached, mysql, bootup), then extras.
ORDER=(forkbench shell gcc memcached mariadb bootup redis sqlite)
LOGS="$(mktemp -d "${TMPDIR:-/tmp}/bulksim-workloads.XXXXXX")"
results=()
failed=0
for name in "${ORDER[@]}"; do
	script="$WORKLOADS_DIR/$name/capture.sh"
	if [[ ! -x "$script" ]]; then
		results+=("$name: failed (no executable $script)")
		failed=1
		continue
	fi
	printf '== %s\n' "$name" >&2
	start=$SECONDS
	"$script" 2>&1 | tee "$LOGS/$name.log" >&2
	status=${PIPESTATUS[0]}
	took=$((SECONDS - start))
	case $status in
	0) results+=("$name: ok (${took}s)") ;;
	3) results+=("$name: skipped, not practical here (see workloads/$name/README.md)") ;;
	*)
		results+=("$name: FAILED with status $status after ${took}s (log: $LOGS/$name.log)")
		failed=1
		;;
	esac
done
printf '\nworkloads:\n' >&2
printf '  %s\n' "${results[@]}" >&2
exit $failed
