#!/usr/bin/env bash
# Compiled programs at their default capacity on the GPU: the stacks sized for the device.
set -u
cd "$(dirname "$0")"
icd=/usr/local/nvidia/lib64/libnvidia-opencl.so.1
mkdir -p /etc/OpenCL/vendors && echo "$icd" > /etc/OpenCL/vendors/nvidia.icd
export LD_LIBRARY_PATH=$PWD/lib CHANFLOW_DEVICE=nvidia
unset CHANFLOW_CAPACITY
for r in 1 2; do
  for p in fib_t fib_t2; do
    echo -n "$p auto: "; exp/$p 30 14 21
    echo -n "$p auto: "; exp/$p 40 14 21
  done
done
CHANFLOW_STATS=1 exp/fib_t2 40 14 3 2>&1 | grep -E "settings|device memory|serial depth"
echo "== compiled programs against their serial elisions"
pass=0; fail=0
while read name args; do
  want=$(timeout 120 progs/$name.serial $args 2>/dev/null; echo "exit $?")
  start=$(date +%s.%N)
  got=$(timeout 300 progs/$name $args 2>err.txt; echo "exit $?")
  t=$(echo "$(date +%s.%N) - $start" | bc)
  if [ "$want" = "$got" ]; then pass=$((pass+1)); echo "ok   $name $args (${t} s)"; else fail=$((fail+1)); echo "FAIL $name $args"; echo "$got" | tail -3; tail -3 err.txt; echo "  want: $(echo "$want" | tail -2)"; fi
done < progs/list.txt
echo "compiled programs: $pass passed, $fail failed"
