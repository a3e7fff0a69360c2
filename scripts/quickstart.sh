#!/usr/bin/env bash
# Quick start: install what building and running the binary needs (scripts/setup.sh --build: no test
# tools), build the `ridgeline` binary of the release preset (without the test suite), and run the main
# job on a built-in default: profile resnet18 on the best available device. Extra arguments replace the
# default command, e.g. scripts/quickstart.sh summary --model vgg16
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --build
# RIDGELINE_BUILD_TESTS=OFF: GoogleTest is a test dependency (scripts/test.sh builds the suite in build/ci)
cmake --preset release -DRIDGELINE_BUILD_TESTS=OFF >/dev/null
cmake --build --preset release --target ridgeline
if [[ $# -eq 0 ]]; then
  set -- profile --model resnet18
fi
echo "+ build/release/ridgeline $*" >&2
exec build/release/ridgeline "$@"
