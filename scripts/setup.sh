#!/usr/bin/env bash
# Installs what ridgeline needs to build and test on Debian 12, and nothing that is already there.
# Idempotent: a second run installs nothing. Runs apt-get as root, or through sudo when that works
# without a password; otherwise prints the exact command to run and exits 1.
#
#   scripts/setup.sh            build + test dependencies
#   scripts/setup.sh --print    only print what is missing
set -euo pipefail

packages=(
  cmake ninja-build g++ git pkg-config
  libfmt-dev libspdlog-dev libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev
  libdnnl-dev
  libonnx-dev libprotobuf-dev
  chromium python3
  clang-14 libclang-rt-14-dev
)
# chromium renders the HTML roofline in tests/apps/roofline_test.cpp (headless); python3 reads its PNG;
# clang-14 with its compiler-rt builds the libFuzzer targets (scripts/fuzz.sh, run by .ci/run)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [[ "${1:-}" == "--print" ]]; then
  echo "setup: missing: ${missing[*]}"
  echo "setup: run: sudo apt-get update && sudo $cmd"
  exit 0
fi

if [[ $(id -u) -eq 0 ]]; then
  run=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  run=(sudo)
else
  echo "setup: missing packages: ${missing[*]}" >&2
  echo "setup: cannot install them without root; run:" >&2
  echo "  sudo apt-get update && sudo $cmd" >&2
  exit 1
fi

echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${run[@]}" apt-get update -qq
# shellcheck disable=SC2086
"${run[@]}" $cmd
echo "setup: done"
