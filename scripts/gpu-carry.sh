#!/usr/bin/env bash
# Builds, on this Debian machine, the binaries scripts/gpu-check.sh runs on a GPU machine that has the CUDA toolkit
# and PyTorch's cuDNN wheel but no Debian -dev packages, no oneDNN and no network, and packs them into one folder to
# carry there (a build there would spend minutes of a borrowed GPU's time):
#
#   scripts/gpu-carry.sh [DIR] [--arch LIST]     default DIR: carry/gpu-bin (git-ignored), LIST: 90 (H100, H200)
#
# DIR gets ridgeline and tests/{cuda_tests,cuda_index_math_tests,cuda_gpu_tests,ridgeline-differential}, built
# without oneDNN and ONNX against header-only fmt and spdlog (scripts/gpu-pack-deps.sh into carry/deps, which a
# build there would need too), BUILD.txt (commit, toolkit, cuDNN, architectures, what each binary needs) and
# cpu-resnet50-b1-bf16.json, a profile on this machine's CPU by build/ci/ridgeline (the oneDNN build; left out
# where it is missing), from which gpu-check.sh predicts the GPU and compares the prediction with its run. It
# fails where a binary needs a shared library other than CUDA's runtime, cuBLAS(Lt), cuDNN, the C and C++ runtimes,
# libgomp and zlib (`ldd`), or where the folder is over 48 MiB (the device tool carries 64 MiB in all). Then, there:
#   scripts/gpu-check.sh --build carry/gpu-bin --deps carry/deps
set -euo pipefail
cd "$(dirname "$0")/.."
dest="carry/gpu-bin"
arch="90"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --arch) arch="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    -*) echo "gpu-carry: unknown argument $1 (see --help)" >&2; exit 2 ;;
    *) dest="$1"; shift ;;
  esac
done
build="build/gpu-carry"
[[ -f carry/deps/lib/cmake/fmt/fmtConfig.cmake ]] || scripts/gpu-pack-deps.sh carry/deps
generator=()
command -v ninja >/dev/null && [[ ! -f "$build/CMakeCache.txt" ]] && generator=(-G Ninja)
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DRIDGELINE_CUDA=ON -DRIDGELINE_DNNL=OFF \
  -DRIDGELINE_ONNX=OFF -DRIDGELINE_WERROR=OFF "-DCMAKE_CUDA_ARCHITECTURES=$arch" "-DCMAKE_PREFIX_PATH=$PWD/carry/deps" \
  > /dev/null
targets=(ridgeline cuda_tests cuda_index_math_tests cuda_gpu_tests ridgeline-differential)
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"

rm -rf "$dest"
mkdir -p "$dest/tests"
cp "$build/ridgeline" "$dest/"
for t in "${targets[@]:1}"; do cp "$build/tests/$t" "$dest/tests/"; done
# what a GPU machine must have: CUDA's libraries and cuDNN's, and what every Linux has
allowed='^(linux-vdso|ld-linux-x86-64|libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+|libgomp|libz|libcudart|libcublas|libcublasLt|libcudnn)\.so'
bad=()
{
  echo "ridgeline $(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD || echo ' (with uncommitted changes)'), built $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvcc=$(sed -n 's/^set(CMAKE_CUDA_COMPILER "\(.*\)")$/\1/p' "$build"/CMakeFiles/*/CMakeCUDACompiler.cmake | head -1)
  echo "CUDA architectures $arch; nvcc ${nvcc:-?}: $([[ -x $nvcc ]] && "$nvcc" --version | tail -1)"
  echo "$(grep -m1 '^CUDNN_LIBRARY:' "$build/CMakeCache.txt")"
  for b in "$dest/ridgeline" "$dest"/tests/*; do
    echo "== ${b#$dest/}: $(stat -c %s "$b") bytes; needs:"
    for lib in $(ldd "$b" | awk '{print $1}'); do
      echo "  $lib"
      [[ $(basename "$lib") =~ $allowed ]] || bad+=("${b#$dest/}: $lib")
    done
    echo "  newest glibc symbol: $(objdump -T "$b" | grep -o 'GLIBC_[0-9.]*' | sort -V | tail -1)"
  done
} > "$dest/BUILD.txt"
if [[ ${#bad[@]} -gt 0 ]]; then
  printf 'gpu-carry: a library a GPU machine may lack: %s\n' "${bad[@]}" >&2
  exit 1
fi
if [[ -x build/ci/ridgeline ]]; then
  build/ci/ridgeline profile --model resnet50 --batch 1 --dtype bf16 --device cpu --quick --quiet --format json \
    --output "$dest/cpu-resnet50-b1-bf16.json" > /dev/null
else
  echo "gpu-carry: no build/ci/ridgeline (the oneDNN build): no CPU profile to predict the GPU from" >&2
fi
size=$(du -sb "$dest" | cut -f1)
if [[ $size -gt $((48 * 1024 * 1024)) ]]; then
  echo "gpu-carry: $dest is $size bytes, over 48 MiB (the device tool carries 64 MiB with the tree)" >&2
  exit 1
fi
echo "gpu-carry: $dest ($size bytes; $(du -sb carry/deps | cut -f1) bytes in carry/deps): $(head -1 "$dest/BUILD.txt")"
echo "gpu-carry: there: scripts/gpu-check.sh --build $dest --deps carry/deps"
