#!/usr/bin/env bash
# The compiled soak fails on a program whose compiled form prints a wrong result and exits 1,
# counting every configuration as wrong, none as refused.
# usage: finds_wrong.sh CHANFLOW MANIFEST CONFIGS
set -uo pipefail
chanflow=$1 manifest=$2 configs=$3
output=$("$chanflow" soak compiled "$manifest" --configs "$configs" --seed 7 --timeout 300 2>&1)
status=$?
echo "$output"
[ $status -eq 1 ] || { echo "FAIL: the soak exited $status on a wrong program, not 1" >&2; exit 1; }
grep -q " 0 refused before the run (settings too small), $configs wrong," <<<"$output" || {
  echo "FAIL: the soak did not count all $configs runs wrong and none refused" >&2
  exit 1
}
echo "the soak counted all $configs runs of a wrong program as wrong"
