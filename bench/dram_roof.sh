#!/usr/bin/env bash
# The DRAM roof next to an independent STREAM triad in the same minute (issue: "ceilings a user can trust"):
# each round runs bench/stream_check.cpp (arrays of 4x the sum of the caches each, best of 20, ordinary and
# non-temporal stores), then `ridgeline ceilings --recalibrate`, then stream_check again, and prints the roof beside
# the better of the two independent readings, with the calibration's wall time; then the same for --quick.
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
printf '%-6s %-5s %8s %8s %-34s %10s %10s %8s %8s %8s\n' round mode wall_s roof from "STREAM" "STREAM nt" "roof/nt" "copy nt" "roof/cp"
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
ordinary, nt, copy = max(b[0], a[0]), max(b[1], a[1]), max(b[2], a[2])
roof = c["bandwidth_gbs"]
src = c["method"]["bandwidth_gbs"].rsplit(": ", 1)[-1]
print(f"{r:<6} {mode:<5} {wall:>8} {roof:8.1f} {src[:34]:<34} {ordinary:10.1f} {nt:10.1f} {roof / nt:8.2f}"
      f" {copy:8.1f} {roof / copy:8.2f}")
PY
  done
done
echo "(STREAM: the better of the readings just before and just after; nt: with non-temporal stores, which move the 24"
echo " bytes they count, as the roof's streaming copy does; roof/nt within 0.9-1.1 is the goal; copy nt: the same"
echo " machine's non-temporal copy, the kernel the roof most often comes from, for a like-for-like reading)"
