#!/usr/bin/env bash
# Compiles a source chanflowc must reject and requires a non-zero exit and every expected
# diagnostic (file:line:col: error: message prefix), one per line of SOURCE's .expected file.
# usage: check_diagnostics.sh CHANFLOWC SOURCE
set -uo pipefail
chanflowc=$1 source=$2
expected="${source%.*}.expected"
[ -f "$expected" ] || { echo "FAIL: $expected is missing" >&2; exit 1; }
expected=$(realpath "$expected")
cd "$(dirname "$source")"
output=$("$chanflowc" "$(basename "$source")" --emit=cl -o "${TMPDIR:-/tmp}/chanflowc-diag-$$" 2>&1)
status=$?
echo "$output"
[ $status -ne 0 ] || { echo "FAIL: chanflowc accepted $source" >&2; exit 1; }
missing=0
while IFS= read -r line; do
  [ -z "$line" ] && continue
  grep -qF -- "$line" <<<"$output" || { echo "FAIL: missing diagnostic: $line" >&2; missing=1; }
done < "$expected"
exit $missing
