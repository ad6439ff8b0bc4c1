#!/usr/bin/env bash
# A recursion ten times deeper must not take ten times the channels: runs a compiled program at
# depth N and 10N (CHANFLOW_STATS=1) and requires the same output as its serial elision at both,
# channel memory that does not grow with depth (levels below the serial depth are not made), and a
# device heap whose high-water mark stays within BYTES_PER_LEVEL per level of the deeper run
# (the explicit stacks' spilled frames). Both runs cut at one serial depth (CHANFLOW_SERIAL_CUTOFF,
# 6 unless set): the runtime's own choice follows measured times, and the levels with it. Even so
# the levels made are not exact: a stack grows a few levels past the deepest work the host saw at a
# round's end (the sweeps' lookahead), and where a chain of sweeps stood then is a matter of timing
# (70 levels at depth 2,000 and 63 at 20,000 on one machine). The deeper run may take at most a
# half again the channel memory and levels of the shallower one: growing with the depth, ten times
# deeper would take ten times as many.
# usage: deep_memory.sh CHANFLOWC CILK_INCLUDE_DIR WORK_DIR SOURCE N [BYTES_PER_LEVEL]
set -euo pipefail
chanflowc=$1 include=$2 work=$3 source=$4 n=$5 per_level=${6:-256}
mkdir -p "$work"
export CHANFLOW_SERIAL_CUTOFF=${CHANFLOW_SERIAL_CUTOFF:-6}
stem=$(basename "${source%.*}")
cc -std=gnu11 -O1 -w -I"$include" "$source" -o "$work/$stem.elision"
"$chanflowc" "$source" -o "$work/$stem.chanflow"
channels=() heap=()
for depth in "$n" $((10 * n)); do
  expected=$("$work/$stem.elision" "$depth")
  actual=$(CHANFLOW_STATS=1 "$work/$stem.chanflow" "$depth" 2>"$work/$stem.$depth.stderr") ||
    { cat "$work/$stem.$depth.stderr" >&2; exit 1; }
  [ "$expected" = "$actual" ] || { printf 'depth %s: MISMATCH\nserial elision: %s\nchanflow: %s\n' "$depth" "$expected" "$actual" >&2; exit 1; }
  line=$(grep -E '^chanflow: device memory: channels' "$work/$stem.$depth.stderr") || { echo "no device memory line" >&2; exit 1; }
  bytes=$(grep -Eo '^chanflow: device heap: [0-9.]+ MiB' "$work/$stem.$depth.stderr" | grep -Eo '[0-9.]+') ||
    { echo "no device heap line" >&2; exit 1; }
  echo "depth $depth: ${line#chanflow: device memory: }; heap $bytes MiB at most"
  mib=$(grep -Eo 'channels [0-9.]+ MiB' <<<"$line" | grep -Eo '[0-9.]+')
  levels=$(grep -Eo 'in [0-9]+ stack levels' <<<"$line" | grep -Eo '[0-9]+')
  channels+=("$mib $levels")
  heap+=("$bytes")
done
awk -v shallow="${channels[0]}" -v deep="${channels[1]}" -v n="$n" 'BEGIN {
  split(shallow, s, " "); split(deep, d, " ")
  printf "channels at depth %d against %d: %.2fx the memory, %.2fx the levels (at most 1.5x)\n", 10 * n, n, d[1] / s[1], d[2] / s[2]
  exit !(d[1] <= 1.5 * s[1] && d[2] <= 1.5 * s[2]) }' ||
  { echo "channel memory grew with depth" >&2; exit 1; }
awk -v mib="${heap[1]}" -v levels=$((10 * n)) -v most="$per_level" \
  'BEGIN { b = mib * 1048576 / levels; printf "heap per level at depth %d: %.0f bytes (at most %d)\n", levels, b, most; exit !(b <= most) }'
