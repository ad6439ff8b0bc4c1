#!/usr/bin/env bash
# Set up (Debian 12 packages), build, and run the whole test suite through ctest.
set -euo pipefail
cd "$(dirname "$0")"
source cmake/setup-debian.sh
chanflow_install_missing
chanflow_build
# A test per core: most of a first run is PoCL compiling kernels, one thread a program.
ctest --test-dir build --output-on-failure --timeout 1200 -j "$(nproc 2>/dev/null || echo 2)"
# The same suites under AddressSanitizer, LeakSanitizer, UBSan and ThreadSanitizer, each as one
# process (tests/sanitize.sh).
tests/sanitize.sh
