#!/usr/bin/env bash
# Golden test of what chanflowc emits: compiles each golden/<name>.c and <name>.cilk with --emit and compares every
# generated file with golden/<name>.<ext>.expected (with the flags golden/<name>.flags holds, if
# there is one), and fails where an expected file is not generated any more. With --update,
# rewrites the expected files instead (review the diff before committing it).
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
  if ! "$chanflowc" "$source" "${flags[@]}" --emit=cl,cpp,c,h,dot -o "$out" > /dev/null; then
    echo "FAIL: chanflowc rejected golden/$source" >&2
    status=1
    continue
  fi
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
# Every expected file is some source's output still: one no longer generated (or whose source is
# gone) fails, rather than being skipped.
for expected in *.expected; do
  if [ ! -f "$out/${expected%.expected}" ]; then
    echo "FAIL: golden/$expected was not generated (its source or that output is gone)" >&2
    status=1
  fi
done
exit $status
