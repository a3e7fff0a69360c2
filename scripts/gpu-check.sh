#!/usr/bin/env bash
# GPU validation of ridgeline's CUDA backend, in one command, one output folder and one deadline:
#   1. checks what is there (CUDA toolkit, cuDNN, CMake, compiler, header-only deps, GPU) and says what is missing
#   2. reuses a carried build whose binary runs (built elsewhere against the same CUDA), else builds one
#   3. on a machine with an NVIDIA GPU, in priority order, as long as the deadline allows:
#        ceilings (the GEMM roofs per data type and the DRAM copy bandwidth), PyTorch's bf16 matmul and copy beside
#        them (bench/torch_anchor.py), scale_shift (batch_norm2d), relu and add in bf16 on 32x256x56x56 against a
#        copy of the same bytes, resnet50 batch 1 bf16 --quick, the gpu tests, resnet50 at batch 32, a decode
#        step, the prediction of this GPU from a CPU profile, resnet50 fused (--fuse), resnet50 in fp32, the
#        differential tests of every op; a step the deadline cannot fit is SKIPPED
#        with the reason, and the summary (a table, and summary.json) lists every step.
# Without a GPU it stops after the build and the device-free tests, saying so.
#
#   scripts/gpu-check.sh [--deps DIR] [--build DIR] [--out DIR] [--jobs N] [--arch LIST] [--no-build]
#                        [--deadline S] [--dry-run]
#     --deps DIR     header-only deps packed by scripts/gpu-pack-deps.sh (default: $RIDGELINE_DEPS, else
#                    carry/deps when it exists, else the system's packages)
#     --build DIR    build folder (default build/gpu-check); one whose ridgeline binary runs is used as it is
#     --out DIR      output folder (default out/gpu-check-<UTC time>; where $OUT is set, the device tool's folder
#                    that comes back, a folder under $TMPDIR, packed into $OUT after every step: see below)
#     --arch LIST    CMAKE_CUDA_ARCHITECTURES (default: the GPU's compute capability, else "80;90")
#     --no-build     use the build folder as it is, never build
#     --deadline S   seconds for the whole script, configure and build included (default 520: the GPU machine
#                    we borrow allows 600 s per command; give the command a timeout of 540 s); each step's timeout
#                    is what is left of it
#     --dry-run      no GPU, no build, no binary needed: every step's host-side logic (deadline, arguments,
#                    skipping, the summary) runs, each step's command is written to its log instead of run, and
#                    each step is charged the least time it needs (which steps a deadline fits at best)
# Exit: 0 every step that ran passed, 1 a step failed (see the summary), 2 something needed is missing.
#
# Where $OUT is set (the device tool returns only what lies under it: at most 8 files, 2 folders down), after
# every step the output folder is packed into $OUT/gpu-check.tar.gz and the summary copied beside it
# ($OUT/summary.txt, $OUT/summary.json): a command killed at its limit keeps every step it finished.
# Libraries: cuDNN, cuBLAS and the CUDA runtime are looked for in the toolkit ($CUDA_HOME/lib64) and in python3's
# pip wheels (nvidia-cudnn-cu13 and its kin: site-packages/nvidia/<name>/lib, where PyTorch's machines have
# cuDNN); their folders go on LD_LIBRARY_PATH for every step, the carried binary's `--version` check included,
# and `ldd` of the binary (ldd.txt) says which library each name resolved to.
# A carried build (scripts/gpu-carry.sh: built on a Debian machine against header-only fmt and spdlog) is used
# with --build carry/gpu-bin: its gtest binaries run directly (a carried CTestTestfile holds another machine's
# paths).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

deps="${RIDGELINE_DEPS:-}"
build="build/gpu-check"
out=""
jobs=$(nproc 2>/dev/null || echo 4)
arch=""
do_build=1
deadline=520
dry=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --deps) deps="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --arch) arch="$2"; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --deadline) deadline="$2"; shift 2 ;;
    --dry-run) dry=1; shift ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
if ! [[ "$deadline" =~ ^[0-9]+$ ]] || [[ "$deadline" -lt 1 ]]; then
  echo "gpu-check: --deadline must be a whole number of seconds >= 1, got \"$deadline\"" >&2
  exit 2
fi
[[ -z "$deps" && -d carry/deps ]] && deps="carry/deps"
[[ -n "$deps" ]] && deps=$(cd "$deps" 2>/dev/null && pwd || echo "$deps")
stamp=$(date -u +%Y%m%dT%H%M%SZ)
pack=""  # where the packed output goes after every step: $OUT, when set
if [[ -n "${OUT:-}" ]]; then
  mkdir -p "$OUT" || exit 2
  pack=$(cd "$OUT" && pwd)
  out="${out:-${TMPDIR:-/tmp}/gpu-check-$stamp}"
fi
out="${out:-out/gpu-check-$stamp}"
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
summary="$out/summary.txt"
: > "$summary"
say() { echo "gpu-check: $*" | tee -a "$summary"; }
start_s=$(date +%s)
dry_s=0  # a dry run charges each step the least time it needs, so that the deadline's skipping is exercised
# a dry run's clock is that charge alone (its own wall time, a fraction of a second, would make it depend on the
# machine's speed); a real run's is the wall clock
elapsed() { if [[ $dry -eq 1 ]]; then echo "$dry_s"; else echo $(( $(date +%s) - start_s )); fi; }
left() { echo $(( deadline - $(elapsed) )); }
say "output folder: $out; deadline ${deadline} s$([[ $dry -eq 1 ]] && echo '; DRY RUN: commands are printed, not run')"

# every step's row: name, status (PASS, FAIL, SKIPPED, DRY), seconds, note
rows_name=(); rows_status=(); rows_s=(); rows_note=()
record() {  # name status seconds note
  rows_name+=("$1"); rows_status+=("$2"); rows_s+=("$3"); rows_note+=("$4")
  say "$(printf '%-8s %s (%s s)%s' "$2" "$1" "$3" "${4:+: $4}")"
  write_summary_json "${exit_code:-null}"
  pack_out
}
failures=0
json_escape() { local s=${1//\\/\\\\}; s=${s//\"/\\\"}; s=${s//$'\t'/ }; s=${s//$'\n'/ }; printf '%s' "$s"; }
# $OUT/gpu-check.tar.gz (the whole output folder) and the summary beside it, replaced whole after every step
pack_out() {
  [[ -n "$pack" ]] || return 0
  tar -czf "$pack/.gpu-check.tar.gz.part" -C "$(dirname "$out")" "$(basename "$out")" 2>/dev/null &&
    mv -f "$pack/.gpu-check.tar.gz.part" "$pack/gpu-check.tar.gz"
  cp -f "$summary" "$pack/summary.txt" 2>/dev/null
  [[ -f "$out/summary.json" ]] && cp -f "$out/summary.json" "$pack/summary.json"
  return 0
}
write_summary_json() {  # exit code, or null while the script runs
  local code=$1 i
  {
    printf '{\n  "schema": "ridgeline.gpu_check/1",\n  "deadline_s": %d,\n  "elapsed_s": %d,\n' "$deadline" "$(elapsed)"
    printf '  "dry_run": %s,\n  "gpu": %s,\n  "exit_code": %s,\n  "steps": [' \
      "$([[ $dry -eq 1 ]] && echo true || echo false)" "$([[ ${gpu:-0} -eq 1 ]] && echo true || echo false)" "$code"
    for i in "${!rows_name[@]}"; do
      printf '%s\n    {"name": "%s", "status": "%s", "seconds": %d, "note": "%s"}' "$([[ $i -gt 0 ]] && echo ,)" \
        "$(json_escape "${rows_name[$i]}")" "${rows_status[$i]}" "${rows_s[$i]}" "$(json_escape "${rows_note[$i]}")"
    done
    printf '\n  ]\n}\n'
  } > "$out/summary.json"
}
finish() {  # exit code
  local code=$1 i
  write_summary_json "$code"
  {
    echo
    printf '%-8s %6s  %s\n' status seconds step
    for i in "${!rows_name[@]}"; do
      printf '%-8s %6s  %s%s\n' "${rows_status[$i]}" "${rows_s[$i]}" "${rows_name[$i]}" "${rows_note[$i]:+ (${rows_note[$i]})}"
    done
  } | tee -a "$summary"
  say "done in $(elapsed) s of ${deadline}; failures: $failures; summary.json beside this summary"
  pack_out
  exit "$code"
}

# run_step NAME MIN_S MAX_S LOG -- COMMAND...: runs COMMAND with the timeout min(MAX_S, time left), its output in
# $out/LOG; SKIPPED (with the reason) when less than MIN_S is left. The step's exit code is in $step_rc.
step_rc=0
run_step() {
  local name=$1 min_s=$2 max_s=$3 log=$4; shift 5
  local l; l=$(left)
  if [[ $l -lt $min_s ]]; then
    record "$name" SKIPPED 0 "the deadline leaves ${l} s, the step needs at least ${min_s} s"
    step_rc=124
    return
  fi
  local t=$(( l < max_s ? l : max_s )) s0; s0=$(date +%s)
  if [[ $dry -eq 1 ]]; then
    printf 'timeout %s' "$t" > "$out/$log"; printf ' %q' "$@" >> "$out/$log"; echo >> "$out/$log"
    record "$name" DRY "$min_s" "timeout ${t} s; $log"
    dry_s=$(( dry_s + min_s ))
    step_rc=0
    return
  fi
  timeout "$t" "$@" > "$out/$log" 2>&1
  step_rc=$?
  local took=$(( $(date +%s) - s0 ))
  if [[ $step_rc -eq 0 ]]; then
    record "$name" PASS "$took" "$log"
  elif [[ $step_rc -eq 124 ]]; then
    record "$name" FAIL "$took" "timed out after ${t} s; $log"; failures=$((failures + 1))
  else
    record "$name" FAIL "$took" "exit ${step_rc}; $log"; failures=$((failures + 1))
  fi
}

# ------------------------------------------------------------------ 1. what is there
missing=()
cuda_root="${CUDA_HOME:-${CUDA_PATH:-/usr/local/cuda}}"
nvcc="${CUDACXX:-}"
[[ -z "$nvcc" && -x "$cuda_root/bin/nvcc" ]] && nvcc="$cuda_root/bin/nvcc"
[[ -z "$nvcc" ]] && nvcc=$(command -v nvcc || true)
# pip wheels' library folders (nvidia.<name> is a namespace package in some wheels: its __path__, not __file__)
wheel_dir() { command -v python3 >/dev/null && python3 -c "import nvidia.$1 as m; print(list(m.__path__)[0])" 2>/dev/null; }
cudnn_wheel=$(wheel_dir cudnn || true)
[[ -n "$cudnn_wheel" && -d "$cudnn_wheel/lib" ]] || cudnn_wheel=""
lib_dirs=()
[[ -n "$cudnn_wheel" ]] && lib_dirs+=("$cudnn_wheel/lib")
# CUDA 12's wheels put each library under nvidia/<name>/lib, CUDA 13's under nvidia/cu13/lib
for d in "$cuda_root/lib64" "$cuda_root/targets/x86_64-linux/lib" "$(wheel_dir cublas)/lib" "$(wheel_dir cuda_runtime)/lib" \
         "$(wheel_dir cu13)/lib"; do
  [[ -d "$d" && "$d" != /lib ]] && lib_dirs+=("$d")
done
if [[ ${#lib_dirs[@]} -gt 0 ]]; then
  LD_LIBRARY_PATH="$(IFS=:; echo "${lib_dirs[*]}")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export LD_LIBRARY_PATH
fi
gpu=0
if [[ $dry -eq 0 ]]; then
  [[ -z "$nvcc" ]] && missing+=("nvcc (the CUDA toolkit; set CUDA_HOME or CUDACXX)")
  command -v cmake >/dev/null || missing+=("cmake (3.25 or newer)")
  command -v c++ >/dev/null || command -v g++ >/dev/null || missing+=("a C++20 compiler (g++ 12 or newer)")
  cudnn_header=""
  for d in "${CUDNN_ROOT:-}/include" ${cudnn_wheel:+"$cudnn_wheel/include"} "$cuda_root/include" /usr/include \
           /usr/include/x86_64-linux-gnu; do
    [[ -f "$d/cudnn_version.h" ]] && { cudnn_header="$d/cudnn_version.h"; break; }
  done
  # a carried binary needs only the library; a build needs the header too
  cudnn_lib=$(for d in "${lib_dirs[@]}" /usr/lib/x86_64-linux-gnu; do ls "$d"/libcudnn.so.9 2>/dev/null; done | head -1)
  [[ -z "$cudnn_header" && -z "$cudnn_lib" ]] && missing+=("cuDNN 9 (libcudnn.so.9 and cudnn_version.h; set CUDNN_ROOT, or pip install nvidia-cudnn-cu13)")
  for h in fmt/format.h spdlog/spdlog.h nlohmann/json.hpp CLI/CLI.hpp; do
    if [[ -n "$deps" && -f "$deps/include/$h" ]] || [[ -f "/usr/include/$h" ]]; then continue; fi
    missing+=("$h (run scripts/gpu-pack-deps.sh on a Debian machine with the -dev packages and pass --deps)")
  done
  if [[ -z "$deps" || ! -f "$deps/src/googletest/CMakeLists.txt" ]] && [[ ! -d /usr/lib/x86_64-linux-gnu/cmake/GTest ]] &&
     [[ ! -d /usr/src/googletest ]]; then
    missing+=("GoogleTest (packed by scripts/gpu-pack-deps.sh, or Debian's libgtest-dev)")
  fi
  if [[ ${#missing[@]} -gt 0 ]]; then
    for m in "${missing[@]}"; do record "requirements" MISSING 0 "$m"; done
    finish 2
  fi
  if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then gpu=1; fi
  {
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(uname -a)"
    echo "git: $(git rev-parse --short=12 HEAD 2>/dev/null) $(git status --porcelain 2>/dev/null | wc -l) changed files"
    echo "nvcc: $("$nvcc" --version | tail -1)"
    echo "cuDNN: ${cudnn_header:+$(grep -E '#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) ' "$cudnn_header" | awk '{print $3}' | paste -sd.) }${cudnn_lib:-no libcudnn.so.9 found}${cudnn_wheel:+ (pip wheel $cudnn_wheel)}"
    echo "LD_LIBRARY_PATH: ${LD_LIBRARY_PATH:-}"
    echo "cmake: $(cmake --version | head -1)"
    echo "compiler: $(c++ --version 2>/dev/null | head -1)"
    echo "deps: ${deps:-system packages}"
    if [[ $gpu -eq 1 ]]; then
      timeout 20 nvidia-smi; timeout 20 nvidia-smi -q -d CLOCK,MEMORY,ECC,PERFORMANCE,POWER,TEMPERATURE 2>/dev/null | head -200
    fi
  } > "$out/environment.txt" 2>&1
  if [[ $gpu -eq 1 ]]; then
    say "GPU: $(nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv,noheader | head -1)"
  else
    say "no NVIDIA GPU here (nvidia-smi finds none): build and device-free tests only"
  fi
else
  gpu=1  # the dry run walks the GPU path
fi

# ------------------------------------------------------------------ 2. a binary: carried, else built
bin="$build/ridgeline"
# which file each library name resolves to, with this script's LD_LIBRARY_PATH ("not found" names what is missing)
[[ $dry -eq 0 && -x "$bin" ]] && ldd "$bin" > "$out/ldd.txt" 2>&1
why_not=""
if [[ $dry -eq 0 && -x "$bin" ]]; then
  if timeout 20 "$bin" --version > "$out/version.txt" 2>&1; then
    record "build" PASS 0 "reused $bin (it runs here: $(head -1 "$out/version.txt"))"
  else
    why_not="$bin does not run here: $(grep -m1 -E 'not found|error' "$out/ldd.txt" "$out/version.txt" 2>/dev/null | head -1)"
  fi
else
  why_not="no $bin"
fi
if [[ -z "$why_not" ]]; then
  :
elif [[ $do_build -eq 0 && $dry -eq 0 ]]; then
  record "build" MISSING 0 "$why_not, and --no-build was given"
  finish 2
else
  [[ $dry -eq 0 ]] && say "building: $why_not"
  if [[ -z "$arch" ]]; then
    cc=$([[ $gpu -eq 1 && $dry -eq 0 ]] && nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
    arch="${cc:-80;90}"
  fi
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  # warnings are not errors here: another machine's compiler may warn where CI's does not
  # no oneDNN, no ONNX: a GPU machine has neither (no Debian -dev packages; a missing oneDNN is a configure error)
  cfg=(-S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DRIDGELINE_CUDA=ON -DRIDGELINE_DNNL=OFF -DRIDGELINE_ONNX=OFF
       -DRIDGELINE_WERROR=OFF "-DCMAKE_CUDA_COMPILER=${nvcc:-nvcc}" "-DCMAKE_CUDA_ARCHITECTURES=$arch")
  [[ -n "$cudnn_wheel" ]] && cfg+=("-DCUDNN_ROOT=$cudnn_wheel")
  [[ -n "$deps" ]] && cfg+=("-DCMAKE_PREFIX_PATH=$deps")
  [[ -f "$build/CMakeCache.txt" ]] || cfg+=("${generator[@]}")
  run_step "configure ($build, CUDA architectures $arch)" 30 120 configure.log -- cmake "${cfg[@]}"
  if [[ $step_rc -eq 0 ]]; then
    # what the measurements need first; the test binaries after, as far as the deadline goes
    run_step "build ridgeline" 60 100000 build.log -- \
      cmake --build "$build" -j "$jobs" --target ridgeline cuda_tests cuda_index_math_tests cuda_gpu_tests \
      ridgeline-differential
  fi
  if [[ $step_rc -ne 0 ]]; then
    [[ -f "$out/build.log" ]] && tail -30 "$out/build.log"
    finish 1
  fi
  [[ $dry -eq 0 ]] && { "$bin" --version > "$out/version.txt" 2>&1; ldd "$bin" > "$out/ldd.txt" 2>&1; }
fi

# ------------------------------------------------------------------ 3. tests and measurements, in priority order
# the gtest binaries run directly (a carried build's CTestTestfile.cmake holds the paths of the machine that built
# it), each one whatever the one before did; XML reports in $out/xml/
run_step "device-free CUDA tests (cuda_tests, cuda_index_math_tests)" 10 120 cuda-tests.log -- \
  bash -c 'rc=0; for t; do "$t" --gtest_output="xml:'"$out"'/xml/" || rc=1; done; exit $rc' gtests \
  "$build/tests/cuda_tests" "$build/tests/cuda_index_math_tests"
if [[ $gpu -eq 0 ]]; then
  say "no GPU: ceilings, profiles and gpu tests not run"
  finish $([[ $failures -eq 0 ]] && echo 0 || echo 1)
fi

# 3a. the roofs: GEMM peaks per data type, the DRAM copy bandwidth, launch overhead
run_step "ceilings --device cuda (GEMM roofs, DRAM copy)" 60 180 ceilings.log -- \
  "$bin" ceilings --device cuda --format json --output "$out/ceilings.json" --recalibrate
# 3a'. the anchors: what PyTorch on this machine attains (bf16 8192^3 matmul, a 4 GiB copy) beside the ceilings
run_step "PyTorch anchors (bf16 matmul, copy)" 20 90 torch-anchor.log -- \
  python3 bench/torch_anchor.py --output "$out/torch-anchor.json"
# 3b. streaming layers in bf16 on 32x256x56x56 (51 MB each way): scale_shift (inference batch_norm2d), relu, add;
# their GB/s beside the device copy's (bar: 80%)
run_step "scale_shift bf16 32x256x56x56 vs copy" 20 60 scale-shift.log -- \
  "$bin" profile --layer "batch_norm2d:num_features=256" --input 32x256x56x56 --dtype bf16 --device cuda \
  --quick --format json --output "$out/scale-shift.json"
run_step "relu bf16 32x256x56x56 vs copy" 15 60 relu.log -- \
  "$bin" profile --layer relu --input 32x256x56x56 --dtype bf16 --device cuda --quick --format json \
  --output "$out/relu.json"
run_step "add bf16 32x256x56x56 vs copy" 15 60 add.log -- \
  "$bin" profile --layer add --input 32x256x56x56 --input 32x256x56x56 --dtype bf16 --device cuda --quick \
  --format json --output "$out/add.json"
# 3c. one whole model
if [[ $dry -eq 0 && -f "$out/ceilings.json" ]] && command -v python3 >/dev/null; then
  python3 - "$out" <<'PY' 2>&1 | tee -a "$summary"
import json, os, sys
out = sys.argv[1]
def load(name):
    p = os.path.join(out, name)
    return json.load(open(p)) if os.path.exists(p) else None
ceilings = load("ceilings.json")
# the bar is the driver's device-to-device copy (cudaMemcpyAsync); ridgeline's STREAM copy where that is missing
copy, name = ceilings.get("device_copy_gbs"), "the device copy (cudaMemcpyAsync)"
if not copy:
    copy, name = ceilings.get("copy_gbs"), "ridgeline's STREAM copy"
for label, f in (("scale_shift", "scale-shift.json"), ("relu", "relu.json"), ("add", "add.json")):
    j = load(f)
    layer = next((l for l in j["layers"] if l.get("time")), None) if j else None
    gbs = layer.get("achieved_gbs") if layer else None
    if copy and gbs:
        print(f"gpu-check: {label} bf16 {gbs:.0f} GB/s = {100 * gbs / copy:.0f}% of {name} {copy:.0f} GB/s (bar: 80%)")
anchor = load("torch-anchor.json")
if anchor:
    gemm = ceilings.get("gemm_gflops", {}).get("bf16")
    t = anchor["bf16_matmul"]["tflops_best"]
    print(f"gpu-check: bf16 8192^3 matmul: PyTorch {t:.0f} TFLOP/s, ridgeline's GEMM roof "
          f"{gemm / 1e3 if gemm else float('nan'):.0f} TFLOP/s (expect 780-850 on an H100/H200)")
    print(f"gpu-check: large copy: PyTorch {anchor['copy']['tbs_best']:.2f} TB/s, ridgeline's device copy "
          f"{(ceilings.get('device_copy_gbs') or 0) / 1e3:.2f} TB/s, DRAM roof {ceilings.get('bandwidth_gbs', 0) / 1e3:.2f} TB/s")
PY
fi
profile_step() {  # batch dtype min_s max_s
  local name="resnet50-b$1-$2"
  run_step "profile resnet50 batch $1 $2 --quick" "$3" "$4" "$name.log" -- \
    "$bin" profile --model resnet50 --batch "$1" --dtype "$2" --device cuda --quick --graph --format json \
    --output "$out/$name.json" --html "$out/$name.html"
}
profile_step 1 bf16 45 150
# 3d. the rest, as far as the deadline goes
run_step "gpu tests (cuda_gpu_tests)" 60 240 gpu-tests.log -- "$build/tests/cuda_gpu_tests" --gtest_output="xml:$out/xml/"
[[ $dry -eq 0 && -f "$out/gpu-tests.log" ]] && grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$out/gpu-tests.log" | head -30 | tee -a "$summary"
profile_step 32 bf16 60 150
# a decoder LLM's decode step: one new token per sequence over a KV cache of 1,024 tokens, batch 4 (GEMV-shaped)
run_step "profile tinyllama-1.1b decode bf16 --quick" 45 150 decode.log -- \
  "$bin" profile --model tinyllama-1.1b --phase decode --kv-len 1024 --batch 4 --dtype bf16 --device cuda --quick \
  --format json --output "$out/decode-bf16.json"
# predicting this GPU from a CPU profile (carried: scripts/gpu-carry.sh writes it), then the prediction against
# what was measured here (compare: each layer's predicted and measured time, and how far apart)
cpu_profile="$build/cpu-resnet50-b1-bf16.json"
if [[ $dry -eq 1 || ( -f "$cpu_profile" && -f "$out/ceilings.json" && -f "$out/resnet50-b1-bf16.json" ) ]]; then
  run_step "predict resnet50 b1 bf16 from the CPU profile" 10 60 predict.log -- \
    "$bin" predict --from "$cpu_profile" --to "$out/ceilings.json" --format json --output "$out/predict.json"
  run_step "compare the prediction with the measured run" 10 60 predict-vs-measured.log -- \
    "$bin" compare "$out/predict.json" "$out/resnet50-b1-bf16.json"
else
  why="no $cpu_profile (scripts/gpu-carry.sh writes it)"
  [[ -f "$cpu_profile" ]] && why="no measured ceilings.json or resnet50-b1-bf16.json to predict from and compare with"
  record "predict resnet50 b1 bf16 from the CPU profile" SKIPPED 0 "$why"
fi
# the model fused as a deployment runs it (--fuse: cuDNN's fused convolution + bias + activation and residual add,
# cuBLASLt's epilogues; every group verified against the reference run of its members), beside the unfused run above
run_step "profile resnet50 batch 32 bf16 --fuse" 45 150 resnet50-b32-bf16-fused.log -- \
  "$bin" profile --model resnet50 --batch 32 --dtype bf16 --device cuda --quick --graph --fuse --format json \
  --output "$out/resnet50-b32-bf16-fused.json"
profile_step 1 fp32 45 150
profile_step 32 fp32 60 150
# differential testing beyond the gpu tests' 25 cases per op: 100 per op and data type (docs/reliability.md)
run_step "ridgeline-differential --device cuda --cases 100" 30 150 differential.log -- \
  "$build/tests/ridgeline-differential" --device cuda --cases 100 --seed 3

finish $([[ $failures -eq 0 ]] && echo 0 || echo 1)
