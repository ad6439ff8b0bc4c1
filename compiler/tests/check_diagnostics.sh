#!/usr/bin/env bash
# Compiles a source chanflowc must reject and requires a non-zero exit and every expected
# diagnostic (file:line:col: error: message prefix), one per line of SOURCE's .expected file.
# With --accepted FLAG..., compiles with those flags and requires exit 0 instead, and no remark
# or warning but those expected.
# usage: check_diagnostics.sh CHANFLOWC SOURCE [--accepted FLAG...]
set -uo pipefail
chanflowc=$1 source=$2
shift 2
accepted=0 flags=()
if [ "${1:-}" = --accepted ]; then
  accepted=1
  shift
  flags=("$@")
fi
expected="${source%.*}.expected"
[ -f "$expected" ] || { echo "FAIL: $expected is missing" >&2; exit 1; }
expected=$(realpath "$expected")
cd "$(dirname "$source")"
output=$("$chanflowc" "$(basename "$source")" "${flags[@]}" --emit=cl -o "${TMPDIR:-/tmp}/chanflowc-diag-$$" 2>&1)
status=$?
rm -rf "${TMPDIR:-/tmp}/chanflowc-diag-$$"
echo "$output"
if [ $accepted = 1 ]; then
  [ $status -eq 0 ] || { echo "FAIL: chanflowc rejected $source (exit $status)" >&2; exit 1; }
else
  [ $status -ne 0 ] || { echo "FAIL: chanflowc accepted $source" >&2; exit 1; }
fi
missing=0
while IFS= read -r line; do
  [ -z "$line" ] && continue
  grep -qF -- "$line" <<<"$output" || { echo "FAIL: missing diagnostic: $line" >&2; missing=1; }
done < "$expected"
if [ $accepted = 1 ]; then  # and nothing more: no remark or warning the file does not expect
  said=$(grep -cE ': (remark|warning): ' <<<"$output")
  wanted=$(grep -c . "$expected")
  [ "$said" -eq "$wanted" ] || { echo "FAIL: $said remarks and warnings, $wanted expected" >&2; missing=1; }
fi
exit $missing
