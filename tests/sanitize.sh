#!/usr/bin/env bash
# The sanitizer step of ./test.sh: builds chanflow with AddressSanitizer, LeakSanitizer and
# UndefinedBehaviorSanitizer (CHANFLOW_SANITIZE=address,undefined) in its own build directory,
# then runs the whole doctest binary as ONE process (ctest runs a suite per process, which hides
# objects of one suite outliving queued commands of another) with every core busy (races between
# the host and PoCL's worker threads hide on an idle machine) and every channel's frees checked
# (CHANFLOW_CHECK_FREES=1: a tfree of a CE not allocated is an error), and the command-line tests.
# Then the same binary built with ThreadSanitizer, once. Fib for every n to 30 is left to ctest:
# under a sanitizer it repeats what the other Fibonacci tests run. Each step prints its time.
# Any report fails the step (-fno-sanitize-recover=all; the sanitizers exit non-zero).
# Usage: tests/sanitize.sh [build-dir]   (default: build-sanitize beside build/; ThreadSanitizer
# builds in <build-dir>-thread)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-sanitize}
jobs=$(nproc 2>/dev/null || echo 2)
# The compiled workloads' graphs come from the regular build's chanflowc (not rebuilt with sanitizers).
chanflowc=$(pwd)/build/bin/chanflowc
# -O1 and line tables (-g1, CMakeLists.txt): what the sanitizers' reports need, and a build the CI
# can afford twice (RelWithDebInfo's -O2 -g took longer to compile than the suites take to run).
optimize="-O1 -DNDEBUG"
[ -x "$chanflowc" ] || { echo "tests/sanitize.sh: build chanflowc first (cmake --build build)" >&2; exit 1; }
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="$optimize" -DCHANFLOW_SANITIZE=address,undefined \
  -DCHANFLOW_CHANFLOWC="$chanflowc" >/dev/null
cmake --build "$dir" -j "$jobs" --target chanflow_tests chanflow_cli
# intercept_tls_get_addr=0: up to GCC 13 and LLVM 16 the runtime's __tls_get_addr interceptor takes a
# dynamic TLS block that malloc happened to place 16 bytes past a page boundary for a pre-2.25 glibc
# header and reads the words before it; LeakSanitizer's tracer then dies at exit ("Tracer caught
# signal 11", a fatal error with no leak reported; google/sanitizers#1322). It failed a passing
# cli_run_sort_devices in CI once. Without the interceptor the tracer scans static TLS only.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1:intercept_tls_get_addr=0
export LSAN_OPTIONS=suppressions=$(pwd)/tests/lsan-pocl.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

repeats="Cilk-Fibonacci is correct for n = 1..30 with generous capacities"
# Every workload under every policy, dispatch mode and capacity: the host's paths it takes are
# AddressSanitizer's above; under ThreadSanitizer it repeats them.
matrix="every chanflow implementation is correct with generous and tiny capacities*"  # (its name has commas)

echo "== sanitize: doctest, one process, every core busy, checked frees (at ${SECONDS} s)"
hogs=()
for _ in $(seq "$jobs"); do (while :; do :; done) & hogs+=($!); done
trap 'kill "${hogs[@]}" 2>/dev/null || true' EXIT
CHANFLOW_CHECK_FREES=1 "$dir/bin/chanflow_tests" --no-intro=true --test-case-exclude="$repeats"
kill "${hogs[@]}" 2>/dev/null || true
trap - EXIT

echo "== sanitize: command line (at ${SECONDS} s)"
ctest --test-dir "$dir" --output-on-failure -R '^cli_' -E '^cli_bench_messages$' -j "$jobs"
# Under mpirun, without LeakSanitizer: Open MPI 4.1 leaves its components' allocations at
# MPI_Finalize and unloads them, so their frames have no name a suppression could match.
# AddressSanitizer and UBSan still watch the transport and the remote channels.
if ctest --test-dir "$dir" -N -R '^cli_bench_messages$' | grep -q 'Total Tests: 1'; then
  ASAN_OPTIONS=${ASAN_OPTIONS/detect_leaks=1/detect_leaks=0} \
    ctest --test-dir "$dir" --output-on-failure -R '^cli_bench_messages$'
fi

# ThreadSanitizer sees chanflow's threads and what PoCL does through libc and pthreads (its
# memcpy into and out of host staging, its queue's locks), not the memory accesses of the
# kernels PoCL compiles.
echo "== sanitize: doctest under ThreadSanitizer, one process (at ${SECONDS} s)"
cmake -S . -B "$dir-thread" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="$optimize" -DCHANFLOW_SANITIZE=thread \
  -DCHANFLOW_CHANFLOWC="$chanflowc" >/dev/null
cmake --build "$dir-thread" -j "$jobs" --target chanflow_tests
# The oneTBB baselines are left out here: libtbb is not built with ThreadSanitizer, so the
# happens-before its task_group::wait gives is invisible and every task's result reads as a race.
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 "$dir-thread/bin/chanflow_tests" --no-intro=true \
  --test-case-exclude="the baselines compute what the serial elision does,$repeats,$matrix"
# Runs across devices (a host thread per device, the router's lock between them) on PoCL as three
# devices. (Before each PoCL device of a set built with a define of its own, PoCL 3.1 aborted once
# in six such runs, in pocl_release_dlhandle_cache: multidevice/src/device_set.cpp says why.)
# ThreadSanitizer watches the host's threads, not the kernels, so the programs are built without
# PoCL's optimiser here: three cold -O2 builds of each per-device program took 361 s of this step,
# unoptimised 196 s in all.
echo "== sanitize: runs across three PoCL devices under ThreadSanitizer (at ${SECONDS} s)"
CHANFLOW_BUILD_OPTIONS=-cl-opt-disable \
POCL_DEVICES="pthread pthread pthread" TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  "$dir-thread/bin/chanflow_tests" --no-intro=true --test-suite=devices,data_across
echo "== sanitize: done (${SECONDS} s)"
