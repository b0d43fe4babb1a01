#!/usr/bin/env bash
# System bootup: not practical with bulksim's capture (README.md says why). The script exists so
# that `make workloads` and `bulksim reproduce rowclone-apps` can name it; it exits with status 3
# ("not practical here"), which run-all.sh reports as skipped rather than failed.
set -euo pipefail
NAME=bootup
cat >&2 <<'NOTE'
bootup: not captured: bulksim's capture records one user-space program's own memory accesses
(a Valgrind tool). Booting an OS under qemu would record the emulator's accesses, not the guest
kernel's page zeroing and copying that the RowClone paper's bootup trace measures; that needs a
full-system trace (see workloads/bootup/README.md for the route that would work).
NOTE
exit 3
