#!/usr/bin/env bash
# The GPU's scheduler suites with lost claims polled again at once; the timer's local on the stack.
set -u
cd "$(dirname "$0")"
icd=/usr/local/nvidia/lib64/libnvidia-opencl.so.1
mkdir -p /etc/OpenCL/vendors && echo "$icd" > /etc/OpenCL/vendors/nvidia.icd
export LD_LIBRARY_PATH=$PWD/lib CHANFLOW_DEVICE=nvidia CHANFLOW_SCHEDULER=device
OUT=${OUT:-.}
(for p in fib_in fib_t; do echo -n "$p fib 30: "; exp/$p 30 14 21; done) > $OUT/timer.txt 2>&1
cat $OUT/timer.txt
timeout 170 bin/chanflow_tests --test-suite=device_scheduler,gpu_only --no-intro=true > $OUT/suites.txt 2>&1
echo "suites exit $?" >> $OUT/suites.txt
tail -4 $OUT/suites.txt
