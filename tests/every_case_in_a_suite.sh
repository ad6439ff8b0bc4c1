#!/usr/bin/env bash
# Fails if a doctest case of chanflow_tests lies outside every suite ctest runs (each ctest entry
# filters by suite, so such a case would never run), naming the cases.
# usage: every_case_in_a_suite.sh CHANFLOW_TESTS SUITE,SUITE,...
set -uo pipefail
tests=$1 suites=$2
listed=$("$tests" --list-test-cases --test-suite-exclude="$suites" --no-intro=true 2>&1) || {
  echo "$listed"
  echo "FAIL: $tests could not list its cases" >&2
  exit 1
}
count=$(sed -n 's/.*unskipped test cases passing the current filters: \([0-9]*\).*/\1/p' <<<"$listed")
if [ -z "$count" ]; then
  echo "$listed"
  echo "FAIL: no count of test cases in the listing" >&2
  exit 1
fi
if [ "$count" != 0 ]; then
  echo "$listed"
  echo "FAIL: $count test case(s) outside the suites ctest runs ($suites)" >&2
  exit 1
fi
echo "every case is in one of: $suites"
