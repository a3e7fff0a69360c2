#!/usr/bin/env bash
# GPU validation of ridgeline's CUDA backend, in one command and one output folder (issue 4, section 4):
#   1. checks what is there (CUDA toolkit, cuDNN, CMake, compiler, header-only deps, GPU) and says what is missing
#   2. builds (or reuses) a Release build with the CUDA backend, for the GPU's own architecture
#   3. on a machine with an NVIDIA GPU: the `gpu` tests, `ridgeline ceilings --device cuda` (when the
#      command exists), and `ridgeline profile` of resnet50 at batch 1 and 32 in fp32 and bf16 (JSON,
#      table, logs, HTML when --html exists), all into the output folder, with a summary
# Without a GPU it stops after the build and the device-free tests, saying so.
#
#   scripts/gpu-check.sh [--deps DIR] [--build DIR] [--out DIR] [--jobs N] [--arch LIST] [--no-build]
#     --deps DIR   header-only deps packed by scripts/gpu-pack-deps.sh (default: $RIDGELINE_DEPS, else
#                  carry/deps when it exists, else the system's packages)
#     --build DIR  build folder (default build/gpu-check); an existing configured one is reused
#     --out DIR    output folder (default out/gpu-check-<UTC time>)
#     --arch LIST  CMAKE_CUDA_ARCHITECTURES (default: the GPU's compute capability, else "80;90")
#     --no-build   use the build folder as it is
#   RIDGELINE_BUILD_TIMEOUT: seconds the build may take (default 480, for a 16-core machine)
# Exit: 0 all steps passed, 1 a step failed (see the summary), 2 something needed is missing.
# Budget: under 10 minutes on an H100/H200-class machine with 16 cores (each step has a timeout).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

deps="${RIDGELINE_DEPS:-}"
build="build/gpu-check"
out=""
jobs=$(nproc 2>/dev/null || echo 4)
arch=""
do_build=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --deps) deps="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --arch) arch="$2"; shift 2 ;;
    --no-build) do_build=0; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -z "$deps" && -d carry/deps ]] && deps="carry/deps"
[[ -n "$deps" ]] && deps=$(cd "$deps" 2>/dev/null && pwd || echo "$deps")
out="${out:-out/gpu-check-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$out"
out=$(cd "$out" && pwd)
summary="$out/summary.txt"
: > "$summary"
say() { echo "gpu-check: $*" | tee -a "$summary"; }
failures=0
step_result() {  # name rc
  if [[ "$2" -eq 0 ]]; then say "PASS  $1"; else say "FAIL  $1 (exit $2)"; failures=$((failures + 1)); fi
}
start_s=$(date +%s)
say "output folder: $out"

# ------------------------------------------------------------------ 1. what is there
missing=()
cuda_root="${CUDA_HOME:-${CUDA_PATH:-/usr/local/cuda}}"
nvcc="${CUDACXX:-}"
[[ -z "$nvcc" && -x "$cuda_root/bin/nvcc" ]] && nvcc="$cuda_root/bin/nvcc"
[[ -z "$nvcc" ]] && nvcc=$(command -v nvcc || true)
[[ -z "$nvcc" ]] && missing+=("nvcc (the CUDA toolkit; set CUDA_HOME or CUDACXX)")
command -v cmake >/dev/null || missing+=("cmake (3.25 or newer)")
command -v c++ >/dev/null || command -v g++ >/dev/null || missing+=("a C++20 compiler (g++ 12 or newer)")
cudnn_header=""
for d in "${CUDNN_ROOT:-}/include" "$cuda_root/include" /usr/include /usr/include/x86_64-linux-gnu; do
  [[ -f "$d/cudnn_version.h" ]] && { cudnn_header="$d/cudnn_version.h"; break; }
done
[[ -z "$cudnn_header" ]] && missing+=("cuDNN 9 (cudnn_version.h; set CUDNN_ROOT)")
for h in fmt/format.h spdlog/spdlog.h nlohmann/json.hpp CLI/CLI.hpp; do
  if [[ -n "$deps" && -f "$deps/include/$h" ]] || [[ -f "/usr/include/$h" ]]; then continue; fi
  missing+=("$h (run scripts/gpu-pack-deps.sh on a Debian machine with the -dev packages and pass --deps)")
done
if [[ -z "$deps" || ! -f "$deps/src/googletest/CMakeLists.txt" ]] && [[ ! -d /usr/lib/x86_64-linux-gnu/cmake/GTest ]] &&
   [[ ! -d /usr/src/googletest ]]; then
  missing+=("GoogleTest (packed by scripts/gpu-pack-deps.sh, or Debian's libgtest-dev)")
fi
if [[ ${#missing[@]} -gt 0 ]]; then
  for m in "${missing[@]}"; do say "MISSING $m"; done
  exit 2
fi
gpu=0
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then gpu=1; fi
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -a)"
  echo "git: $(git rev-parse --short=12 HEAD 2>/dev/null) $(git status --porcelain 2>/dev/null | wc -l) changed files"
  echo "nvcc: $("$nvcc" --version | tail -1)"
  echo "cuDNN: $(grep -E '#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) ' "$cudnn_header" | awk '{print $3}' | paste -sd.)"
  echo "cmake: $(cmake --version | head -1)"
  echo "compiler: $(c++ --version 2>/dev/null | head -1)"
  echo "deps: ${deps:-system packages}"
  if [[ $gpu -eq 1 ]]; then nvidia-smi; nvidia-smi -q -d CLOCK,MEMORY,ECC,PERFORMANCE 2>/dev/null | head -120; fi
} > "$out/environment.txt" 2>&1
if [[ $gpu -eq 1 ]]; then
  say "GPU: $(nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv,noheader | head -1)"
else
  say "no NVIDIA GPU here (nvidia-smi finds none): build and device-free tests only"
fi

# ------------------------------------------------------------------ 2. build
if [[ -z "$arch" ]]; then
  cc=$([[ $gpu -eq 1 ]] && nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
  arch="${cc:-80;90}"
fi
if [[ $do_build -eq 1 ]]; then
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  # warnings are not errors here: another machine's compiler may warn where CI's does not
  cfg=(-S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DRIDGELINE_CUDA=ON -DRIDGELINE_WERROR=OFF
       "-DCMAKE_CUDA_COMPILER=$nvcc" "-DCMAKE_CUDA_ARCHITECTURES=$arch")
  [[ -n "$deps" ]] && cfg+=("-DCMAKE_PREFIX_PATH=$deps")
  [[ -f "$build/CMakeCache.txt" ]] || cfg+=("${generator[@]}")
  ( cmake "${cfg[@]}" && timeout "${RIDGELINE_BUILD_TIMEOUT:-480}" cmake --build "$build" -j "$jobs" \
      --target ridgeline cuda_tests cuda_gpu_tests ) \
    > "$out/build.log" 2>&1
  rc=$?
  step_result "build ($build, CUDA architectures $arch; log build.log)" $rc
  if [[ $rc -ne 0 ]]; then tail -30 "$out/build.log"; exit 1; fi
fi
bin="$build/ridgeline"
[[ -x "$bin" ]] || { say "MISSING $bin (build first, or drop --no-build)"; exit 2; }
"$bin" --version > "$out/version.txt" 2>&1

# ------------------------------------------------------------------ 3. tests and measurements
( cd "$build" && timeout 120 ctest -L cuda --output-on-failure --output-junit "$out/cuda-tests.xml" ) \
  > "$out/cuda-tests.log" 2>&1
step_result "device-free CUDA tests (cuda-tests.log)" $?
if [[ $gpu -eq 0 ]]; then
  say "no GPU: gpu tests, ceilings and profiles not run"
  say "done in $(( $(date +%s) - start_s )) s; failures: $failures"
  [[ $failures -eq 0 ]] && exit 0 || exit 1
fi

( cd "$build" && timeout 240 ctest -L gpu --output-on-failure --output-junit "$out/gpu-tests.xml" ) > "$out/gpu-tests.log" 2>&1
rc=$?
step_result "gpu tests (gpu-tests.log, gpu-tests.xml)" $rc
grep -E "tests passed|tests failed|\*\*\*Failed|Skipped" "$out/gpu-tests.log" | head -20 | tee -a "$summary"

if "$bin" ceilings --help > /dev/null 2>&1; then
  help=$("$bin" ceilings --help 2>&1)
  args=(ceilings --device cuda)
  grep -q -- "--format" <<<"$help" && args+=(--format json)
  grep -q -- "--output" <<<"$help" && args+=(--output "$out/ceilings.json")
  grep -q -- "--recalibrate" <<<"$help" && args+=(--recalibrate)
  timeout 180 "$bin" "${args[@]}" > "$out/ceilings.txt" 2> "$out/ceilings.log"
  step_result "ridgeline ${args[*]} (ceilings.txt, ceilings.log)" $?
else
  say "SKIP  ridgeline ceilings: this build has no \`ceilings\` command yet"
fi

profile_help=$("$bin" profile --help 2>&1)
for batch in 1 32; do
  for dtype in fp32 bf16; do
    name="resnet50-b${batch}-${dtype}"
    args=(profile --model resnet50 --batch "$batch" --dtype "$dtype" --device cuda --quick --format json
          --output "$out/$name.json")
    grep -q -- "--graph" <<<"$profile_help" && args+=(--graph)
    grep -q -- "--html" <<<"$profile_help" && args+=(--html "$out/$name.html")
    timeout 150 "$bin" "${args[@]}" > "$out/$name.txt" 2> "$out/$name.log"
    step_result "ridgeline ${args[*]} ($name.txt, $name.log)" $?
  done
done

# differential testing beyond the gpu tests' 25 cases per op: 100 per op and data type (docs/reliability.md)
if [[ -x "$build/tests/ridgeline-differential" ]]; then
  timeout 150 "$build/tests/ridgeline-differential" --device cuda --cases 100 --seed 3 > "$out/differential.txt" 2>&1
  step_result "ridgeline-differential --device cuda --cases 100 (differential.txt)" $?
fi

say "done in $(( $(date +%s) - start_s )) s; failures: $failures"
[[ $failures -eq 0 ]] && exit 0 || exit 1
