#!/usr/bin/env bash
# Golden outputs: every deterministic command in every format, byte for byte. Each output (stdout, then stderr,
# then the exit status) is hashed; the hashes are kept in tests/data/golden/outputs.sha256, so a refactoring that
# must not change behaviour (the ONNX importer, the report record) is checked against what ridgeline printed
# before it. Run from anywhere:
#   scripts/golden-outputs.sh BUILD_DIR            check (exit 1 and the changed outputs listed on a difference)
#   scripts/golden-outputs.sh BUILD_DIR --update   write the hashes anew (after a change meant to alter output)
#   scripts/golden-outputs.sh BUILD_DIR --keep DIR check, and leave every output under DIR (to diff two builds)
# Covered: summary (table, json, csv) of every built-in model, every ONNX fixture and seed and every JSON model seed;
# export of every built-in; compare and predict (table, json, svg, html) of the committed profile reports in
# tests/data/golden/reports (timed once, then fixed inputs). Timing commands are not covered: they measure.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:?usage: scripts/golden-outputs.sh BUILD_DIR [--update | --keep DIR]}" && pwd)"
mode=${2:-check}
keep=${3:-}
manifest="$root/tests/data/golden/outputs.sha256"
[[ -x "$build/ridgeline" ]] || { echo "golden-outputs: $build/ridgeline is missing (build first)" >&2; exit 2; }

work="$(mktemp -d "${TMPDIR:-/tmp}/ridgeline-golden.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/out" "$work/home"
ln -s "$build/ridgeline" "$work/bin/ridgeline"
export PATH="$work/bin:$PATH" HOME="$work/home" XDG_CACHE_HOME="$work/home/cache" LC_ALL=C
unset COLUMNS RIDGELINE_CACHE_DIR || true
cd "$root"  # file arguments are relative to the repository root, as the reports echo them

# run NAME ARGS...: the command's stdout, stderr and exit status in out/NAME; files it writes go under out/
run() {
    local name=$1
    shift
    local rc=0
    (cd "$root" && ridgeline "$@") > "$work/out/$name.stdout" 2> "$work/out/$name.stderr" || rc=$?
    echo "exit $rc" > "$work/out/$name.exit"
}

models=$(ridgeline models --wide | awk 'NR > 2 && NF { print $1 }')  # --wide: one line per model
for m in $models; do
    for f in table json csv; do run "summary.model.$m.$f" summary --model "$m" --format "$f"; done
    run "export.model.$m" export --model "$m"
done
for p in tests/data/onnx/*.onnx fuzz/corpus/onnx/*.onnx; do
    n=$(basename "$(dirname "$p")").$(basename "$p" .onnx)
    for f in table json csv; do run "summary.onnx.$n.$f" summary --onnx "$p" --shapes-only --format "$f"; done
done
for p in fuzz/corpus/model_json/*.json; do
    n=$(basename "$p" .json)
    for f in table json csv; do run "summary.json.$n.$f" summary --model-file "$p" --format "$f"; done
done
reports=tests/data/golden/reports
for f in table json; do
    run "compare.tiny_cnn.$f" compare "$reports/tiny_cnn_t1.json" "$reports/tiny_cnn_t2.json" --format "$f"
    run "predict.tiny_cnn.h100.$f" predict --from "$reports/tiny_cnn_t2.json" --to h100 --format "$f"
    run "predict.tiny_cnn.t4.cold.$f" predict --from "$reports/tiny_cnn_t2.json" --to t4 --cache cold --format "$f"
    run "predict.tiny_cnn.to_profile.$f" predict --from "$reports/tiny_cnn_t1.json" --to "$reports/tiny_cnn_t2.json" --format "$f"
    run "predict.bert_base.h100.$f" predict --from "$reports/bert_base_s16.json" --to h100 --format "$f"
    run "predict.bert_base.xeon.$f" predict --from "$reports/bert_base_s16.json" --to xeon-8480 --format "$f"
done
run "compare.tiny_cnn.charts" compare "$reports/tiny_cnn_t1.json" "$reports/tiny_cnn_t2.json" --quiet \
    --svg "$work/out/compare.tiny_cnn.svg" --html "$work/out/compare.tiny_cnn.html"
run "predict.bert_base.charts" predict --from "$reports/bert_base_s16.json" --to h100 --quiet \
    --svg "$work/out/predict.bert_base.svg" --html "$work/out/predict.bert_base.html"

# the charts name the file they were written to nowhere, but normalise the scratch folder anyway
(cd "$work/out" && sed -i "s|$work|WORK|g" ./* && sha256sum ./* | sed 's|  \./|  |' | LC_ALL=C sort -k2) > "$work/hashes"
[[ -n $keep ]] && { mkdir -p "$keep"; cp "$work/out/"* "$keep/"; }
if [[ $mode == --update ]]; then
    cp "$work/hashes" "$manifest"
    echo "golden-outputs: $(wc -l < "$manifest") outputs hashed into tests/data/golden/outputs.sha256"
    exit 0
fi
[[ -f $manifest ]] || { echo "golden-outputs: $manifest is missing (run with --update once)" >&2; exit 2; }
if ! diff <(awk '{print $2, $1}' "$manifest") <(awk '{print $2, $1}' "$work/hashes") > "$work/diff"; then
    echo "golden-outputs: outputs differ from tests/data/golden/outputs.sha256 (< expected, > now):" >&2
    cat "$work/diff" >&2
    echo "golden-outputs: to see the text, run with '--keep DIR' on this build and on the previous commit's, then diff" >&2
    exit 1
fi
echo "golden-outputs: $(wc -l < "$manifest") outputs identical"
