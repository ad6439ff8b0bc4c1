#!/usr/bin/env bash
# Packs what a GPU machine without Debian's packages needs to run chanflow (the built `chanflow`
# and `chanflow_tests`, the shared libraries they link that a bare machine lacks — oneTBB, fmt,
# CLBlast for the clblast-gemm peer — and a run script)
# into gpu-bundle/ (git-ignored), after building here. On the GPU machine, from the bundle:
#
#     ./run-gpu.sh [--checks-only] [OUT_DIR]
#
# registers NVIDIA's OpenCL with the ICD loader if it is not (as DESIGN.md's device facts say),
# runs the doctest suites on the GPU — the GPU-only checks (the suite gpu_only: the collective
# scan, idle work-groups leaving, PTX's ordering and float atomics, the device clock) first, on
# their own line — then, unless --checks-only, `chanflow bench --sizes gpu`, writing
# OUT_DIR/<device>-<date>.json (default: the bundle's folder). Back here, commit it as gpu.json in
# D=workloads/results/<device>-<date>/ (such as h100-2026-11-25/; workloads/results/README.md) and
# draw its chart with
#     /usr/bin/python3 cli/bench/plot_bench.py $D/gpu.json $D/gpu.png
set -euo pipefail
cd "$(dirname "$0")/.."
source cmake/setup-debian.sh
chanflow_install_missing
chanflow_build
bundle=gpu-bundle
rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib"
cp build/bin/chanflow build/bin/chanflow_tests "$bundle/bin/"
# Every library the binaries link, except the C/C++ runtime and the OpenCL ICD loader, which
# the GPU machine has (its loader is the one NVIDIA's driver registers with).
for lib in $(ldd build/bin/chanflow build/bin/chanflow_tests | awk '/=> \//{print $3}' | sort -u); do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libstdc++.so*|libgcc_s.so*|libOpenCL.so*|ld-linux*|libpthread.so*|libdl.so*|librt.so*) ;;
    *) cp -L "$lib" "$bundle/lib/" ;;
  esac
done
cat > "$bundle/run-gpu.sh" <<'RUN'
#!/usr/bin/env bash
# On the GPU machine: the GPU-only checks, the doctest suites on the GPU, then (unless
# --checks-only) `chanflow bench --sizes gpu` into OUT_DIR/<device>-<date>.json (see
# cmake/pack-gpu.sh in the repository).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
checks_only=0
if [ "${1:-}" = --checks-only ]; then checks_only=1; shift; fi
out=${1:-$here}
mkdir -p "$out"
nvidia_icd=/usr/local/nvidia/lib64/libnvidia-opencl.so.1
if [ -e "$nvidia_icd" ] && ! grep -qs "$nvidia_icd" /etc/OpenCL/vendors/*.icd; then
  mkdir -p /etc/OpenCL/vendors && echo "$nvidia_icd" > /etc/OpenCL/vendors/nvidia.icd
fi
export LD_LIBRARY_PATH=$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export CHANFLOW_DEVICE=${CHANFLOW_DEVICE:-nvidia}
"$here/bin/chanflow" devices
echo "GPU-only checks (the suite gpu_only):"
"$here/bin/chanflow_tests" --test-suite=gpu_only --no-intro=true --duration=true 2>&1 | tail -30
gpu_only=${PIPESTATUS[0]}
# Every other suite in a process of its own, several at once (NVIDIA's compiler is the long pole,
# on the host's cores), each one's output in OUT_DIR/tests-<suite>.txt.
echo "every suite:"
suites=$("$here/bin/chanflow_tests" --list-test-suites --test-suite-exclude=gpu_only --no-intro=true 2>/dev/null |
  awk '/^=+$/ {rule++; next} rule == 1')
export here out
tests=0
printf '%s\n' $suites | xargs -P "${CHANFLOW_TEST_JOBS:-6}" -I{} bash -c \
  '"$here/bin/chanflow_tests" --test-suite={} --no-intro=true > "$out/tests-{}.txt" 2>&1; echo "  {}: exit $? ($(grep -m1 "test cases:" "$out/tests-{}.txt"))"' |
  tee "$out/tests.txt"
grep -q ": exit [^0]" "$out/tests.txt" && tests=1
if [ "$checks_only" = 1 ]; then
  echo "GPU-only checks: exit $gpu_only; every suite: exit $tests"
  [ "$gpu_only" -eq 0 ] && [ "$tests" -eq 0 ]
  exit
fi
device=$("$here/bin/chanflow" devices | awk -v want="$CHANFLOW_DEVICE" 'BEGIN{IGNORECASE=1} /^\[[0-9]+\]/ && index(tolower($0), tolower(want)) {sub(/^\[[0-9]+\] /, ""); print; exit}')
slug=$(echo "${device:-device}" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\+/-/g; s/^-//; s/-$//')
json="$out/$slug-$(date +%Y-%m-%d).json"
"$here/bin/chanflow" bench --sizes gpu --reps "${CHANFLOW_REPS:-3}" --seed 1 --json "$json"
bench=$?
echo "GPU-only checks: exit $gpu_only; every suite: exit $tests; bench: exit $bench; wrote $json"
[ "$gpu_only" -eq 0 ] && [ "$tests" -eq 0 ] && [ "$bench" -eq 0 ]
RUN
chmod +x "$bundle/run-gpu.sh"
echo "packed $bundle/ ($(du -sh "$bundle" | cut -f1)): copy it to the GPU machine and run ./run-gpu.sh there"
