#!/usr/bin/env bash
# ridgeline's fused end to end beside ONNX Runtime's on the same ONNX files, the same threads (issue 30, item 3).
#   bench/ort_parity.sh [ridgeline binary] [rounds] [models...]
# Models: resnet18 resnet50 mobilenet_v2 efficientnet_b0 bert_base (default: all), exported with random weights by
# bench/ort_parity_models.py (Debian's python3-torch, python3-torchvision, python3-onnx) into $RIDGELINE_ORT_DIR/models
# (default build/ort-parity). ONNX Runtime is the npm package onnxruntime-node, installed there with
# `npm install --ignore-scripts` (its CPU build; the install script only fetches CUDA libraries); the version is
# printed. Each round times every model once in each, interleaved (ridgeline, then ONNX Runtime, model by model): this
# VM's neighbours move times by up to 2x from one minute to the next, so the lowest median of the rounds is quoted.
# ridgeline: `profile --onnx F --quick --device cpu --threads T`: its end to end as imported (every layer its own
# kernel) and the fused one (fusion_savings: what `--fuse` runs). ONNX Runtime: bench/ort_time.js (graph
# optimisation 'all', T intra-op threads). T: every CPU this process may use (nproc). The figures go to
# docs/performance.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(realpath "${1:-build/ci/ridgeline}")
rounds=${2:-3}
shift $(( $# > 2 ? 2 : $# ))
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(resnet18 resnet50 mobilenet_v2 efficientnet_b0 bert_base)
dir=${RIDGELINE_ORT_DIR:-build/ort-parity}
mkdir -p "$dir"
dir=$(realpath "$dir")
threads=$(nproc)
if [ ! -d "$dir/node_modules/onnxruntime-node" ]; then
  (cd "$dir" && npm install --ignore-scripts --no-audit --no-fund onnxruntime-node@1.31.1 >/dev/null)
fi
/usr/bin/python3 "$here/ort_parity_models.py" "$dir/models" "${models[@]}"
input_of() { case "$1" in bert_base) echo int64:1x128 ;; *) echo float32:1x3x224x224 ;; esac; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "ridgeline $("$bin" --version | head -1); onnxruntime-node $(node -p "require('$dir/node_modules/onnxruntime-node/package.json').version"); $threads threads; $(lscpu | sed -n 's/^Model name: *//p')"
for ((i = 1; i <= rounds; i++)); do
  for m in "${models[@]}"; do
    "$bin" profile --onnx "$dir/models/$m.onnx" --quick --no-verify --no-roofline --device cpu --threads "$threads" \
      --quiet --format json --output "$out/$m.$i.json" >/dev/null
    NODE_PATH="$dir/node_modules" node "$here/ort_time.js" "$dir/models/$m.onnx" "$(input_of "$m")" "$threads" \
      >"$out/$m.$i.ort.json"
    python3 - "$out" "$m" "$i" <<'PY'
import json, os, sys
out, m, i = sys.argv[1:]
j = json.load(open(os.path.join(out, f"{m}.{i}.json"))); o = json.load(open(os.path.join(out, f"{m}.{i}.ort.json")))
e, f = j["end_to_end"], j["fusion_savings"]["end_to_end"]
plain, fused = e["time"]["median_ms"], f["time"]["median_ms"]
flag = lambda x: "" if x["state"] == "measured" else "!"  # !: ridgeline says other work disturbed the pass
print(f"round {i} {m:<16} ridgeline {plain:8.3f} ms{flag(e)}, fused {fused:8.3f} ms{flag(f)}; ONNX Runtime "
      f"{o['median_ms']:8.3f} ms ({o['samples']} runs); fused / ORT {fused / o['median_ms']:.2f}x", flush=True)
PY
  done
done
python3 - "$out" "${models[@]}" <<'PY'
import glob, json, os, sys
out, models = sys.argv[1], sys.argv[2:]
print("lowest median of the rounds (fused / ORT: below 1 is faster than ONNX Runtime; rounds ridgeline marked "
      "disturbed are left out where a clean one exists):")
for m in models:
    runs = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(out, m + ".[0-9]*.json"))) if not p.endswith(".ort.json")]
    orts = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(out, m + ".*.ort.json")))]
    def lowest(get):
        clean = [get(r)["time"]["median_ms"] for r in runs if get(r)["state"] == "measured"]
        return min(clean) if clean else min(get(r)["time"]["median_ms"] for r in runs)
    plain = lowest(lambda r: r["end_to_end"])
    fused = lowest(lambda r: r["fusion_savings"]["end_to_end"])
    ort = min(o["median_ms"] for o in orts)
    print(f"  {m:<16} ridgeline {plain:8.3f} ms, fused {fused:8.3f} ms; ONNX Runtime {ort:8.3f} ms; "
          f"fused / ORT {fused / ort:.2f}x, as imported / ORT {plain / ort:.2f}x")
PY
