#!/usr/bin/env bash
# Compiled fib on the GPU: the runtime's depth, fixed depths, and cuts by work (n < K).
set -u
cd "$(dirname "$0")"
icd=/usr/local/nvidia/lib64/libnvidia-opencl.so.1
mkdir -p /etc/OpenCL/vendors && echo "$icd" > /etc/OpenCL/vendors/nvidia.icd
export LD_LIBRARY_PATH=$PWD/lib CHANFLOW_DEVICE=nvidia CHANFLOW_SCHEDULER=device
B=bin/chanflow
echo "host cores: $(nproc)"; $B devices | head -5
for r in 1 2; do
  echo "== auto, round $r"
  $B bench --workloads fib --sizes 30,40 --impls chanflow-compiled,tbb-cutoff --reps 5 --seed 1 --scheduler device --json $OUT/auto-$r.json 2>&1 | grep -A3 "^workload" | head -12
  echo "== compiled cut by work (exp/fib_cutK N warm reps), round $r"
  for k in 10 12 14 16 18 20 22; do echo -n "cut $k: "; exp/fib_cut$k 30 10 9; echo -n "cut $k: "; exp/fib_cut$k 40 4 7; done
  echo -n "auto exe: "; exp/fib_auto 30 14 9; echo -n "auto exe: "; exp/fib_auto 40 14 7
done
echo "== fixed depths"
for d in 14 15 16 17; do echo "-- depth $d"; $B bench --workloads fib --sizes 30 --impls chanflow-compiled --serial-cutoff $d --reps 5 --seed 1 --scheduler device 2>&1 | grep "^fib " ; done
for d in 18 19 20 21; do echo "-- depth $d"; $B bench --workloads fib --sizes 40 --impls chanflow-compiled --serial-cutoff $d --reps 5 --seed 1 --scheduler device 2>&1 | grep "^fib " ; done
echo "== stats at cut 14 and auto, fib 40"
CHANFLOW_STATS=1 exp/fib_cut14 40 2 3 2>&1 | head -4
CHANFLOW_STATS=1 exp/fib_auto 40 14 3 2>&1 | grep -i "serial\|graph run" | head -4
