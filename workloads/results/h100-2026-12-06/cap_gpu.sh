#!/usr/bin/env bash
# Compiled fib as a program, with the capacity chanflow bench gives fib 40 on this GPU.
set -u
cd "$(dirname "$0")"
icd=/usr/local/nvidia/lib64/libnvidia-opencl.so.1
mkdir -p /etc/OpenCL/vendors && echo "$icd" > /etc/OpenCL/vendors/nvidia.icd
export LD_LIBRARY_PATH=$PWD/lib CHANFLOW_DEVICE=nvidia CHANFLOW_SCHEDULER=device
echo "host cores: $(nproc)"
for cap in 4096 262144 1048576; do
  export CHANFLOW_CAPACITY=$cap
  echo "== CHANFLOW_CAPACITY=$cap"
  echo -n "auto: "; CHANFLOW_STATS=1 exp/fib_auto 40 14 7 2> stats.txt; grep -o "serial depth [0-9]*" stats.txt
  echo -n "auto: "; exp/fib_auto 30 14 9
  for k in 12 14 16 18 20; do echo -n "cut $k: "; exp/fib_cut$k 40 3 7; echo -n "cut $k: "; exp/fib_cut$k 30 6 9; done
done
