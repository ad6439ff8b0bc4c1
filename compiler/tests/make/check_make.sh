#!/usr/bin/env bash
# Builds the programs of make/Makefile twice, as a user's Makefile would: with CC=chanflowc and
# with the system C compiler (their serial elisions), then runs each pair with the same arguments
# and requires the same output.
# usage: check_make.sh CHANFLOWC CILK_INCLUDE_DIR WORK_DIR
set -euo pipefail
chanflowc=$1 include=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work/chanflow" "$work/elision"
make -s -f "$here/Makefile" -C "$work/chanflow" SRC="$here/../programs" CC="$chanflowc"
make -s -f "$here/Makefile" -C "$work/elision" SRC="$here/../programs" CC=cc CPPFLAGS="-I$include" CFLAGS="-O1 -w"
status=0
check() {
  local program=$1
  shift
  expected=$("$work/elision/$program" "$@" 2>/dev/null)
  actual=$("$work/chanflow/$program" "$@" 2>/dev/null)
  if [ "$expected" = "$actual" ]; then
    echo "$program $*: same output"
  else
    printf '%s %s: MISMATCH\n  elision:  %s\n  chanflow: %s\n' "$program" "$*" "$expected" "$actual" >&2
    status=1
  fi
}
check several -n 3000 -v
check integer_widths 800
check host_driver 5000
exit $status
