#!/usr/bin/env bash
# gcc compiling a file: a generated C file (make_source.py) is compiled with `gcc -O2 -c` under
# capture, which follows gcc's children: the compiler proper (cc1) and the assembler (as).
# Knobs: FUNCTIONS, SEED, MAX, OUT, CAPTURE=none (README.md).
set -euo pipefail
NAME=gcc
MAX_DEFAULT=1000000000
LIMIT_NATIVE=60
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
positive_knob FUNCTIONS 25
seed_knob
workload_init
need_packages gcc libc6-dev binutils

python3 "$WORKLOADS_DIR/gcc/make_source.py" --functions "$FUNCTIONS" --seed "$SEED" --out "$WORK/input.c"
run_measured gcc -O2 -Wall -Werror -c "$WORK/input.c" -o "$WORK/input.o"

# The compile went through to an object file that defines main.
nm "$WORK/input.o" | grep -q ' T main$' || die "$WORK/input.o defines no main: the compile did not complete"
finish "{\"workload\": \"$NAME\", \"functions\": $FUNCTIONS, \"seed\": $SEED, \"max_instructions\": $MAX}"
