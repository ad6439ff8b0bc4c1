#!/usr/bin/env bash
# Every command of README.md's ```sh blocks, run as written, one after another, from a scratch
# directory that sees the source tree's folders and the build's binaries as build/bin: a README
# command that fails (a non-zero exit) fails this test. Commands that name an NVIDIA device run
# only where `chanflow devices` lists one (this is how they are checked by hand on a GPU host).
#   tests/readme_commands.sh SOURCE_DIR BIN_DIR [MARKDOWN ...]   (default: README.md; ctest runs that,
#   the folder READMEs' blocks, longer, by hand: ... cli/README.md workloads/README.md compiler/README.md)
set -uo pipefail
src=$(cd "$1" && pwd) bin=$(cd "$2" && pwd)
shift 2
pages=("${@:-README.md}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/build"
ln -s "$bin" "$work/build/bin"
for d in "$src"/*/; do ln -s "$d" "$work/$(basename "$d")"; done
gpu=0
"$bin/chanflow" devices 2>/dev/null | grep -qi 'nvidia' && gpu=1
commands=()
for page in "${pages[@]}"; do
  mapfile -t -O "${#commands[@]}" commands < <(awk '/^```sh$/ { on = 1; next } /^```$/ { on = 0 } on && NF' "$src/$page")
done
ran=0 failed=0
for c in "${commands[@]}"; do
  if [[ $gpu == 0 && "$c" == *nvidia* ]]; then
    echo "-- skipped (no NVIDIA device here): $c"
    continue
  fi
  echo "== $c"
  start=$SECONDS
  (cd "$work" && bash -c "$c" </dev/null)
  rc=$?
  ran=$((ran + 1))
  echo "-- exit $rc after $((SECONDS - start)) s"
  [[ $rc == 0 ]] || { echo "FAILED: $c"; failed=$((failed + 1)); }
done
echo "$ran commands of ${pages[*]} run, $failed failed"
# A README with no command block at all (an awk pattern gone stale) must not pass.
[[ $ran -ge 5 && $failed == 0 ]]
