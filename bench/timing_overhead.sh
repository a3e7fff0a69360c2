#!/usr/bin/env bash
# What the per-sample accounting of other work (docs/timing.md) costs a small layer's median: the same layer
# profiled alternately with the accounting on and off (RIDGELINE_DISTURBANCE=off), N rounds, on one thread.
# Prints each run's median and 95% CI, then the medians of the rounds, and compares the difference with a run's
# own CI and with the run-to-run spread of the same command without the accounting (on a shared machine the
# second is the larger: a run's CI says how well it pinned its own median, not how far the next run lands).
# The figures go to docs/performance.md.
#   bench/timing_overhead.sh [ridgeline binary] [rounds] [layer] [input]
set -euo pipefail
bin=${1:-build/release/ridgeline}
rounds=${2:-5}
layer=${3:-relu}
input=${4:-1x256x14x14}
run() {  # run on|off -> "median ci_low ci_high samples"
  RIDGELINE_DISTURBANCE=$1 "$bin" profile --layer "$layer" --input "$input" --device cpu --threads 1 --no-roofline \
    --no-end-to-end --quiet --format json |
    python3 -c 'import json,sys; t=json.load(sys.stdin)["layers"][0]["time"]; print(t["median_ms"]*1e3, t["ci95_low_ms"]*1e3, t["ci95_high_ms"]*1e3, t["samples"])'
}
on=() off=()
for ((i = 1; i <= rounds; i++)); do
  a=$(run on); b=$(run off)
  echo "round $i: accounting on  median $(cut -d' ' -f1 <<<"$a") us  CI [$(cut -d' ' -f2 <<<"$a"), $(cut -d' ' -f3 <<<"$a")]  samples $(cut -d' ' -f4 <<<"$a")"
  echo "round $i: accounting off median $(cut -d' ' -f1 <<<"$b") us  CI [$(cut -d' ' -f2 <<<"$b"), $(cut -d' ' -f3 <<<"$b")]  samples $(cut -d' ' -f4 <<<"$b")"
  on+=("$a") off+=("$b")
done
python3 - "${on[@]}" -- "${off[@]}" <<'PY'
import statistics, sys
args = sys.argv[1:]; cut = args.index("--")
on = [list(map(float, a.split())) for a in args[:cut]]; off = [list(map(float, a.split())) for a in args[cut + 1:]]
m_on = statistics.median(r[0] for r in on); m_off = statistics.median(r[0] for r in off)
half = statistics.median((r[2] - r[1]) / 2 for r in on)
spread = (max(r[0] for r in off) - min(r[0] for r in off)) / 2
print(f"median of the rounds: on {m_on:.3f} us, off {m_off:.3f} us, difference {m_on - m_off:+.3f} us "
      f"({100 * (m_on - m_off) / m_off:+.1f}%)")
print(f"a run's own CI half-width (on): {half:.3f} us; the same command's run-to-run half-spread (off): {spread:.3f} us")
print(f"the accounting's effect is {'within' if abs(m_on - m_off) <= max(half, spread) else 'OUTSIDE'} the larger of the two")
PY
