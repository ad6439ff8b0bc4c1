#!/usr/bin/env bash
# Runs a command and requires its exit status (0 unless --status says otherwise), every --match
# pattern in its output (standard output and error together) and no --reject pattern: the
# exit status and the values an outside observer would check, where ctest's
# PASS_REGULAR_EXPRESSION would look at the output alone. Patterns are grep -E's.
# usage: expect_output.sh [--status N] [--match ERE]... [--reject ERE]... -- COMMAND [ARGS...]
set -uo pipefail
status=0 matches=() rejects=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  case $1 in
    --status) status=$2; shift 2 ;;
    --match) matches+=("$2"); shift 2 ;;
    --reject) rejects+=("$2"); shift 2 ;;
    *) echo "expect_output.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[ "${1:-}" = -- ] && [ $# -ge 2 ] || { echo "expect_output.sh: no command after --" >&2; exit 2; }
shift
output=$("$@" 2>&1)
rc=$?
echo "$output"
failed=0
[ $rc -eq "$status" ] || { echo "FAIL: exit status $rc, expected $status" >&2; failed=1; }
for m in "${matches[@]}"; do
  grep -qE -- "$m" <<<"$output" || { echo "FAIL: nothing matches: $m" >&2; failed=1; }
done
for r in "${rejects[@]}"; do
  if grep -qE -- "$r" <<<"$output"; then echo "FAIL: the output has what it must not: $r" >&2; failed=1; fi
done
exit $failed
