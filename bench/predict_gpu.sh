#!/usr/bin/env bash
# Predicting GPUs from this CPU's profiles, layer by layer (issue: "predicting a GPU from a CPU profile"): profiles
# BERT-Large (batch 8, sequence 512) and GPT-2 Large (batch 4, sequence 1024) in fp32 here (--quick, no end to end:
# the op-class models of a GPU take only each layer's shapes from the source), predicts each on an H100, an A100
# PCIe 40GB, an L4 and a T4, and prints one block's layers per target (bench/predict_gpu_table.py) with the end to
# end. The constants and their sources: docs/roofline.md, "Predicting another class of device"; the published
# figures these are checked against and what could not be checked: docs/performance.md.
# Usage: bench/predict_gpu.sh [path/to/ridgeline] [output folder]   (about 5 minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/release/ridgeline}
out=${2:-$(mktemp -d)}
mkdir -p "$out"
opts=(--quick --no-end-to-end --no-verify --dtype fp32 --format json --quiet)
[ -s "$out/bert_large.json" ] ||
  "$bin" profile --model bert-large --batch 8 --seq 512 "${opts[@]}" --output "$out/bert_large.json"
[ -s "$out/gpt2_large.json" ] ||
  "$bin" profile --model gpt2-large --batch 4 --seq 1024 "${opts[@]}" --output "$out/gpt2_large.json"
for m in bert_large gpt2_large; do
  for t in h100 a100-pcie-40gb l4 t4; do
    "$bin" predict --from "$out/$m.json" --to "$t" --format json --output "$out/${m}_$t.json" --quiet
  done
  python3 bench/predict_gpu_table.py "$m" "$out"/"${m}"_{h100,a100-pcie-40gb,l4,t4}.json
done
