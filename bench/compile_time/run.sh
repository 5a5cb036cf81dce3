#!/usr/bin/env bash
# Compile-time probes (bench/RESULTS.md, section "compile time"): each file here compiled with
# g++ 12 -O2 -std=c++20 (what a user's build of one file costs), header-only and against the
# compiled component (-DNAX_SEPARATE_RUNTIME: the declarations a program linking nax::runtime
# sees; the library itself is compiled once and not counted). Wall and CPU seconds, best of
# $REPEAT (default 3), with the load average printed: on a loaded machine the times grow.
#
#   bash bench/compile_time/run.sh [include-dir] [compiler]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
include="${1:-$here/../../include}"
cxx="${2:-g++}"
repeat="${REPEAT:-3}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo "compiler: $($cxx --version | head -1); flags: -std=c++20 -O2; include: $include"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-16s %-12s %8s %8s\n' probe mode wall_s cpu_s
for probe in include_only typed_only builder_graph jit_mlp; do
  for mode in header-only component; do
    defs=()
    [[ $mode == component ]] && defs=(-DNAX_SEPARATE_RUNTIME)
    best_wall=1e9 best_cpu=1e9
    for ((i = 0; i < repeat; ++i)); do
      t=$( { /usr/bin/time -f '%e %U %S' "$cxx" -std=c++20 -O2 "${defs[@]}" -I"$include" \
               -c "$here/$probe.cpp" -o "$out/$probe.o"; } 2>&1 | tail -1)
      read -r wall user sys <<<"$t"
      cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')
      best_wall=$(awk -v a="$best_wall" -v b="$wall" 'BEGIN { print (b < a) ? b : a }')
      best_cpu=$(awk -v a="$best_cpu" -v b="$cpu" 'BEGIN { print (b < a) ? b : a }')
    done
    printf '%-16s %-12s %8.2f %8.2f\n' "$probe" "$mode" "$best_wall" "$best_cpu"
  done
done
