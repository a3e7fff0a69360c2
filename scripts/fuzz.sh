#!/usr/bin/env bash
# Builds the libFuzzer targets (the `fuzz` preset: clang, ASan + UBSan) and runs each one for a bounded
# time on its seed corpus, then prints the executions of each target and the total.
#
#   scripts/fuzz.sh          60 seconds per target (what .ci/run does)
#   scripts/fuzz.sh 600      10 minutes per target
#
# Targets (fuzz/): fuzz_layer_string, fuzz_cost, fuzz_model_json, fuzz_onnx (when built with ONNX); the
# seed corpus of fuzz_<name> is fuzz/corpus/<name>/. New inputs the fuzzer finds go to a scratch folder,
# not into the repository (the corpus stays small; add an input by hand when it is worth keeping).
# Exit 1 when a target finds a crash, leak, timeout or violated property: the input is kept in
# <build>/findings/<target>/ and `<build>/fuzz/<target> FILE` replays it. A finding becomes a test in tests/.
#
# Environment: RIDGELINE_FUZZ_BUILD_DIR (default build/fuzz), RIDGELINE_FUZZ_JOBS (build jobs, default 2),
# RIDGELINE_FUZZ_SEED (libFuzzer's -seed, default 1 so that a CI run is repeatable; 0 picks a random one).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz.sh [seconds per target]" >&2
  exit 2
fi
build="${RIDGELINE_FUZZ_BUILD_DIR:-build/fuzz}"
jobs="${RIDGELINE_FUZZ_JOBS:-2}"
seed="${RIDGELINE_FUZZ_SEED:-1}"

if ! command -v clang++-14 >/dev/null || ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
    clang++-14 -x c++ -fsanitize=fuzzer,address,undefined - -o /dev/null 2>/dev/null; then
  echo "fuzz: clang++-14 with libFuzzer is missing (Debian: clang-14 libclang-rt-14-dev; scripts/setup.sh installs them)" >&2
  exit 1
fi

cmake --preset fuzz -B "$build" >/dev/null
cmake --build "$build" --target fuzzers -j "$jobs"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
total=0
failed=()
summary=()
for bin in "$build"/fuzz/fuzz_*; do
  [[ -x "$bin" ]] || continue
  target="$(basename "$bin")"
  name="${target#fuzz_}"
  corpus="fuzz/corpus/$name"
  scratch="$build/scratch/$target"
  findings="$build/findings/$target"
  rm -rf "$scratch"
  mkdir -p "$scratch" "$findings"
  log="$build/$target.log"
  echo "fuzz: $target for ${seconds} s (corpus $corpus)"
  set +e
  "$bin" "$scratch" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -seed="$seed" \
    -artifact_prefix="$findings/" >"$log" 2>&1
  rc=$?
  set -e
  runs="$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | awk '{print $2}' | tail -1)"
  runs="${runs:-0}"
  total=$((total + runs))
  if [[ $rc -ne 0 ]]; then
    failed+=("$target")
    summary+=("$(printf '%-20s %12s executions  FAILED (exit %d): %s' "$target" "$runs" "$rc" "$log")")
    grep -E 'ERROR|runtime error|ridgeline fuzz|Test unit written|^SUMMARY' "$log" | head -8 >&2 || true
  else
    summary+=("$(printf '%-20s %12s executions  ok' "$target" "$runs")")
  fi
done
rm -rf "$build/scratch"
echo "fuzz: ${seconds} s per target"
printf '%s\n' "${summary[@]}"
echo "fuzz: total executions: $total"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz: findings in: ${failed[*]} (inputs in $build/findings/)" >&2
  exit 1
fi
