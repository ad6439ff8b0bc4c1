#!/usr/bin/env bash
# Where a compiled program's call goes, against chanflow's own call of the same graph.
set -u
cd "$(dirname "$0")"
icd=/usr/local/nvidia/lib64/libnvidia-opencl.so.1
mkdir -p /etc/OpenCL/vendors && echo "$icd" > /etc/OpenCL/vendors/nvidia.icd
export LD_LIBRARY_PATH=$PWD/lib CHANFLOW_DEVICE=nvidia CHANFLOW_SCHEDULER=device
B=bin/chanflow
for r in 1 2; do
for n in 30 40; do
  echo "== chanflow run fib $n --impl chanflow-compiled --serial-cutoff D --reps 20"
  d=16; [ $n = 40 ] && d=19
  $B run fib $n --impl chanflow-compiled --serial-cutoff $d --scheduler device --reps 20 2>&1 | tail -7
  for cap in 1048576; do
    echo "== program, CHANFLOW_CAPACITY=$cap CHANFLOW_SERIAL_CUTOFF=$d, fib $n"
    CHANFLOW_CAPACITY=$cap CHANFLOW_SERIAL_CUTOFF=$d CHANFLOW_STATS=1 exp/fib_auto $n 10 20 2>&1 | tail -12
  done
done
done
