#!/usr/bin/env bash
# Installs chanflow from BUILD_DIR into a scratch prefix, then configures, builds and runs the
# outside project against it. Usage: check.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
build_dir=$1 source_dir=$2 work_dir=$3
rm -rf "$work_dir"
cmake --install "$build_dir" --prefix "$work_dir/prefix" >/dev/null
cmake -S "$source_dir" -B "$work_dir/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$work_dir/prefix"
cmake --build "$work_dir/build"
"$work_dir/build/outside"
# The Cilk program built through chanflow_add_cilk_executable, and the installed chanflowc by hand.
[ "$("$work_dir/build/outside_nodes" 10)" = "nodes(10) = 2047" ]
"$work_dir/prefix/bin/chanflowc" "$source_dir/nodes.c" "$source_dir/parse.c" -o "$work_dir/nodes_by_hand"
[ "$("$work_dir/nodes_by_hand" 11)" = "nodes(11) = 4095" ]
echo "outside project: graph API, chanflow_add_cilk_executable and the installed chanflowc work"
