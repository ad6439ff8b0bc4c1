#!/usr/bin/env bash
# Compiles a Cilk program with chanflowc and as its serial elision (cc with <cilk/cilk.h>), runs
# both with the same arguments, and requires the same output. Extra environment (tiny channel
# capacities, a dispatch mode) comes from the caller: CTest sets it per test. With
# EXPECT_STDERR=regex, the chanflow run's standard error must match it too (with CHANFLOW_STATS=1:
# that tasks yielded and resumed, say). COMPILE_FLAGS (-D, -I) go to both compilers, and
# EXTRA_SOURCES (the program's other files) with SOURCE to both; CHANFLOWC_FLAGS to chanflowc alone.
# With EXPECT_STATUS=N both must exit with N (a program that calls exit), else both with 0.
# usage: run_program.sh CHANFLOWC CILK_INCLUDE_DIR WORK_DIR SOURCE [ARGS...]
set -euo pipefail
chanflowc=$1 include=$2 work=$3 source=$4
shift 4
mkdir -p "$work"
stem=$(basename "${source%.*}")
elision_flags=()
[[ "$source" == *.cilk ]] && elision_flags=(-include cilk/cilk5.h -x c)
read -r -a flags <<<"${COMPILE_FLAGS:-}"
read -r -a extra <<<"${EXTRA_SOURCES:-}"
read -r -a own <<<"${CHANFLOWC_FLAGS:-}"
cc -std=gnu11 -O1 -w -I"$include" "${elision_flags[@]}" "${flags[@]}" "$source" "${extra[@]}" -o "$work/$stem.elision" -lm
"$chanflowc" "$source" "${extra[@]}" "${flags[@]}" "${own[@]}" -o "$work/$stem.chanflow"
status=0
expected=$("$work/$stem.elision" "$@") || status=$?
[ "$status" = "${EXPECT_STATUS:-0}" ] || { echo "the serial elision exited with $status, not ${EXPECT_STATUS:-0}" >&2; exit 1; }
status=0
actual=$("$work/$stem.chanflow" "$@" 2>"$work/$stem.stderr") || status=$?
[ "$status" = "${EXPECT_STATUS:-0}" ] || { cat "$work/$stem.stderr" >&2; echo "chanflow's build exited with $status, not ${EXPECT_STATUS:-0}" >&2; exit 1; }
echo "serial elision: $expected"
echo "chanflow:       $actual"
cat "$work/$stem.stderr"
[ "$expected" = "$actual" ] || { echo "MISMATCH" >&2; exit 1; }
if [ -n "${EXPECT_STDERR:-}" ] && ! grep -Eq -- "$EXPECT_STDERR" "$work/$stem.stderr"; then
  echo "standard error does not match: $EXPECT_STDERR" >&2
  exit 1
fi
