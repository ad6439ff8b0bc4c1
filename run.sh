#!/usr/bin/env bash
# Set up (Debian 12 packages), build, and run chanflow's main job on the default device (PoCL on
# the CPU unless CHANFLOW_DEVICE says otherwise): the devices, then the workloads against serial
# and oneTBB (thesis Table 4-3's sizes), with the comparison table and its chart.
set -euo pipefail
cd "$(dirname "$0")"
source cmake/setup-debian.sh
chanflow_install_missing
chanflow_build
./build/bin/chanflow devices
./build/bin/chanflow bench --sizes default --json build/bench.json --plot build/bench.png
