#!/bin/sh
# The captured script: find every directory of the tree and list each with ls (one new process
# per directory), as the RowClone paper's "shell" workload does.
set -eu
find "$1" -type d -exec ls -l {} \;
