#!/usr/bin/env bash
# Serial levels grouped by work (against -DCHANFLOW_UNGROUPED) and lost claims polled again at
# once (against -DCHANFLOW_SCHED_BACKOFF_LOST), the same binaries, on the GPU.
set -u
cd "$(dirname "$0")"
icd=/usr/local/nvidia/lib64/libnvidia-opencl.so.1
mkdir -p /etc/OpenCL/vendors && echo "$icd" > /etc/OpenCL/vendors/nvidia.icd
export LD_LIBRARY_PATH=$PWD/lib CHANFLOW_DEVICE=nvidia CHANFLOW_SCHEDULER=device
B=bin/chanflow
OUT=${OUT:-.}
echo "host cores: $(nproc)"; $B devices | head -4
opts() { case $1 in ungrouped) echo -DCHANFLOW_UNGROUPED;; backoff) echo -DCHANFLOW_SCHED_BACKOFF_LOST;; *) echo "";; esac; }
grouping() {
  for m in grouped ungrouped; do
    echo "== $m, round $1: compiled fib at the runtime's depth"
    CHANFLOW_BUILD_OPTIONS=$(opts $m) $B bench --workloads fib --sizes 30,40 --impls chanflow-compiled,tbb-cutoff --reps 5 --seed 1 --scheduler device --json $OUT/fib-$m-$1.json 2>&1 | grep -E "^fib " | head -8
  done
}
lost() {
  for m in grouped backoff; do
    echo "== lost claims: $m, round $1: fib every call a task"
    CHANFLOW_BUILD_OPTIONS=$(opts $m) $B bench --workloads fib --sizes 30,40 --impls chanflow --reps 3 --seed 1 --scheduler device --json $OUT/calls-$m-$1.json 2>&1 | grep -E "^fib " | head -4
    CHANFLOW_BUILD_OPTIONS=$(opts $m) $B run fib 40 --scheduler device 2>&1 | grep -iE "poll|lost|ms" | head -6
  done
}
grouping 1
lost 1
echo "== the timer's local on the host's stack (fib_in: its own now_ms) against one built apart (fib_t)"
for p in fib_in fib_t; do echo -n "$p fib 30: "; exp/$p 30 14 21; echo -n "$p fib 40: "; exp/$p 40 14 9; done
echo "== device_scheduler and gpu_only suites"
timeout 150 bin/chanflow_tests --test-suite=device_scheduler,gpu_only --no-intro=true 2>&1 | tail -3
grouping 2
lost 2
echo "== compiled programs against their serial elisions (grouped, lost claims at once)"
pass=0; fail=0
while read name args; do
  want=$(timeout 120 progs/$name.serial $args 2>/dev/null; echo "exit $?")
  s=$(date +%s%N)
  got=$(timeout 300 progs/$name $args 2>err.txt; echo "exit $?")
  e=$(( ($(date +%s%N) - s) / 1000000 ))
  if [ "$want" = "$got" ]; then pass=$((pass+1)); echo "ok   $name $args (${e} ms)"; else fail=$((fail+1)); echo "FAIL $name $args"; echo "$got" | tail -3; tail -3 err.txt; echo "  want: $(echo "$want" | tail -2)"; fi
done < progs/list.txt
echo "compiled programs: $pass passed, $fail failed"
echo "== fixed depths"
for d in 19 21; do for m in grouped ungrouped; do
  echo -n "fib 40 depth $d $m: "; CHANFLOW_BUILD_OPTIONS=$(opts $m) $B bench --workloads fib --sizes 40 --impls chanflow-compiled --serial-cutoff $d --reps 5 --seed 1 --scheduler device 2>&1 | grep "^fib " | head -2 | tr '\n' ' '; echo
done; done
