#!/usr/bin/env bash
# Packs what a GPU machine without Debian's packages needs to run chanflow (the built `chanflow`
# and `chanflow_tests`, the shared libraries they link that a bare machine lacks — oneTBB, fmt,
# CLBlast for the clblast-gemm peer — and a run script)
# into gpu-bundle/ (git-ignored), after building here. On the GPU machine, from the bundle:
#
#     ./run-gpu.sh [OUT_DIR]
#
# registers NVIDIA's OpenCL with the ICD loader if it is not (as DESIGN.md's device facts say),
# runs the doctest suites on the GPU and `chanflow bench --sizes gpu`, and writes
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
# On the GPU machine: the doctest suites on the GPU, then `chanflow bench --sizes gpu` into
# OUT_DIR/<device>-<date>.json (see cmake/pack-gpu.sh in the repository).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
mkdir -p "$out"
nvidia_icd=/usr/local/nvidia/lib64/libnvidia-opencl.so.1
if [ -e "$nvidia_icd" ] && ! grep -qs "$nvidia_icd" /etc/OpenCL/vendors/*.icd; then
  mkdir -p /etc/OpenCL/vendors && echo "$nvidia_icd" > /etc/OpenCL/vendors/nvidia.icd
fi
export LD_LIBRARY_PATH=$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export CHANFLOW_DEVICE=${CHANFLOW_DEVICE:-nvidia}
"$here/bin/chanflow" devices
"$here/bin/chanflow_tests" --no-intro=true 2>&1 | tail -4
tests=${PIPESTATUS[0]}
device=$("$here/bin/chanflow" devices | awk -v want="$CHANFLOW_DEVICE" 'BEGIN{IGNORECASE=1} /^\[[0-9]+\]/ && index(tolower($0), tolower(want)) {sub(/^\[[0-9]+\] /, ""); print; exit}')
slug=$(echo "${device:-device}" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\+/-/g; s/^-//; s/-$//')
json="$out/$slug-$(date +%Y-%m-%d).json"
"$here/bin/chanflow" bench --sizes gpu --reps "${CHANFLOW_REPS:-3}" --seed 1 --json "$json"
bench=$?
echo "tests: exit $tests; bench: exit $bench; wrote $json"
[ "$tests" -eq 0 ] && [ "$bench" -eq 0 ]
RUN
chmod +x "$bundle/run-gpu.sh"
echo "packed $bundle/ ($(du -sh "$bundle" | cut -f1)): copy it to the GPU machine and run ./run-gpu.sh there"
