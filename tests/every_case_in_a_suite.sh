#!/usr/bin/env bash
# Fails if a doctest case of chanflow_tests lies outside every suite ctest runs and the GPU-only
# suite (each ctest entry filters by suite, so such a case would never run), naming the cases; and
# if a case of the GPU-only suite is not named "GPU only: ..." or a case so named lies outside it
# (the GPU-only suite runs in cmake/pack-gpu.sh's GPU checks, not in ctest on a CPU device).
# usage: every_case_in_a_suite.sh CHANFLOW_TESTS SUITE,SUITE,... GPU_ONLY_SUITE
set -uo pipefail
tests=$1 suites=$2 gpu_suite=$3

# The names of the cases the filter arguments select (doctest's listing between its rules).
cases() {
  local listed
  listed=$("$tests" --list-test-cases --no-intro=true "$@" 2>&1) || {
    echo "$listed" >&2
    echo "FAIL: $tests could not list its cases" >&2
    return 1
  }
  if ! grep -q 'unskipped test cases passing the current filters: [0-9]' <<<"$listed"; then
    echo "$listed" >&2
    echo "FAIL: no count of test cases in the listing" >&2
    return 1
  fi
  awk '/^=+$/ {rule++; next} rule == 1' <<<"$listed"
}

outside=$(cases --test-suite-exclude="$suites,$gpu_suite") || exit 1
if [ -n "$outside" ]; then
  echo "$outside"
  echo "FAIL: $(wc -l <<<"$outside") test case(s) outside the suites ctest runs ($suites) and $gpu_suite" >&2
  exit 1
fi
gpu=$(cases --test-suite="$gpu_suite") || exit 1
if [ -z "$gpu" ]; then
  echo "FAIL: the suite $gpu_suite has no cases" >&2
  exit 1
fi
misnamed=$(grep -v '^GPU only: ' <<<"$gpu")
if [ -n "$misnamed" ]; then
  echo "$misnamed"
  echo "FAIL: case(s) of $gpu_suite not named 'GPU only: ...'" >&2
  exit 1
fi
stray=$(cases --test-suite-exclude="$gpu_suite" --test-case="GPU only: *") || exit 1
if [ -n "$stray" ]; then
  echo "$stray"
  echo "FAIL: case(s) named 'GPU only: ...' outside $gpu_suite, where ctest runs them on a CPU device" >&2
  exit 1
fi
echo "every case is in one of: $suites; the $(wc -l <<<"$gpu") case(s) of $gpu_suite are named GPU only"
