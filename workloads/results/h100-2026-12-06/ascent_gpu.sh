#!/usr/bin/env bash
# The ascent kept in the work-group that completed each frame (default), against keeping it
# always (-DCHANFLOW_ASCENT_KEPT_ALWAYS) and publishing every frame (-DCHANFLOW_ASCENT_PUBLISHED),
# the same binaries, on the GPU; then the GPU's scheduler suites.
set -u
cd "$(dirname "$0")"
icd=/usr/local/nvidia/lib64/libnvidia-opencl.so.1
mkdir -p /etc/OpenCL/vendors && echo "$icd" > /etc/OpenCL/vendors/nvidia.icd
export LD_LIBRARY_PATH=$PWD/lib CHANFLOW_DEVICE=nvidia
B=bin/chanflow
OUT=${OUT:-.}
opts() { case $1 in always) echo -DCHANFLOW_ASCENT_KEPT_ALWAYS;; published) echo -DCHANFLOW_ASCENT_PUBLISHED;;
  old) echo "-DCHANFLOW_ASCENT_PUBLISHED -DCHANFLOW_SCHED_BACKOFF_LOST -DCHANFLOW_UNGROUPED";; *) echo "";; esac; }
{ echo "host cores: $(nproc)"; $B devices | head -4; } > $OUT/host.txt
for m in kept always published; do
  CHANFLOW_BUILD_OPTIONS=$(opts $m) $B run fib 34 --scheduler device 2>&1 | grep -E "correct|wrong|rror|device scheduler:" > $OUT/sanity-$m.txt
done
calls() {
  for m in kept always published; do
    echo "== $m, round $1: fib every call a task"
    CHANFLOW_BUILD_OPTIONS=$(opts $m) $B bench --workloads fib --sizes 30,40 --impls chanflow --reps 3 --seed 1 --scheduler device --json $OUT/calls-$m-$1.json 2>&1 | grep -E "^fib " | head -4
  done
}
compiled() {
  for m in kept published; do
    echo "== $m, round $1: compiled fib at the runtime's depth"
    CHANFLOW_BUILD_OPTIONS=$(opts $m) $B bench --workloads fib --sizes 30,40 --impls chanflow-compiled,tbb-cutoff --reps 5 --seed 1 --scheduler device --json $OUT/compiled-$m-$1.json 2>&1 | grep -E "^fib " | head -8
  done
}
programs() {
  pass=0; fail=0
  while read name args; do
    want=$(timeout 120 progs/$name.serial $args 2>/dev/null; echo "exit $?")
    s=$(date +%s%N)
    got=$(timeout 300 progs/$name $args 2>err.txt; echo "exit $?")
    e=$(( ($(date +%s%N) - s) / 1000000 ))
    if [ "$want" = "$got" ]; then pass=$((pass+1)); echo "ok   $name $args (${e} ms)"; else fail=$((fail+1)); echo "FAIL $name $args"; echo "$got" | tail -3; tail -3 err.txt; echo "  want: $(echo "$want" | tail -2)"; fi
  done < progs/list.txt
  echo "compiled programs: $pass passed, $fail failed"
}
wide() {  # $1: a mode; the hand-built and compiled graphs of the wide workloads
  for ws in "queens 15" "nqueens 16" "sort 16777216" "strassen 2048"; do
    set -- $1 $ws
    CHANFLOW_BUILD_OPTIONS=$(opts $1) $B bench --workloads $2 --sizes $3 --impls chanflow --reps 3 --seed 1 --scheduler device --json $OUT/wide-$1-$2.json 2>&1 | grep -E "^$2 " | head -3
  done
}
if [ "${1:-}" = second ]; then
  for cap in grown 65536 grown 65536; do
    c=$cap; [ $cap = grown ] && c=
    { echo "== levels $cap: fib 40 as a program (fib-timed.c: 14 calls, then 9 timed)"; CHANFLOW_CAPACITY=$c CHANFLOW_STATS=1 exp/fib_t 40 14 9 2>&1 | grep -E "^fib|per stack level|device memory|first run"
      echo "== levels $cap: fib 30 as a program"; CHANFLOW_CAPACITY=$c CHANFLOW_STATS=1 exp/fib_t 30 14 21 2>&1 | grep -E "^fib|per stack level|first run"; } >> $OUT/program-fib.txt 2>&1
  done
  programs > $OUT/programs.txt 2>&1
  wide kept > $OUT/wide-kept-1.txt 2>&1
  wide old > $OUT/wide-old-1.txt 2>&1
  wide kept > $OUT/wide-kept-2.txt 2>&1
  wide old > $OUT/wide-old-2.txt 2>&1
  exit 0
fi
calls 1 > $OUT/calls-1.txt 2>&1
compiled 1 > $OUT/compiled-1.txt 2>&1
calls 2 > $OUT/calls-2.txt 2>&1
$B run fib 40 --scheduler device 2>&1 | grep -iE "poll|lost|ms|correct" | head -8 > $OUT/fib40-run.txt
timeout 200 bin/chanflow_tests --test-suite=device_scheduler,gpu_only --no-intro=true > $OUT/suites.txt 2>&1
echo "suites exit $?" >> $OUT/suites.txt
compiled 2 > $OUT/compiled-2.txt 2>&1
$B bench chain --widths 1,32,1024 --depths 100,1000 --reps 5 --schedulers device > $OUT/chain.txt 2>&1
