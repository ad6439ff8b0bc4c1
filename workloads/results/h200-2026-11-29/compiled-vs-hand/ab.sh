#!/usr/bin/env bash
# compiled ÷ hand-built, one call per workload, as docs/compiler.md's earlier A/Bs
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/out}; mkdir -p "$out"
nvidia_icd=/usr/local/nvidia/lib64/libnvidia-opencl.so.1
if [ -e "$nvidia_icd" ] && ! grep -qs "$nvidia_icd" /etc/OpenCL/vendors/*.icd; then
  mkdir -p /etc/OpenCL/vendors && echo "$nvidia_icd" > /etc/OpenCL/vendors/nvidia.icd
fi
export LD_LIBRARY_PATH=$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export CHANFLOW_DEVICE=nvidia
impls_for() { case $1 in strassen) echo chanflow,chanflow-join,chanflow-compiled;; sort) echo chanflow,chanflow-items,chanflow-compiled;; *) echo chanflow,chanflow-compiled;; esac; }
for ws in fib=30 nqueens=16 sort=16777216 strassen=2048 queens=15; do
  w=${ws%=*} n=${ws#*=}
  timeout 150 "$here/bin/chanflow" bench --workloads $w --sizes $n --impls $(impls_for $w) --reps 3 --seed 1 --scheduler device --quiet --json "$out/$w.json" > "$out/$w.txt" 2>&1
  echo "$w: exit $?"; tail -4 "$out/$w.txt"
done
