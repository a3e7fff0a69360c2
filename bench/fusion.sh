#!/usr/bin/env bash
# The end to end of a model as profiled (every layer its own kernel) and as a deployment fuses it (--fuse: batch norms
# folded, residual adds and activations as post-ops), from one `profile` run each round: its end to end, then the
# fused model's (the report's fusion_savings), back to back on the same warm machine. N rounds per model, the models
# interleaved; prints each round, then the lowest median of each (this VM's neighbours move times by up to 2x from one
# minute to the next: the lowest is the least disturbed). Also the sum of the groups' members' medians and of the
# groups fused. The figures go to docs/performance.md.
#   bench/fusion.sh [ridgeline binary] [rounds] [models...]
set -euo pipefail
bin=${1:-build/ci/ridgeline}
rounds=${2:-3}
shift $(( $# > 2 ? 2 : $# ))
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(resnet18 resnet50 mobilenet_v2)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for ((i = 1; i <= rounds; i++)); do
  for m in "${models[@]}"; do
    "$bin" profile --model "$m" --quick --no-verify --no-roofline --device cpu --quiet --format json \
      --output "$out/$m.$i.json" >/dev/null
    python3 - "$out/$m.$i.json" "$m" "$i" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); f = j["fusion_savings"]
plain = j["end_to_end"]["time"]["median_ms"]; fused = f["end_to_end"]["time"]["median_ms"]
groups = [g for g in f["groups"] if g["fused_ms"] is not None and g["members_ms"] is not None]
members = sum(g["members_ms"] for g in groups); fused_groups = sum(g["fused_ms"] for g in groups)
print(f"round {sys.argv[3]} {sys.argv[2]:<13} end to end {plain:8.3f} ms, fused {fused:8.3f} ms ({100 * (fused / plain - 1):+5.1f}%)"
      f"  {len(groups)} groups: members {members:8.3f} ms, fused {fused_groups:8.3f} ms")
PY
  done
done
python3 - "$out" "${models[@]}" <<'PY'
import glob, json, os, sys
out, models = sys.argv[1], sys.argv[2:]
print("lowest median of the rounds:")
for m in models:
    runs = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(out, m + ".*.json")))]
    plain = min(r["end_to_end"]["time"]["median_ms"] for r in runs)
    fused = min(r["fusion_savings"]["end_to_end"]["time"]["median_ms"] for r in runs)
    print(f"  {m:<13} end to end {plain:8.3f} ms, fused {fused:8.3f} ms ({100 * (fused / plain - 1):+5.1f}%)")
PY
