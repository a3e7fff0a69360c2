#!/usr/bin/env bash
# Validates `ridgeline predict` on this machine (docs/performance.md, "Predicting another device"): each thread
# count's own measured ceilings are the target, a profile at the other thread count the source.
#   1 -> 2 threads and 2 -> 1 thread, on resnet18 and bert_base (where the rule's constants are fitted:
#   core::memory_exponent, gap_exponent, pass_cache_share) and resnet50 and mobilenet_v2 (held out); and hot -> cold
#   cache at 1 thread on all four.
# For every pair: the median absolute per-layer error of the prediction and of the naive baseline (every layer's
# time scaled by the ratio of its roofs), and the end-to-end error of both, against a real profile at the target.
# Pass: end to end within 10%, per-layer median within 20%, and better than the baseline (on the held-out models).
#
# Each profile is taken in ROUNDS rounds (default 2), interleaved, and merged layer by layer from the round with the
# lowest median; the per-layer difference between rounds is printed as the noise floor.
# Usage: bench/predict.sh [path/to/ridgeline] [output folder]   (about 26 minutes on 2 cores; keep the machine quiet)
# Needs 2 or more CPUs. The folder keeps every profile, ceilings and prediction JSON for a look afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/release/ridgeline}
out=${2:-$(mktemp -d)}
mkdir -p "$out"
models=(resnet18 bert_base resnet50 mobilenet_v2)
# timing only (verification is tested elsewhere and its reference loops are slow at one thread)
opts=(--no-verify --max-time 0.5)
if [ "$(nproc)" -lt 2 ]; then echo "predict.sh: needs 2 CPUs" >&2; exit 2; fi
rounds=${ROUNDS:-2}
for t in 1 2; do
  [ -s "$out/ceilings_t$t.json" ] || "$bin" ceilings --device cpu --threads "$t" --recalibrate --format json --output "$out/ceilings_t$t.json" --quiet
done
# every profile in $rounds rounds, interleaved (the thread counts and the cold runs alternate), merged layer by layer
# from the round with the lowest median (bench/predict_merge.py): this VM's speed has modes minutes apart
for r in $(seq 1 "$rounds"); do
  for m in "${models[@]}"; do
    for t in 1 2; do
      [ -s "$out/${m}_t${t}_r$r.json" ] ||
        "$bin" profile --model "$m" --device cpu --threads "$t" "${opts[@]}" --format json --output "$out/${m}_t${t}_r$r.json" --quiet
    done
    [ -s "$out/${m}_t1_cold_r$r.json" ] ||
      "$bin" profile --model "$m" --device cpu --threads 1 --cache cold "${opts[@]}" --format json --output "$out/${m}_t1_cold_r$r.json" --quiet
  done
done
floor=()
for m in "${models[@]}"; do
  for k in t1 t2 t1_cold; do
    f=$(python3 bench/predict_merge.py "$out/${m}_$k.json" $(for r in $(seq 1 "$rounds"); do echo "$out/${m}_${k}_r$r.json"; done))
    floor+=("$m $k ${f:--}%")
  done
done
pairs=()
for m in "${models[@]}"; do
  "$bin" predict --from "$out/${m}_t1.json" --to "$out/ceilings_t2.json" --format json --output "$out/${m}_1to2.json" --quiet
  "$bin" predict --from "$out/${m}_t2.json" --to "$out/ceilings_t1.json" --format json --output "$out/${m}_2to1.json" --quiet
  pairs+=("$m 1->2 $out/${m}_1to2.json $out/${m}_t2.json" "$m 2->1 $out/${m}_2to1.json $out/${m}_t1.json")
done
for m in "${models[@]}"; do
  "$bin" predict --from "$out/${m}_t1.json" --to "$out/ceilings_t1.json" --cache cold --format json \
    --output "$out/${m}_hot2cold.json" --quiet
  pairs+=("$m hot->cold $out/${m}_hot2cold.json $out/${m}_t1_cold.json")
done
status=0
printf '%s\n' "${pairs[@]}" | python3 bench/predict_score.py || status=$?
echo "the noise floor: per-layer median |difference| between two rounds of the same profile (rounds: $rounds)"
printf '  %s\n' "${floor[@]}"
exit "$status"
