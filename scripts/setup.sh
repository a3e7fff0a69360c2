#!/usr/bin/env bash
# Installs the Debian 12 packages ridgeline needs, and nothing that is already there. Idempotent: a second
# run installs nothing. Runs apt-get as root, or through sudo when that works without a password;
# otherwise prints the exact command to run and exits 1. Prints the download size before installing.
#
#   scripts/setup.sh [--build]   what building and running the `ridgeline` binary needs (quickstart.sh)
#   scripts/setup.sh --test      that, plus the test suite's and CI's tools (test.sh, .ci/run)
#   scripts/setup.sh ... --print only print what is missing and the command that would install it
set -euo pipefail

# Building and running the binary, and `import ridgeline` (python3-dev, python3-pybind11). ocl-icd-opencl-dev:
# Debian's oneDNN (libdnnl-dev) is built with the OpenCL GPU runtime, and its CMake config (dnnl-config.cmake)
# calls find_package(OpenCL REQUIRED), while the package only recommends the OpenCL headers and loader, which
# --no-install-recommends leaves out.
build_packages=(
  cmake ninja-build g++ git pkg-config
  libfmt-dev libspdlog-dev libcli11-dev nlohmann-json3-dev
  libdnnl-dev ocl-icd-opencl-dev
  libonnx-dev libprotobuf-dev
  zlib1g-dev
  python3-dev python3-pybind11
)
# The test suite and CI: GoogleTest; chromium renders the HTML roofline in tests/apps/roofline_test.cpp
# (headless) and python3 reads its PNG; python3-torch exports the module ridgeline.from_torch profiles in
# tests/python/test_module.py; clang-14 with its compiler-rt builds the libFuzzer targets (scripts/fuzz.sh);
# mmdebstrap builds the pristine root of scripts/fresh-machine-check.sh.
test_packages=(
  libgtest-dev libgmock-dev
  chromium python3 python3-torch
  clang-14 libclang-rt-14-dev
  mmdebstrap
)

want=build
print=0
for arg in "$@"; do
  case "$arg" in
    --build) want=build ;;
    --test) want=test ;;
    --print) print=1 ;;
    *) echo "setup: unknown argument '$arg' (expected --build, --test or --print)" >&2; exit 2 ;;
  esac
done
packages=("${build_packages[@]}")
what="building ridgeline"
if [[ $want == test ]]; then
  packages+=("${test_packages[@]}")
  what="building and testing ridgeline"
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup: all ${#packages[@]} packages for $what are present"
  exit 0
fi

cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [[ $print == 1 ]]; then
  echo "setup: missing for $what: ${missing[*]}"
  echo "setup: run: sudo apt-get update && sudo $cmd"
  exit 0
fi

if [[ $(id -u) -eq 0 ]]; then
  run=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  run=(sudo)
else
  echo "setup: missing packages for $what: ${missing[*]}" >&2
  echo "setup: cannot install them without root; run:" >&2
  echo "  sudo apt-get update && sudo $cmd" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
echo "setup: missing for $what: ${missing[*]}"
"${run[@]}" apt-get update -qq
# apt's own figures, before anything is downloaded (--assume-no answers its question and stops)
# shellcheck disable=SC2086
size=$("${run[@]}" apt-get install --no-install-recommends --assume-no ${missing[*]} 2>/dev/null |
       grep -E '^(Need to get|After this operation|[0-9]+ upgraded)' || true)
if [[ -n $size ]]; then
  echo "setup: apt says:"
  sed 's/^/  /' <<<"$size"
fi
# shellcheck disable=SC2086
"${run[@]}" $cmd
echo "setup: done"
