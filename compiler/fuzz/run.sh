#!/usr/bin/env bash
# Fuzzes chanflowc's front end and lowering with libFuzzer: builds chanflowc_fuzz with Debian's
# clang (build-fuzz/, instrumented, with AddressSanitizer), seeds a corpus with the test programs,
# golden inputs, rejected sources and the workloads' Cilk files (a .cilk one marked by a leading
# '5'), and runs for SECONDS (default 60) from compiler/tests/programs (so their own headers are
# found), with a dictionary of the constructs chanflowc lowers or refuses (cilk.dict: spawns, globals,
# assert, every integer width, recursions, allocation). Crashes, with the input that made them, land
# in build-fuzz/crashes/.
# Needs the clang-15 package (the project's build needs only its libraries).
# usage: compiler/fuzz/run.sh [SECONDS] [extra libFuzzer flags...]
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
shift || true
command -v clang++-15 >/dev/null || { echo "compiler/fuzz/run.sh: needs Debian's clang-15 (apt-get install clang-15)" >&2; exit 1; }
root=$(pwd)
dir=$root/build-fuzz
CC=clang-15 CXX=clang++-15 cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCHANFLOW_FUZZ=ON \
  -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link,address" -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address" >/dev/null
cmake --build "$dir" -j "$(nproc)" --target chanflowc_fuzz
corpus=$dir/corpus
mkdir -p "$corpus" "$dir/crashes"
for f in compiler/tests/{programs,golden,diagnostics,runtime}/*.c workloads/*/*.c; do cp "$f" "$corpus/"; done
for f in compiler/tests/{programs,golden,diagnostics}/*.cilk; do { printf 5; cat "$f"; } > "$corpus/$(basename "$f")"; done
cd compiler/tests/programs
# allow_user_poisoning=0: LLVM's inline allocators poison the slabs they start where the code
# including them is built with ASan (this target) and unpoison each block they hand out, but
# Debian's libclang-cpp is not, and its own allocations in such a slab are never unpoisoned: Clang
# then writing an identifier it interned read as a use-after-poison (SharedStruct's fields, on the
# first input naming a frame type), a report about the mix, not about chanflowc.
ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0 "$dir/bin/chanflowc_fuzz" "$corpus" -max_total_time="$seconds" -max_len=8192 -timeout=20 \
  -dict="$root/compiler/fuzz/cilk.dict" -artifact_prefix="$dir/crashes/" -print_final_stats=1 "$@"
