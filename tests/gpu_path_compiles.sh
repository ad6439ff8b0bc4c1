#!/usr/bin/env bash
# The GPU's side of the device scheduler compiled here. PoCL builds the scheduler's CPU form (one
# poll a work-group, CHANFLOW_SCHED_ONE_POLL) and the TSO ordering, so the form NVIDIA builds (the
# polling loop, the collective claim and deallocation, PTX's ordering) would otherwise first meet a
# compiler on a lent GPU. This dumps the programs a few device-scheduler runs build on PoCL
# (CHANFLOW_DUMP_PROGRAMS), turns each scheduler program's options into a GPU's, and compiles it
# for NVIDIA's OpenCL target with Clang (PoCL's own clang-15): every error fails the test.
#   gpu_path_compiles.sh CHANFLOW
set -euo pipefail
chanflow=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export CHANFLOW_DUMP_PROGRAMS=$dir CHANFLOW_QUIET=1
"$chanflow" run fib 12 --scheduler device > /dev/null
"$chanflow" bench chain --widths 1 --depths 1,2 --reps 1 --schedulers device > /dev/null
compiled=0
for f in "$dir"/*.cl; do
  grep -q "void chanflow_schedule(" "$f" || continue
  options=$(head -1 "$f" | sed 's|^// options: ||')
  gpu=()
  for o in $options; do
    case "$o" in
      -DCHANFLOW_SCHED_ONE_POLL|-DCHANFLOW_CPU_DEVICE|-DCHANFLOW_SCAN_SEQUENTIAL) ;;
      -DCHANFLOW_ORDER_TSO) gpu+=(-DCHANFLOW_ORDER_PTX) ;;
      -DCHANFLOW_WG_SIZE=*) gpu+=(-DCHANFLOW_WG_SIZE=256) ;;
      *) gpu+=("$o") ;;
    esac
  done
  # NVIDIA's OpenCL: OpenCL C with 64-bit atomics, `asm` for PTX, __OPENCL_VERSION__ set.
  if ! clang-15 -x cl -cl-std=CL2.0 -target nvptx64-nvidia-nvcl -fsyntax-only -D__OPENCL_VERSION__=300 -Dasm=__asm__ \
      -Xclang -finclude-default-header -Xclang -cl-ext=+cl_khr_int64_base_atomics,+cl_khr_int64_extended_atomics \
      "${gpu[@]}" "$f" 2> "$dir/errors.txt"; then
    echo "gpu_path_compiles: the GPU form of $(basename "$f") (options: ${gpu[*]}) does not compile:" >&2
    grep -E "error" "$dir/errors.txt" | head -20 >&2
    exit 1
  fi
  compiled=$((compiled + 1))
done
if [ "$compiled" -lt 2 ]; then
  echo "gpu_path_compiles: found $compiled scheduler programs among the dumped ones (expected fib's and the chain's)" >&2
  exit 1
fi
echo "gpu_path_compiles: $compiled scheduler programs compile in their GPU form"
