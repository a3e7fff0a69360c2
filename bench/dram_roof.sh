#!/usr/bin/env bash
# The DRAM roof next to independent STREAM kernels in the same minute (issue: "ceilings a user can trust"): each
# round runs bench/stream_check.cpp (arrays of 4x the sum of the caches each, best of 20: triad and copy, each with
# ordinary and with non-temporal stores), then `ridgeline ceilings --recalibrate`, then stream_check again, and
# prints the roof beside the independent readings, with the calibration's wall time; then the same for --quick.
# Usage: bench/dram_roof.sh [path/to/ridgeline] [threads] [rounds]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/release/ridgeline}
threads=${2:-$(nproc)}
rounds=${3:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
g++ -O3 -march=native -fopenmp bench/stream_check.cpp -o "$tmp/stream_check"
# 4x the sum of the caches the threads fill, per array (the DRAM level ridgeline uses), in MiB; from a first quick run
"$bin" ceilings --device cpu --threads "$threads" --quick --recalibrate --format json --quiet > "$tmp/first.json"
mib=$(python3 -c "import json,sys; print(max(1, json.load(open(sys.argv[1]))['dram_level_bytes'] // 1048576))" "$tmp/first.json")
echo "arrays of ${mib} MiB each (4x the sum of the caches), ${threads} threads, $(date -u +%FT%TZ), load $(cut -d' ' -f1 /proc/loadavg)"
printf '%-6s %-5s %7s %6s %-18s %7s %9s %7s %8s %7s %9s\n' round mode wall_s roof from triad "triad nt" copy "copy nt" memcpy roof/best
for r in $(seq 1 "$rounds"); do
  for mode in full quick; do
    flag=""; [[ $mode == quick ]] && flag="--quick"
    before=$("$tmp/stream_check" "$threads" "$mib" 20)
    t0=$(date +%s.%N)
    "$bin" ceilings --device cpu --threads "$threads" $flag --recalibrate --format json --quiet > "$tmp/c.json"
    wall=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)")
    after=$("$tmp/stream_check" "$threads" "$mib" 20)
    python3 - "$tmp/c.json" "$r" "$mode" "$wall" "$before" "$after" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
r, mode, wall = sys.argv[2], sys.argv[3], sys.argv[4]
b, a = [list(map(float, s.split())) for s in sys.argv[5:7]]
triad, triad_nt, copy_nt, copy, memcpy = (max(b[k], a[k]) for k in range(5))
best = max(triad, triad_nt, copy_nt, copy, memcpy)
roof = c["bandwidth_gbs"]
src = c["method"]["bandwidth_gbs"].rsplit(": ", 1)[-1]
print(f"{r:<6} {mode:<5} {wall:>7} {roof:6.1f} {src[:18]:<18} {triad:7.1f} {triad_nt:9.1f} {copy:7.1f} {copy_nt:8.1f}"
      f" {memcpy:7.1f} {roof / best:9.2f}")
PY
  done
done
echo "(each independent kernel: the better of the readings just before and just after; nt: with non-temporal stores;"
echo " copy: STREAM's own Copy, ordinary stores, 16 bytes counted; memcpy: the C library's, 16 bytes; roof/best:"
echo " ridgeline's DRAM roof, the highest of its copy, triad and read, over the highest independent kernel; 0.9-1.1)"
