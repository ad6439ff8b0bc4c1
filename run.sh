#!/usr/bin/env bash
# Set up (Debian 12 packages), build, and run chanflow's main job on the default device
# (PoCL on the CPU unless CHANFLOW_DEVICE says otherwise).
set -euo pipefail
cd "$(dirname "$0")"
source cmake/setup-debian.sh
chanflow_install_missing
chanflow_build
./build/bin/chanflow devices
./build/bin/chanflow run fib-naive 24
./build/bin/chanflow run fib-cilk 24 --capacity 2048
./build/bin/chanflow bench channels --wg 64,256 --json build/bench-channels.json
./build/bin/chanflow bench graph --json build/bench-graph.json
