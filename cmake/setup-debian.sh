#!/usr/bin/env bash
# Shared by run.sh and test.sh: install the Debian 12 packages chanflow needs (only those
# missing), then configure and build (Release) into build/. Idempotent.
set -euo pipefail

CHANFLOW_PACKAGES=(
  g++ cmake make
  pocl-opencl-icd ocl-icd-opencl-dev opencl-headers opencl-clhpp-headers
  libtbb-dev libfmt-dev doctest-dev libcli11-dev nlohmann-json3-dev
  python3-matplotlib
  libclang-15-dev libclang-cpp15-dev llvm-15-dev clang-15
  libclblast-dev libboost-dev
  openmpi-bin libopenmpi-dev
)

chanflow_install_missing() {
  local missing=()
  for pkg in "${CHANFLOW_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$pkg")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "chanflow: installing missing Debian packages: ${missing[*]}"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo=(sudo)
    else
      echo "chanflow: not root and no sudo. As root, run:" >&2
      echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
      exit 1
    fi
  fi
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

chanflow_build() {
  local jobs
  jobs=$(nproc 2>/dev/null || echo 2)
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
  cmake --build build -j "$jobs"
}
