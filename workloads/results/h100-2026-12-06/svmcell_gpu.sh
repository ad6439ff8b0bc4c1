#!/usr/bin/env bash
# fib-timed.c with its timer's timespec in an SVM cell (fib_auto) and without (fib_t, the timer
# built apart), at fixed depths and a capacity like the bench's.
set -u
cd "$(dirname "$0")"
icd=/usr/local/nvidia/lib64/libnvidia-opencl.so.1
mkdir -p /etc/OpenCL/vendors && echo "$icd" > /etc/OpenCL/vendors/nvidia.icd
export LD_LIBRARY_PATH=$PWD/lib CHANFLOW_DEVICE=nvidia CHANFLOW_SCHEDULER=device CHANFLOW_CAPACITY=1048576
for r in 1 2; do
  for p in fib_auto fib_t; do
    echo -n "$p depth 16: "; CHANFLOW_SERIAL_CUTOFF=16 exp/$p 30 10 21
    echo -n "$p depth 19: "; CHANFLOW_SERIAL_CUTOFF=19 exp/$p 40 10 21
    echo -n "$p auto: "; exp/$p 30 14 21
    echo -n "$p auto: "; exp/$p 40 14 21
  done
done
