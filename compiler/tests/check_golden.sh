#!/usr/bin/env bash
# Golden test of what chanflowc emits: compiles each golden/<name>.c and <name>.cilk with --emit and compares every
# generated file with golden/<name>.<ext>.expected (with the flags golden/<name>.flags holds, if
# there is one). With --update, rewrites the expected files
# instead (review the diff before committing it).
# usage: check_golden.sh CHANFLOWC [--update]
set -euo pipefail
chanflowc=$1 update=${2:-}
cd "$(dirname "$0")/golden"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0
for source in *.c *.cilk; do
  stem=${source%.*}
  flags=()
  [ -f "$stem.flags" ] && read -r -a flags < "$stem.flags"
  "$chanflowc" "$source" "${flags[@]}" --emit=cl,cpp,c,h,dot -o "$out" > /dev/null
  for generated in "$out/$stem".*; do
    expected="$(basename "$generated").expected"
    if [ "$update" = --update ]; then
      cp "$generated" "$expected"
    elif ! diff -u "$expected" "$generated"; then
      echo "FAIL: $(basename "$generated") differs from golden/$expected" >&2
      status=1
    fi
  done
done
exit $status
